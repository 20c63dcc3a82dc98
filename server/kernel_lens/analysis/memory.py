"""Memory on the line: what each line allocated and freed, the peak and what was alive at it.

Two sources, both pure here so they are tested on what an H200 recorded:

- a ``profile_memory=True`` Chrome trace: every allocation and free is a ``[memory]`` instant
  event on the thread that made it, with its size (``Bytes``, negative for a free), address and
  the device's running total (``Total Allocated``). Each is put on a line by the same rules as
  the ops (:func:`kernel_lens.analysis.line_attribution.place_instants`), so an allocation made
  by the backward lands on the forward line whose op made the autograd node. Replaying the
  allocations by address gives what was alive at the peak, by the line that allocated it;
- an allocator snapshot (``torch.cuda.memory._snapshot()`` with ``_record_memory_history``),
  taken by the out-of-memory observer at the failure: the blocks alive then with their Python
  stacks, grouped by the innermost frame of the user's file (:func:`oom_from_snapshot`).

Sizes are bytes (ints); per-line figures are per call of the function (a profiled pass makes
several calls; memory is deterministic for a given input, so they divide exactly).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from kernel_lens.analysis.line_attribution import Place, place_instants
from kernel_lens.wire.results import LineMemory

__all__ = [
    "MEMORY_EVENT",
    "MemoryLine",
    "attribute_memory",
    "device_label",
    "format_bytes",
    "memory_events",
    "oom_from_snapshot",
]

#: The name of ``profile_memory``'s instant events.
MEMORY_EVENT = "[memory]"
#: Points kept per device in the timeline's memory lane.
TIMELINE_POINTS = 2000
#: Groups kept in a live-by-line list.
LIVE_GROUPS = 20


def format_bytes(n: float, *, sign: bool = False) -> str:
    """``64 MiB``, ``1.2 GiB``, ``512 B`` (binary units); ``+64 MiB`` / ``−2 MiB`` with
    ``sign``."""
    value = abs(float(n))
    prefix = ("+" if n >= 0 else "\u2212") if sign else ("\u2212" if n < 0 else "")
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            q = value / scale
            text = f"{q:.0f}" if q >= 100 or q.is_integer() else f"{q:.3g}"
            return f"{prefix}{text} {unit}"
    return f"{prefix}{value:.0f} B"


def device_label(device: str) -> str:
    """``CPU`` for ``cpu``; ``GPU 0`` for ``cuda:0``."""
    if device == "cpu":
        return "CPU"
    if device.startswith("cuda:"):
        return f"GPU {device[5:]}"
    return device


def _device_of(args: Mapping[str, Any]) -> str:
    # Device Type is c10's DeviceType: 0 CPU, 1 CUDA.
    kind = args.get("Device Type")
    if kind == 1:
        return f"cuda:{args.get('Device Id', 0)}"
    if kind == 0:
        return "cpu"
    return f"device{kind}:{args.get('Device Id', 0)}"


def memory_events(trace: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The trace's ``[memory]`` instants, in time order."""
    out = [
        ev
        for ev in trace.get("traceEvents", [])
        if isinstance(ev, dict)
        and ev.get("name") == MEMORY_EVENT
        and ev.get("ts") is not None
        and isinstance(ev.get("args"), dict)
    ]
    out.sort(key=lambda ev: (float(ev["ts"]), (ev["args"].get("Ev Idx") or 0)))
    return out


@dataclass
class MemoryLine:
    """One line's allocations on one device, summed over the profiled calls.

    Attributes:
        line: 1-based line.
        device: ``cpu`` or ``cuda:N``.
        allocated: bytes allocated (its forward and the backward it caused).
        freed: bytes freed.
        backward_allocated: the part of ``allocated`` made by the backward of its ops.
        live: the device's total allocated after the line's last forward allocation or free.
        events: allocations and frees.
    """

    line: int
    device: str
    allocated: int = 0
    freed: int = 0
    backward_allocated: int = 0
    live: int | None = None
    events: int = 0

    def to_json(self, runs: int) -> LineMemory:
        """Plain JSON, per call."""
        out: LineMemory = {
            "device": self.device,
            "allocated_bytes": _per_call(self.allocated, runs),
            "freed_bytes": _per_call(self.freed, runs),
            "live_bytes": self.live,
        }
        if self.backward_allocated:
            out["backward_allocated_bytes"] = _per_call(self.backward_allocated, runs)
        return out


