"""Summaries of torch.profiler Chrome traces: top kernels, CPU ops, launches, copies, GPU busy.

A trace is the JSON that `torch.profiler.profile(...).export_chrome_trace(path)` writes. Only
complete events (`"ph": "X"`) carry durations, so only they are read; every time in a trace and
in the summary is in microseconds (µs), the unit of the Chrome trace format.

`load_trace` reads a file, `summarize_trace` turns the parsed JSON into a frozen `TraceSummary`
(plain JSON through `TraceSummary.to_json`), and `format_trace_summary` renders it as text for
the output channel and the CLI.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from kernel_lens.analysis.launch_links import RUNTIME_CATS, kernel_ops
from kernel_lens.analysis.names import short_kernel_name
from kernel_lens.analysis.trace_columns import (
    TraceColumns,
    TraceError,
    columns_from_trace,
    parse_trace_bytes,
    read_trace_bytes,
)

__all__ = [
    "GapStats",
    "KernelRow",
    "LaunchStats",
    "MemcpyRow",
    "MemsetStats",
    "OpRow",
    "StreamRow",
    "TraceError",
    "TraceSummary",
    "format_trace_summary",
    "load_trace",
    "summarize_columns",
    "summarize_trace",
]

_KERNEL = "kernel"
_CPU_OP = "cpu_op"
_MEMCPY = "gpu_memcpy"
_MEMSET = "gpu_memset"
_RUNTIME_CATS = RUNTIME_CATS
_DEVICE_CATS = frozenset({_KERNEL, _MEMCPY, _MEMSET})
# What "wall" spans: the host work being profiled and the device work it caused. Python stack
# events, profiler overhead and the profiler's own "Trace" span are left out because they
# stretch beyond the profiled code.
_WALL_CATS = frozenset({_CPU_OP, "user_annotation"}) | _RUNTIME_CATS | _DEVICE_CATS
_DIRECTION = re.compile(r"\b(HtoD|DtoH|DtoD|HtoH|PtoP|HtoA|AtoH|AtoD|DtoA|AtoA)\b")


@dataclass(frozen=True)
class KernelRow:
    """One CUDA kernel (by full name) in the top-kernels table; times in µs."""

    name: str
    short_name: str
    calls: int
    total_us: float
    mean_us: float
    min_us: float
    max_us: float
    pct: float
    """Share of the total kernel time of the whole trace, in percent."""
    label: str = ""
    """The short name, told apart from another kernel's of the same short name by the first
    name in the full names that differs (``vectorized_elementwise_kernel ‹AddFunctor›``)."""


@dataclass(frozen=True)
class OpRow:
    """One CPU op name (`aten::mm`, …) in the op table; times in µs, summed over its calls.

    `cpu_total_us` is inclusive: an op nested in another op of the same name (`aten::sum`
    inside `aten::sum`) is counted in both, as `torch.profiler`'s `key_averages` does.
    `cpu_self_us` leaves out the time of directly nested CPU ops. `device_us` is the time of
    the kernels the op launched itself, not nested ops: each kernel's launch (its runtime call,
    by `correlation`) is credited to the innermost op around that call on its thread
    (`launch_links.kernel_ops`).
    """

    name: str
    calls: int
    cpu_total_us: float
    cpu_self_us: float
    device_us: float


@dataclass(frozen=True)
class LaunchStats:
    """Kernel launch calls on the host (`cudaLaunchKernel`, `cuLaunchKernelEx`, …)."""

    count: int
    total_us: float
    """CPU time spent in the launch calls, in µs."""


@dataclass(frozen=True)
class MemcpyRow:
    """Device copies of one kind (`Memcpy HtoD (Pageable -> Device)`, …); time in µs."""

    kind: str
    direction: str
    """`HtoD`, `DtoH`, `DtoD`, `HtoH`, `PtoP` (or `unknown` when the trace does not say)."""
    calls: int
    bytes: int
    total_us: float
    gb_per_s: float | None
    """Achieved bandwidth in GB/s (10^9 bytes per second); None when the copies took no time."""


@dataclass(frozen=True)
class MemsetStats:
    """Device memsets, all kinds together; time in µs."""

    calls: int
    bytes: int
    total_us: float


@dataclass(frozen=True)
class GapStats:
    """Idle time between device activity (after overlapping intervals are merged), in µs."""

    count: int
    total_us: float
    max_us: float


@dataclass(frozen=True)
class StreamRow:
    """One GPU stream: kernels run on it and the time it was busy (µs, copies included)."""

    stream: int | str
    device: int | str
    kernels: int
    busy_us: float


@dataclass(frozen=True)
class TraceSummary:
    """What a profiler trace says about the GPU and CPU work; every time is in µs.

    Tables are sorted by time, largest first, and cut to the `top` rows asked for;
    `kernel_calls` and `kernel_total_us` count every kernel, shown or not.
    """

    device: str | None
    """The name of the device the kernels ran on, from the trace's `deviceProperties` (or
    `computeProperties`); None for a trace that lists no device."""
    event_count: int
    """Complete (`ph == "X"`) events with a usable `ts` and `dur`."""
    kernels: tuple[KernelRow, ...]
    kernel_calls: int
    kernel_total_us: float
    ops: tuple[OpRow, ...]
    launches: LaunchStats
    memcpy: tuple[MemcpyRow, ...]
    memset: MemsetStats
    gpu_busy_us: float
    """Length of the union of kernel, memcpy and memset intervals on all devices and streams."""
    gpu_span_us: float
    """From the first device start to the last device end."""
    wall_us: float
    """From the first to the last CPU op, annotation, runtime call or device event."""
    gpu_busy_pct: float | None
    """`gpu_busy_us / wall_us` in percent; None when the trace has no device activity (or a
    wall time of 0)."""
    gaps: GapStats
    streams: tuple[StreamRow, ...]
    device_kind: str = "GPU"
    """What the device is: ``GPU``, ``MTIA``, ``XPU`` or ``PrivateUse1``."""
    op_device_us: float = 0.0
    """Kernel time credited to a CPU op through its launch (the ops' `device_us` summed over
    every op, shown or not); the rest was launched outside any op or has no launch on record."""
    notes: tuple[str, ...] = ()
    """What the numbers cannot say alone, in plain sentences: kernel time not credited to an
    op, launches with no kernel recorded, categories this reader does not read."""

    @property
    def has_gpu_activity(self) -> bool:
        """Whether any kernel, memcpy or memset ran on a device."""
        return self.kernel_calls > 0 or bool(self.memcpy) or self.memset.calls > 0

    def to_json(self) -> dict[str, Any]:
        """This summary as plain JSON: floats rounded to 3 decimals, NaN and infinities as None."""
        data: dict[str, Any] = _jsonable(dataclasses.asdict(self))
        return data


def load_trace(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a torch.profiler Chrome trace (`.json`, or gzip-compressed `.json.gz`).

    Args:
        path: the trace file. Gzip is recognised by its magic bytes, not by the file name.

    Returns:
        The parsed JSON object; it has a `traceEvents` list.

    Raises:
        TraceError: the file is missing or unreadable, is not valid JSON, or is a JSON
            document without a `traceEvents` list.
    """
    return parse_trace_bytes(read_trace_bytes(path), os.fspath(path))


