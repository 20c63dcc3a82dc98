"""Files opened as views: ``kernelLens/traceFile`` (a Chrome trace's timeline and summary),
``kernelLens/timelineWindow`` (a zoomed window of it) and ``kernelLens/ncuFile`` (a ``.ncu-rep``'s
kernels). The reading runs off the event loop: lenses, hovers and cancel keep answering."""

from __future__ import annotations

import asyncio
from typing import cast

from kernel_lens.analysis.ncu import NcuError
from kernel_lens.analysis.trace_errors import TraceError
from kernel_lens.lsp.common import RequestFailed
from kernel_lens.lsp.convert import JsonReady
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.traces import ranks_window_timeline, read_trace_file, window_timeline
from kernel_lens.traces.ncu_files import read_ncu_file
from kernel_lens.wire.lsp import (
    REQ_NCU_FILE,
    REQ_TIMELINE_WINDOW,
    REQ_TRACE_FILE,
    FileParams,
    NcuFileResult,
    Timeline,
    TimelineWindowParams,
    TraceFileResult,
)

__all__ = ["setup"]


async def trace_file(ls: KernelLensServer, params: FileParams) -> TraceFileResult:
    """A trace file's timeline and summary."""
    try:
        return cast(TraceFileResult, JsonReady(await read_trace_file(ls, params.path)))
    except TraceError as exc:
        raise RequestFailed(message=str(exc)) from None


async def timeline_window(ls: KernelLensServer, params: TimelineWindowParams) -> Timeline:
    """The events of a window of a trace file (or of a distributed step's ranks), in detail."""
    try:
        if params.ranks:
            # a distributed step's rank groups: every rank's trace at its shift
            sources = [(r.path, r.shift_us) for r in params.ranks]
            timeline = await ranks_window_timeline(ls, sources, params.start_us, params.end_us)
        else:
            timeline = await window_timeline(ls, params.path, params.start_us, params.end_us)
        return cast(Timeline, JsonReady(timeline))
    except (TraceError, OSError) as exc:
        raise RequestFailed(message=str(exc)) from None


async def ncu_file(ls: KernelLensServer, params: FileParams) -> NcuFileResult:
    """The kernels of a ``.ncu-rep`` (or ncu CSV) file."""
    try:
        kernels, reader = await asyncio.to_thread(read_ncu_file, params.path)
    except NcuError as exc:
        raise RequestFailed(message=str(exc)) from None
    return {
        "report_path": params.path,
        "reader": reader,
        "kernels": [k.to_json() for k in kernels],
    }


def setup(ls: KernelLensServer) -> None:
    """Register the file requests."""
    ls.feature(REQ_TRACE_FILE)(trace_file)
    ls.feature(REQ_TIMELINE_WINDOW)(timeline_window)
    ls.feature(REQ_NCU_FILE)(ncu_file)
