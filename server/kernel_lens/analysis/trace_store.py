"""The timeline of a trace kept in columns, for window queries at interactive speed.

A `TraceStore` holds a trace's events laid out for the timeline: lane by lane (one per CPU thread,
one for the CUDA runtime, one per GPU stream), depth by depth, sorted by start, with the running
maximum of the ends beside them. A window is then two binary searches per (lane, depth) and a
vectorised merge of the events shorter than a pixel (`TraceStore.timeline`); nothing is redone
per event in Python. The store is built once from `TraceColumns` (`build_store`), together with
the trace's summary. Saving it to a folder (``.npy`` columns read back memory-mapped, and a
``meta.json``) and the reader process that builds one are `kernel_lens.traces`.

Pure: numpy and pandas, no process is started and no file is written here. Times are µs from the
trace's first event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from kernel_lens.analysis.launch_links import RUNTIME_CATS
from kernel_lens.analysis.launch_links import id_lookup as _lookup
from kernel_lens.analysis.line_attribution import BACKWARD_PREFIX, LINE_RANGE_RE
from kernel_lens.analysis.names import short_kernel_name
from kernel_lens.analysis.trace_columns import Progress, TraceColumns

__all__ = ["ARRAYS", "Piece", "TraceStore", "Walk", "build_store", "runtime_title", "walk_pieces"]


def runtime_title(device_kind: str) -> str:
    """The runtime lane's title: ``CUDA runtime`` for a GPU, ``MTIA runtime``, …"""
    return "CUDA runtime" if device_kind == "GPU" else f"{device_kind} runtime"


