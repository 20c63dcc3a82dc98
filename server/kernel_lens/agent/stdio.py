"""Keep the user's output off a channel that carries data (JSON on stdout, the agent protocol).

``print`` in user code, C extensions writing to fd 1 and compiler chatter all go to stderr while
the context is active; the original stdout is handed back for the data.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

__all__ = ["stdout_to_stderr"]


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[TextIO]:
    """Redirect fd 1 and ``sys.stdout`` to stderr; yield a text stream on the real stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    real = os.fdopen(os.dup(saved), "w", encoding="utf-8", closefd=True)
    previous = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield real
    finally:
        sys.stdout.flush()
        sys.stdout = previous
        real.flush()
        real.close()
        os.dup2(saved, 1)
        os.close(saved)