def summarize_trace(trace: Mapping[str, Any], *, top: int = 20) -> TraceSummary:
    """Summarise a parsed Chrome trace (see `load_trace`).

    Only complete events (`ph == "X"`) with a numeric `ts` and a non-negative `dur` are read;
    anything else in `traceEvents` (metadata, flow arrows, malformed events) is ignored.

    Args:
        trace: the trace's JSON object, with a `traceEvents` list.
        top: the most rows to keep in the kernel and CPU-op tables.

    Returns:
        The summary; every time in it is in µs.

    Raises:
        TraceError: `trace` has no `traceEvents` list.
    """
    return summarize_columns(columns_from_trace(trace), top=top)


def summarize_columns(columns: TraceColumns, *, top: int = 20) -> TraceSummary:
    """Summarise a trace's usable complete events (`trace_columns.TraceColumns`).

    Every number is computed as by the row-by-row reading it replaced (same pandas reductions in
    the same order), so summaries are unchanged to the last digit but for summation order.
    """
    events = _events_frame(columns)
    is_kernel = events["cat"].to_numpy() == columns.cat_code(_KERNEL)
    kernels = events[is_kernel]
    device_mask = columns.cat_in(_DEVICE_CATS)
    device_events = events[device_mask]

    kernel_total_us = float(kernels["dur"].sum())
    starts, ends = _union_arrays(device_events["ts"].to_numpy(), device_events["end"].to_numpy())
    gpu_busy_us = sum((ends - starts).tolist())
    # Merged intervals are disjoint, so every gap between neighbours is positive.
    gap_lengths = (starts[1:] - ends[:-1]).tolist()
    wall_us = _span(events[columns.cat_in(_WALL_CATS)])
    has_device = not device_events.empty
    ops = _op_rows(
        events[events["cat"].to_numpy() == columns.cat_code(_CPU_OP)],
        np.flatnonzero(is_kernel),
        events,
        columns,
        top,
    )
    op_device_us, op_rows = ops
    launches = _launch_stats(events, columns)

    return TraceSummary(
        device=columns.device_name,
        event_count=len(events),
        kernels=_kernel_rows(kernels, columns, kernel_total_us, top),
        kernel_calls=len(kernels),
        kernel_total_us=kernel_total_us,
        ops=op_rows,
        launches=launches,
        memcpy=_memcpy_rows(events[events["cat"].to_numpy() == columns.cat_code(_MEMCPY)], columns),
        memset=_memset_stats(events[events["cat"].to_numpy() == columns.cat_code(_MEMSET)]),
        gpu_busy_us=gpu_busy_us,
        gpu_span_us=_span(device_events),
        wall_us=wall_us,
        gpu_busy_pct=gpu_busy_us / wall_us * 100 if has_device and wall_us > 0 else None,
        gaps=GapStats(
            count=len(gap_lengths),
            total_us=sum(gap_lengths),
            max_us=max(gap_lengths, default=0.0),
        ),
        streams=_stream_rows(device_events, columns),
        device_kind=columns.device_kind,
        op_device_us=op_device_us,
        notes=_notes(columns, events, kernel_total_us, op_device_us, launches, has_device),
    )


