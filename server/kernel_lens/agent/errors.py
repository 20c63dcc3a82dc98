"""Errors of a profiling job, with the user's line they belong to."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from types import TracebackType
from typing import Any

__all__ = ["ErrorKind", "ProfileError", "user_line_from_traceback"]

#: Kinds of failure, as they appear in JSON (``error.kind``) and in lens titles.
ErrorKind = str
KINDS: tuple[str, ...] = (
    "syntax",  # the buffer does not parse
    "not-found",  # no such function / no function at that line
    "import",  # module-level code raised while loading the file
    "inputs",  # the inputs directive or FUNC_inputs() failed
    "runtime",  # the function raised
    "unsupported",  # the function needs something this machine lacks (CUDA, nvcc, …)
    "timeout",  # the job ran past its time limit
    "crash",  # the agent process died (segfault, os._exit, CUDA fault)
    "cancelled",  # the user cancelled the job
    "internal",  # a bug in Kernel Lens
)


@dataclass
class ProfileError(Exception):
    """A failed job: ``kind`` (one of :data:`KINDS`), a message, and the 1-based user line."""

    kind: str
    message: str
    line: int | None = None
    traceback: str | None = None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind}: {self.message}{where}"

    def to_json(self) -> dict[str, Any]:
        """The ``{"kind", "message", "line", "traceback"}`` object of the CLI and the agent."""
        return {
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "traceback": self.traceback,
        }


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
