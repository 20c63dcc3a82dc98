"""How much of a line's time went into an installed package's code (``out = model(x)`` → 98%
inside ``transformers``), from a whole run's trace.

The deep tracer (``agent/stages/deep.py``) opens a ``pkg:<name>`` range while the outermost frame
of an installed package (one not named for attribution) runs inside a tagged line. Here each such
range is given to the innermost line range (``src:…``) around it on its thread; a line's share of
a package is the time of those ranges over the time of the line's own ranges (CPU wall time, the
whole run), the part outside every package taken as the median execution's (one preempted call
does not hide the package). Pure: the trace's events in, numbers out.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from kernel_lens.analysis.line_attribution import FILE_STRIDE, LINE_RANGE_RE

__all__ = ["PACKAGE_RANGE_PREFIX", "SUGGEST_SHARE", "package_shares", "suggestion"]

#: The prefix of the range open while an installed package's outermost frame runs.
PACKAGE_RANGE_PREFIX = "pkg:"
#: A line whose share inside one package is at least this gets the lens that offers to
#: attribute inside it.
SUGGEST_SHARE = 0.5


class _Execution:
    """One execution of a line (its outermost range): its time and the package ranges in it."""

    __slots__ = ("dur", "inside", "spans")

    def __init__(self, dur: float) -> None:
        self.dur = dur
        self.inside: dict[str, float] = defaultdict(float)
        self.spans: list[tuple[float, float]] = []

    def add(self, package: str, ts: float, dur: float) -> None:
        self.inside[package] += dur
        self.spans.append((ts, ts + dur))

    def outside(self) -> float:
        """Its time in no package's range (nested packages' ranges counted once)."""
        covered, reach = 0.0, float("-inf")
        for start, end in sorted(self.spans):
            if end <= reach:
                continue
            covered += end - max(start, reach)
            reach = end
        return max(0.0, self.dur - covered)


def package_shares(events: Iterable[Mapping[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Per line (its attribution key, ``file * FILE_STRIDE + line``), the installed packages its
    calls spent time in: ``[{"package", "cpu_us", "share"}]``, most first.

    A package's share is its time over the line's time, where the line's time outside every
    package is the *median* execution's times the executions: a call preempted for a few
    milliseconds between two package ranges (a busy machine's scheduler, a garbage collection)
    would otherwise make ``out = model(x)``, 90% inside ``tinymodel`` on each call, read 17%.

    Args:
        events: the trace's ``traceEvents`` (the tracer's ranges as ``user_annotation``).
    """
    by_thread = _ranges_by_thread(events)
    runs: dict[int, list[_Execution]] = defaultdict(list)
    for items in by_thread.values():
        # Outer before inner at one start: the longer first; a line before a package range.
        items.sort(key=lambda it: (it[0], -it[1], it[2] is None))
        # (end, line key, the execution its time counts in) of the open line ranges
        stack: list[tuple[float, int, _Execution]] = []
        for ts, dur, line_key, pkg in items:
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if line_key is not None:
                # A line's own time: only its outermost open range counts (a recursive line
                # inside itself is not counted twice; its packages count in the outer one).
                outer = next((run for _, k, run in stack if k == line_key), None)
                if outer is None:
                    outer = _Execution(dur)
                    runs[line_key].append(outer)
                stack.append((ts + dur, line_key, outer))
            elif stack and pkg is not None:
                stack[-1][2].add(pkg, ts, dur)
    out: dict[int, list[dict[str, Any]]] = {}
    for key, executions in runs.items():
        rows = _shares(executions)
        if rows:
            out[key] = rows
    return out


def suggestion(inside: object, named: Iterable[str] = ()) -> dict[str, Any] | None:
    """The package a line's lens offers to attribute inside: the first of ``inside`` (a line's
    ``inside`` list) with at least :data:`SUGGEST_SHARE` of its time, not already named."""
    if not isinstance(inside, list):
        return None
    taken = set(named)
    for row in inside:
        if not isinstance(row, dict):
            continue
        package = row.get("package")
        share = row.get("share")
        if (
            isinstance(package, str)
            and package not in taken
            and isinstance(share, (int, float))
            and share >= SUGGEST_SHARE
        ):
            return row
    return None


_Range = tuple[float, float, int | None, str | None]
"""(start, duration, line key or None, package or None) of one of the tracer's ranges."""


def _ranges_by_thread(events: Iterable[Mapping[str, Any]]) -> dict[tuple[Any, Any], list[_Range]]:
    """The tracer's line (``src:…``) and package (``pkg:…``) ranges, by (pid, tid)."""
    by_thread: dict[tuple[Any, Any], list[_Range]] = defaultdict(list)
    for ev in events:
        if ev.get("cat") != "user_annotation" or ev.get("ph") != "X":
            continue
        name = str(ev.get("name", ""))
        try:
            ts, dur = float(ev["ts"]), float(ev["dur"])
        except (KeyError, TypeError, ValueError):
            continue
        if name.startswith(PACKAGE_RANGE_PREFIX):
            package = name[len(PACKAGE_RANGE_PREFIX) :]
            if package:
                by_thread[(ev.get("pid"), ev.get("tid"))].append((ts, dur, None, package))
            continue
        match = LINE_RANGE_RE.match(name)
        if match is None:
            continue
        index = match.group("file")
        key = int(match.group("line")) + (int(index) * FILE_STRIDE if index else 0)
        by_thread[(ev.get("pid"), ev.get("tid"))].append((ts, dur, key, None))
    return by_thread


def _shares(executions: list[_Execution]) -> list[dict[str, Any]]:
    """A line's packages, most first, each with its time and its share of the line's time
    (the part outside every package: the median execution's, times the executions)."""
    inside: dict[str, float] = defaultdict(float)
    for run in executions:
        for name, us in run.inside.items():
            inside[name] += us
    if not inside:
        return []
    outside = [run.outside() for run in executions]
    covered = sum(run.dur for run in executions) - sum(outside)
    total = covered + statistics.median(outside) * len(executions)
    if total <= 0:
        return []
    ordered = sorted(inside.items(), key=lambda item: -item[1])
    return [
        {"package": name, "cpu_us": round(us, 3), "share": round(min(1.0, us / total), 4)}
        for name, us in ordered
    ]
