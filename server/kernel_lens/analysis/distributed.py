"""A distributed step, per rank and merged: communication on the line that issued it, the
numbers HolisticTraceAnalysis (HTA) computes, and the ranks' results merged line by line.

Pure functions over each rank's torch.profiler Chrome trace and profile result; the agent's
launcher (:mod:`kernel_lens.agent.distributed`) calls :func:`merge_ranks` once every rank of a
``torchrun`` has written its result.

What is communication:

- On a GPU: a kernel whose name starts with ``nccl`` (any case: ``ncclDevKernel_…``,
  ``ncclKernel_…``, the renames keep coming). Computation: every other kernel except memcpy and
  memset. These are HTA's classes, and the numbers below are HTA's definitions on them:
  *overlap* = time a communication kernel runs while a computation kernel runs, over the
  communication time (``get_comm_comp_overlap``); *idle* = the span from the first kernel's start
  to the last one's end minus the time any kernel runs (``get_temporal_breakdown``).
- On a CPU (gloo): a collective runs on gloo's own thread (``gloo:all_reduce``), issued by a
  ``c10d::…`` op of the calling thread (``record_param_comms`` where the build records it).
  The same definitions are applied to CPU intervals: communication = the gloo collectives,
  computation = the other top-level ATen ops. HTA itself reads GPU kernels only; the CPU numbers
  are labelled ``cpu``.

Across ranks, the ``i``-th collective of every rank is the same collective (a step issues them in
one order on every rank). A rank's *wait* at it is the time from its own start to the last rank's
start (it cannot finish before the last arrives); the *skew* is the last start minus the first;
the *straggler* is the rank the others wait for: the one with the least total wait.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "COLLECTIVE_OP_RE",
    "comm_name",
    "is_comm_kernel",
    "merge_intervals",
    "merge_ranks",
    "rank_collectives",
    "rank_metrics",
    "rank_skew",
    "total",
]

#: A c10d collective op of the calling thread (``c10d::allreduce_``,
#: ``c10d::_reduce_scatter_base_``) or the profiler's ``record_param_comms``.
COLLECTIVE_OP_RE = re.compile(r"^(c10d::|record_param_comms$)")
#: gloo's collective on its own thread (``gloo:all_reduce``); nccl's host-side annotation.
_BACKEND_RE = re.compile(r"^(gloo|nccl):", re.IGNORECASE)
_LINE_RE = re.compile(r"^src:(?:\d+:)?(\d+)$")
_MEMORY_RE = re.compile(r"^(memcpy|memset)", re.IGNORECASE)

#: The collective's short name from any of its spellings.
_COMM_WORDS = (
    ("reduce_scatter", "reduce_scatter"),
    ("reducescatter", "reduce_scatter"),
    ("allreduce", "all_reduce"),
    ("all_reduce", "all_reduce"),
    ("allgather", "all_gather"),
    ("all_gather", "all_gather"),
    ("alltoall", "all_to_all"),
    ("all_to_all", "all_to_all"),
    ("broadcast", "broadcast"),
    ("barrier", "barrier"),
    ("sendrecv", "send_recv"),
    ("send", "send"),
    ("recv", "recv"),
    ("reduce", "reduce"),
    ("gather", "gather"),
    ("scatter", "scatter"),
)

Interval = tuple[float, float]


def is_comm_kernel(name: str) -> bool:
    """A communication kernel: its name starts with ``nccl``, in any case."""
    return name[:4].lower() == "nccl"


def comm_name(name: str) -> str:
    """``all_reduce`` for ``c10d::allreduce_``, ``gloo:all_reduce``,
    ``ncclDevKernel_AllReduce_…``."""
    low = name.lower()
    for word, short in _COMM_WORDS:
        if word in low:
            return short
    return "collective"


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping union of ``(start, end)`` intervals."""
    out: list[list[float]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def total(intervals: Iterable[Interval]) -> float:
    """Summed length of (already merged) intervals."""
    return sum(b - a for a, b in intervals)


def _intersection(a: Sequence[Interval], b: Sequence[Interval]) -> float:
    """Length of the intersection of two merged interval lists."""
    i = j = 0
    out = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            out += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _complete(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [e for e in events if e.get("ph") == "X" and "dur" in e and "ts" in e]


def _line_ranges(events: Sequence[Mapping[str, Any]]) -> dict[Any, list[tuple[float, float, int]]]:
    """Per thread, the profiled lines' ``src:<line>`` ranges ``(start, end, line)`` by start."""
    out: dict[Any, list[tuple[float, float, int]]] = {}
    for e in events:
        if e.get("cat") != "user_annotation":
            continue
        m = _LINE_RE.match(str(e.get("name", "")))
        if m:
            ts = float(e["ts"])
            out.setdefault(e.get("tid"), []).append((ts, ts + float(e["dur"]), int(m.group(1))))
    for ranges in out.values():
        ranges.sort()
    return out


def _line_at(
    ranges: Mapping[Any, list[tuple[float, float, int]]], tid: Any, ts: float
) -> int | None:
    """The innermost line range enclosing ``ts`` on thread ``tid`` (any thread when ``tid`` is
    ``None``: the line that was running, e.g. ``loss.backward()`` for a DDP hook's collective)."""
    threads = [ranges.get(tid, [])] if tid is not None else list(ranges.values())
    best: tuple[float, int] | None = None
    for rs in threads:
        for start, end, line in rs[: bisect_right(rs, (ts, float("inf"), 0))]:
            if start <= ts <= end and (best is None or start > best[0]):
                best = (start, line)
    return best[1] if best else None


def rank_collectives(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One rank's collectives and its computation, from its trace.

    Returns ``{"source": "gpu"|"cpu", "collectives": [{name, op, ts, dur, line}], "compute":
    [(start, end)…] (merged), "busy": [(start, end)…] (every kernel, or every CPU interval)}``;
    collectives in order of start.
    """
    evs = _complete(events)
    ranges = _line_ranges(evs)
    kernels = [e for e in evs if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    collectives: list[dict[str, Any]] = []
    if kernels:
        launches = {
            e.get("args", {}).get("correlation"): e
            for e in evs
            if e.get("cat") == "cuda_runtime" and e.get("args", {}).get("correlation") is not None
        }
        compute: list[Interval] = []
        for k in kernels:
            ts, end = float(k["ts"]), float(k["ts"]) + float(k["dur"])
            name = str(k.get("name", ""))
            if is_comm_kernel(name):
                launch = launches.get(k.get("args", {}).get("correlation"))
                line = None
                if launch is not None:
                    at = float(launch["ts"])
                    line = _line_at(ranges, launch.get("tid"), at) or _line_at(ranges, None, at)
                collectives.append(
                    {"name": comm_name(name), "op": name, "ts": ts, "dur": end - ts, "line": line}
                )
            elif k.get("cat") == "kernel" and not _MEMORY_RE.match(name):
                compute.append((ts, end))
        busy = merge_intervals((float(k["ts"]), float(k["ts"]) + float(k["dur"])) for k in kernels)
        source = "gpu"
    else:
        ops = sorted(
            (e for e in evs if e.get("cat") == "cpu_op" and COLLECTIVE_OP_RE.match(str(e["name"]))),
            key=lambda e: float(e["ts"]),
        )
        op_starts = [float(e["ts"]) for e in ops]
        backend = [
            e
            for e in evs
            if e.get("cat") in ("user_annotation", "cpu_op") and _BACKEND_RE.match(str(e["name"]))
        ]
        comm_iv: list[Interval] = []
        for g in sorted(backend, key=lambda e: float(e["ts"])):
            ts = float(g["ts"])
            # The c10d op that enqueued it: the latest one started before it.
            idx = bisect_right(op_starts, ts) - 1
            issuer = ops[idx] if idx >= 0 else None
            line = None
            if issuer is not None:
                at = float(issuer["ts"])
                line = _line_at(ranges, issuer.get("tid"), at) or _line_at(ranges, None, at)
            else:
                line = _line_at(ranges, None, ts)
            collectives.append(
                {
                    "name": comm_name(str(g["name"])),
                    "op": str(issuer["name"]) if issuer is not None else str(g["name"]),
                    "ts": ts,
                    "dur": float(g["dur"]),
                    "line": line,
                }
            )
            comm_iv.append((ts, ts + float(g["dur"])))
        compute_ops = _top_level(
            [
                e
                for e in evs
                if e.get("cat") == "cpu_op" and not COLLECTIVE_OP_RE.match(str(e["name"]))
            ]
        )
        compute = [(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in compute_ops]
        # The c10d op itself is the collective's enqueue, and ops nested in it (copies into its
        # buffer) are the collective's: neither is computation.
        issued = merge_intervals((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in ops)
        compute = [iv for iv in compute if not _inside(iv, issued)]
        busy = merge_intervals([*comm_iv, *compute])
        source = "cpu"
    return {
        "source": source,
        "collectives": sorted(collectives, key=lambda c: c["ts"]),
        "compute": merge_intervals(compute),
        "busy": busy,
    }


def _inside(iv: Interval, merged: Sequence[Interval]) -> bool:
    k = bisect_right(merged, (iv[0], float("inf"))) - 1
    return k >= 0 and merged[k][0] <= iv[0] and iv[1] <= merged[k][1]


def _top_level(ops: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Ops not nested in another op of the same thread."""
    out: list[Mapping[str, Any]] = []
    by_thread: dict[Any, list[Mapping[str, Any]]] = {}
    for e in ops:
        by_thread.setdefault(e.get("tid"), []).append(e)
    for thread in by_thread.values():
        thread.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
        end = float("-inf")
        for e in thread:
            if float(e["ts"]) >= end:
                out.append(e)
                end = float(e["ts"]) + float(e["dur"])
    return out


def rank_metrics(collected: Mapping[str, Any]) -> dict[str, Any]:
    """HTA's per-rank numbers on :func:`rank_collectives`'s output: communication time,
    computation time, overlap (percent of the communication time), idle time and its share of
    the span (first start to last end of the busy intervals)."""
    comm = merge_intervals((c["ts"], c["ts"] + c["dur"]) for c in collected["collectives"])
    compute = collected["compute"]
    busy = collected["busy"]
    comm_us = total(comm)
    span = (busy[-1][1] - busy[0][0]) if busy else 0.0
    idle = span - total(busy)
    overlap = _intersection(comm, compute)
    return {
        "source": collected["source"],
        "comm_us": round(comm_us, 3),
        "compute_us": round(total(compute), 3),
        "overlap_pct": round(100.0 * overlap / comm_us, 2) if comm_us > 0 else None,
        "idle_us": round(idle, 3),
        "idle_pct": round(100.0 * idle / span, 2) if span > 0 else None,
        "span_us": round(span, 3),
    }


def rank_skew(per_rank: Sequence[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Skew at each collective and each rank's wait, from every rank's collectives in order.

    Returns ``{"collectives": [{index, name, line, skew_us, last_rank, first_rank}],
    "wait_us": [per rank], "straggler": rank | None}``; only the collectives every rank made.
    """
    n = min((len(c) for c in per_rank), default=0)
    waits = [0.0] * len(per_rank)
    rows: list[dict[str, Any]] = []
    for i in range(n):
        starts = [float(c[i]["ts"]) for c in per_rank]
        last = max(starts)
        for r, s in enumerate(starts):
            waits[r] += last - s
        rows.append(
            {
                "index": i,
                "name": per_rank[0][i]["name"],
                "line": per_rank[0][i].get("line"),
                "skew_us": round(last - min(starts), 3),
                "last_rank": starts.index(last),
                "first_rank": starts.index(min(starts)),
            }
        )
    straggler = min(range(len(waits)), key=lambda r: waits[r]) if n and len(waits) > 1 else None
    return {
        "collectives": rows,
        "wait_us": [round(w, 3) for w in waits],
        "straggler": straggler,
    }


def _line_time(line: Mapping[str, Any], cuda: bool) -> float:
    if cuda:
        return float(line.get("device_us") or 0.0) + float(
            (line.get("backward") or {}).get("device_us") or 0.0
        )
    own = line.get("cpu_us")
    if own is None:
        own = sum(float(op.get("cpu_us") or 0.0) for op in line.get("ops") or [])
    return float(own) + float((line.get("backward") or {}).get("cpu_us") or 0.0)


def merge_ranks(
    results: Sequence[Mapping[str, Any]],
    traces: Sequence[Sequence[Mapping[str, Any]] | None],
    *,
    calls: float = 1.0,
) -> dict[str, Any]:
    """Every rank's profile merged into one: rank 0's result, with ``ranks`` (each rank's
    result), per line ``ranks`` (each rank's time, the slowest rank, the spread) and ``comm``
    (the collectives it issued: time per call, overlap), and ``distributed`` (per-rank HTA
    numbers, the straggler, the skew at each collective).

    Args:
        results: the ranks' profile results, by rank.
        traces: the ranks' trace events, by rank (``None`` where a rank has no trace).
        calls: profiled calls in each trace (a collective's time per call divides by it).
    """
    base: dict[str, Any] = dict(results[0])
    cuda = base.get("device_kind") == "cuda"
    collected = [rank_collectives(t) if t is not None else None for t in traces]
    metrics = [rank_metrics(c) if c is not None else None for c in collected]
    skew = rank_skew([c["collectives"] if c is not None else [] for c in collected])
    lines_by_rank = [{ln["line"]: ln for ln in r.get("lines") or []} for r in results]
    merged_lines: list[dict[str, Any]] = []
    for line in base.get("lines") or []:
        times = [_line_time(lr.get(line["line"]) or {}, cuda) for lr in lines_by_rank]
        slowest = max(range(len(times)), key=lambda r: times[r])
        hi, lo = max(times), min(times)
        out = dict(line)
        out["ranks"] = {
            "us": [round(t, 3) for t in times],
            "slowest_rank": slowest,
            "slowest_us": round(hi, 3),
            "spread_us": round(hi - lo, 3),
            "spread_pct": round(100.0 * (hi - lo) / hi, 1) if hi > 0 else 0.0,
        }
        comm = _line_comm(line["line"], collected, skew, calls)
        if comm:
            out["comm"] = comm
        merged_lines.append(out)
    base["lines"] = merged_lines
    base["ranks"] = [dict(r) for r in results]
    timings = [r.get("timing") or {} for r in results]
    medians = [float(t.get("median_ms") or 0.0) for t in timings]
    base["distributed"] = {
        "nproc": len(results),
        "backend": "nccl" if any(m and m["source"] == "gpu" for m in metrics) else "gloo",
        "source": next((m["source"] for m in metrics if m), None),
        "per_rank": [
            {
                "rank": r,
                "median_ms": medians[r] if timings[r] else None,
                "wait_us": skew["wait_us"][r] if r < len(skew["wait_us"]) else None,
                **(metrics[r] or {}),
            }
            for r in range(len(results))
        ],
        "slowest_rank": max(range(len(medians)), key=lambda r: medians[r]) if medians else None,
        "straggler": skew["straggler"],
        "collectives": skew["collectives"],
        "max_skew_us": max((c["skew_us"] for c in skew["collectives"]), default=0.0),
        "aligned_on_us": [
            c["collectives"][0]["ts"] if c and c["collectives"] else None for c in collected
        ],  # fmt: skip
    }
    return base


def _line_comm(
    line: int,
    collected: Sequence[Mapping[str, Any] | None],
    skew: Mapping[str, Any],
    calls: float,
) -> list[dict[str, Any]]:
    """The collectives a line issued, by name: rank 0's time per call, its overlap with
    computation, the slowest rank's time and the largest skew at them."""
    out: dict[str, dict[str, Any]] = {}
    for r, c in enumerate(collected):
        if c is None:
            continue
        compute = c["compute"]
        for coll in c["collectives"]:
            if coll.get("line") != line:
                continue
            entry = out.setdefault(
                coll["name"],
                {"name": coll["name"], "rank_us": [0.0] * len(collected), "_ov": [0.0, 0.0]},
            )
            entry["rank_us"][r] += coll["dur"]
            if r == 0:
                iv = [(coll["ts"], coll["ts"] + coll["dur"])]
                entry["_ov"][0] += _intersection(iv, compute)
                entry["_ov"][1] += coll["dur"]
    rows = []
    for entry in out.values():
        per = [u / max(calls, 1.0) for u in entry.pop("rank_us")]
        ov_us, dur = entry.pop("_ov")
        skews = [s["skew_us"] for s in skew["collectives"] if s.get("line") == line]
        rows.append(
            {
                **entry,
                "us": round(per[0], 3),
                "rank_us": [round(u, 3) for u in per],
                "slowest_rank": max(range(len(per)), key=lambda r: per[r]),
                "overlap_pct": round(100.0 * ov_us / dur, 1) if dur > 0 else None,
                "max_skew_us": round(max(skews), 3) if skews else 0.0,
                "calls": sum(1 for s in skew["collectives"] if s.get("line") == line)
                / max(calls, 1.0),
            }
        )
    return sorted(rows, key=lambda x: -x["us"])