def _device_section(summary: TraceSummary) -> list[str]:
    """The device, and its busy time against wall time, span, idle gaps and streams."""
    kind = summary.device_kind
    device = summary.device or f"no {kind} device recorded"
    if summary.device and kind != "GPU":
        device += f" ({kind})"
    lines = [f"Trace: {device} · {summary.event_count} events · wall {_us(summary.wall_us)} µs"]
    if not summary.has_gpu_activity:
        lines.append(f"no {kind} activity in this trace")
        return lines
    pct = "-" if summary.gpu_busy_pct is None else f"{summary.gpu_busy_pct:.1f}%"
    lines.append(
        f"{kind} busy {_us(summary.gpu_busy_us)} µs of {_us(summary.wall_us)} µs wall ({pct})"
    )
    lines.append(
        f"{kind} span {_us(summary.gpu_span_us)} µs (first to last device activity); "
        f"{_n(summary.gaps.count, 'idle gap')}, {_us(summary.gaps.total_us)} µs in all, "
        f"longest {_us(summary.gaps.max_us)} µs"
    )
    for s in summary.streams:
        lines.append(
            f"  device {s.device} stream {s.stream}: {_n(s.kernels, 'kernel')}, "
            f"busy {_us(s.busy_us)} µs"
        )
    return lines


def _kernel_section(summary: TraceSummary, width: int) -> list[str]:
    """The top kernels' table (nothing without kernels)."""
    if not summary.kernels:
        return []
    lines = [
        "",
        f"Top kernels ({_n(summary.kernel_calls, 'kernel call')}, "
        f"{_us(summary.kernel_total_us)} µs of kernel time)",
    ]
    lines += _table(
        ["kernel", "calls", "total µs", "mean µs", "%"],
        [
            [k.label or k.short_name, str(k.calls), _us(k.total_us), _us(k.mean_us), f"{k.pct:.1f}"]
            for k in summary.kernels
        ],
        width,
    )
    return lines


