"""How much of a line's time went into an installed package's code (``out = model(x)`` → 98%
inside ``transformers``), from a whole run's trace.

The deep tracer (``agent/stages/deep.py``) opens a ``pkg:<name>`` range while the outermost frame
of an installed package (one not named for attribution) runs inside a tagged line. Here each such
range is given to the innermost line range (``src:…``) around it on its thread; a line's share of
a package is the time of those ranges over the time of the line's own ranges (CPU wall time, the
whole run). Pure: the trace's events in, numbers out.
"""

from __future__ import annotations

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


def package_shares(events: Iterable[Mapping[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Per line (its attribution key, ``file * FILE_STRIDE + line``), the installed packages its
    calls spent time in: ``[{"package", "cpu_us", "share"}]``, most first.

    Args:
        events: the trace's ``traceEvents`` (the tracer's ranges as ``user_annotation``).
    """
    by_thread: dict[tuple[Any, Any], list[tuple[float, float, int | None, str | None]]]
    by_thread = defaultdict(list)
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
    own: dict[int, float] = defaultdict(float)
    inside: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for items in by_thread.values():
        # Outer before inner at one start: the longer first; a line before a package range.
        items.sort(key=lambda it: (it[0], -it[1], it[2] is None))
        stack: list[tuple[float, int]] = []  # (end, line key) of the open line ranges
        for ts, dur, line_key, pkg in items:
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if line_key is not None:
                # A line's own time: only its outermost open range counts (a recursive line
                # inside itself is not counted twice).
                if not any(k == line_key for _, k in stack):
                    own[line_key] += dur
                stack.append((ts + dur, line_key))
            elif stack and pkg is not None:
                inside[stack[-1][1]][pkg] += dur
    out: dict[int, list[dict[str, Any]]] = {}
    for key, packages in inside.items():
        total = own.get(key, 0.0)
        if total <= 0:
            continue
        ordered = sorted(packages.items(), key=lambda item: -item[1])
        rows: list[dict[str, Any]] = [
            {"package": name, "cpu_us": round(us, 3), "share": round(min(1.0, us / total), 4)}
            for name, us in ordered
        ]
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
