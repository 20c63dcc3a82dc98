"""Trace files for the report and the trace viewer, at interactive speed whatever their size.

A trace file is read once, in a child process (``python -m kernel_lens.analysis.trace_store``),
into a columnar `TraceStore` with its summary, saved in the cache folder under a name made of the
file's path, size and mtime; the server maps those columns (memory-mapped ``.npy``) and answers
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
import contextlib
import hashlib
import json
import os
import shutil
import sys
import uuid
import weakref
from collections.abc import Callable
from typing import Any, cast

from lsprotocol import types

import kernel_lens
from kernel_lens.analysis.trace_columns import TraceError
from kernel_lens.analysis.trace_store import FORMAT, TraceStore, load_store
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.state import LRU, Job
from kernel_lens.wire.lsp import NOTIFY_TRACE_PROGRESS, Timeline, TraceFileResult, TraceProgress
from kernel_lens.wire.paths import CacheDirs

__all__ = [
    "cache_folder",
    "open_trace",
    "overview_timeline",
    "read_trace_file",
    "start_spare_reader",
    "stop_spare_reader",
    "trace_cache_root",
    "window_timeline",
]

#: Trace stores kept mapped per server (the columns are memory-mapped: little resident memory).
_KEPT = 8
#: Traces up to this much JSON are read in the server (in a thread): ~10k events, a fraction of a
#: second; bigger ones in a child process with progress.
_IN_PROCESS_BYTES = 2_000_000
#: How many bytes of memory reading a trace takes per byte of its JSON, at most (measured: the
#: JSON text, the typed records of one chunk of events, the columns).
_MEMORY_PER_BYTE = 3.0

_stores: weakref.WeakKeyDictionary[KernelLensServer, LRU[str, tuple[tuple[int, int], TraceStore]]]
_stores = weakref.WeakKeyDictionary()
_loading: weakref.WeakKeyDictionary[KernelLensServer, dict[tuple[str, int, int], _Loading]]
_loading = weakref.WeakKeyDictionary()
#: Each server's spare reader process (see `start_spare_reader`).
_spares: weakref.WeakKeyDictionary[KernelLensServer, asyncio.subprocess.Process]
_spares = weakref.WeakKeyDictionary()
_closed: weakref.WeakSet[KernelLensServer] = weakref.WeakSet()


def trace_cache_root() -> str:
    """Where trace columns are kept: ``trace-columns`` in the cache folder
    (:class:`~kernel_lens.wire.paths.CacheDirs`)."""
    return CacheDirs.from_env().trace_columns


def _path_key(path: str) -> str:
    return hashlib.sha1(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()[:20]


def cache_folder(path: str, size: int, mtime_ns: int) -> str:
    """The folder of the columns of ``path`` at this size and mtime."""
    return os.path.join(trace_cache_root(), f"{_path_key(path)}-{size}-{mtime_ns}-v{FORMAT}")


def _remove_older(path: str, keep: str) -> None:
    """Remove the folders of other versions of ``path`` (and unfinished ones)."""
    root, prefix = trace_cache_root(), _path_key(path) + "-"
    with contextlib.suppress(OSError):
        for entry in os.listdir(root):
            full = os.path.join(root, entry)
            if entry.startswith(prefix) and full != keep:
                shutil.rmtree(full, ignore_errors=True)


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise TraceError(f"trace file not found: {path}") from None
    except OSError as exc:
        raise TraceError(f"cannot read trace file {path}: {exc.strerror or exc}") from None


def _json_size(path: str, size: int) -> int:
    """The JSON's size: the file's, or for gzip the size its trailer records (mod 4 GiB)."""
    try:
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                return size
            f.seek(-4, os.SEEK_END)
            inflated = int.from_bytes(f.read(4), "little")
    except OSError:
        return size
    # The trailer keeps the size mod 2**32; JSON compresses at least ~4x, seldom more than 40x.
    while inflated < size * 4 and size * 4 > 2**32:
        inflated += 2**32
    return max(inflated, size)


def _available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _check_memory(path: str, size: int) -> None:
    need = int(_json_size(path, size) * _MEMORY_PER_BYTE)
    free = _available_memory()
    if free is not None and need > free:
        raise TraceError(
            f"{os.path.basename(path)} needs about {need / 2**30:.1f} GiB of memory to read and "
            f"this machine has {free / 2**30:.1f} GiB available: close other programs, or "
            "profile fewer steps (a shorter torch.profiler schedule) for a smaller trace"
        )


async def _start_reader() -> asyncio.subprocess.Process:
    """A reader process (``python -m kernel_lens.analysis.trace_store --serve``): it imports
    what reading takes, then waits on its stdin for one ``{"path", "folder"}`` to read."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(kernel_lens.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kernel_lens.analysis.trace_store",
        "--serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


def _spare_wanted() -> bool:
    return os.environ.get("KERNEL_LENS_TRACE_SPARE", "1") != "0"