def _op_section(summary: TraceSummary, width: int) -> list[str]:
    """The CPU ops' table."""
    if not summary.ops:
        return ["", "CPU ops: none"]
    # A device column of zeros on a CPU-only trace would read as "ran in no time".
    with_device = summary.has_gpu_activity
    header = ["op", "calls", "CPU total µs", "CPU self µs"] + (["device µs"] * with_device)
    lines = [
        "",
        "CPU ops (total includes nested ops"
        + (
            "; device = kernels launched by the op itself, each credited through its launch "
            "to the innermost op around it)"
            if with_device
            else ")"
        ),
    ]
    lines += _table(
        header,
        [
            [o.name, str(o.calls), _us(o.cpu_total_us), _us(o.cpu_self_us)]
            + ([_us(o.device_us)] * with_device)
            for o in summary.ops
        ],
        width,
    )
    return lines


def _transfer_section(summary: TraceSummary, width: int) -> list[str]:
    """Kernel launches, memcpy and memset."""
    lines = [""]
    if summary.launches.count:
        lines.append(
            f"Kernel launches: {_n(summary.launches.count, 'call')}, "
            f"{_us(summary.launches.total_us)} µs of CPU time"
        )
    else:
        lines.append("Kernel launches: none")
    if summary.memcpy:
        lines.append("Memcpy:")
        lines += _table(
            ["kind", "calls", "bytes", "total µs", "GB/s"],
            [
                [
                    m.kind,
                    str(m.calls),
                    str(m.bytes),
                    _us(m.total_us),
                    "-" if m.gb_per_s is None else f"{m.gb_per_s:.1f}",
                ]
                for m in summary.memcpy
            ],
            width,
        )
    else:
        lines.append("Memcpy: none")
    if summary.memset.calls:
        lines.append(
            f"Memset: {_n(summary.memset.calls, 'call')}, {summary.memset.bytes} bytes, "
            f"{_us(summary.memset.total_us)} µs"
        )
    else:
        lines.append("Memset: none")
    return lines


def format_trace_summary(summary: TraceSummary, *, width: int = 100) -> str:
    """Render a summary as a plain-text report (times in µs).

    Sections: device and GPU busy time against wall time, the top kernels, the CPU ops, kernel
    launches, memcpy and memset. A CPU-only trace says "no GPU activity in this trace".

    Args:
        summary: what `summarize_trace` returned.
        width: the widest a line may be, in characters: prose is wrapped and long names in
            tables are cut with "…" (names keep at least 12 characters).

    Returns:
        The report, lines joined with newlines, without a trailing newline.
    """
    lines = _device_section(summary)
    lines += _kernel_section(summary, width)
    lines += _op_section(summary, width)
    lines += _transfer_section(summary, width)
    if summary.notes:
        lines += ["", "Notes:"] + [f"- {note}" for note in summary.notes]
    return "\n".join(_wrap(line, width) for line in lines)


def _kernel_labels(kernels: tuple[KernelRow, ...]) -> list[str]:
    """Each kernel's short name, and where different kernels share one, the first name in
    their full names that tells them apart (``vectorized_elementwise_kernel ‹launch_clamp_scalar›``,
    ``reduce_kernel ‹512›``); a number where even that is the same."""
    labels = [k.short_name for k in kernels]
    groups: dict[str, list[int]] = {}
    for i, k in enumerate(kernels):
        groups.setdefault(k.short_name, []).append(i)
    for members in groups.values():
        if len(members) < 2:
            continue
        names = [kernels[i].name for i in members]
        common = len(os.path.commonprefix(names))
        # back to the start of the template argument or name that differs
        cut = max(names[0].rfind(c, 0, common) for c in "<,( :") + 1
        seen: dict[str, int] = {}
        for i, name in zip(members, names, strict=True):
            part = _NOISE.sub("", name[cut:]).strip()
            part = re.split(r"[<(,>\s]", part, maxsplit=1)[0] or part[:20]
            part = part[:40]
            seen[part] = seen.get(part, 0) + 1
            labels[i] = f"{kernels[i].short_name} ‹{part}›" + (
                f" #{seen[part]}" if seen[part] > 1 else ""
            )
    return labels


#: Namespaces that name no kernel (left out of the part that tells two kernels apart).
_NOISE = re.compile(r"^(?:\s|at::native::|at::|std::|\(anonymous namespace\)::|void\s)+")


