"""Trace files for the report and the trace viewer, at interactive speed whatever their size.

A trace file is read once, in a child process (``python -m kernel_lens.traces.reader``, started
by :mod:`kernel_lens.traces.readers`), into a columnar `TraceStore` with its summary, saved in the
cache folder (:mod:`kernel_lens.traces.cache`) under a name made of the file's path, size and
mtime; the server maps those columns (memory-mapped ``.npy``) and answers
the overview and every zoom from them (`TraceStore.timeline`: binary searches and vectorised
merging, tens of milliseconds at 1M events). A small trace (up to ``_IN_PROCESS_BYTES`` of JSON,
the usual profile of a call or two) is read in a thread of the server instead: faster than
starting a process. So:

- the server's interpreter never parses a big JSON (a parse holds the GIL for seconds): lenses,
  hovers and cancel keep answering while a trace loads;
- the server keeps one reader process waiting (``--serve``: Python started, numpy, pandas and
  msgspec imported; started two seconds after ``initialized`` and again after each reading,
  ``$KERNEL_LENS_TRACE_SPARE=0`` turns it off), so a big trace's reading starts at once instead
  of ~0.4 s later; each reader reads one trace and exits, giving its memory back;
- the load reports ``$/progress`` (cancellable: cancel, or the request's own cancellation, kills
  the child) and ``kernelLens/traceProgress`` (for the trace viewer's own display); a trace
  too big for the machine's memory is refused with a message, or ends with one when the child
  runs out of memory;
- a second open of an unchanged file, in this session or a later one, reads no JSON at all; a
  changed file (size or mtime) gets a new folder, and the folders of its older versions go.

A helper of the feature layer (``report`` and ``file_views`` use it); it imports no feature
module.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types

from kernel_lens.analysis.places import inside
from kernel_lens.analysis.regular_files import check_regular
from kernel_lens.analysis.safe_text import link_safe
from kernel_lens.analysis.trace_errors import TraceError
from kernel_lens.lsp.common import workspace_folders
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.state import Job, TraceLoading
from kernel_lens.traces import readers
from kernel_lens.traces.cache import (
    cache_folder,
    load_store,
    remove_older,
    save_store,
    trace_cache_root,
)
from kernel_lens.traces.readers import ReaderPool
from kernel_lens.wire.lsp import (
    NOTIFY_TRACE_PROGRESS,
    NOTIFY_TRACE_READY,
    Timeline,
    TraceFileResult,
    TracePartial,
    TraceProgress,
    TraceReady,
)
from kernel_lens.wire.paths import cache_root

# numpy and pandas (≈0.3 s of every start-up): imported once a trace is opened (here: the
# trace store, the ranks' timelines), not when the server starts.
if TYPE_CHECKING:
    from kernel_lens.analysis.trace_store import TraceStore

__all__ = [
    "cache_folder",
    "open_trace",
    "overview_timeline",
    "ranks_timeline",
    "ranks_window_timeline",
    "read_trace_file",
    "report_timeline",
    "start_spare_reader",
    "stop_spare_reader",
    "trace_cache_root",
    "window_timeline",
]

#: Traces up to this much JSON are read in the server (in a thread): ~10k events, a fraction of a
#: second; bigger ones in a child process with progress.
_IN_PROCESS_BYTES = 2_000_000


def _stat(path: str) -> os.stat_result:
    """The trace file's ``stat``, only of a regular file (a FIFO, a device, a directory is
    refused: never opened, never waited on).

    Raises:
        TraceError: missing, not a regular file, or unreadable.
    """
    try:
        return check_regular(path)
    except FileNotFoundError:
        raise TraceError(f"trace file not found: {path}") from None
    except OSError as exc:
        raise TraceError(f"cannot read trace file {path}: {exc.strerror or exc}") from None


def _pool(ls: KernelLensServer) -> ReaderPool:
    """The server's reader processes."""
    pool = ls.traces.readers
    if pool is None:
        pool = ls.traces.readers = ReaderPool(ls.log)
    return pool


async def start_spare_reader(ls: KernelLensServer, delay_s: float = 0.0) -> None:
    """Have a reader process waiting for the next big trace (`ReaderPool.start_spare`)."""
    await _pool(ls).start_spare(delay_s)


