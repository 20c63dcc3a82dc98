"""Trace files for the report and the trace viewer: read and reduced off the event loop (a
200k-event trace takes seconds), kept in the server's bounded caches by path and mtime.

A helper of the feature layer (``report`` and ``file_views`` use it); it imports no feature
module.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, cast

from kernel_lens.analysis.timeline import build_timeline
from kernel_lens.analysis.trace_summary import load_trace, summarize_trace
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.protocol import Timeline, TraceFileResult

__all__ = ["overview_timeline", "read_trace_file", "window_timeline"]


async def _loaded(ls: KernelLensServer, path: str) -> dict[str, Any]:
    """A loaded trace, from the cache while the file is unchanged.

    Raises:
        TraceError: the file cannot be read as a trace.
        OSError: the file is gone.
    """
    mtime = os.path.getmtime(path)
    cached = ls.traces.traces.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    trace = await asyncio.to_thread(load_trace, path)
    ls.traces.traces.put(path, (mtime, trace))
    return trace


def _timeline(trace: dict[str, Any], path: str, window: tuple[float, float] | None) -> Timeline:
    timeline = build_timeline(trace, window=window)
    timeline["path"] = path
    return cast(Timeline, timeline)


async def overview_timeline(ls: KernelLensServer, path: str | None) -> Timeline | None:
    """The whole-trace timeline of a trace file (``None`` when there is no such file)."""
    if not path or not os.path.isfile(path):
        return None
    mtime = os.path.getmtime(path)
    cached = ls.traces.timelines.get(path)
    if cached is not None and cached[0] == mtime:
        return cast(Timeline, cached[1])
    trace = await _loaded(ls, path)
    timeline = await asyncio.to_thread(_timeline, trace, path, None)
    ls.traces.timelines.put(path, (mtime, cast(dict[str, Any], timeline)))
    return timeline


async def window_timeline(
    ls: KernelLensServer, path: str, start_us: float, end_us: float
) -> Timeline:
    """The events of a window of a trace file, merged at the window's scale.

    Raises:
        TraceError: the file cannot be read as a trace.
        OSError: the file is gone.
    """
    trace = await _loaded(ls, path)
    return await asyncio.to_thread(_timeline, trace, path, (start_us, end_us))


async def read_trace_file(path: str) -> TraceFileResult:
    """A trace file opened in the viewer: its timeline and summary (read fresh, not cached).

    Raises:
        TraceError: the file cannot be read as a trace.
    """

    def work() -> TraceFileResult:
        trace = load_trace(path)
        return {
            "path": path,
            "timeline": _timeline(trace, path, None),
            "summary": summarize_trace(trace).to_json(),
        }

    return await asyncio.to_thread(work)