async def _take_reader(ls: KernelLensServer) -> tuple[asyncio.subprocess.Process, bool]:
    """The server's spare reader if it is alive (its start-up and imports already paid), else a
    new one; and whether it is the spare."""
    spare = _spares.pop(ls, None)
    if spare is not None and spare.returncode is None:
        ls.log(f"trace reader {spare.pid}: the spare, waiting since start-up or the last trace")
        return spare, True
    child = await _start_reader()
    ls.log(f"trace reader {child.pid}: started now (no spare was waiting)")
    return child, False


async def start_spare_reader(ls: KernelLensServer, delay_s: float = 0.0) -> None:
    """Have a reader process waiting for the next big trace (unless one is, or
    ``$KERNEL_LENS_TRACE_SPARE`` is ``0``): opening a trace then skips Python's start-up and
    the imports of numpy, pandas and msgspec (~0.4 s). It exits with the server (its stdin
    closes) and after one trace."""
    if not _spare_wanted():
        return
    if delay_s:
        await asyncio.sleep(delay_s)
    current = _spares.get(ls)
    if ls in _closed or (current is not None and current.returncode is None):
        return
    try:
        _spares[ls] = spare = await _start_reader()
        ls.log(f"trace reader {spare.pid}: spare started, waiting for a trace")
    except OSError as exc:  # no spare: the next trace starts its own reader
        ls.log(f"could not start a trace reader: {exc}")


async def stop_spare_reader(ls: KernelLensServer) -> None:
    """Stop the spare reader, and start no other (server shutdown)."""
    _closed.add(ls)
    spare = _spares.pop(ls, None)
    if spare is not None and spare.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            spare.kill()
        await spare.wait()


class _ReaderEndedError(Exception):
    """The reader process ended before it started on the trace (a spare killed while it
    waited, say): another reader can try."""


async def _build(
    ls: KernelLensServer,
    path: str,
    folder: str,
    on_progress: Callable[[float, str], None],
    cancelled: asyncio.Event,
) -> None:
    """Build the columns of ``path`` in ``folder`` in a reader process (the spare, else a new
    one; a spare that had died is replaced by a new one); a new spare is started after it.

    Raises:
        TraceError: the file is not a trace, the child failed or ran out of memory, or
            ``cancelled`` was set (the child is killed then).
    """
    tmp = f"{folder}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        child, spare = await _take_reader(ls)
        while True:
            try:
                await _read_with(child, path, tmp, on_progress, cancelled)
                break
            except _ReaderEndedError as exc:
                if not spare:
                    raise TraceError(f"reading {os.path.basename(path)} failed: {exc}") from None
                spare = False  # one more try, with a reader started for it
                child = await _start_reader()
                ls.log(f"trace reader {child.pid}: started now (the spare had ended: {exc})")
        if os.path.isdir(folder):  # another reader finished first
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            os.replace(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        # The next spare starts a little after this reading: not competing for the CPU with
        # it, nor with the overview's answer that follows it.
        asyncio.ensure_future(start_spare_reader(ls, delay_s=1.5))


async def _read_with(
    child: asyncio.subprocess.Process,
    path: str,
    tmp: str,
    on_progress: Callable[[float, str], None],
    cancelled: asyncio.Event,
) -> None:
    """Have the reader ``child`` read ``path`` into the folder ``tmp``.

    Raises:
        TraceError: as `_build`.
        _ReaderEndedError: the child ended before it said it started.
    """
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    try:
        child.stdin.write(json.dumps({"path": path, "folder": tmp}).encode() + b"\n")
        await child.stdin.drain()
        child.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # it died: its exit code and stderr say why, below
    stderr_task = asyncio.ensure_future(child.stderr.read())
    error: str | None = None
    done = started = False

    async def read() -> None:
        nonlocal error, done, started
        assert child.stdout is not None
        async for raw in child.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if "progress" in message:
                started = True
                on_progress(float(message["progress"]), str(message.get("message", "")))
            elif "error" in message:
                error = str(message["error"])
            elif "done" in message:
                done = True

    reader = asyncio.ensure_future(read())
    stop = asyncio.ensure_future(cancelled.wait())
    try:
        await asyncio.wait({reader, stop}, return_when=asyncio.FIRST_COMPLETED)
        if stop.done():
            raise TraceError(f"reading {os.path.basename(path)} was cancelled")
        code = await child.wait()
        stderr = (await stderr_task).decode("utf-8", "replace").strip()
        if error is not None:
            raise TraceError(error)
        if code != 0 or not done:
            last = stderr.splitlines()[-1] if stderr else f"exit code {code}"
            if not started:
                raise _ReaderEndedError(last)
            if code in (-9, 137) or "MemoryError" in stderr:
                raise TraceError(
                    f"{os.path.basename(path)} is too large to read in this machine's memory "
                    "(the reader was stopped): profile fewer steps for a smaller trace"
                )
            raise TraceError(f"reading {os.path.basename(path)} failed: {last}")
    finally:
        stop.cancel()
        reader.cancel()
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()
        stderr_task.cancel()


def _read_here(path: str) -> TraceStore:
    from kernel_lens.analysis.trace_columns import read_columns
    from kernel_lens.analysis.trace_store import build_store
    from kernel_lens.analysis.trace_summary import summarize_columns

    columns = read_columns(path)
    return build_store(columns, summary=summarize_columns(columns).to_json())


def _save(store: TraceStore, folder: str) -> None:
    """Save ``store`` as ``folder`` (through a temporary folder: never half written)."""
    from kernel_lens.analysis.trace_store import save_store

    tmp = f"{folder}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        save_store(store, tmp)
        if not os.path.isdir(folder):
            os.replace(tmp, folder)
    except OSError:
        pass  # no cache this time: the store in memory answers
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def _open(ls: KernelLensServer, path: str, size: int, mtime_ns: int) -> TraceStore:
    folder = cache_folder(path, size, mtime_ns)
    store = await asyncio.to_thread(load_store, folder)
    if store is not None:
        return store
    json_size = _json_size(path, size)
    if json_size <= _IN_PROCESS_BYTES:
        # A trace of a profiled call or two: read here, in a thread, in well under a second
        # (a child process would spend longer starting); no progress notification to flash.
        store = await asyncio.to_thread(_read_here, path)
        await asyncio.to_thread(_save, store, folder)
        _remove_older(path, folder)
        return store
    _check_memory(path, size)
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
                    title=f"Reading {name}", message="starting", cancellable=True, percentage=0
                ),
            )
            progress = True
        except Exception as exc:
            ls.log(f"no progress notification: {exc}")

    def on_progress(fraction: float, message: str) -> None:
        percentage = max(0, min(100, int(fraction * 100)))
        if progress:
            ls.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )
        note: TraceProgress = {"path": path, "percentage": percentage, "message": message}
        ls.protocol.notify(NOTIFY_TRACE_PROGRESS, note)

    try:
        os.makedirs(trace_cache_root(), exist_ok=True)
        await _build(ls, path, folder, on_progress, job.cancelled)
    finally:
        ls.jobs.pop(token, None)
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    _remove_older(path, folder)
    store = await asyncio.to_thread(load_store, folder)
    if store is None:
        raise TraceError(f"the columns written for {path} in {folder} cannot be read")
    return store