async def stop_spare_reader(ls: KernelLensServer) -> None:
    """Stop the spare reader, and start no other (server shutdown)."""
    await _pool(ls).stop()


def _read_here(path: str) -> TraceStore:
    from kernel_lens.analysis.trace_store import build_store
    from kernel_lens.analysis.trace_summary import summarize_columns
    from kernel_lens.traces.read import read_columns

    columns = read_columns(path)
    return build_store(columns, summary=summarize_columns(columns).to_json())


def _save(store: TraceStore, folder: str) -> None:
    """Save ``store`` as ``folder`` (through a temporary folder: never half written)."""
    tmp = f"{folder}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        save_store(store, tmp)
        if not os.path.isdir(folder):
            os.replace(tmp, folder)
    except OSError:
        pass  # no cache this time: the store in memory answers
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def _open(
    ls: KernelLensServer,
    path: str,
    size: int,
    mtime_ns: int,
    first: asyncio.Future[Any] | None = None,
) -> TraceStore:
    folder = cache_folder(path, size, mtime_ns)
    store = await asyncio.to_thread(load_store, folder)
    if store is not None:
        return store
    json_size = await asyncio.to_thread(readers.json_size, path, size)
    if json_size <= _IN_PROCESS_BYTES:
        # A trace of a profiled call or two: read here, in a thread, in well under a second
        # (a child process would spend longer starting); no progress notification to flash.
        store = await asyncio.to_thread(_read_here, path)
        await asyncio.to_thread(_save, store, folder)
        remove_older(path, folder)
        return store
    await asyncio.to_thread(readers.check_memory, path, size)
    name = os.path.basename(path)
    token = f"kernel-lens-trace-{uuid.uuid4()}"
    job = Job(uri=path, qualname=f"trace {name}", token=token)
    ls.jobs[token] = job
    progress = False
    caps = ls.client_capabilities.window if ls.client_capabilities else None
    if caps and caps.work_done_progress:
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=link_safe(f"Reading {name}"),
                    message="starting",
                    cancellable=True,
                    percentage=0,
                ),
            )
            progress = True
        except Exception as exc:
            ls.log(f"no progress notification: {exc}")

    def on_progress(fraction: float, message: str) -> None:
        percentage = max(0, min(100, int(fraction * 100)))
        if progress:
            ls.work_done_progress.report(
                token,
                types.WorkDoneProgressReport(message=link_safe(message), percentage=percentage),
            )
        note: TraceProgress = {"path": path, "percentage": percentage, "message": message}
        ls.protocol.notify(NOTIFY_TRACE_PROGRESS, note)

    def on_partial(partial: str, fraction: float) -> None:
        # The store of the trace's first chunk: a first view while the rest is read.
        if first is None or first.done():
            return
        store = load_store(partial)
        if store is not None:
            first.set_result((store, {"fraction": fraction, "events": store.event_count}))

    try:
        os.makedirs(trace_cache_root(), exist_ok=True)
        await _pool(ls).build(path, folder, on_progress, job.cancelled, on_partial)
    finally:
        ls.jobs.pop(token, None)
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    remove_older(path, folder)
    store = await asyncio.to_thread(load_store, folder)
    if store is None:
        raise TraceError(f"the columns written for {path} in {folder} cannot be read")
    return store


async def _open_trace(
    ls: KernelLensServer,
    path: str,
    *,
    first_view: bool,
    on_first: Callable[[], None] = lambda: None,
) -> TraceStore | tuple[TraceStore, TracePartial]:
    """`open_trace`; with ``first_view``, the store of a big trace's first chunk and what it
    covers when that comes before the whole trace is read (``on_first`` is called then)."""
    stat = await asyncio.to_thread(_stat, path)
    key = (stat.st_size, stat.st_mtime_ns)
    kept = ls.traces.stores
    found = kept.get(path)
    if found is not None and found[0] == key:
        return found[1]
    loading = ls.traces.loading
    task_key = (path, *key)
    entry = loading.get(task_key)
    if entry is None:
        first: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        entry = TraceLoading(asyncio.ensure_future(_open(ls, path, *key, first)), first)
        loading[task_key] = entry
        entry.task.add_done_callback(lambda _: loading.pop(task_key, None))
    entry.waiters += 1
    try:
        if first_view and entry.first is not None and not entry.task.done():
            # A big trace: the store of its first chunk, if it comes before the whole one.
            await asyncio.wait({entry.task, entry.first}, return_when=asyncio.FIRST_COMPLETED)
            if not entry.task.done() and entry.first.done():
                on_first()
                return cast("tuple[TraceStore, TracePartial]", entry.first.result())
        store = await asyncio.shield(entry.task)
    except asyncio.CancelledError:
        if not entry.task.done() and entry.waiters == 1:
            entry.task.cancel()  # the last one waiting went: stop reading (kills the child)
        raise
    finally:
        entry.waiters -= 1
    kept.put(path, (key, store))
    return store