_CPU = frozenset({"cpu_op", "user_annotation", "python_function"})
_RUNTIME = RUNTIME_CATS
_DEVICE = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
_LANE_ORDER = {"cpu": 0, "runtime": 1, "gpu": 2}
#: A merged block never reaches over more than this many positions of the resolution: the
#: overview of a dense lane reads as its density along the time axis, not as one block.
_MAX_MERGE_POSITIONS = 16
#: The store's per-row columns (what `kernel_lens.traces.cache` saves as ``.npy`` files).
ARRAYS = ("start", "end", "dur", "reach", "name", "label", "cat", "line", "self_dur")
#: How many names a lane's "most time" lists.
_TOP = 3

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class TraceStore:
    """A trace's timeline in columns; see the module's docstring.

    Rows are ordered by lane, then depth, then start; ``segments`` holds, per (lane, depth),
    ``[lane index, depth, first row, end row]``. ``reach`` is the running maximum of ``end``
    within a segment. ``name`` and ``label`` (the short kernel name, else the name) are codes
    into ``strings``, ``cat`` into ``cats``; ``line`` is the source line, -1 for none;
    ``self_dur`` is the event's own time: its duration less the part of it its children (the
    events one depth below that start in it) cover.
    """

    span_us: float
    event_count: int
    lanes: tuple[dict[str, str], ...]
    segments: I64
    start: F64
    end: F64
    dur: F64
    reach: F64
    name: I64
    label: I64
    cat: I64
    line: I64
    self_dur: F64
    strings: tuple[str, ...]
    cats: tuple[str, ...]
    summary: dict[str, Any] | None = None
    """The trace's summary as JSON (`TraceSummary.to_json`), when it was built with it."""
    origin_us: float = 0.0
    """The trace's first timestamp, in its own clock: the store's times are from it (a
    distributed step's ranks are aligned with it, `rank_timeline`)."""

    def timeline(
        self, *, resolution: int = 4000, window: tuple[float, float] | None = None
    ) -> dict[str, Any]:
        """The lanes of the whole trace or of ``window``, merged at its scale.

        Args:
            resolution: distinguishable positions across the span (or window): events shorter
                than its width / resolution are merged with short neighbours into "N events".
            window: ``(start_us, end_us)`` from the trace's start; only events overlapping it.

        Returns:
            ``{"span_us", "window", "event_count", "kept", "lanes": [{"id", "title", "kind",
            "events": [{"start", "dur", "depth", "name", "short", "cat", "line", "count"?,
            "merged"?}]}]}``.
        """
        if self.event_count == 0:
            return {"span_us": 0.0, "event_count": 0, "kept": 0, "lanes": []}
        scale = self.span_us if window is None else max(window[1] - window[0], 1e-9)
        min_dur = scale / max(resolution, 1)
        # A depth with more events in view than it has blocks of _MAX_MERGE_POSITIONS positions.
        dense_above = max(resolution, 1) // _MAX_MERGE_POSITIONS
        per_lane: list[list[_Blocks]] = [[] for _ in self.lanes]
        in_view: list[list[I64]] = [[] for _ in self.lanes]
        for lane, depth, first, stop in self.segments.tolist():
            lo, hi = first, stop
            if window is not None:
                lo = first + int(np.searchsorted(self.reach[first:stop], window[0], "left"))
                hi = first + int(np.searchsorted(self.start[first:stop], window[1], "right"))
            if lo >= hi:
                continue
            rows = np.arange(lo, hi, dtype=np.int64)
            if window is not None:
                rows = rows[np.asarray(self.end[lo:hi]) >= window[0]]
            if len(rows):
                per_lane[lane].append(
                    self._reduce(rows, min_dur, depth, dense=len(rows) > dense_above)
                )
                in_view[lane].append(rows)
        lanes = []
        kept = 0
        for lane, blocks, rows_in_view in zip(self.lanes, per_lane, in_view, strict=True):
            events = [e for b in blocks for e in self._events(b)]
            kept += len(events)
            lanes.append({**lane, "events": events, "top": self._top(rows_in_view, window)})
        return {
            "span_us": self.span_us,
            "window": list(window) if window is not None else None,
            "event_count": self.event_count,
            "kept": kept,
            "lanes": lanes,
        }

    def _top(self, parts: list[I64], window: tuple[float, float] | None) -> list[dict[str, Any]]:
        """Where a lane's time goes in view: the names with the most own time (`self_dur`, in
        a window the part of it inside the window), with their share of the lane's own time
        in view, most first."""
        if not parts:
            return []
        rows = np.concatenate(parts)
        own = np.asarray(self.self_dur[rows])
        if window is not None:
            start, dur = np.asarray(self.start[rows]), np.asarray(self.dur[rows])
            inside = np.minimum(start + dur, window[1]) - np.maximum(start, window[0])
            with np.errstate(divide="ignore", invalid="ignore"):
                part = np.where(dur > 0, np.clip(inside, 0.0, None) / dur, 1.0)
            own = own * part
        total = float(own.sum())
        if total <= 0:
            return []
        per_name = np.bincount(np.asarray(self.label[rows]), weights=own)
        best = np.argsort(-per_name, kind="stable")[:_TOP]
        return [
            {"name": self.strings[i], "us": float(per_name[i]), "share": float(per_name[i]) / total}
            for i in best.tolist()
            if per_name[i] > 0
        ]

    def _events(self, b: _Blocks) -> list[dict[str, Any]]:
        """The blocks of one depth as the timeline's event objects."""
        rows = b.rows
        name = np.asarray(self.name[rows]).tolist()
        label = np.asarray(self.label[rows]).tolist()
        cat = np.asarray(self.cat[rows]).tolist()
        out = []
        for start, dur, n, lb, c, line, count in zip(
            np.asarray(self.start[rows]).tolist(),
            b.dur.tolist(),
            name,
            label,
            cat,
            b.line.tolist(),
            b.count.tolist(),
            strict=True,
        ):
            event: dict[str, Any] = {
                "start": start,
                "dur": dur,
                "depth": b.depth,
                "name": self.strings[n] if count <= 1 else f"{count} events",
                "short": self.strings[lb],
                "cat": self.cats[c],
                "line": None if line < 0 else line,
            }
            if count > 0:
                event["count"] = count
                event["merged"] = True
            out.append(event)
        return out

    def _reduce(self, rows: I64, min_dur: float, depth: int, *, dense: bool) -> _Blocks:
        """One depth of one lane (rows sorted by start): runs of short events merged.

        A run of events shorter than ``min_dur`` whose gaps are shorter than ``min_dur`` becomes
        one block (its first event's fields, ``count``, ``merged``, the name "N events" and the
        line they share, if they share one). In a ``dense`` depth (more events in view than
        blocks of ``_MAX_MERGE_POSITIONS`` positions fit across it), events shorter than that
        many positions count as short, and a block ends where a grid of that many positions is
        crossed: the depth shows where its events are (density) and names the events wide
        enough to read, about 2 × resolution / ``_MAX_MERGE_POSITIONS`` items at most, neither
        one block per lane nor an item per position. A lone short event at the very end of the
        depth stays a plain event, as before merging existed.
        """
        start = np.asarray(self.start[rows])
        end = np.asarray(self.end[rows])
        dur = np.asarray(self.dur[rows])
        line = np.asarray(self.line[rows])
        # In a dense depth, events under a few positions are drawn as density, not one by one.
        short = dur < (min_dur * _MAX_MERGE_POSITIONS if dense else min_dur)
        first = ~short  # where a block starts: every long event, and the first of a run
        idx = np.flatnonzero(short)
        if len(idx):
            # Runs of short events: a long event between two short ones ends a run.
            run = np.cumsum(~short).astype(np.int64)[idx]
            s, e = start[idx], end[idx]
            reach = _segmented_cummax(e, run)
            head = np.ones(len(idx), dtype=bool)
            head[1:] = (run[1:] != run[:-1]) | (s[1:] - reach[:-1] >= min_dur)
            if dense:
                cell = np.floor(s / (min_dur * _MAX_MERGE_POSITIONS))
                head[1:] |= cell[1:] != cell[:-1]
            first[idx] = head
        heads = np.flatnonzero(first)
        out_rows = rows[heads]
        out_dur = dur[heads].copy()
        out_line = line[heads].copy()
        count = np.zeros(len(heads), dtype=np.int64)
        if len(idx):
            short_heads = np.flatnonzero(short[heads])
            at = np.flatnonzero(head)  # positions in idx where short blocks start
            sizes = np.diff(np.append(at, len(idx)))
            # The ends of the events merged into the first (its own end is its start + dur).
            others = np.where(head, -np.inf, end[idx])
            block_end = np.maximum.reduceat(others, at)
            lo_line = np.minimum.reduceat(line[idx], at)
            hi_line = np.maximum.reduceat(line[idx], at)
            many = sizes > 1
            first_start = start[idx[at]]
            out_dur[short_heads] = np.where(
                many, np.maximum(dur[idx[at]], block_end - first_start), dur[idx[at]]
            )
            out_line[short_heads] = np.where(
                many, np.where((lo_line == hi_line) & (lo_line >= 0), lo_line, -1), line[idx[at]]
            )
            count[short_heads] = sizes
            # A lone short event at the very end of the depth was never merged.
            if sizes[-1] == 1 and idx[at[-1]] == len(rows) - 1:
                count[short_heads[-1]] = 0
        return _Blocks(depth=depth, rows=out_rows, dur=out_dur, line=out_line, count=count)


