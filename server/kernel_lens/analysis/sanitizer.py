"""compute-sanitizer's text report, read: each error (memcheck's invalid accesses, racecheck's
hazards, …) with the source line it names, grouped per line and kind. Pure.

A memcheck error reads (NVIDIA's documented format; the ``at`` line names the source file and
line when the kernel has line information — Triton kernels always do, ``nvcc -lineinfo`` gives
them to CUDA C++)::

    ========= Invalid __global__ write of size 4 bytes
    =========     at square_kernel+0x270 in /work/kernels/triton_oob.py:27
    =========     by thread (31,0,0) in block (15,0,0)
    =========     Address 0x7f3a0e010000 is out of bounds
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SanitizerFinding", "parse_sanitizer"]

_PREFIX = re.compile(r"^=+\s?")
_AT = re.compile(r"^at\s+(?P<where>.+?)\s+in\s+(?P<file>\S+?):(?P<line>\d+)")
_THREAD = re.compile(r"by thread \((?P<thread>[\d,\s]+)\) in block \((?P<block>[\d,\s]+)\)")
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error")
_STARTS = (
    "Invalid ",
    "Error",
    "Program hit ",
    "Misaligned ",
    "Uninitialized ",
    "Race ",
    "Barrier ",
)


@dataclass
class SanitizerFinding:
    """Errors of one kind on one source line.

    Attributes:
        kind: the report's first line (``Invalid __global__ write of size 4 bytes``).
        file: the source file the report names; line: its 1-based line (``None``: not named).
        function: the kernel (``square_kernel+0x270``: the part before ``+``).
        thread, block: the first report's thread and block (``[31, 0, 0]``).
        detail: the first report's other lines (``Address 0x… is out of bounds``).
        count: reports of this kind on this line.
    """

    kind: str
    file: str | None
    line: int | None
    function: str | None
    thread: list[int] | None = None
    block: list[int] | None = None
    detail: list[str] = field(default_factory=list)
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "thread": self.thread,
            "block": self.block,
            "detail": self.detail,
            "count": self.count,
        }

    def message(self) -> str:
        """One line for a diagnostic: ``compute-sanitizer: Invalid __global__ write … ×N``."""
        where = ""
        if self.block is not None and self.thread is not None:
            where = (
                f" · block ({', '.join(map(str, self.block))}) thread "
                f"({', '.join(map(str, self.thread))})"
            )
        detail = f" · {self.detail[0]}" if self.detail else ""
        times = f" · {self.count} reports" if self.count > 1 else ""
        return f"compute-sanitizer: {self.kind}{where}{detail}{times}"


def _ints(text: str) -> list[int]:
    return [int(p) for p in text.replace(" ", "").split(",") if p]


def parse_sanitizer(text: str) -> tuple[list[SanitizerFinding], int | None]:
    """The findings of a compute-sanitizer report (grouped by kind, file and line, in order of
    first appearance) and its ``ERROR SUMMARY`` count (``None`` when it has none)."""
    findings: dict[tuple[str, str | None, int | None], SanitizerFinding] = {}
    summary: int | None = None
    block: list[str] = []

    def flush() -> None:
        if not block:
            return
        kind = block[0].strip()
        file = line = function = None
        thread = where = None
        detail: list[str] = []
        for raw in block[1:]:
            item = raw.strip()
            at = _AT.match(item) if item.startswith("at ") else None
            if at is not None and file is None:
                file, line = at.group("file"), int(at.group("line"))
                where_at = at.group("where")
                function = None if where_at.startswith("0x") else where_at.split("+", 1)[0]
                continue
            by = _THREAD.search(item)
            if by is not None and thread is None:
                thread, where = _ints(by.group("thread")), _ints(by.group("block"))
                continue
            if item and not item.startswith(("Saved host backtrace", "Host Frame", "Device Frame")):
                if len(detail) < 2 and not item.startswith("at "):
                    detail.append(item)
        key = (kind, os.path.normpath(file) if file else None, line)
        found = findings.get(key)
        if found is None:
            findings[key] = SanitizerFinding(kind, key[1], line, function, thread, where, detail)
        else:
            found.count += 1
        block.clear()

    for raw in text.splitlines():
        if not raw.startswith("="):
            continue
        body = _PREFIX.sub("", raw, count=1)
        total = _SUMMARY.search(body)
        if total is not None:
            flush()
            summary = int(total.group(1))
            continue
        stripped = body.strip()
        if not stripped:
            flush()
            continue
        if body[:1] != " " and stripped.startswith(_STARTS):
            flush()
            block.append(stripped)
        elif block:
            block.append(body)
    flush()
    return list(findings.values()), summary