async def open_trace(ls: KernelLensServer, path: str) -> TraceStore:
    """The columnar store of a trace file: kept, cached on disk, or read now (with progress).

    Requests for the same file while it is read wait for the same reading; a request that is
    cancelled stops waiting, and the reading stops when no request waits for it any more.

    Raises:
        TraceError: the file is missing, is not a trace, is too large for the memory, or its
            reading was cancelled from the progress notification.
    """
    got = await _open_trace(ls, path, first_view=False)
    assert not isinstance(got, tuple)
    return got


def _timeline(store: TraceStore, path: str, window: tuple[float, float] | None) -> Timeline:
    timeline = store.timeline(window=window)
    timeline["path"] = path
    return cast(Timeline, timeline)


async def overview_timeline(ls: KernelLensServer, path: str | None) -> Timeline | None:
    """The whole-trace timeline of a trace file (``None`` when there is no such file)."""
    if not path:
        return None
    try:
        stat = await asyncio.to_thread(check_regular, path)
    except OSError:
        return None  # gone, or not a regular file: no timeline
    cached = ls.traces.timelines.get(path)
    if cached is not None and cached[0] == stat.st_mtime:
        return cast(Timeline, cached[1])
    store = await open_trace(ls, path)
    timeline = await asyncio.to_thread(_timeline, store, path, None)
    ls.traces.timelines.put(path, (stat.st_mtime, cast(dict[str, Any], timeline)))
    return timeline


async def window_timeline(
    ls: KernelLensServer, path: str, start_us: float, end_us: float
) -> Timeline:
    """The events of a window of a trace file, merged at the window's scale.

    Raises:
        TraceError: the file cannot be read as a trace.
    """
    store = await open_trace(ls, path)
    return await asyncio.to_thread(_timeline, store, path, (start_us, end_us))


def _is_regular(path: str) -> bool:
    try:
        check_regular(path)
    except OSError:
        return False
    return True


def rank_trace_paths(profile: dict[str, Any]) -> list[str]:
    """A distributed result's trace files, by rank (empty: not a distributed result, or a rank
    without a trace)."""
    dist = profile.get("distributed")
    if not isinstance(dist, dict):
        return []
    paths = dist.get("trace_paths") or [
        r.get("trace_path") for r in profile.get("ranks") or [] if isinstance(r, dict)
    ]
    if len(paths) < 2 or not all(isinstance(p, str) and p for p in paths):
        return []
    return [str(p) for p in paths]


def _ranks_timeline(
    stores: list[TraceStore], paths: list[str], distributed: dict[str, Any]
) -> Timeline:
    from kernel_lens.analysis.rank_timeline import (
        collective_events,
        first_collectives,
        merge_rank_timelines,
        rank_shifts,
    )

    found = [collective_events(s) for s in stores]
    firsts = first_collectives(
        distributed.get("aligned_on_us"), [s.origin_us for s in stores], found
    )
    timeline = merge_rank_timelines(
        [s.timeline() for s in stores],
        shifts=rank_shifts(firsts),
        paths=paths,
        firsts=firsts,
        distributed=distributed,
        found=found,
    )
    timeline["path"] = paths[0]
    return cast(Timeline, timeline)


async def ranks_timeline(ls: KernelLensServer, profile: dict[str, Any]) -> Timeline | None:
    """A distributed result's timeline: one lane group per rank, aligned on the ranks' first
    collective (`rank_timeline`); ``None`` when it is not one or a rank's trace file is gone.

    Raises:
        TraceError: a rank's trace cannot be read.
    """
    paths = rank_trace_paths(profile)
    if not paths or not await asyncio.to_thread(lambda: all(_is_regular(p) for p in paths)):
        return None
    stores = [await open_trace(ls, p) for p in paths]
    return await asyncio.to_thread(_ranks_timeline, stores, paths, profile["distributed"])


