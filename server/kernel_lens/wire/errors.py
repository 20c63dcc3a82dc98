"""The errors of a job: the closed set of kinds, :class:`ProfileError`, and its JSON object.

The same object is the ``error`` of the agent's envelope, of the CLI's ``--json`` output and of
a failed server command (``{"ok": false, "error": …}``).
"""

# No ``from __future__ import annotations``: a TypedDict's ``NotRequired`` keys must be known at
# run time (``__optional_keys__``), where scripts/gen_wire.py and the tests read them.
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, get_args

from kernel_lens.wire._compat import NotRequired

__all__ = ["ERROR_KINDS", "ErrorKind", "ErrorObject", "ProfileError", "error_kind"]

#: Kinds of failure, as they appear in JSON (``error.kind``) and in lens titles.
ErrorKind = Literal[
    "syntax",  # the buffer does not parse (or cannot be decoded)
    "not-found",  # no such file / function / kernel / load_inline call
    "import",  # module-level code raised while loading the file
    "inputs",  # the inputs directive or FUNC_inputs() failed, or does not fit the signature
    "runtime",  # the function raised
    "exit",  # the user's code called sys.exit() / raised SystemExit
    "interrupted",  # the user's code raised KeyboardInterrupt
    "unsupported",  # the function needs something this machine lacks (CUDA, nvcc, ncu, …)
    "timeout",  # the job ran past its time limit
    "crash",  # the agent process died (segfault, os._exit, CUDA fault)
    "cancelled",  # the user cancelled the job
    "untrusted",  # the workspace is not trusted: nothing was run (language server)
    "trace",  # a trace file cannot be read (``kernel-lens trace summarize``)
    "ncu",  # an Nsight Compute report cannot be read (``kernel-lens ncu show``)
    "internal",  # a bug in Kernel Lens
]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)


def error_kind(value: object) -> ErrorKind:
    """``value`` as an :data:`ErrorKind`; anything outside the set is ``internal``."""
    for kind in ERROR_KINDS:
        if value == kind:
            return kind
    return "internal"


class ErrorObject(TypedDict):
    """A failed job, as JSON: what went wrong, and the user's line it belongs to."""

    kind: ErrorKind
    message: str
    line: NotRequired[int | None]
    """1-based line of the user's file (absent where the server failed before running)."""
    traceback: NotRequired[str | None]
    suggested_directive: NotRequired[str]
    """For an ``inputs`` error: a ``# kernel-lens: inputs = …`` line to put above the def."""
    memory: NotRequired[dict[str, Any]]
    """For an out-of-memory with memory profiling on: what was alive at the failure by line
    and the allocation that failed (``OomMemory`` of the results)."""


@dataclass
class ProfileError(Exception):
    """A failed job: ``kind``, a message, and the 1-based user line it belongs to."""

    kind: ErrorKind
    message: str
    line: int | None = None
    traceback: str | None = None
    #: For an ``inputs`` error: a ``# kernel-lens: inputs = …`` line to put above the def.
    suggested_directive: str | None = None
    #: For an out-of-memory: what was alive at the failure, by line (``OomMemory``).
    memory: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {self.kind!r}")

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind}: {self.message}{where}"

    def to_json(self) -> ErrorObject:
        """The ``{"kind", "message", "line", "traceback"}`` object of the CLI and the agent
        (plus ``suggested_directive`` when there is one)."""
        out: ErrorObject = {
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "traceback": self.traceback,
        }
        if self.suggested_directive is not None:
            out["suggested_directive"] = self.suggested_directive
        if self.memory is not None:
            out["memory"] = self.memory
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "ProfileError":
        """From an ``error`` object; an unknown kind becomes ``internal``."""
        line = obj.get("line")
        tb = obj.get("traceback")
        suggested = obj.get("suggested_directive")
        memory = obj.get("memory")
        return cls(
            error_kind(obj.get("kind", "internal")),
            str(obj.get("message", "")),
            line if isinstance(line, int) else None,
            tb if isinstance(tb, str) else None,
            suggested if isinstance(suggested, str) else None,
            dict(memory) if isinstance(memory, Mapping) else None,
        )