async def open_trace(ls: KernelLensServer, path: str) -> TraceStore:
    """The columnar store of a trace file: kept, cached on disk, or read now (with progress).

    Requests for the same file while it is read wait for the same reading; a request that is
    cancelled stops waiting, and the reading stops when no request waits for it any more.

    Raises:
        TraceError: the file is missing, is not a trace, is too large for the memory, or its
            reading was cancelled from the progress notification.
    """
    stat = _stat(path)
    key = (stat.st_size, stat.st_mtime_ns)
    kept = _stores.setdefault(ls, LRU(_KEPT))
    found = kept.get(path)
    if found is not None and found[0] == key:
        return found[1]
    loading = _loading.setdefault(ls, {})
    task_key = (path, *key)
    entry = loading.get(task_key)
    if entry is None:
        entry = _Loading(asyncio.ensure_future(_open(ls, path, *key)))
        loading[task_key] = entry
        entry.task.add_done_callback(lambda _: loading.pop(task_key, None))
    entry.waiters += 1
    try:
        store = await asyncio.shield(entry.task)
    except asyncio.CancelledError:
        if not entry.task.done() and entry.waiters == 1:
            entry.task.cancel()  # the last one waiting went: stop reading (kills the child)
        raise
    finally:
        entry.waiters -= 1
    kept.put(path, (key, store))
    return store


class _Loading:
    """A trace being read, and how many requests wait for it."""

    def __init__(self, task: asyncio.Task[TraceStore]) -> None:
        self.task = task
        self.waiters = 0


def _timeline(store: TraceStore, path: str, window: tuple[float, float] | None) -> Timeline:
    timeline = store.timeline(window=window)
    timeline["path"] = path
    return cast(Timeline, timeline)


async def overview_timeline(ls: KernelLensServer, path: str | None) -> Timeline | None:
    """The whole-trace timeline of a trace file (``None`` when there is no such file)."""
    if not path or not os.path.isfile(path):
        return None
    stat = os.stat(path)
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


async def read_trace_file(ls: KernelLensServer, path: str) -> TraceFileResult:
    """A trace file opened in the viewer: its timeline and summary.

    Raises:
        TraceError: the file cannot be read as a trace.
    """
    store = await open_trace(ls, path)
    timeline = await asyncio.to_thread(_timeline, store, path, None)
    summary = store.summary
    if summary is None:  # pragma: no cover - stores built here always have one
        raise TraceError(f"no summary was kept for {path}")
    return {"path": path, "timeline": timeline, "summary": summary}
