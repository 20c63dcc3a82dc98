"""The source line of each kernel of an Nsight Compute run, the backward's included.

Under ``ncu`` the profiled call runs with each line of the function in an NVTX range
``src:<line>`` (``LineTagger``), inside ``torch.autograd.profiler.emit_nvtx``. A forward or
optimizer kernel is launched on the calling thread, so the ``src:`` range around it names its
line. A backward kernel is launched on autograd's device thread, where no ``src:`` range is
open; what encloses it there is the range of the autograd node that runs it,
``MulBackward0, seq = 12`` — and ``12`` is the sequence number the node took when the forward
created it. While the call ran, the child recorded, at the start of every line, the calling
thread's next sequence number (``torch._C._autograd._get_sequence_nr()``): the node was created
by the last line that started at or below ``12``. So the backward's kernels land on the forward
lines that caused them, as the profile puts them (issue 34).

Pure: NVTX range names and the recorded marks in, a line out.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from kernel_lens.analysis.line_attribution import LINE_RANGE_RE

__all__ = ["SeqMarks", "backward_seq", "kernel_line", "kernel_lines"]

#: ``emit_nvtx``'s range name: ``{name}, seq = {N}`` then optional ``, op_id = …`` and sizes.
_SEQ_RE = re.compile(r"^(?P<name>[^,]+), seq = (?P<seq>\d+)")
_ENGINE_PREFIX = "autograd::engine::evaluate_function: "


class SeqMarks:
    """The calling thread's autograd sequence number at the start of each executed line.

    ``marks`` are ``(seq, line)`` in the order the lines ran (sequence numbers never go down);
    ``end`` is the number after the call returned. A node with sequence number ``n`` was
    created on the last line that started at or below ``n``, if ``n`` is inside the call.
    """

    def __init__(self, marks: Sequence[tuple[int, int]], end: int) -> None:
        self._seqs = [int(s) for s, _ in marks]
        self._lines = [int(line) for _, line in marks]
        self.end = int(end)
        if any(b < a for a, b in zip(self._seqs, self._seqs[1:], strict=False)):
            raise ValueError("sequence numbers go down: marks of more than one thread")

    def line_of(self, seq: int) -> int | None:
        """The line that created the node numbered ``seq``; ``None`` outside the call."""
        if not self._seqs or seq < self._seqs[0] or seq >= self.end:
            return None
        return self._lines[bisect.bisect_right(self._seqs, seq) - 1]

    def to_json(self) -> dict[str, object]:
        return {"marks": [[s, line] for s, line in zip(self._seqs, self._lines, strict=True)],
                "end": self.end}  # fmt: skip

    @classmethod
    def from_json(cls, data: object) -> SeqMarks | None:
        """The marks a child wrote; ``None`` for anything else (an old child, a damaged file)."""
        if not isinstance(data, dict):
            return None
        try:
            marks = [(int(s), int(line)) for s, line in data["marks"]]
            return cls(marks, int(data["end"]))
        except (KeyError, TypeError, ValueError):
            return None


def backward_seq(ranges: Sequence[str]) -> int | None:
    """The forward sequence number of the autograd node a kernel ran in: the outermost range
    of a backward node (``…Backward…, seq = N``), ``None`` when the kernel is not in one.

    Ops that run inside a node during the backward also carry ``seq = …`` (the device
    thread's own counter, meaningless here), so only a node's range counts and the outermost
    one wins: a node calls ops, never the other way round.
    """
    for name in ranges:
        m = _SEQ_RE.match(name.removeprefix(_ENGINE_PREFIX))
        if m and "Backward" in m.group("name"):
            return int(m.group("seq"))
    return None


def kernel_line(ranges: Sequence[str], marks: SeqMarks | None) -> int | None:
    """A kernel's line from the NVTX ranges open on its thread at launch (outermost first).

    A backward node's range maps to the forward line that created the node (when the marks
    know its number); otherwise the innermost ``src:<line>`` range; otherwise ``None``.
    """
    seq = backward_seq(ranges)
    if seq is not None and marks is not None:
        line = marks.line_of(seq)
        if line is not None:
            return line
    line = None
    for name in ranges:
        m = LINE_RANGE_RE.match(name)
        if m:
            line = int(m.group("line"))
    return line


def _evaluating(ranges: Sequence[str]) -> str | None:
    """The node the autograd engine is evaluating around a kernel
    (``autograd::engine::evaluate_function: AddmmBackward0`` → ``AddmmBackward0``), if any."""
    for name in ranges:
        if name.startswith(_ENGINE_PREFIX):
            return name.removeprefix(_ENGINE_PREFIX).split(",", 1)[0].strip()
    return None


def kernel_lines(per_kernel: Sequence[Sequence[str]], marks: SeqMarks | None) -> list[int | None]:
    """:func:`kernel_line` of each kernel in launch order, plus the kernels the engine runs for a
    node outside the node's own range: ``evaluate_function`` carries no sequence number, and
    after a node's ``apply`` it reduces each gradient to its input's shape (``validate_outputs``:
    a broadcast bias's gradient summed over the batch, seen on the H200 as ``reduce_kernel``
    with no line). Such a kernel takes the number of the last kernel that ran inside a node of
    that name — the node it follows (torch's own profiler plumbs the number the same way, from
    the node event that follows ``evaluate_function``)."""
    out: list[int | None] = []
    last_seq: dict[str, int] = {}
    for ranges in per_kernel:
        evaluating = _evaluating(ranges)
        seq = backward_seq(ranges)
        line = kernel_line(ranges, marks)
        if evaluating is not None and seq is not None:
            last_seq[evaluating] = seq
        elif evaluating is not None and seq is None and marks is not None:
            known = last_seq.get(evaluating)
            if known is not None:
                line = marks.line_of(known) or line
        out.append(line)
    return out
