"""The timelines of a distributed step's ranks as one timeline: one lane group per rank. Pure.

Each rank's trace is reduced to lanes as for one trace (`TraceStore.timeline`: its CPU threads,
gloo's threads, the CUDA runtime, its GPU streams); here they are put on one time axis, rank
after rank, each lane's id prefixed with its rank (``rank1/cpu-…``) and marked with it.

**Aligned** means: every rank's events are shifted so that the start of each rank's *first
collective* falls at the same time — the collective as :mod:`kernel_lens.analysis.distributed`
finds it (on a GPU the first ``nccl…`` kernel; on the CPU, gloo's ``gloo:all_reduce`` on its
thread), whose start in the trace's own clock is the merged result's
``distributed.aligned_on_us``. The ranks' clocks are not compared (each profiler has its own
origin); the first collective is the moment the ranks are known to meet. The rank whose first
collective comes latest after its trace's start is not shifted; every other rank is shifted
later by the difference, so no time is negative. A rank with no collective is not shifted
(aligned on its trace's start), and says so. The lane a rank's collectives run on (gloo's
thread, the NCCL stream) says so in its title (``CPU thread 7576 · gloo collectives``).

The skew at each collective (the last rank's start less the first's, on the trace clocks, from
``distributed.collectives``) goes with the merged timeline, with each rank's start of that
collective on the merged axis, for the Report's markers. The straggler is the merged result's
(the rank with the least total wait in collectives).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kernel_lens.analysis.trace_store import TraceStore

__all__ = [
    "collective_events",
    "first_collectives",
    "merge_rank_timelines",
    "rank_lane_id",
    "rank_shifts",
]

_BACKEND_RE = re.compile(r"^(gloo|nccl):", re.IGNORECASE)
_DEVICE_CATS = ("kernel", "memcpy", "memset")


def rank_lane_id(rank: int, lane_id: str) -> str:
    """A rank's lane in the merged timeline: ``rank1/cpu-7533-7578``."""
    return f"rank{rank}/{lane_id}"


#: A collective found in a trace store: start and duration (µs from the trace's start), name and
#: the id of the lane it is on.
Collective = tuple[float, float, str, str]


def collective_events(store: TraceStore) -> list[Collective]:
    """A rank's collectives in its trace store, by start: ``(start_us, dur_us, name, lane_id)``,
    times from the trace's start.

    The same events as `distributed.rank_collectives`: when the trace has GPU work, the kernels
    whose names start with ``nccl`` (any case); else gloo's (or nccl's) host-side collectives
    (``gloo:all_reduce``) among the CPU events.
    """
    if store.event_count == 0:
        return []
    cats = list(store.cats)
    cat = np.asarray(store.cat)
    device_codes = [cats.index(c) for c in _DEVICE_CATS if c in cats]
    on_device = np.isin(cat, device_codes) if device_codes else np.zeros(len(cat), dtype=bool)
    if on_device.any():
        codes = [i for i, s in enumerate(store.strings) if s[:4].lower() == "nccl"]
        kernel = cats.index("kernel") if "kernel" in cats else -1
        mask = (cat == kernel) & np.isin(np.asarray(store.name), codes)
    else:
        codes = [i for i, s in enumerate(store.strings) if _BACKEND_RE.match(s)]
        host = [cats.index(c) for c in ("user_annotation", "cpu_op") if c in cats]
        mask = np.isin(cat, host) & np.isin(np.asarray(store.name), codes)
    rows = np.flatnonzero(mask)
    # the segment (lane, depth) each row is in: rows are ordered by segment
    seg = np.searchsorted(np.asarray(store.segments)[:, 2], rows, "right") - 1
    lane_of = np.asarray(store.segments)[seg, 0] if len(rows) else np.zeros(0, dtype=np.int64)
    return sorted(
        (
            float(store.start[r]),
            float(store.dur[r]),
            store.strings[int(store.name[r])],
            str(store.lanes[int(lane)]["id"]),
        )
        for r, lane in zip(rows.tolist(), lane_of.tolist(), strict=True)
    )


def first_collectives(
    aligned_on_us: Sequence[float | None] | None,
    origins_us: Sequence[float | None],
    found: Sequence[Sequence[Collective]],
) -> list[float | None]:
    """Each rank's first collective's start, µs from its trace's start: the merged result's
    ``aligned_on_us`` (trace clock) less the trace's first timestamp, or where the result has no
    such number, the first of the collectives found in the trace (`collective_events`);
    ``None`` for a rank without a collective."""
    out: list[float | None] = []
    for r, origin in enumerate(origins_us):
        at = aligned_on_us[r] if aligned_on_us is not None and r < len(aligned_on_us) else None
        if at is not None and origin is not None:
            out.append(round(float(at) - float(origin), 3))
        elif r < len(found) and found[r]:
            out.append(round(found[r][0][0], 3))
        else:
            out.append(None)
    return out


