"""The language server with its feature modules set up in another order than ``FEATURES``'s.

    python tests/lsp/ordered_server.py listed|reversed|SEED

``SEED`` shuffles them with that seed. ``tests/lsp/test_feature_order.py`` runs it to show that
the order does not change an answer (``kernel_lens.lsp.dispatch``).
"""

from __future__ import annotations

import logging
import random
import sys

from kernel_lens.lsp.server import FEATURES, create_server


def main(argv: list[str]) -> int:
    """Serve over stdio with the features in the order ``argv[1]`` names."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    features = list(FEATURES)
    if argv[1] == "reversed":
        features.reverse()
    elif argv[1] != "listed":
        random.Random(int(argv[1])).shuffle(features)
    create_server(features).start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
