"""A Chrome trace reduced to timeline lanes for the report panel. Pure.

Lanes: one per CPU thread (the user's ``src:<line>`` ranges and the ATen ops nested in them, with
their depth), one for CUDA runtime/driver calls (launches, synchronisations, copies), and one per
GPU stream (kernels, memcpy, memset). Large traces are reduced in the server so the panel stays
smooth: per lane, events shorter than the span / ``resolution`` that sit next to each other are
merged into one "N events" block, so a lane never carries more than about ``resolution`` items per
depth level whatever the trace size. Times are µs from the trace's first event.

The work is done by the columnar `trace_store.TraceStore`; the language server keeps the store of
a trace file and asks it for windows (`TraceStore.timeline`) without building it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernel_lens.analysis.trace_columns import columns_from_trace
from kernel_lens.analysis.trace_store import build_store

__all__ = ["build_timeline"]


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
    store = build_store(columns_from_trace(trace))
    return store.timeline(resolution=resolution, window=window)