def rank_shifts(firsts: Sequence[float | None]) -> list[float]:
    """How much later each rank's events are drawn so that the first collectives start
    together: the latest first collective less the rank's own; 0 for a rank without one."""
    known = [f for f in firsts if f is not None]
    latest = max(known, default=0.0)
    return [round(latest - f, 3) if f is not None else 0.0 for f in firsts]


def _backend(name: str) -> str:
    """``gloo`` for ``gloo:all_reduce``, ``NCCL`` for an ``ncclDevKernel_…``."""
    if _BACKEND_RE.match(name):
        return name.split(":", 1)[0]
    return "NCCL"


def _shifted(events: Sequence[Mapping[str, Any]], shift: float) -> list[dict[str, Any]]:
    if shift == 0.0:
        return [dict(e) for e in events]
    return [{**e, "start": e["start"] + shift} for e in events]


def merge_rank_timelines(
    timelines: Sequence[Mapping[str, Any]],
    *,
    shifts: Sequence[float],
    paths: Sequence[str | None],
    firsts: Sequence[float | None],
    distributed: Mapping[str, Any] | None = None,
    found: Sequence[Sequence[Collective]] = (),
    window: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """One timeline of every rank's lanes, grouped by rank, shifted by ``shifts``.

    Args:
        timelines: each rank's timeline (`TraceStore.timeline`), times from its trace's start;
            of the whole trace, or of ``window`` less the rank's shift.
        shifts: µs each rank's events move later (`rank_shifts`).
        paths: each rank's trace file (for the panel's detail windows).
        firsts: each rank's first collective's start in its own trace (`first_collectives`).
        distributed: the merged result's ``distributed`` (straggler, waits, skews).
        found: each rank's collectives in its trace (`collective_events`), for the markers.
        window: the merged window these timelines are of (``None``: the whole step).

    Returns:
        A `Timeline` whose lanes carry ``rank``, with ``ranks`` (per rank: ``rank``, ``path``,
        ``shift_us``, ``first_collective_us``, ``straggler``, ``wait_us``, ``lanes``) and
        ``collectives`` (per collective every rank made: ``index``, ``name``, ``line``,
        ``skew_us``, ``first_rank``, ``last_rank``, ``starts`` on the merged axis, ``durs``).
    """
    dist = distributed or {}
    straggler = dist.get("straggler")
    per_rank = {p.get("rank"): p for p in dist.get("per_rank") or [] if isinstance(p, Mapping)}
    lanes: list[dict[str, Any]] = []
    ranks: list[dict[str, Any]] = []
    span = 0.0
    for r, timeline in enumerate(timelines):
        shift = float(shifts[r]) if r < len(shifts) else 0.0
        span = max(span, float(timeline.get("span_us") or 0.0) + shift)
        ids = []
        backends = {c[3]: _backend(c[2]) for c in (found[r] if r < len(found) else ())}
        for lane in timeline.get("lanes") or []:
            lane_id = rank_lane_id(r, str(lane["id"]))
            ids.append(lane_id)
            title = str(lane["title"])
            if lane["id"] in backends:
                title += f" · {backends[lane['id']]} collectives"
            lanes.append(
                {
                    **lane,
                    "id": lane_id,
                    "title": title,
                    "rank": r,
                    "events": _shifted(lane["events"], shift),
                }
            )
        wait = (per_rank.get(r) or {}).get("wait_us")
        ranks.append(
            {
                "rank": r,
                "path": paths[r] if r < len(paths) else None,
                "shift_us": shift,
                "first_collective_us": firsts[r] if r < len(firsts) else None,
                "straggler": straggler == r,
                "wait_us": float(wait) if wait is not None else None,
                "lanes": ids,
            }
        )
    collectives: list[dict[str, Any]] = []
    for row in dist.get("collectives") or []:
        i = int(row.get("index", len(collectives)))
        starts: list[float | None] = []
        durs: list[float | None] = []
        for r in range(len(timelines)):
            ev = found[r][i] if r < len(found) and i < len(found[r]) else None
            shift = float(shifts[r]) if r < len(shifts) else 0.0
            starts.append(round(ev[0] + shift, 3) if ev is not None else None)
            durs.append(round(ev[1], 3) if ev is not None else None)
        collectives.append(
            {
                "index": i,
                "name": str(row.get("name") or "collective"),
                "line": row.get("line"),
                "skew_us": float(row.get("skew_us") or 0.0),
                "first_rank": row.get("first_rank"),
                "last_rank": row.get("last_rank"),
                "starts": starts,
                "durs": durs,
            }
        )
    return {
        "span_us": round(span, 3),
        "window": list(window) if window is not None else None,
        "event_count": sum(int(t.get("event_count") or 0) for t in timelines),
        "kept": sum(int(t.get("kept") or 0) for t in timelines),
        "lanes": lanes,
        "ranks": ranks,
        "collectives": collectives,
    }