def stored_path_allowed(ls: KernelLensServer, path: object) -> bool:
    """Whether a trace path a stored run names (a profile, the history) may be followed: only
    inside Kernel Lens's cache or a workspace folder, trusted or not (issue 45 item 9). A path
    refused is logged with where it had to be."""
    roots = [cache_root(), *workspace_folders(ls)]
    if isinstance(path, str) and inside(path, roots):
        return True
    ls.log(
        f"a stored run names the trace {path!r}, outside the cache and the workspace folders "
        f"({', '.join(roots)}): not read",
        types.MessageType.Warning,
    )
    return False


async def report_timeline(ls: KernelLensServer, profile: dict[str, Any]) -> Timeline | None:
    """The Report's timeline of a profile: a distributed step's rank groups, else its trace's.

    A stored trace path is followed only inside the cache or a workspace folder
    (`stored_path_allowed`); else there is no timeline (and the log says why)."""
    ranks = rank_trace_paths(profile)
    if ranks and not all(stored_path_allowed(ls, p) for p in ranks):
        return None
    merged = await ranks_timeline(ls, profile)
    if merged is not None:
        return merged
    path = profile.get("trace_path")
    if not path or not stored_path_allowed(ls, path):
        return None
    return await overview_timeline(ls, path)


def _ranks_window(
    stores: list[TraceStore], paths: list[str], shifts: list[float], window: tuple[float, float]
) -> Timeline:
    from kernel_lens.analysis.rank_timeline import collective_events, merge_rank_timelines

    timelines = [
        s.timeline(window=(window[0] - shift, window[1] - shift))
        for s, shift in zip(stores, shifts, strict=True)
    ]
    timeline = merge_rank_timelines(
        timelines,
        shifts=shifts,
        paths=paths,
        firsts=[None] * len(stores),
        found=[collective_events(s) for s in stores],
        window=window,
    )
    timeline["path"] = paths[0]
    return cast(Timeline, timeline)


async def ranks_window_timeline(
    ls: KernelLensServer, sources: list[tuple[str, float]], start_us: float, end_us: float
) -> Timeline:
    """A window of a distributed step's merged timeline: each rank's trace ``(path, shift)``
    read at the window less its shift, shifted back, grouped by rank.

    Raises:
        TraceError: a rank's trace cannot be read.
    """
    stores = [await open_trace(ls, path) for path, _ in sources]
    paths = [path for path, _ in sources]
    shifts = [float(shift) for _, shift in sources]
    return await asyncio.to_thread(_ranks_window, stores, paths, shifts, (start_us, end_us))


async def read_trace_file(ls: KernelLensServer, path: str) -> TraceFileResult:
    """A trace file opened in the viewer: its timeline and summary.

    A big trace answers first with the view of its first chunk, ``partial`` saying what it
    covers; ``kernelLens/traceReady`` follows once the whole trace is read (the viewer asks
    again then).

    Raises:
        TraceError: the file cannot be read as a trace.
    """
    got = await _open_trace(ls, path, first_view=True, on_first=lambda: _notify_ready(ls, path))
    partial: TracePartial | None = None
    if isinstance(got, tuple):
        store, partial = got
    else:
        store = got
    timeline = await asyncio.to_thread(_timeline, store, path, None)
    summary = store.summary
    if summary is None:  # pragma: no cover - stores built here always have one
        raise TraceError(f"no summary was kept for {path}")
    result: TraceFileResult = {"path": path, "timeline": timeline, "summary": summary}
    if partial is not None:
        result["partial"] = partial
    return result


def _notify_ready(ls: KernelLensServer, path: str) -> None:
    """Once the trace being read is read whole (or failed), say so: the viewer asks again."""

    async def wait() -> None:
        try:
            await open_trace(ls, path)
        except (TraceError, asyncio.CancelledError):
            pass  # the viewer's next request says why
        note: TraceReady = {"path": path}
        ls.protocol.notify(NOTIFY_TRACE_READY, note)

    asyncio.ensure_future(wait())