def _wrap(line: str, width: int) -> str:
    """Wrap a prose line to `width`; table rows (indented) are already sized by `_table`."""
    if len(line) <= width or line.startswith("  "):
        return line
    return textwrap.fill(line, width=max(width, 20), subsequent_indent="    ")


def _events_frame(columns: TraceColumns) -> pd.DataFrame:
    """One row per usable complete event; `ts` is rebased so that the earliest event is 0.

    Rebasing matters for precision: absolute timestamps are ~5e12 µs, where a float64 keeps
    only about 1 ns, and ends computed as `ts + dur` there would lose the durations' digits.
    Strings and ids stay codes (`cat`, `name`, `pid`, `tid`, `stream`, `device`).
    """
    ts = columns.ts
    if len(ts):
        ts = ts - ts.min()
    return pd.DataFrame(
        {
            "cat": columns.cat,
            "name": columns.name,
            "ts": ts,
            "dur": columns.dur,
            "pid": columns.pid,
            "tid": columns.tid,
            "ext_id": columns.ext_id,
            "stream": columns.stream,
            "device": columns.device,
            "bytes": columns.nbytes,
            "end": ts + columns.dur,
        }
    )


def _named(table: pd.DataFrame, columns: TraceColumns) -> pd.DataFrame:
    """A table grouped by name code, with the names themselves in `name`."""
    names = np.array(columns.names, dtype=object)
    return table.reset_index().assign(name=lambda t: names[t["name"].to_numpy(dtype=np.int64)])


def _kernel_rows(
    kernels: pd.DataFrame, columns: TraceColumns, total_us: float, top: int
) -> tuple[KernelRow, ...]:
    table = _named(
        kernels.groupby("name", sort=False).agg(
            calls=("dur", "size"),
            total_us=("dur", "sum"),
            mean_us=("dur", "mean"),
            min_us=("dur", "min"),
            max_us=("dur", "max"),
        ),
        columns,
    )
    table = table.sort_values(["total_us", "name"], ascending=[False, True]).head(max(top, 0))
    rows = tuple(
        KernelRow(
            name=str(r["name"]),
            short_name=short_kernel_name(str(r["name"])),
            calls=int(r["calls"]),
            total_us=float(r["total_us"]),
            mean_us=float(r["mean_us"]),
            min_us=float(r["min_us"]),
            max_us=float(r["max_us"]),
            pct=float(r["total_us"]) / total_us * 100 if total_us > 0 else 0.0,
        )
        for r in table.to_dict("records")
    )
    return tuple(
        dataclasses.replace(k, label=label)
        for k, label in zip(rows, _kernel_labels(rows), strict=True)
    )


def _op_rows(
    ops: pd.DataFrame, kernel_rows: npt.NDArray[np.int64], events: pd.DataFrame,
    columns: TraceColumns, top: int,
) -> tuple[float, tuple[OpRow, ...]]:  # fmt: skip
    """The kernel time credited to ops, and the op table."""
    ts, end = events["ts"].to_numpy(), events["end"].to_numpy()
    owner = kernel_ops(columns, ts, end, kernel_rows)
    credited = owner >= 0
    kernel_dur = columns.dur[kernel_rows]
    per_op = np.bincount(owner[credited], weights=kernel_dur[credited], minlength=len(columns))
    ops = ops.assign(child_us=_direct_child_time(ops, columns))
    ops = ops.assign(
        # Clock jitter can make children add up to a hair more than their parent.
        self_us=(ops["dur"] - ops["child_us"]).clip(lower=0.0),
        device_us=per_op[ops.index.to_numpy()] if len(ops) else 0.0,
    )
    table = _named(
        ops.groupby("name", sort=False).agg(
            calls=("dur", "size"),
            cpu_total_us=("dur", "sum"),
            cpu_self_us=("self_us", "sum"),
            device_us=("device_us", "sum"),
        ),
        columns,
    )
    table = table.sort_values(["cpu_total_us", "name"], ascending=[False, True]).head(max(top, 0))
    return float(kernel_dur[credited].sum()), tuple(
        OpRow(
            name=str(r["name"]),
            calls=int(r["calls"]),
            cpu_total_us=float(r["cpu_total_us"]),
            cpu_self_us=float(r["cpu_self_us"]),
            device_us=float(r["device_us"]),
        )
        for r in table.to_dict("records")
    )


