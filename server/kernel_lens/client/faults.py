"""What a dead or stuck agent left on its stderr, read back: ``faulthandler``'s stack dumps
parsed to frames, the user's line among them, and how a process ended (``killed by SIGSEGV``).

Standard library only: the parent side of the agent boundary (:mod:`kernel_lens.client`).
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["StackFrame", "describe_exit", "failing_frame", "fault_frames", "where_text"]

_FAULT_HEADER = re.compile(
    r"^(Current thread|Thread) (0x[0-9a-fA-F]+).*\(most recent call first\):"
)
#: The first line of a dump: a timeout's (``dump_traceback_later``) or a fatal error's.
_FAULT_START = re.compile(r"^(Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!|Fatal Python error)")
_FAULT_FRAME = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<name>.*)$')


def describe_exit(code: int | None) -> str:
    """``exit code 3`` or ``killed by SIGSEGV``."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


@dataclass(frozen=True)
class StackFrame:
    """One frame of a ``faulthandler`` dump: file, 1-based line, function."""

    file: str
    line: int
    name: str


def fault_frames(lines: Iterable[str], *, main_thread: int | None = None) -> list[StackFrame]:
    """The frames of the last ``faulthandler`` dump in ``lines``, innermost first.

    A dump (a crash's ``Fatal Python error`` or a timeout's ``Timeout (0:00:05)!``) lists each
    thread as a header and ``File "…", line N in f`` lines, most recent call first. Of the last
    dump, the main thread's block is taken (``main_thread``: its ident, as the agent's ready
    line reports it), else the ``Current thread`` block, else the first block.

    Args:
        lines: stderr lines of the agent, in order.
        main_thread: the agent's main thread ident (``threading.get_ident()``), if known.
    """
    dumps: list[list[tuple[str, int, list[StackFrame]]]] = []
    block: list[StackFrame] | None = None
    for text in lines:
        if _FAULT_START.match(text):
            dumps.append([])
            block = None
            continue
        header = _FAULT_HEADER.match(text)
        if header:
            if not dumps:
                dumps.append([])
            block = []
            dumps[-1].append((header.group(1), int(header.group(2), 16), block))
            continue
        frame = _FAULT_FRAME.match(text)
        if frame and block is not None:
            block.append(StackFrame(frame["file"], int(frame["line"]), frame["name"]))
        elif text.strip() and not text.startswith("  "):
            block = None
    if not dumps or not dumps[-1]:
        return []
    last = dumps[-1]
    for _label, ident, frames in last:
        if main_thread is not None and ident == main_thread:
            return frames
    for label, _ident, frames in last:
        if label == "Current thread":
            return frames
    return last[0][2]


def failing_frame(frames: list[StackFrame], path: str | None) -> StackFrame | None:
    """The innermost frame in the user's file ``path`` (module-level code included)."""
    if not path:
        return None
    want = os.path.normpath(path)
    return next((f for f in frames if os.path.normpath(f.file) == want), None)


#: A frame of the Python standard library (any machine's: the agent may run over ssh).
_STDLIB_FRAME = re.compile(r"[/\\]lib[/\\]python3(\.\d+)?[/\\](?!.*(site|dist)-packages)")


def _plumbing(frame: StackFrame) -> bool:
    """Whether a frame is Kernel Lens's own or the standard library's: nothing of the user's."""
    file = frame.file.replace("\\", "/")
    return "/kernel_lens/" in file or bool(_STDLIB_FRAME.search(file)) or file.startswith("<")


def where_text(frames: list[StackFrame], path: str | None = None, n: int = 3) -> str:
    """``in f (x.py:12) ← main (x.py:30)``: the innermost frames of ``path`` when it has some,
    else of the user's other code and libraries (torch, triton); ``""`` when every frame is
    Kernel Lens's own or the standard library's (they would say nothing to the user)."""
    want = os.path.normpath(path) if path else None
    mine = [f for f in frames if want and os.path.normpath(f.file) == want]
    mine = mine or [f for f in frames if not _plumbing(f)]
    if not mine:
        return ""
    return "in " + " ← ".join(f"{f.name} ({os.path.basename(f.file)}:{f.line})" for f in mine[:n])