@dataclass(frozen=True, eq=False)
class _Blocks:
    """What one depth of one lane shows: per block its first row, and its dur, line and count
    (0: a plain event, else the events merged into it)."""

    depth: int
    rows: I64
    dur: F64
    line: I64
    count: I64


def _segmented_cummax(values: F64, group: I64) -> F64:
    """Running maximum of ``values`` restarting where ``group`` (non-decreasing) changes."""
    out = pd.Series(values).groupby(group, sort=False).cummax().to_numpy(np.float64)
    return np.asarray(out, dtype=np.float64)


_INF = float("inf")


def _nest(start: list[float], end: list[float], own: list[int]) -> tuple[list[int], list[int]]:
    """Depth and source line of each event of one thread, sorted by (start, -end).

    The walk keeps a stack of open events: an event pops those on top that ended by its start,
    its depth is what remains, and its line is its own (a ``src:<line>`` range) or the one on
    top of the stack. Real traces are not properly nested (a range opened inside a Python call
    outlives it), so this is the walk itself, not a formula that assumes nesting.
    """
    n = len(start)
    depth = [0] * n
    line = [-1] * n
    ends: list[float] = []
    lines: list[int] = []
    push_end, push_line, pop_end, pop_line = ends.append, lines.append, ends.pop, lines.pop
    top = _INF  # ends[-1], or +inf for an empty stack (nothing to pop)
    here = -1  # lines[-1], or -1
    open_ = 0  # len(ends)
    for i, (s, e, mine) in enumerate(zip(start, end, own, strict=True)):
        if s >= top:  # the top ended: pop it, then whatever else ended under it
            pop_end()
            pop_line()
            open_ -= 1
            while open_ and s >= ends[-1]:
                pop_end()
                pop_line()
                open_ -= 1
            if open_:
                top, here = ends[-1], lines[-1]
            else:
                top, here = _INF, -1
        depth[i] = open_
        if mine >= 0:
            here = mine
        line[i] = here
        push_end(e)
        push_line(here)
        open_ += 1
        top = e
    return depth, line


