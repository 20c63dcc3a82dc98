"""``python -m kernel_lens.lsp``: the language server over stdio."""

import logging
import sys

from kernel_lens.lsp.common import QuietRequestFailures
from kernel_lens.lsp.server import create_server


def main() -> int:
    """Serve over stdin/stdout until the client exits."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        handler.addFilter(QuietRequestFailures())
    create_server().start_io()
    return 0


if __name__ == "__main__":
    sys.exit(main())
