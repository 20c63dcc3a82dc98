"""Memory in words: a line's lens part, the summary's peak, the hover's list of what was alive
at the peak, and an out-of-memory's message part (from the ``memory`` keys of a result; see
:mod:`kernel_lens.analysis.memory`).

``+64 MiB · live 1.2 GiB`` on a line; ``peak 1.2 GiB at line 23`` in the summary;
``412 MiB from line 23 (out = model(x)) · saved for backward`` in the lists. CPU figures are the
CPU allocator's and say ``CPU``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernel_lens.analysis.memory import device_label, format_bytes
from kernel_lens.analysis.safe_text import md_code, md_text

__all__ = [
    "live_group_text",
    "memory_hover_lines",
    "memory_lens_text",
    "memory_summary_text",
    "oom_lines",
    "oom_short_text",
    "peak_lines",
]

#: Below this many bytes allocated and freed a line's device entry is left out of its lens
#: (a scalar's 4 bytes); the hover still lists it.
LENS_MIN_BYTES = 1024


def _entry_text(entry: Mapping[str, Any], *, label: bool) -> str:
    alloc = int(entry.get("allocated_bytes") or 0)
    freed = int(entry.get("freed_bytes") or 0)
    parts: list[str] = []
    if alloc:
        text = format_bytes(alloc, sign=True)
        bwd = int(entry.get("backward_allocated_bytes") or 0)
        if bwd:
            text += f" (bwd {format_bytes(bwd, sign=True)})"
        parts.append(text)
    if freed:
        parts.append(format_bytes(-freed, sign=True))
    head = " ".join(parts) if parts else "±0"
    live = entry.get("live_bytes")
    if live is not None:
        head += f" · live {format_bytes(int(live))}"
    prefix = f"{device_label(str(entry.get('device', '')))} " if label else ""
    return prefix + head


def memory_lens_text(line: Mapping[str, Any]) -> str | None:
    """``$(database) +64 MiB · live 1.2 GiB`` (``CPU +16 MiB · live 16 MiB`` on the CPU, one
    part per device), or ``None`` for a line with no memory worth a lens."""
    entries = [
        e
        for e in line.get("memory") or []
        if int(e.get("allocated_bytes") or 0) + int(e.get("freed_bytes") or 0) >= LENS_MIN_BYTES
    ]
    if not entries:
        return None
    several = len(entries) > 1
    texts = [_entry_text(e, label=several or str(e.get("device")) == "cpu") for e in entries]
    return "$(database) " + " | ".join(texts)


def _peak_where(dev: Mapping[str, Any]) -> str:
    line = dev.get("peak_line")
    host = dev.get("peak_host_line")
    if line is None:
        return "off the function's lines"
    if dev.get("peak_in_backward") and host is not None and host != line:
        return f"at line {host} (backward of line {line})"
    return f"at line {line}"


def memory_summary_text(result: Mapping[str, Any]) -> str | None:
    """``peak 1.2 GiB at line 23`` (``CPU peak 48 MiB at line 20``; per device), or ``None``
    without memory."""
    memory = result.get("memory")
    if not isinstance(memory, Mapping):
        return None
    parts = []
    devices = memory.get("devices") or []
    for dev in devices:
        # one device: the summary names it already; several: each peak says whose it is
        label = f"{device_label(str(dev.get('device')))} " if len(devices) > 1 else ""
        parts.append(f"{label}peak {format_bytes(int(dev['peak_bytes']))} {_peak_where(dev)}")
    return " · ".join(parts) if parts else None


def live_group_text(group: Mapping[str, Any], *, markdown: bool = False) -> str:
    """``412 MiB from line 23 (out = model(x)) · saved for backward``."""
    source = str(group.get("source") or "")
    esc = md_text if markdown else str
    where = f"line {esc(group.get('line'))}"
    if group.get("file"):
        where = f"{esc(group['file'])}:{esc(group.get('line'))}"
    if source:
        where += f" ({md_code(source)})" if markdown else f" ({source})"
    text = f"{format_bytes(int(group['bytes']))} from {where}"
    kind = group.get("kind")
    if kind:
        text += " · " + ("allocated by its backward" if kind == "backward" else esc(kind))
    return text


def _rest_text(dev: Mapping[str, Any]) -> list[str]:
    out = []
    if dev.get("before_bytes"):
        out.append(
            f"{format_bytes(int(dev['before_bytes']))} allocated before the profiled calls "
            "(parameters, inputs, optimizer state)"
        )
    if dev.get("outside_bytes"):
        out.append(f"{format_bytes(int(dev['outside_bytes']))} allocated off the function's lines")
    return out


def memory_hover_lines(result: Mapping[str, Any], line: Mapping[str, Any]) -> list[str]:
    """The hover's memory part for one line: what it allocated and freed per device, and on the
    line where a device's peak was reached, what was alive then by line (largest first)."""
    out: list[str] = []
    entries: Sequence[Mapping[str, Any]] = line.get("memory") or []
    if entries:
        out += ["", "**Memory** per call:"]
        for e in entries:
            label = md_text(device_label(str(e.get("device", ""))))
            text = f"- {label}: " + md_text(_entry_text(e, label=False))
            bwd = int(e.get("backward_allocated_bytes") or 0)
            if bwd:
                text += f" — {format_bytes(bwd)} of it allocated by this line's backward"
            out.append(text)
    memory = result.get("memory")
    if not isinstance(memory, Mapping):
        return out
    no = line.get("line")
    for dev in memory.get("devices") or []:
        if no not in (dev.get("peak_line"), dev.get("peak_host_line")):
            continue
        out += [
            "",
            f"**Peak** {md_text(device_label(str(dev.get('device'))))}: "
            f"**{format_bytes(int(dev['peak_bytes']))}** {md_text(_peak_where(dev))}; alive then:",
        ]
        out += [f"- {live_group_text(g, markdown=True)}" for g in dev.get("live_at_peak") or []]
        out += [f"- {md_text(text)}" for text in _rest_text(dev)]
    return out