def _order(start: F64, tie: F64, group: I64) -> I64:
    """``np.lexsort((tie, start, group))`` (``group``: non-negative ints), a few times faster on
    millions of events: a stable sort by start alone (the events come nearly in time order, which
    that sort takes in runs), the runs of equal starts sorted by ``tie`` among themselves, then a
    stable sort by group (a radix sort when the groups fit 16 bits)."""
    by_start = np.argsort(start, kind="stable")
    s = start[by_start]
    new_run = np.empty(len(s), dtype=bool)
    new_run[:1] = True
    np.not_equal(s[1:], s[:-1], out=new_run[1:])
    del s
    if not new_run.all():
        # The events of runs of equal starts, by (run, tie): they stay on the run's places.
        tied = np.flatnonzero(~new_run | np.append(~new_run[1:], False))
        run = np.cumsum(new_run)[tied]
        sub = by_start[tied]
        by_start[tied] = sub[np.lexsort((tie[sub], run))]
        del tied, run, sub
    del new_run
    g = group[by_start]
    if len(g) and int(g.max()) < 1 << 16:
        g = g.astype(np.uint16)
    return by_start[np.argsort(g, kind="stable")]


#: Events walked at a time by `_nest` (its Python lists hold one piece, not a whole thread).
_NEST_PIECE = 1 << 16


#: One thread's stretch of events for `_nest` (sorted by (start, -end)): start, end, own line.
Piece = tuple[F64, F64, I64]
#: Walks pieces: the depth and line of their events, piece after piece (`walk_pieces`).
Walk = Callable[[list[Piece]], tuple[I64, I64]]


