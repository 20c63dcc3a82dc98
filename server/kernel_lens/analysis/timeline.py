"""A Chrome trace reduced to timeline lanes for the report panel. Pure.

Lanes: one per CPU thread (the user's ``src:<line>`` ranges and the ATen ops nested in them, with
their depth), one for CUDA runtime/driver calls (launches, synchronisations, copies), and one per
GPU stream (kernels, memcpy, memset). Large traces are reduced in the server so the panel stays
smooth: per lane, events shorter than the span / ``resolution`` that sit next to each other are
merged into one "N events" block, so a lane never carries more than about ``resolution`` items per
depth level whatever the trace size. Times are µs from the trace's first event.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from kernel_lens.analysis.line_attribution import LINE_RANGE_RE
from kernel_lens.analysis.names import short_kernel_name

__all__ = ["build_timeline"]

_CPU = {"cpu_op", "user_annotation", "python_function"}
_RUNTIME = {"cuda_runtime", "cuda_driver"}
_DEVICE = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}


def _depths(events: list[tuple[float, float, int]]) -> list[int]:
    """Nesting depth of each (start, end, index) interval, sorted by start then length."""
    order = sorted(range(len(events)), key=lambda i: (events[i][0], -(events[i][1])))
    depth = [0] * len(events)
    stack: list[float] = []
    for i in order:
        start, end, _ = events[i]
        while stack and start >= stack[-1]:
            stack.pop()
        depth[i] = len(stack)
        stack.append(end)
    return depth


def _reduce(items: list[dict[str, Any]], min_dur: float) -> list[dict[str, Any]]:
    """Merge runs of adjacent short items at the same depth into one block."""
    out: list[dict[str, Any]] = []
    by_depth: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        by_depth[item["depth"]].append(item)
    for depth, row in by_depth.items():
        row.sort(key=lambda e: e["start"])
        pending: dict[str, Any] | None = None
        for item in row:
            if item["dur"] >= min_dur:
                if pending is not None:
                    out.append(pending)
                    pending = None
                out.append(item)
                continue
            if (
                pending is not None
                and item["start"] - (pending["start"] + pending["dur"]) < min_dur
            ):
                pending["dur"] = max(pending["dur"], item["start"] + item["dur"] - pending["start"])
                pending["count"] += 1
                pending["name"] = f"{pending['count']} events"
                pending["line"] = pending["line"] if pending["line"] == item["line"] else None
                continue
            if pending is not None:
                out.append(pending)
            pending = {**item, "count": 1, "merged": True}
        if pending is not None:
            if pending["count"] == 1:
                pending = {k: v for k, v in pending.items() if k not in ("count", "merged")}
            out.append(pending)
        del depth
    out.sort(key=lambda e: (e["depth"], e["start"]))
    return out


def build_timeline(
    trace: Mapping[str, Any],
    *,
    resolution: int = 4000,
    window: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Lanes of a Chrome trace for the timeline view.

    Args:
        trace: the loaded trace.
        resolution: roughly the number of distinguishable positions across the span (or the
            window); events shorter than that / resolution are merged with short neighbours.
        window: ``(start_us, end_us)`` relative to the trace's start: only events overlapping it,
            reduced at the window's scale (the panel asks for this when zoomed in).

    Returns:
        ``{"span_us", "event_count", "kept", "lanes": [{"id", "title", "kind", "events":
        [{"start", "dur", "depth", "name", "short", "cat", "line", "count"?}]}]}``.
    """
    events = [
        e
        for e in trace.get("traceEvents", [])
        if isinstance(e, Mapping)
        and e.get("ph") == "X"
        and e.get("ts") is not None
        and e.get("dur") is not None
    ]
    if not events:
        return {"span_us": 0.0, "event_count": 0, "kept": 0, "lanes": []}
    t0 = min(float(e["ts"]) for e in events)
    t1 = max(float(e["ts"]) + float(e["dur"]) for e in events)
    span = max(t1 - t0, 1e-9)
    scale = span if window is None else max(window[1] - window[0], 1e-9)
    min_dur = scale / max(resolution, 1)

    lanes: dict[str, dict[str, Any]] = {}
    lane_events: dict[str, list[dict[str, Any]]] = defaultdict(list)
    external_line: dict[Any, int] = {}

    # Lines of the CPU ops: the enclosing src:<line> range on the same thread.
    cpu_by_thread: dict[tuple[Any, Any], list[Mapping[str, Any]]] = defaultdict(list)
    for e in events:
        cat = e.get("cat")
        if cat in _CPU or cat in _RUNTIME:
            cpu_by_thread[(e.get("pid"), e.get("tid"))].append(e)
    for (pid, tid), thread_events in cpu_by_thread.items():
        thread_events.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
        stack: list[tuple[float, int | None]] = []
        spans = [
            (float(e["ts"]) - t0, float(e["ts"]) + float(e["dur"]) - t0, i)
            for i, e in enumerate(thread_events)
        ]
        depth = _depths(spans)
        for i, e in enumerate(thread_events):
            start = float(e["ts"]) - t0
            end = start + float(e["dur"])
            while stack and start >= stack[-1][0]:
                stack.pop()
            match = (
                LINE_RANGE_RE.match(str(e.get("name", "")))
                if e.get("cat") == ("user_annotation")
                else None
            )
            line = int(match.group("line")) if match else (stack[-1][1] if stack else None)
            stack.append((end, line))
            args = e.get("args") or {}
            if line is not None and "correlation" in args:
                external_line[("corr", args["correlation"])] = line
            if line is not None and "External id" in args:
                external_line.setdefault(("ext", args["External id"]), line)
            is_runtime = e.get("cat") in _RUNTIME
            lane_id = "runtime" if is_runtime else f"cpu-{pid}-{tid}"
            if lane_id not in lanes:
                lanes[lane_id] = {
                    "id": lane_id,
                    "title": "CUDA runtime" if is_runtime else f"CPU thread {tid}",
                    "kind": "runtime" if is_runtime else "cpu",
                }
            lane_events[lane_id].append(
                {
                    "start": start,
                    "dur": float(e["dur"]),
                    "depth": 0 if is_runtime else depth[i],
                    "name": str(e.get("name", "")),
                    "short": str(e.get("name", "")),
                    "cat": str(e.get("cat")),
                    "line": line,
                }
            )
    for e in events:
        kind = _DEVICE.get(str(e.get("cat")))
        if kind is None:
            continue
        args = e.get("args") or {}
        stream = args.get("stream", e.get("tid"))
        device = args.get("device", e.get("pid"))
        lane_id = f"gpu-{device}-{stream}"
        if lane_id not in lanes:
            lanes[lane_id] = {
                "id": lane_id,
                "title": f"GPU {device} · stream {stream}",
                "kind": "gpu",
            }
        line = external_line.get(("corr", args.get("correlation"))) or external_line.get(
            ("ext", args.get("External id"))
        )
        name = str(e.get("name", ""))
        lane_events[lane_id].append(
            {
                "start": float(e["ts"]) - t0,
                "dur": float(e["dur"]),
                "depth": 0,
                "name": name,
                "short": short_kernel_name(name) if kind == "kernel" else name,
                "cat": kind,
                "line": line,
            }
        )
    order = {"cpu": 0, "runtime": 1, "gpu": 2}
    out_lanes = []
    kept = 0
    for lane_id, lane in sorted(lanes.items(), key=lambda kv: (order[kv[1]["kind"]], kv[0])):
        items = lane_events[lane_id]
        if window is not None:
            items = [
                e for e in items if e["start"] + e["dur"] >= window[0] and e["start"] <= window[1]
            ]
        reduced = _reduce(items, min_dur)
        kept += len(reduced)
        out_lanes.append({**lane, "events": reduced})
    return {
        "span_us": span,
        "window": list(window) if window is not None else None,
        "event_count": len(events),
        "kept": kept,
        "lanes": out_lanes,
    }