def _str_rank(columns: TraceColumns) -> npt.NDArray[np.int64]:
    """For each key code, its rank among the keys compared as strings (traces mix int and str)."""
    text = [str(k) for k in columns.keys]
    dense = {t: r for r, t in enumerate(sorted(set(text)))}  # 1 and "1" are one thread
    return np.array([dense[t] for t in text], dtype=np.int64)


def _direct_child_time(ops: pd.DataFrame, columns: TraceColumns) -> npt.NDArray[np.float64]:
    """For each op, the summed duration of the ops directly nested in it on its thread.

    Nesting is time containment per (pid, tid): ops sorted by start (longer first on ties) are
    pushed on a stack, and an op's parent is the innermost still open when it starts.
    """
    n = len(ops)
    child = np.zeros(n, dtype=np.float64)
    if n == 0:
        return child
    rank = _str_rank(columns)
    pid = rank[ops["pid"].to_numpy()]
    tid = rank[ops["tid"].to_numpy()]
    ts = ops["ts"].to_numpy()
    end = ops["end"].to_numpy()
    dur = ops["dur"].to_numpy()
    order = np.lexsort((-end, ts, tid, pid))  # stable: ties keep the events' order
    thread = pid[order] * (len(rank) + 1) + tid[order]
    new_thread = np.ones(n, dtype=bool)
    new_thread[1:] = thread[1:] != thread[:-1]
    acc = [0.0] * n
    stack: list[tuple[int, float]] = []
    for i, first, start, stop, length in zip(
        order.tolist(),
        new_thread.tolist(),
        ts[order].tolist(),
        end[order].tolist(),
        dur[order].tolist(),
        strict=True,
    ):
        if first:
            stack = []
        while stack and stack[-1][1] <= start:
            stack.pop()
        if stack:
            acc[stack[-1][0]] += length
        stack.append((i, stop))
    child[:] = acc
    return child


#: Categories the summary reads (after `normalize_columns`) or knowingly leaves out.
_KNOWN_CATS = _WALL_CATS | frozenset(
    {"python_function", "gpu_user_annotation", "Trace", "overhead", "cpu_instant_event",
     "cuda_sync", "cuda_event", "ac2g", "fwdbwd", "async"}
)  # fmt: skip


def _notes(
    columns: TraceColumns,
    events: pd.DataFrame,
    kernel_total_us: float,
    op_device_us: float,
    launches: LaunchStats,
    has_device: bool,
) -> tuple[str, ...]:
    """The summary's plain-sentence notes (see `TraceSummary.notes`)."""
    notes: list[str] = []
    device = columns.device_kind
    if not len(columns):
        notes.append(
            'the trace has no complete event ("ph": "X" with a time and a duration): nothing '
            "here could be summarised"
        )
    if kernel_total_us > 0 and (events["cat"].to_numpy() == columns.cat_code(_CPU_OP)).any():
        share = op_device_us / kernel_total_us * 100
        if share < 99.95:
            notes.append(
                f"{share:.1f}% of the kernel time ({_us(op_device_us)} of "
                f"{_us(kernel_total_us)} µs) is credited to a CPU op through its launch; the "
                "rest was launched outside any op or has no launch on record"
            )
    if launches.count and not has_device:
        notes.append(
            f"{launches.count} kernel launch{'' if launches.count == 1 else 'es'} but no "
            f"kernel, memcpy or memset recorded: the trace has no {device} activity (not "
            "traced, e.g. a CUPTI range-profiler run)"
        )
    counts = np.bincount(columns.cat, minlength=len(columns.cats)).tolist() if len(columns) else []
    unread = [(c, int(k)) for c, k in zip(columns.cats, counts, strict=False)
              if k and c not in _KNOWN_CATS]  # fmt: skip
    if unread and not has_device and not launches.count and not columns.cat_in(_WALL_CATS).any():
        found = ", ".join(f"{c or '(none)'} ×{k}" for c, k in sorted(unread, key=lambda x: -x[1]))
        notes.append(
            f"none of the {len(columns)} complete events is of a kind this reader uses "
            f"(categories found: {found}): nothing here could be summarised"
        )
    return tuple(notes)


