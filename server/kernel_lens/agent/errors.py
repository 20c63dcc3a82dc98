"""Errors of a profiling job, with the user's line they belong to.

:class:`ProfileError` and :data:`ErrorKind` live in :mod:`kernel_lens.wire.errors` (shared with
the server); they are re-exported here. The helpers below read tracebacks, agent side only.
"""

from __future__ import annotations

import traceback
from types import TracebackType

from kernel_lens.wire.errors import ERROR_KINDS, ErrorKind, ProfileError

__all__ = [
    "ERROR_KINDS",
    "KINDS",
    "ErrorKind",
    "ProfileError",
    "format_exception",
    "user_line_from_traceback",
]

#: The error kinds (an alias of :data:`kernel_lens.wire.errors.ERROR_KINDS`).
KINDS: tuple[str, ...] = ERROR_KINDS


def user_line_from_traceback(tb: TracebackType | None, path: str) -> int | None:
    """The deepest line of ``path`` in a traceback: the user's line that raised."""
    line: int | None = None
    for frame_summary in traceback.extract_tb(tb):
        if frame_summary.filename == path:
            line = frame_summary.lineno
    return line


def format_exception(exc: BaseException) -> str:
    """The full traceback text of ``exc``."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