def _per_call(total: int, runs: int) -> int:
    return int(round(total / max(1, runs)))


@dataclass
class _Peak:
    device: str
    bytes: int = -1
    index: int = -1
    place: Place | None = None
    live: dict[int, tuple[int, Place | None]] = field(default_factory=dict)


def _within(place: Place | None, first_line: int | None, last_line: int | None) -> Place | None:
    """The place, or ``None`` outside the function's lines (when they are known)."""
    if place is None:
        return None
    if first_line is not None and last_line is not None:
        if not first_line <= place.line <= last_line:
            return None
    return place


def _timeline_offset(all_events: list[dict[str, Any]], t0: float) -> float:
    """The Report's timeline counts from the trace's first complete event: the memory lane's
    points are put on that clock by this offset."""
    starts = [
        float(ev["ts"])
        for ev in all_events
        if ev.get("ph") == "X"
        and isinstance(ev.get("ts"), int | float)
        and ev.get("dur") is not None
    ]
    return t0 - min(starts) if starts else 0.0


@dataclass
class _Replay:
    """The memory events replayed in order: per (line, device) figures, each device's peak,
    its timeline of totals and what it allocated outside the function."""

    per: dict[tuple[int, str], MemoryLine] = field(default_factory=dict)
    peaks: dict[str, _Peak] = field(default_factory=dict)
    timeline: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    outside: dict[str, int] = field(default_factory=dict)

    def run(self, events: list[dict[str, Any]], placed: list[Place | None]) -> None:
        t0 = float(events[0]["ts"])
        # The CPU's running total counts from whenever its reporter started and drifts with
        # the frees of blocks allocated before (their sizes unknown to it): on the CPU the live
        # total is what the profiled calls allocated and have not freed, replayed by address.
        cpu_blocks: dict[int, int] = {}
        cpu_total = 0
        for i, (ev, place) in enumerate(zip(events, placed, strict=True)):
            args = ev["args"]
            device = _device_of(args)
            size = int(args.get("Bytes") or 0)
            total = int(args.get("Total Allocated") or 0)
            if device == "cpu":
                addr = int(args.get("Addr") or 0)
                if size > 0:
                    cpu_blocks[addr] = size
                    cpu_total += size
                else:
                    cpu_total -= cpu_blocks.pop(addr, 0)
                total = cpu_total
            self.timeline.setdefault(device, []).append((float(ev["ts"]) - t0, total))
            peak = self.peaks.setdefault(device, _Peak(device))
            if total > peak.bytes:
                peak.bytes, peak.index, peak.place = total, i, place
            if place is None:
                if size > 0:
                    self.outside[device] = self.outside.get(device, 0) + size
                continue
            self.add(place, device, size, total)

    def add(self, place: Place, device: str, size: int, total: int) -> None:
        """One allocation (``size`` > 0) or free on its line."""
        stat = self.per.get((place.line, device))
        if stat is None:
            stat = self.per[(place.line, device)] = MemoryLine(place.line, device)
        stat.events += 1
        if size > 0:
            stat.allocated += size
            if place.backward:
                stat.backward_allocated += size
        else:
            stat.freed -= size
        if not place.backward:
            stat.live = total


def _live_at_peaks(
    events: list[dict[str, Any]], placed: list[Place | None], peaks: dict[str, _Peak]
) -> None:
    """What was alive at each device's peak (`_Peak.live`): the allocations replayed by
    address up to it."""
    live: dict[str, dict[int, tuple[int, Place | None]]] = {}
    last_index = max(p.index for p in peaks.values())
    for i, ev in enumerate(events[: last_index + 1]):
        args = ev["args"]
        device = _device_of(args)
        size = int(args.get("Bytes") or 0)
        addr = int(args.get("Addr") or 0)
        blocks = live.setdefault(device, {})
        if size > 0:
            blocks[addr] = (size, placed[i])
        else:
            blocks.pop(addr, None)
        peak = peaks[device]
        if i == peak.index:
            peak.live = dict(blocks)


