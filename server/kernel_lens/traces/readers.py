"""Reader processes, the server's side: one reading of a trace file in a child process
(`python -m kernel_lens.traces.reader`) with progress and cancel, a spare reader kept waiting
(``--serve``: Python started, numpy, pandas and msgspec imported) so that a big trace's reading
starts at once, and the check that the machine has the memory a reading takes.

``$KERNEL_LENS_TRACE_SPARE=0`` keeps no spare. Each reader reads one trace and exits, giving its
memory back; a spare exits with the server (its stdin closes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import uuid
from collections.abc import Callable

import kernel_lens
from kernel_lens.analysis.regular_files import open_regular
from kernel_lens.analysis.trace_errors import TraceError

__all__ = ["READER_THREADS", "ReaderPool", "check_memory", "json_size", "reader_env"]

#: How many bytes of memory reading a trace takes per byte of its JSON, at most (measured: the
#: JSON text, the typed records of one chunk of events, the columns).
_MEMORY_PER_BYTE = 3.0
#: The reader process's module.
READER_MODULE = "kernel_lens.traces.reader"


def json_size(path: str, size: int) -> int:
    """The JSON's size: the file's, or for gzip the size its trailer records (mod 4 GiB)."""
    try:
        with open_regular(path) as f:
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


def check_memory(path: str, size: int) -> None:
    need = int(json_size(path, size) * _MEMORY_PER_BYTE)
    free = _available_memory()
    if free is not None and need > free:
        raise TraceError(
            f"{os.path.basename(path)} needs about {need / 2**30:.1f} GiB of memory to read and "
            f"this machine has {free / 2**30:.1f} GiB available: close other programs, or "
            "profile fewer steps (a shorter torch.profiler schedule) for a smaller trace"
        )


#: glibc's allocator in a reader process: memory freed is kept for the next allocations (up to
#: 1 GiB of it, not given back at once) and blocks up to 32 MiB come from the heap, not from a
#: new mapping each. A reader allocates and frees a chunk's records and columns over and over,
#: and every page of a fresh mapping is a fault: at 10M events this takes ~3 s of the ~25 s
#: (the reader exits after one trace, giving it all back). Ignored by other C libraries.
READER_MALLOC = "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432"


#: The thread pools of the numeric libraries in a reader process: one thread each. A reader does
#: no matrix work, yet numpy's OpenBLAS (and MKL, OpenMP, numexpr, Arrow under pandas) start a
#: pool sized by the machine's cores at import, inherited by the workers it forks, and glibc gives
#: each thread that allocates an arena of its own (up to 8 per core). Set whatever the user's
#: environment says (``OMP_NUM_THREADS=16`` is common on GPU hosts): the reader's time and memory
#: must not depend on the machine's core count (its own forked workers are bounded apart,
#: `kernel_lens.traces.read._MAX_WORKERS`).
READER_THREADS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMEXPR_MAX_THREADS": "1",
    "MALLOC_ARENA_MAX": "2",
}


def reader_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a reader process: ``base`` (default ``os.environ``) with this
    package first on ``PYTHONPATH`` (the entries already there kept: where msgspec may be),
    the numeric libraries' pools bounded (`READER_THREADS`) and, on Linux, its allocator set
    (`READER_MALLOC`, unless ``GLIBC_TUNABLES`` is set)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(kernel_lens.__file__)))
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    env.update(READER_THREADS)
    if sys.platform.startswith("linux"):
        env.setdefault("GLIBC_TUNABLES", READER_MALLOC)
    return env


async def start_reader() -> asyncio.subprocess.Process:
    """A reader process (``python -m kernel_lens.traces.reader --serve``): it imports what
    reading takes, then waits on its stdin for one ``{"path", "folder"}`` to read."""
    env = reader_env()
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        READER_MODULE,
        "--serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


def _spare_wanted() -> bool:
    return os.environ.get("KERNEL_LENS_TRACE_SPARE", "1") != "0"


class _ReaderEndedError(Exception):
    """The reader process ended before it started on the trace (a spare killed while it
    waited, say): another reader can try."""


class ReaderPool:
    """One server's reader processes: the spare waiting for the next big trace, and readings.

    Args:
        log: a line for the server's log (which reader read what, a spare that failed).
    """

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self._spare: asyncio.subprocess.Process | None = None
        self._closed = False

    async def _take(self) -> tuple[asyncio.subprocess.Process, bool]:
        """The spare reader if it is alive (its start-up and imports already paid), else a new
        one; and whether it is the spare."""
        spare, self._spare = self._spare, None
        if spare is not None and spare.returncode is None:
            self._log(
                f"trace reader {spare.pid}: the spare, waiting since start-up or the last trace"
            )
            return spare, True
        child = await start_reader()
        self._log(f"trace reader {child.pid}: started now (no spare was waiting)")
        return child, False

    async def start_spare(self, delay_s: float = 0.0) -> None:
        """Have a reader process waiting for the next big trace (unless one is, or
        ``$KERNEL_LENS_TRACE_SPARE`` is ``0``): opening a trace then skips Python's start-up and
        the imports of numpy, pandas and msgspec (~0.4 s). It exits with the server (its stdin
        closes) and after one trace."""
        if not _spare_wanted():
            return
        if delay_s:
            await asyncio.sleep(delay_s)
        current = self._spare
        if self._closed or (current is not None and current.returncode is None):
            return
        try:
            self._spare = spare = await start_reader()
            self._log(f"trace reader {spare.pid}: spare started, waiting for a trace")
        except OSError as exc:  # no spare: the next trace starts its own reader
            self._log(f"could not start a trace reader: {exc}")

    async def stop(self) -> None:
        """Stop the spare reader, and start no other (server shutdown)."""
        self._closed = True
        spare, self._spare = self._spare, None
        if spare is not None and spare.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                spare.kill()
            await spare.wait()

    async def build(
        self,
        path: str,
        folder: str,
        on_progress: Callable[[float, str], None],
        cancelled: asyncio.Event,
        on_partial: Callable[[str, float], None] | None = None,
    ) -> None:
        """Build the columns of ``path`` in ``folder`` in a reader process (the spare, else a
        new one; a spare that had died is replaced by a new one); a new spare is started after.

        Raises:
            TraceError: the file is not a trace, the child failed or ran out of memory, or
                ``cancelled`` was set (the child is killed then).
        """
        tmp = f"{folder}.tmp-{uuid.uuid4().hex[:8]}"
        try:
            child, spare = await self._take()
            while True:
                try:
                    decoder = await _read_with(child, path, tmp, on_progress, cancelled, on_partial)
                    if decoder == "json":
                        self._log(
                            f"trace reader {child.pid}: msgspec is not importable in "
                            f"{sys.executable}: {os.path.basename(path)} was read with the "
                            "standard json parser (slower, ~9x the file in memory); "
                            "pip install msgspec"
                        )
                    break
                except _ReaderEndedError as exc:
                    if not spare:
                        raise TraceError(
                            f"reading {os.path.basename(path)} failed: {exc}"
                        ) from None
                    spare = False  # one more try, with a reader started for it
                    child = await start_reader()
                    self._log(f"trace reader {child.pid}: started now (the spare had ended: {exc})")
            if os.path.isdir(folder):  # another reader finished first
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                os.replace(tmp, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            # The first view's store (a process may still map it: the files stay readable).
            shutil.rmtree(f"{tmp}.partial", ignore_errors=True)
            # The next spare starts a little after this reading: not competing for the CPU with
            # it, nor with the overview's answer that follows it.
            asyncio.ensure_future(self.start_spare(delay_s=1.5))


async def _read_with(
    child: asyncio.subprocess.Process,
    path: str,
    tmp: str,
    on_progress: Callable[[float, str], None],
    cancelled: asyncio.Event,
    on_partial: Callable[[str, float], None] | None = None,
) -> str:
    """Have the reader ``child`` read ``path`` into the folder ``tmp`` (``on_partial(folder,
    fraction)``: the store of a big trace's first chunk is in ``folder``).

    Returns:
        the decoder the reader used: ``"msgspec"``, or ``"json"`` (the slow standard parser).

    Raises:
        TraceError: as `ReaderPool.build`.
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
    decoder = ""

    async def read() -> None:
        nonlocal error, done, started, decoder
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
            elif "partial" in message:
                started = True
                if on_partial is not None:
                    on_partial(str(message["partial"]), float(message.get("fraction", 0.0)))
            elif "error" in message:
                error = str(message["error"])
            elif "done" in message:
                done = True
                decoder = str(message.get("decoder", ""))

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
        return decoder
    finally:
        stop.cancel()
        reader.cancel()
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()
        stderr_task.cancel()