def _cut_thread(start: F64, end: F64, own: I64) -> list[Piece]:
    """One thread's events (sorted by (start, -end)) as pieces of about `_NEST_PIECE` events,
    each starting where every earlier event has ended (the walk's stack is empty there), so the
    pieces are walked independently and the answer is the walk's over the whole thread."""
    n = len(start)
    cuts = [0, n]
    if n > _NEST_PIECE:
        prior_end = np.empty(n)
        prior_end[0] = -_INF
        np.maximum.accumulate(end[:-1], out=prior_end[1:])
        empty = np.flatnonzero(prior_end <= start)  # where the stack is empty
        wanted = np.searchsorted(empty, np.arange(_NEST_PIECE, n, _NEST_PIECE), "left")
        picked = empty[wanted[wanted < len(empty)]]
        cuts = sorted({0, n, *picked.tolist()})
    return [(start[a:b], end[a:b], own[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def walk_pieces(pieces: list[Piece]) -> tuple[I64, I64]:
    """The depth and line of the pieces' events by `_nest`, piece after piece (its Python lists
    hold one piece at a time)."""
    depths: list[I64] = [np.zeros(0, dtype=np.int64)]
    lines: list[I64] = [np.zeros(0, dtype=np.int64)]
    for start, end, own in pieces:
        d, ln = _nest(start.tolist(), end.tolist(), own.tolist())
        depths.append(np.asarray(d, dtype=np.int64))
        lines.append(np.asarray(ln, dtype=np.int64))
    return np.concatenate(depths), np.concatenate(lines)


def _host_walk(
    columns: TraceColumns, start: F64, end: F64, is_host: npt.NDArray[np.bool_], walk: Walk
) -> tuple[I64, I64, I64]:
    """Depths and source lines per CPU thread (its CPU events and runtime calls together), and
    the host rows in the walk's order."""
    n = len(columns)
    keys = columns.keys
    depth = np.zeros(n, dtype=np.int64)
    line = np.full(n, -1, dtype=np.int64)
    name_line = np.array(
        [
            # another file's line (a deep whole run) is not a line of this one
            int(m.group("line")) if (m := LINE_RANGE_RE.match(s)) and not m.group("file") else -1
            for s in columns.names
        ]
        + [-1],
        dtype=np.int64,
    )
    annotation = columns.cat_code("user_annotation")
    host = np.flatnonzero(is_host)
    thread = columns.pid[host] * (len(keys) + 1) + columns.tid[host]
    thread_code = pd.factorize(thread, sort=True)[0].astype(np.int64, copy=False)
    order = host[_order(start[host], -end[host], thread_code)]
    del thread_code
    thread_sorted = columns.pid[order] * (len(keys) + 1) + columns.tid[order]
    bounds = np.flatnonzero(np.diff(thread_sorted)) + 1
    del thread, thread_sorted
    pieces: list[Piece] = []
    for a, b in zip(
        np.concatenate(([0], bounds)).tolist(),
        np.concatenate((bounds, [len(order)])).tolist(),
        strict=True,
    ):
        rows = order[a:b]
        own = np.where(columns.cat[rows] == annotation, name_line[columns.name[rows]], -1)
        pieces += _cut_thread(start[rows], end[rows], own)
    depth[order], line[order] = walk(pieces)
    return depth, line, order


def _device_lines(columns: TraceColumns, line: I64, order: I64, dev: I64) -> None:
    """GPU events take the line of the runtime call (correlation) or op (External id) behind
    them; ``line`` is filled in place at the rows ``dev``."""
    with_line = order[line[order] >= 0]  # in the walk's order, for "first line wins"
    corr_line = _lookup(columns.corr[with_line], line[with_line], last=True)
    ext_line = _lookup(columns.ext_id[with_line], line[with_line], last=False)
    by_corr = corr_line(columns.corr[dev])
    by_ext = ext_line(columns.ext_id[dev])
    line[dev] = np.where(by_corr > 0, by_corr, by_ext)


@dataclass
class _Lanes:
    """The lanes as they are met: each row's lane (-1 for none) and each lane's (id, title,
    kind)."""

    columns: TraceColumns
    line: I64
    lane_of: I64
    info: list[tuple[str, str, str]]
    key: dict[tuple[str, int, int], int]
    #: A CPU thread that runs autograd nodes and no line of the user's: the backward engine's
    #: own thread (``pt_autograd_0`` on CUDA), said in its lane's title.
    engine_name: npt.NDArray[np.bool_]

    @classmethod
    def start(cls, columns: TraceColumns, line: I64) -> _Lanes:
        engine_name = np.array(
            [s.startswith(BACKWARD_PREFIX) for s in columns.names] + [False], dtype=bool
        )
        lane_of = np.full(len(columns), -1, dtype=np.int64)
        return cls(columns, line, lane_of, [], {}, engine_name)

    def add(self, mask: npt.NDArray[np.bool_], kind: str, a: I64, b: I64) -> None:
        """The lanes of the rows of ``mask``, one per (``a``, ``b``) pair."""
        columns, keys = self.columns, self.columns.keys
        rows = np.flatnonzero(mask)
        if not len(rows):
            return
        pairs = a[rows] * (len(keys) + 1) + b[rows]
        # A hash table, not a sort: a lane's index does not depend on the order met (the
        # lanes are ordered by their ids below).
        inverse, uniq = pd.factorize(pairs)
        engine = np.zeros(len(uniq), dtype=bool)
        lined = np.zeros(len(uniq), dtype=bool)
        if kind == "cpu":
            np.logical_or.at(engine, inverse, self.engine_name[columns.name[rows]])
            np.logical_or.at(lined, inverse, self.line[rows] >= 0)
        codes = []
        for i, pair in enumerate(uniq.tolist()):
            ka, kb = divmod(pair, len(keys) + 1)
            if kind == "cpu":
                title = f"CPU thread {keys[kb]}"
                if engine[i] and not lined[i]:
                    title += " · backward (autograd engine)"
                info = (f"cpu-{keys[ka]}-{keys[kb]}", title, "cpu")
            elif kind == "gpu":
                title = f"{columns.device_kind} {keys[ka]} · stream {keys[kb]}"
                info = (f"gpu-{keys[ka]}-{keys[kb]}", title, "gpu")
            else:
                info = ("runtime", runtime_title(columns.device_kind), "runtime")
            codes.append(self.key.setdefault((info[0], 0, 0), len(self.info)))
            if codes[-1] == len(self.info):
                self.info.append(info)
        self.lane_of[rows] = np.array(codes, dtype=np.int64)[inverse]

    def ranked(self) -> tuple[tuple[dict[str, str], ...], I64]:
        """The lanes in the timeline's order (CPU, runtime, GPU; by id), and each row's place
        in it (the lane count for a row of no lane)."""
        info = self.info
        lane_order = sorted(range(len(info)), key=lambda i: (_LANE_ORDER[info[i][2]], info[i][0]))
        rank = np.empty(len(info) + 1, dtype=np.int64)
        rank[lane_order] = np.arange(len(lane_order))
        rank[-1] = len(info)
        lanes = tuple(
            {"id": info[i][0], "title": info[i][1], "kind": info[i][2]} for i in lane_order
        )
        return lanes, rank[self.lane_of]


def _labels(columns: TraceColumns, is_kernel: npt.NDArray[np.bool_]) -> tuple[list[str], I64]:
    """Strings: the names, and the short kernel names as labels (each name's label code)."""
    strings = list(columns.names)
    label_of = np.arange(len(strings) + 1, dtype=np.int64)
    kernel_names = np.unique(columns.name[is_kernel]).tolist()
    index = {s: i for i, s in enumerate(strings)}
    for code in kernel_names:
        short = short_kernel_name(strings[code])
        if short not in index:
            index[short] = len(strings)
            strings.append(short)
        label_of[code] = index[short]
    return strings, label_of


def _shown_cats(cats: list[str]) -> tuple[list[str], I64]:
    """The categories shown (kernel, memcpy and memset always among them), and each category
    code's shown code."""
    out_cats = list(cats)
    for kind in ("kernel", "memcpy", "memset"):
        if kind not in out_cats:
            out_cats.append(kind)
    cat_index = {c: i for i, c in enumerate(out_cats)}
    shown_cat = np.array([cat_index[_DEVICE.get(c, c)] for c in cats] + [0], dtype=np.int64)
    return out_cats, shown_cat


def _segments(
    lane_of: I64,
    lane_rank: I64,
    depth: I64,
    start: F64,
    end: F64,
    dur: F64,
    is_device: npt.NDArray[np.bool_],
) -> tuple[I64, I64, F64]:
    """Order: lane, depth, start; ties as an event-by-event walk meets them (host events
    longest first, then file order). The rows of a lane in that order, the segments (see
    `TraceStore`) and the running maximum of the ends within each."""
    kept = np.flatnonzero(lane_of >= 0)
    group = lane_rank[kept] * (int(depth.max()) + 1)
    group += depth[kept]
    tie = np.where(is_device[kept], 0.0, -dur[kept])
    sort = kept[_order(start[kept], tie, group)]
    del tie, kept, group
    seg_key = lane_rank[sort] * (int(depth.max()) + 1) + depth[sort]
    seg_bounds = np.flatnonzero(np.diff(seg_key)) + 1
    # No event on any lane (only events of no known kind): no segment at all.
    firsts = np.concatenate(([0], seg_bounds)) if len(sort) else np.zeros(0, dtype=np.int64)
    stops = np.concatenate((seg_bounds, [len(sort)])) if len(sort) else firsts
    segments = np.stack(
        [lane_rank[sort][firsts], depth[sort][firsts], firsts, stops], axis=1
    ).astype(np.int64)
    s_end = end[sort]
    reach = np.empty_like(s_end)
    for a, b in zip(firsts.tolist(), stops.tolist(), strict=True):
        reach[a:b] = np.maximum.accumulate(s_end[a:b])
    return sort, segments, reach


def _empty_store(summary: dict[str, Any] | None) -> TraceStore:
    """The store of a trace with no events."""
    empty_f, empty_i = np.zeros(0), np.zeros(0, dtype=np.int64)
    return TraceStore(0.0, 0, (), np.zeros((0, 4), dtype=np.int64), empty_f, empty_f,
                      empty_f, empty_f, empty_i, empty_i, empty_i, empty_i, empty_f, (),
                      (), summary)  # fmt: skip


def build_store(
    columns: TraceColumns,
    *,
    summary: dict[str, Any] | None = None,
    progress: Progress | None = None,
    walk: Walk | None = None,
) -> TraceStore:
    """Lay out a trace's events for the timeline (see `TraceStore`); ``walk`` nests the threads'
    pieces (`walk_pieces` by default; the reader process spreads them over processes)."""
    n = len(columns)
    if progress:
        progress(0.8, "laying out the timeline")
    if n == 0:
        return _empty_store(summary)
    t0 = float(columns.ts.min())
    start = columns.ts - t0
    dur = columns.dur
    end = start + dur
    # As the trace's clock has it: the last end minus the first start (not the rebased ends).
    span = max(float((columns.ts + dur).max()) - t0, 1e-9)
    is_cpu = columns.cat_in(_CPU)
    is_runtime = columns.cat_in(_RUNTIME)
    is_device = columns.cat_in(frozenset(_DEVICE))
    is_kernel = columns.cat_in(frozenset(c for c, k in _DEVICE.items() if k == "kernel"))

    depth, line, order = _host_walk(columns, start, end, is_cpu | is_runtime, walk or walk_pieces)
    depth[is_runtime] = 0
    _device_lines(columns, line, order, np.flatnonzero(is_device))
    del order

    lanes = _Lanes.start(columns, line)
    lanes.add(is_cpu & ~is_runtime, "cpu", columns.pid, columns.tid)
    lanes.add(is_runtime, "runtime", columns.pid, columns.pid * 0)
    lanes.add(is_device, "gpu", columns.device, columns.stream)
    lane_rows, lane_rank = lanes.ranked()
    strings, label_of = _labels(columns, is_kernel)
    out_cats, shown_cat = _shown_cats(list(columns.cats))

    sort, segments, reach = _segments(lanes.lane_of, lane_rank, depth, start, end, dur, is_device)
    s_start, s_end, s_dur = start[sort], end[sort], dur[sort]
    self_dur = _self_times(segments, s_start, s_end, s_dur)
    return TraceStore(
        span_us=span,
        event_count=n,
        lanes=lane_rows,
        segments=segments.reshape(-1, 4),
        start=s_start,
        end=s_end,
        dur=s_dur,
        self_dur=self_dur,
        reach=reach,
        name=columns.name[sort],
        label=np.where(is_kernel[sort], label_of[columns.name[sort]], columns.name[sort]),
        cat=shown_cat[columns.cat[sort]],
        line=line[sort],
        strings=tuple(strings),
        cats=tuple(out_cats),
        summary=summary,
        origin_us=t0,
    )


def _self_times(segments: I64, start: F64, end: F64, dur: F64) -> F64:
    """Each row's own time: its duration less what its children cover. A child is an event one
    depth below, in the same lane, whose parent is the last event of the depth above starting
    at or before it; the part of it past its parent's end is not taken off (traces are not
    always properly nested), and an own time never goes below zero."""
    own = dur.copy()
    by_key = {(lane, depth): (first, stop) for lane, depth, first, stop in segments.tolist()}
    for (lane, depth), (first, stop) in by_key.items():
        above = by_key.get((lane, depth - 1))
        if above is None:
            continue
        a, b = above
        parent = a + np.searchsorted(start[a:b], start[first:stop], "right") - 1
        has = parent >= a
        kids = np.arange(first, stop)[has]
        parent = parent[has]
        covered = np.clip(np.minimum(end[kids], end[parent]) - start[kids], 0.0, None)
        own -= np.bincount(parent, weights=covered, minlength=len(own))
    return np.asarray(np.clip(own, 0.0, None), dtype=np.float64)