def peak_lines(result: Mapping[str, Any]) -> list[str]:
    """What was alive at each device's peak, in plain text (the CLI's)."""
    memory = result.get("memory")
    if not isinstance(memory, Mapping):
        return []
    out = []
    for dev in memory.get("devices") or []:
        out.append(
            f"peak {device_label(str(dev.get('device')))}: {format_bytes(int(dev['peak_bytes']))} "
            f"{_peak_where(dev)}; alive then:"
        )
        out += [f"  {live_group_text(g)}" for g in dev.get("live_at_peak") or []]
        out += [f"  {text}" for text in _rest_text(dev)]
    return out


def oom_short_text(memory: Mapping[str, Any]) -> str:
    """``out of memory on GPU 0 allocating 1 GiB · 138 GiB alive, 138 GiB from line 62``."""
    failed = memory.get("failed_bytes")
    text = f"out of memory on {memory.get('label', 'GPU')}"
    if failed:
        text += f" allocating {format_bytes(int(failed))}"
    text += f" · {format_bytes(int(memory.get('live_bytes') or 0))} alive"
    groups = memory.get("live_by_line") or []
    if groups:
        top = groups[0]
        text += f", {format_bytes(int(top['bytes']))} from line {top.get('line')}"
    return text


def oom_lines(memory: Mapping[str, Any]) -> list[str]:
    """An out-of-memory's detail: the allocation that failed, what was alive by line."""
    out = [oom_short_text(memory).replace(" · ", "; ", 1) + ":"]
    if memory.get("failed_line"):
        out[0] = out[0].rstrip(":") + f" (the failed allocation: line {memory['failed_line']}):"
    out += [f"  {live_group_text(g)}" for g in memory.get("live_by_line") or []]
    if memory.get("no_frame_bytes"):
        out.append(
            f"  {format_bytes(int(memory['no_frame_bytes']))} with no frame of your files "
            "(allocated before the call, or by C++)"
        )
    if memory.get("device_free_bytes") is not None:
        out.append(f"  {format_bytes(int(memory['device_free_bytes']))} was free on the device")
    return out