def attribute_memory(
    trace: Mapping[str, Any],
    *,
    runs: int = 1,
    source_of: Callable[[int], str] | None = None,
    first_line: int | None = None,
    last_line: int | None = None,
) -> tuple[dict[int, list[LineMemory]], dict[str, Any] | None]:
    """Per-line memory and the peak, from a ``profile_memory`` trace with line tags.

    Args:
        trace: the loaded Chrome trace.
        runs: the profiled calls it holds (per-line bytes are divided by it).
        source_of: ``line -> text`` for the live-at-peak list (``None``: no text).
        first_line, last_line: the function's lines (others are "outside the function").

    Returns:
        ``(per_line, memory)``: each line's list of per-device figures (the lines' ``memory``
        key), and the result's ``memory`` object (``None`` when the trace has no memory events:
        profiled without ``profile_memory``).
    """
    events = memory_events(trace)
    if not events:
        return {}, None
    all_events = [ev for ev in trace.get("traceEvents", []) if isinstance(ev, dict)]
    placed = [_within(p, first_line, last_line) for p in place_instants(all_events, events)]
    replay = _Replay()
    replay.run(events, placed)
    _live_at_peaks(events, placed, replay.peaks)
    per_line: dict[int, list[LineMemory]] = {}
    for (line, _device), stat in sorted(replay.per.items()):
        per_line.setdefault(line, []).append(stat.to_json(runs))
    offset = _timeline_offset(all_events, float(events[0]["ts"]))
    devices = []
    for device, peak in sorted(replay.peaks.items()):
        timeline = _downsample(replay.timeline[device])
        dev = _peak_json(peak, source_of, timeline, replay.outside.get(device, 0), runs)
        dev["timeline_offset_us"] = round(offset, 3)
        devices.append(dev)
    return per_line, {"devices": devices, "source": "profile_memory"}


def _peak_json(
    peak: _Peak,
    source_of: Callable[[int], str] | None,
    timeline: list[list[float]],
    outside: int,
    runs: int,
) -> dict[str, Any]:
    in_backward = peak.place is not None and peak.place.in_backward
    host = peak.place.host_line if peak.place is not None else None
    groups: dict[tuple[int | None, bool], int] = {}
    for size, place in peak.live.values():
        key = (place.line if place is not None else None, bool(place and place.backward))
        groups[key] = groups.get(key, 0) + size
    tracked = sum(groups.values())
    rows: list[dict[str, Any]] = []
    for (line, backward), size in sorted(groups.items(), key=lambda kv: -kv[1]):
        if line is None:
            continue
        row: dict[str, Any] = {
            "line": line,
            "source": source_of(line) if source_of is not None else "",
            "bytes": size,
        }
        if backward:
            row["kind"] = "backward"
        elif in_backward and line != host:
            # allocated by the forward and still alive while the backward ran: what autograd
            # saved for the backward (activations) or the outputs it reads
            row["kind"] = "saved for backward"
        rows.append(row)
    other = groups.get((None, False), 0)
    before = max(0, peak.bytes - tracked)
    out: dict[str, Any] = {
        "device": peak.device,
        "label": device_label(peak.device),
        "peak_bytes": peak.bytes,
        "peak_line": peak.place.line if peak.place is not None else None,
        "peak_in_backward": in_backward,
        "peak_host_line": host,
        "live_at_peak": rows[:LIVE_GROUPS],
        "outside_bytes": other,
        "before_bytes": before,
        "timeline": timeline,
    }
    if outside:
        out["allocated_outside_bytes"] = _per_call(outside, runs)
    return out


def _downsample(points: Sequence[tuple[float, int]]) -> list[list[float]]:
    """At most :data:`TIMELINE_POINTS` ``[t_us, bytes]`` points, each bucket's highest kept so
    the peak survives."""
    if len(points) <= TIMELINE_POINTS:
        return [[round(t, 3), b] for t, b in points]
    step = len(points) / TIMELINE_POINTS
    out: list[list[float]] = []
    for k in range(TIMELINE_POINTS):
        bucket = points[int(k * step) : max(int(k * step) + 1, int((k + 1) * step))]
        t, b = max(bucket, key=lambda p: p[1])
        out.append([round(t, 3), b])
    return out


def _frame_place(
    frames: Iterable[Mapping[str, Any]],
    *,
    path: str,
    first_line: int | None,
    last_line: int | None,
    workspace: str | None,
) -> tuple[str, int] | None:
    """The frame a block belongs to: the innermost one on the function's lines, else the
    innermost in its file, else the innermost in the workspace (never torch's or
    site-packages')."""
    frames = list(frames)
    real = os.path.realpath(path)

    def same(filename: str) -> bool:
        return filename == path or os.path.realpath(filename) == real

    for f in frames:
        line = int(f.get("line") or 0)
        if same(str(f.get("filename", ""))):
            if first_line is None or last_line is None or first_line <= line <= last_line:
                return str(f["filename"]), line
    for f in frames:
        if same(str(f.get("filename", ""))):
            return str(f["filename"]), int(f.get("line") or 0)
    if workspace:
        root = os.path.realpath(workspace) + os.sep
        for f in frames:
            name = str(f.get("filename", ""))
            if name.startswith("<") or "site-packages" in name or "dist-packages" in name:
                continue
            if os.path.realpath(name).startswith(root):
                return name, int(f.get("line") or 0)
    return None