def _launch_stats(events: pd.DataFrame, columns: TraceColumns) -> LaunchStats:
    # cudaLaunchKernel, cuLaunchKernelEx, hipLaunchKernel, cudaGraphLaunch…; MTIA's runFunction
    is_launch = np.array(
        ["Launch" in name or name.startswith("runFunction") for name in columns.names] + [False],
        dtype=bool,
    )
    launches = events[
        columns.cat_in(_RUNTIME_CATS) & is_launch[events["name"].to_numpy(dtype=np.int64)]
    ]
    return LaunchStats(count=len(launches), total_us=float(launches["dur"].sum()))


def _direction(kind: str) -> str:
    match = _DIRECTION.search(kind)
    return match.group(1) if match else "unknown"


def _memcpy_rows(copies: pd.DataFrame, columns: TraceColumns) -> tuple[MemcpyRow, ...]:
    table = _named(
        copies.groupby("name", sort=False).agg(
            calls=("dur", "size"), bytes=("bytes", "sum"), total_us=("dur", "sum")
        ),
        columns,
    ).sort_values(["total_us", "name"], ascending=[False, True])
    rows = []
    for r in table.to_dict("records"):
        total_us, nbytes = float(r["total_us"]), int(r["bytes"])
        rows.append(
            MemcpyRow(
                kind=str(r["name"]),
                direction=_direction(str(r["name"])),
                calls=int(r["calls"]),
                bytes=nbytes,
                total_us=total_us,
                # bytes per µs is 1e6 bytes/s, so divide by 1e3 for 1e9 bytes/s.
                gb_per_s=nbytes / total_us / 1e3 if total_us > 0 else None,
            )
        )
    return tuple(rows)


def _memset_stats(memsets: pd.DataFrame) -> MemsetStats:
    return MemsetStats(
        calls=len(memsets),
        bytes=int(memsets["bytes"].sum()),
        total_us=float(memsets["dur"].sum()),
    )


def _stream_rows(device_events: pd.DataFrame, columns: TraceColumns) -> tuple[StreamRow, ...]:
    rows = []
    kernel = columns.cat_code(_KERNEL)
    for key, group in device_events.groupby(["device", "stream"], sort=False):
        device, stream = cast(tuple[int, int], key)
        starts, ends = _union_arrays(group["ts"].to_numpy(), group["end"].to_numpy())
        rows.append(
            StreamRow(
                stream=columns.keys[int(stream)],
                device=columns.keys[int(device)],
                kernels=int((group["cat"].to_numpy() == kernel).sum()),
                busy_us=sum((ends - starts).tolist()),
            )
        )
    return tuple(sorted(rows, key=lambda s: (-s.busy_us, str(s.device), str(s.stream))))


def _union_arrays(
    start: npt.NDArray[np.float64], end: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Merge overlapping or touching intervals; the result is sorted and disjoint."""
    if len(start) == 0:
        return start[:0], end[:0]
    order = np.lexsort((end, start))
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    first = np.ones(len(s), dtype=bool)
    first[1:] = s[1:] > reach[:-1]
    last = np.ones(len(s), dtype=bool)
    last[:-1] = first[1:]
    return s[first], reach[last]


def _span(events: pd.DataFrame) -> float:
    if events.empty:
        return 0.0
    return float(events["end"].max() - events["ts"].min())


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _us(value: float) -> str:
    return f"{value:.1f}"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _table(header: list[str], rows: list[list[str]], width: int) -> list[str]:
    """A left-aligned first column that takes the room the right-aligned numbers leave."""
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(1, len(header))]
    numbers_width = sum(w + 2 for w in widths)
    name_room = max(width - 2 - numbers_width, 12)
    name_width = min(max(len(header[0]), *(len(r[0]) for r in rows)), name_room)

    def line(cells: list[str]) -> str:
        name = cells[0] if len(cells[0]) <= name_width else cells[0][: name_width - 1] + "…"
        numbers = "".join(f"  {c:>{w}}" for c, w in zip(cells[1:], widths, strict=True))
        return f"  {name:<{name_width}}{numbers}"

    return [line(header)] + [line(r) for r in rows]