_Where = Callable[[list[Any]], "tuple[str, int] | None"]


def _live_groups(
    snapshot: Mapping[str, Any], device: int | None, where_of: _Where
) -> tuple[dict[tuple[str, int] | None, int], int]:
    """The bytes of the snapshot's live blocks by their place (``None``: no frame of the
    user's), and their total."""
    groups: dict[tuple[str, int] | None, int] = {}
    total = 0
    for seg in snapshot.get("segments") or []:
        if device is not None and seg.get("device") not in (None, device):
            continue
        for block in seg.get("blocks") or []:
            if block.get("state") != "active_allocated":
                continue
            size = int(block.get("size") or 0)
            total += size
            where = where_of(block.get("frames") or [])
            groups[where] = groups.get(where, 0) + size
    return groups, total


def _oom_record(snapshot: Mapping[str, Any], device: int | None) -> Mapping[str, Any] | None:
    """The device traces' last ``oom`` entry (of ``device``'s trace when it is given)."""
    oom_record: Mapping[str, Any] | None = None
    for i, trace in enumerate(snapshot.get("device_traces") or []):
        if device is not None and i != device:
            continue
        for entry in trace:
            if entry.get("action") == "oom":
                oom_record = entry
    return oom_record


def _live_rows(
    groups: dict[tuple[str, int] | None, int],
    path: str,
    source_of: Callable[[int], str] | None,
) -> list[dict[str, Any]]:
    """The live bytes by line, most first; a line of another file than ``path`` names it."""
    rows: list[dict[str, Any]] = []
    for where, size in sorted(groups.items(), key=lambda kv: -kv[1]):
        if where is None:
            continue
        file, line = where
        row: dict[str, Any] = {"line": line, "bytes": size}
        if os.path.realpath(file) == os.path.realpath(path):
            row["source"] = source_of(line) if source_of is not None else ""
        else:
            row["file"] = file
            row["source"] = ""
        rows.append(row)
    return rows


def oom_from_snapshot(
    snapshot: Mapping[str, Any],
    *,
    path: str,
    first_line: int | None = None,
    last_line: int | None = None,
    workspace: str | None = None,
    source_of: Callable[[int], str] | None = None,
    device: int | None = None,
    failed_bytes: int | None = None,
) -> dict[str, Any]:
    """What was alive at an out-of-memory, by line, from the allocator's snapshot taken then.

    Args:
        snapshot: ``torch.cuda.memory._snapshot()`` (with ``_record_memory_history`` on), taken
            by the out-of-memory observer.
        path: the user's file; first_line/last_line: the function's lines.
        workspace: a folder whose files count as the user's too.
        source_of: ``line -> text`` of ``path``.
        device: the device that ran out (the observer's argument); ``None``: every device.
        failed_bytes: the size of the allocation that failed (the observer's); else the
            snapshot's ``oom`` record's.
    """
    where_of = partial(
        _frame_place, path=path, first_line=first_line, last_line=last_line, workspace=workspace
    )
    groups, total = _live_groups(snapshot, device, where_of)
    oom_record = _oom_record(snapshot, device)
    if failed_bytes is None and oom_record is not None:
        failed_bytes = int(oom_record.get("size") or 0)
    failed_at = where_of(oom_record.get("frames") or []) if oom_record is not None else None
    out: dict[str, Any] = {
        "device": f"cuda:{device}" if device is not None else "cuda",
        "label": device_label(f"cuda:{device}") if device is not None else "GPU",
        "failed_bytes": failed_bytes,
        "live_bytes": total,
        "live_by_line": _live_rows(groups, path, source_of)[:LIVE_GROUPS],
        "no_frame_bytes": groups.get(None, 0),
        "source": "snapshot",
    }
    if failed_at is not None:
        out["failed_line"] = failed_at[1]
    if oom_record is not None and oom_record.get("device_free") is not None:
        out["device_free_bytes"] = int(oom_record["device_free"])
    return out
