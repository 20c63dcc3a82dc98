"""Reading a trace file into columns fast: the big-trace reader's own work.

`read_columns` reads a file (``.json`` or gzip): with ``msgspec`` installed (the optional
``traces`` extra) it cuts the events out of the text as raw JSON (views into it) and decodes them
``_CHUNK`` at a time, in place, into small typed records that skip every field the summary and
the timeline do not read (:mod:`kernel_lens.traces.decode`), with the garbage collector paused,
then builds the columns with vectorised numpy. From ``_PARALLEL_EVENTS`` events on Linux the
ranges after the first are decoded by forked workers that write their columns into shared memory
(an anonymous ``mmap``) and send only their code tables back through a pipe. Any event the typed
decoder cannot take (a string ``ts``, ``args`` that is not an object, a ``NaN``), or a worker that
died, makes it fall back to the standard ``json`` parser and
`~kernel_lens.analysis.trace_columns.columns_from_trace`, so the answer is the same either way.

Not pure (it forks, maps memory, and kills a worker left behind by an error): it lives outside
:mod:`kernel_lens.analysis`, whose `TraceColumns` it fills.
"""

from __future__ import annotations

import contextlib
import dataclasses
import mmap
import os
import pickle
import re
import signal
import sys
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from kernel_lens.analysis.regular_files import open_regular
from kernel_lens.analysis.trace_columns import (
    Progress,
    TraceColumns,
    TraceError,
    check_json_depth,
    columns_from_trace,
    device_table,
    gc_paused,
    grouping_key,
    max_trace_bytes,
    normalize_columns,
    parse_trace_bytes,
    read_trace_bytes,
)
from kernel_lens.analysis.trace_summary import TraceSummary, summarize_columns

__all__ = ["PREFIX_BYTES", "Prefix", "read_columns", "summarize_file"]

I64 = npt.NDArray[np.int64]


class _Index(dict[Any, int]):
    """Value -> code; a value not seen yet is given the next code (``__missing__``, so that
    ``map(index.__getitem__, values)`` codes a whole column at C speed)."""

    def __init__(self, table: list[Any]) -> None:
        super().__init__()
        self.table = table

    def __missing__(self, value: Any) -> int:
        code = self[value] = len(self.table)
        self.table.append(value)
        return code


class _Coder:
    """Codes of hashable values (str, int, None) seen chunk by chunk, into one table."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.index = _Index(self.values)

    def _code(self, value: Any) -> int:
        return self.index[value]

    def absent(self, value: Any) -> None:
        """Code ``value`` (a sentinel: a field absent from an event) as -1, outside the table."""
        dict.__setitem__(self.index, value, -1)

    def codes(self, values: Sequence[Any]) -> I64:
        return np.fromiter(map(self.index.__getitem__, values), dtype=np.int64, count=len(values))

    def finish(self, codes: I64, normalize: Callable[[Any], Any]) -> tuple[I64, list[Any]]:
        """``codes`` into the table of distinct normalised values."""
        normal = [normalize(v) for v in self.values]
        array = np.empty(len(normal), dtype=object)
        array[:] = normal
        final, table = pd.factorize(array)
        return np.asarray(final, dtype=np.int64)[codes], table.tolist()


#: Events decoded into records at a time: bounds the memory the records take.
_CHUNK = 100_000


def _address(buffer: Any) -> int:
    """Where ``buffer``'s bytes start in memory."""
    return int(np.frombuffer(buffer, dtype=np.uint8).ctypes.data) if len(buffer) else 0


#: Bytes that may stand between two events of the ``traceEvents`` array (or around them).
_BETWEEN = frozenset(b" \t\r\n,[]")


@contextmanager
def _chunk_json(
    raw: bytes | bytearray, events: Sequence[Any], first: int, last: int
) -> Iterator[Any]:
    """The JSON array of ``events[first:last]``: ``msgspec.Raw`` pieces of ``raw``.

    msgspec decodes ``Raw`` values as views into the text they came from, so the events of a
    chunk are one contiguous stretch of ``raw`` (with the commas and spaces between them). When
    ``raw`` is a ``bytearray`` the byte before that stretch and the byte after it (a comma, a
    space or a bracket of the array) are set to ``[`` and ``]`` while the chunk is decoded and
    put back after: no copy at all. Else the stretch is copied once between brackets; pieces
    that are not views of ``raw`` are joined.
    """
    base = _address(raw)
    head, tail = memoryview(events[first]), memoryview(events[last - 1])
    start = _address(head) - base
    stop = _address(tail) - base + len(tail)
    if not (0 < start < stop < len(raw) and raw[start] == 0x7B):  # {
        yield b"[" + b",".join(events[first:last]) + b"]"
        return
    if isinstance(raw, bytearray) and raw[start - 1] in _BETWEEN and raw[stop] in _BETWEEN:
        before, after = raw[start - 1], raw[stop]
        raw[start - 1], raw[stop] = 0x5B, 0x5D  # [ ]
        try:
            with memoryview(raw)[start - 1 : stop + 1] as view:
                yield view
        finally:
            raw[start - 1], raw[stop] = before, after
        return
    text = bytearray(stop - start + 2)
    text[0], text[-1] = 0x5B, 0x5D
    text[1:-1] = memoryview(raw)[start:stop]
    yield text


def _columns_typed(raw: bytes | bytearray, progress: Progress | None) -> TraceColumns | None:
    """Columns by msgspec's typed decoding; None when msgspec is absent or the file is unusual.

    The events are first cut out of the text as raw JSON (cheap views), then decoded into
    records ``_CHUNK`` at a time; each chunk's columns are kept and its records dropped, so the
    records never hold more than one chunk of the trace.
    """
    try:
        from kernel_lens.traces.decode import (
            LAZY_DECODER,
            UNSET,
            DecodeError,
        )
    except ImportError:
        return None
    try:
        with gc_paused():
            lazy = LAZY_DECODER.decode(raw)
    except DecodeError:
        return None
    events = lazy.traceEvents
    cats, names, keys = _Coder(), _Coder(), _Coder()
    parts: dict[str, list[Any]] = {k: [] for k in _PARTS}
    workers = _workers(len(events))
    if workers > 1:
        # Big traces: the chunks are decoded by forked workers (each with its own code tables,
        # merged here in file order); the raw events are shared with them copy-on-write.
        merged = _parallel_chunks(raw, events, workers, parts, cats, names, keys, progress)
        if not merged:
            return None
    else:
        for first in range(0, len(events), _CHUNK):
            if progress:
                progress(0.15 + 0.5 * first / len(events), f"reading events {first:,}…")
            try:
                last = min(len(events), first + _CHUNK)
                with gc_paused(), _chunk_json(raw, events, first, last) as text:
                    chunk = _events_decoder().decode(text)
            except DecodeError:  # incl. ValidationError: an event the typed records cannot hold
                return None
            with gc_paused():
                _chunk_columns(chunk, parts, cats, names, keys, UNSET)
            del chunk
    del events, lazy.traceEvents
    if progress:
        progress(0.65, "building columns")
    meta = {"deviceProperties": lazy.deviceProperties, "computeProperties": lazy.computeProperties}
    return _finish(parts, cats, names, keys, device_table(meta))


def _finish(
    parts: dict[str, list[Any]],
    cats: _Coder,
    names: _Coder,
    keys: _Coder,
    devices: Sequence[tuple[int | str, str]],
    *,
    keep: bool = False,
) -> TraceColumns:
    """The columns of the chunks in ``parts`` (emptied as they are joined, unless ``keep``:
    the first view of a trace still being read)."""
    joined: dict[str, Any] = {}
    for k in _PARTS:
        chunks = parts[k] if keep else parts.pop(k)
        joined[k] = np.concatenate(chunks) if chunks else np.zeros(0)
        del chunks
    cat, cat_table = cats.finish(joined.pop("cat").astype(np.int64, copy=False), str)
    name, name_table = names.finish(joined.pop("name").astype(np.int64, copy=False), str)
    # The keys' codes into the table of distinct normalised keys, column by column.
    remap, key_table = keys.finish(np.arange(len(keys.values), dtype=np.int64), grouping_key)
    key = {k: remap[joined.pop(k).astype(np.int64, copy=False)] for k in _KEY_PARTS}
    columns = TraceColumns(
        cat=cat,
        cats=tuple(cat_table),
        name=name,
        names=tuple(name_table),
        ts=joined["ts"].astype(np.float64, copy=False),
        dur=joined["dur"].astype(np.float64, copy=False),
        pid=key["pid"],
        tid=key["tid"],
        stream=key["stream"],
        device=key["device"],
        keys=tuple(key_table),
        ext_id=joined["ext_id"].astype(np.float64, copy=False),
        corr=joined["corr"].astype(np.float64, copy=False),
        nbytes=joined["nbytes"].astype(np.int64, copy=False),
        device_name=None,
    )
    return normalize_columns(columns, devices)


_KEY_PARTS = ("pid", "tid", "stream", "device")
_PARTS = ("cat", "name", "ts", "dur", "pid", "tid", "stream", "device", "ext_id", "corr", "nbytes")
#: Events from which a trace is decoded by several processes (below, one is faster).
_PARALLEL_EVENTS = 400_000
#: The raw events a forked worker reads (set just before the fork, cleared after).
_SHARED: list[Any] = []
#: The text those events are views of.
_SHARED_RAW: list[bytes | bytearray] = []


#: The most processes that read one trace (each a share of the file's byte ranges).
_MAX_WORKERS = 8


def _workers(n_events: int) -> int:
    """How many processes decode a trace of ``n_events``: one below :data:`_PARALLEL_EVENTS`,
    off Linux, or with ``KERNEL_LENS_TRACE_WORKERS=1``; else up to the
    CPUs this process may use (at most `_MAX_WORKERS`)."""
    # Linux only: forking a process that has used macOS's system frameworks is not safe.
    if n_events < _PARALLEL_EVENTS or not sys.platform.startswith("linux"):
        return 1
    wanted = os.environ.get("KERNEL_LENS_TRACE_WORKERS")
    if wanted is not None:
        try:
            return max(1, int(wanted))
        except ValueError:
            return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(_MAX_WORKERS, cpus))


def _decode_range(bounds: tuple[int, int]) -> dict[str, Any] | None:
    """In a worker: the columns of events ``[first, last)`` with the worker's own code tables
    (``None``: an event the typed records cannot hold)."""
    from kernel_lens.traces.decode import UNSET, DecodeError

    first, last = bounds
    cats, names, keys = _Coder(), _Coder(), _Coder()
    parts: dict[str, list[Any]] = {k: [] for k in _PARTS}
    for start in range(first, last, _CHUNK):
        stop = min(last, start + _CHUNK)
        try:
            with gc_paused(), _chunk_json(_SHARED_RAW[0], _SHARED, start, stop) as text:
                chunk = _events_decoder().decode(text)
        except DecodeError:
            return None
        with gc_paused():
            _chunk_columns(chunk, parts, cats, names, keys, UNSET)
        del chunk
    return {
        "parts": {k: np.concatenate(v) if v else np.zeros(0) for k, v in parts.items()},
        "cats": cats.values,
        "names": names.values,
        "keys": keys.values,
    }


#: The dtype of each part of the columns (8 bytes each: a worker's share is one block of them).
_PART_DTYPES = {
    key: np.float64 if key in ("ts", "dur", "ext_id", "corr") else np.int64 for key in _PARTS
}


def _fork_range(bounds: tuple[int, int], out: mmap.mmap) -> tuple[int, int]:
    """Fork a worker that decodes ``_SHARED[first:last]`` into ``out`` (shared memory: each
    part's values one after the other, ``last - first`` slots of 8 bytes per part) and pickles
    its row count and code tables to a pipe. Returns (its pid, the pipe's read end)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        return pid, read_fd
    code = 1  # the worker: it never returns from here
    try:
        os.close(read_fd)
        result = _decode_range(bounds)
        tables: dict[str, Any] | None = None
        if result is not None:
            n, slots = len(result["parts"]["ts"]), bounds[1] - bounds[0]
            for k, key in enumerate(_PARTS):
                shared = np.frombuffer(out, _PART_DTYPES[key], count=n, offset=k * slots * 8)
                shared[:] = result["parts"][key]
            tables = {"n": n, "cats": result["cats"], "names": result["names"],
                      "keys": result["keys"]}  # fmt: skip
        with os.fdopen(write_fd, "wb") as f:
            pickle.dump(tables, f, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        os._exit(code)


def _parallel_chunks(
    raw: bytes | bytearray,
    events: list[Any],
    workers: int,
    parts: dict[str, list[Any]],
    cats: _Coder,
    names: _Coder,
    keys: _Coder,
    progress: Progress | None,
) -> bool:
    """Decode ``events`` (views of ``raw``) in ``workers`` processes, contiguous ranges in file
    order, and append their columns to ``parts`` with codes into ``cats``/``names``/``keys``.
    False when an event cannot be decoded or a worker failed (the caller falls back to the json
    path).

    The first range is decoded here while forked workers decode the others, reading the raw
    events copy-on-write and writing their columns into shared memory: only their code tables
    go through a pipe (no pool, no pickled arrays).
    """
    step = -(-len(events) // workers)
    ranges = [(i, min(len(events), i + step)) for i in range(0, len(events), step)]
    if progress:
        progress(0.15, f"reading {len(events):,} events in {len(ranges)} processes…")
    outs = [mmap.mmap(-1, max(1, (b - a) * 8 * len(_PARTS))) for a, b in ranges[1:]]
    forked: list[tuple[int, int]] = []
    results: list[dict[str, Any] | None] = []
    _SHARED[:] = events
    _SHARED_RAW[:] = [raw]
    try:
        for bounds, out in zip(ranges[1:], outs, strict=True):
            forked.append(_fork_range(bounds, out))
        results.append(_decode_range(ranges[0]))
        while forked:
            pid, fd = forked[0]
            with os.fdopen(fd, "rb") as f:
                try:
                    tables = pickle.load(f)
                except (EOFError, pickle.UnpicklingError):
                    tables = None
            forked.pop(0)
            _, status = os.waitpid(pid, 0)
            (a, b), out = ranges[len(results)], outs[len(results) - 1]
            if tables is None or status != 0:
                results.append(None)
                continue
            results.append({
                "parts": {
                    key: np.frombuffer(out, _PART_DTYPES[key], count=tables["n"],
                                       offset=k * (b - a) * 8)
                    for k, key in enumerate(_PARTS)
                },
                **{t: tables[t] for t in ("cats", "names", "keys")},
            })  # fmt: skip
    finally:
        _SHARED.clear()
        _SHARED_RAW.clear()
        for pid, fd in forked:  # left by an error here: stop them
            with contextlib.suppress(OSError):
                os.close(fd)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    if any(r is None for r in results):
        return False
    for result in results:
        assert result is not None
        remaps = {
            field: np.asarray([coder._code(v) for v in result[field]] or [0], dtype=np.int64)
            for field, coder in (("cats", cats), ("names", names), ("keys", keys))
        }
        got = result["parts"]
        for key in _PARTS:
            column = got[key]
            if key == "cat":
                column = remaps["cats"][column.astype(np.int64, copy=False)]
            elif key == "name":
                column = remaps["names"][column.astype(np.int64, copy=False)]
            elif key in ("pid", "tid", "stream", "device"):
                column = remaps["keys"][column.astype(np.int64, copy=False)]
            parts[key].append(column)
    return True


def _chunk_columns(
    events: list[Any],
    parts: dict[str, list[Any]],
    cats: _Coder,
    names: _Coder,
    keys: _Coder,
    unset: Any,
) -> None:
    """Append the columns of one chunk of decoded events to ``parts``.

    One comprehension per field (an attribute read is much cheaper than ``getattr`` or a
    tuple per event), the strings and keys coded through a dict at C speed (`_Coder.codes`).
    """
    from kernel_lens.traces.decode import Args

    base = _ts_base()
    if base is None:
        ts = np.array([e.ts for e in events], dtype=np.float64)
    else:  # exact: the base off before the conversion to float (`_exact_base`)
        ts = np.array(
            [np.nan if e.ts is None else float(e.ts - base) for e in events], dtype=np.float64
        )
    dur = np.array([e.dur for e in events], dtype=np.float64)
    is_x = np.array([e.ph == "X" for e in events], dtype=bool)
    with np.errstate(invalid="ignore"):
        keep = is_x & np.isfinite(ts) & np.isfinite(dur) & (dur >= 0)
    rows = np.flatnonzero(keep)
    if len(rows) == len(events):
        kept = events
    else:
        kept = list(map(events.__getitem__, rows.tolist()))
        ts, dur = ts[rows], dur[rows]
    args = [e.args for e in kept]
    if args.count(None):  # no args: no ids, no bytes, stream and device absent
        empty = Args()
        args = [empty if a is None else a for a in args]
    nbytes = np.array([a.bytes for a in args], dtype=np.float64)
    nbytes[~np.isfinite(nbytes)] = 0.0
    parts["ts"].append(ts)
    parts["dur"].append(dur)
    ext_id = np.array([a.external_id for a in args], dtype=np.float64)
    missing = np.isnan(ext_id)
    if missing.any():  # the 2021 schema's "external id"
        ext_id[missing] = np.array(
            [args[i].external_id_2021 for i in np.flatnonzero(missing).tolist()], dtype=np.float64
        )
    parts["ext_id"].append(ext_id)
    parts["corr"].append(np.array([a.correlation for a in args], dtype=np.float64))
    parts["nbytes"].append(nbytes.astype(np.int64, copy=False))
    parts["cat"].append(cats.codes([e.cat for e in kept]))
    parts["name"].append(names.codes([e.name for e in kept]))
    pid_codes, tid_codes = keys.codes([e.pid for e in kept]), keys.codes([e.tid for e in kept])
    parts["pid"].append(pid_codes)
    parts["tid"].append(tid_codes)
    # stream and device default to tid and pid; only device events name them in args (an
    # absent one is coded -1).
    keys.absent(unset)
    streams = keys.codes([a.stream for a in args])
    devices = keys.codes([a.device for a in args])
    parts["stream"].append(np.where(streams < 0, tid_codes, streams))
    parts["device"].append(np.where(devices < 0, pid_codes, devices))


#: While a trace with epoch-scale, nanosecond-fraction timestamps is read, ``base``: the whole
#: microseconds subtracted from every ``ts`` before its conversion to float. Per thread (the
#: server reads small traces in threads, maybe two at once); a worker forked by the reading
#: thread has it too.
_READING = threading.local()
#: From this many µs (about 102 days) a float64 keeps less than the nanoseconds of a time (its
#: step passes 0.001 µs: rounding to 3 decimals no longer gives back the file's digits).
_EXACT_FROM_US = 2**43
_FRACTIONAL_TS = re.compile(rb'"ts"[ \t\r\n]*:[ \t\r\n]*(-?[0-9]+)\.[0-9]')
#: Bytes of a trace's start looked at for such timestamps.
_SNIFF_BYTES = 1 << 20


def _ts_base() -> int | None:
    """The base of this thread's exact reading (`_READING`), or None."""
    return getattr(_READING, "base", None)


def _events_decoder() -> Any:
    """The decoder of a chunk of events: exact ``ts`` during an exact reading (`_READING`)."""
    from kernel_lens.traces import decode

    return decode.EVENTS_DECODER if _ts_base() is None else decode.EXACT_EVENTS_DECODER


def _exact_base(path: str) -> int | None:
    """The whole microseconds of the first fractional ``ts`` near the file's start, when it is
    past `_EXACT_FROM_US` (an epoch-scale clock with nanosecond fractions, which a float64
    cannot hold: ``1712195495505543.234`` becomes ``…543.25``); else None."""
    try:
        with open_regular(path) as f:
            head = f.read(_SNIFF_BYTES)
        if head[:2] == b"\x1f\x8b":
            head = zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(head, _SNIFF_BYTES)
    except (OSError, zlib.error):
        return None
    m = _FRACTIONAL_TS.search(head)
    if m is None or abs(int(m.group(1))) < _EXACT_FROM_US:
        return None
    return int(m.group(1))


#: ``on_prefix(columns, fraction)``: the columns of the events read so far (a first view of a
#: big trace while the rest is read) and about which fraction of the file they are.
Prefix = Callable[[TraceColumns, float], None]
#: Files from this many bytes get a first view from their first chunk (`read_columns`).
PREFIX_BYTES = 48 << 20


def _fork_mapped(text: Any, lo: int, stop: int | None) -> tuple[int, int, Any]:
    """Fork a worker that decodes the mapped text's range ``[lo, stop)`` (`stream.decode_range`)
    and writes its columns, part after part, into a temporary file, then pickles its row count
    and code tables to a pipe (``{"error": ...}`` when it could not). Returns (its pid, the
    pipe's read end, the file)."""
    import tempfile

    from kernel_lens.traces.decode import UNSET
    from kernel_lens.traces.stream import ChunkError, UnusualTraceError, decode_range

    out = tempfile.TemporaryFile()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_fd)
        return pid, read_fd, out
    code = 1  # the worker: it never returns from here
    try:
        os.close(read_fd)
        cats, names, keys = _Coder(), _Coder(), _Coder()
        parts: dict[str, list[Any]] = {k: [] for k in _PARTS}

        def take(chunk: list[Any]) -> None:
            with gc_paused():
                _chunk_columns(chunk, parts, cats, names, keys, UNSET)

        result: dict[str, Any]
        try:
            with gc_paused():
                tail = decode_range(_events_decoder(), text, lo, stop, take)
            n = 0
            for key in _PARTS:
                column = np.concatenate(parts.pop(key)).astype(_PART_DTYPES[key], copy=False)
                n = len(column)
                out.write(column.data)
            out.flush()
            result = {"n": n, "cats": cats.values, "names": names.values, "keys": keys.values,
                      "tail": tail}  # fmt: skip
        except ChunkError:
            result = {"error": "chunk"}
        except UnusualTraceError:
            result = {"error": "unusual"}
        with os.fdopen(write_fd, "wb") as f:
            pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        os._exit(code)


def _columns_streamed(
    path: str, progress: Progress | None, on_prefix: Prefix | None
) -> TraceColumns | None:
    """Columns read chunk by chunk from the file (`kernel_lens.traces.stream`): a private
    memory map of a plain JSON file (decoded by forked workers in byte ranges when it is big),
    or a gzip stream inflated block by block. None when msgspec is absent, the file cannot be
    read this way (the caller's path says why), or an event needs the json parser."""
    try:
        from kernel_lens.traces.decode import UNSET
        from kernel_lens.traces.stream import (
            ChunkError,
            MappedText,
            StreamedText,
            UnusualTraceError,
            decode_range,
            find_events,
            gzip_blocks,
            metadata,
        )
    except ImportError:
        return None
    try:
        with open_regular(path) as f:
            magic = f.read(2)
            size = os.fstat(f.fileno()).st_size
            trailer = b""
            if magic == b"\x1f\x8b" and size >= 18:
                f.seek(-4, os.SEEK_END)
                trailer = f.read(4)
    except OSError:
        return None
    if trailer:
        from kernel_lens.analysis.trace_columns import check_gzip_trailer

        check_gzip_trailer(trailer, size, path)
    cats, names, keys = _Coder(), _Coder(), _Coder()
    parts: dict[str, list[Any]] = {k: [] for k in _PARTS}
    seen = [0, 0]  # events, chunks
    prefix_wanted = on_prefix is not None and size >= PREFIX_BYTES // (
        8 if magic == b"\x1f\x8b" else 1
    )

    def take(chunk: list[Any], fraction: float) -> None:
        nonlocal prefix_wanted
        with gc_paused():
            _chunk_columns(chunk, parts, cats, names, keys, UNSET)
        seen[0] += len(chunk)
        seen[1] += 1
        if progress:
            progress(0.1 + 0.5 * min(fraction, 1.0), f"reading events: {seen[0]:,}…")
        if prefix_wanted and on_prefix is not None:
            prefix_wanted = False
            on_prefix(_finish(parts, cats, names, keys, (), keep=True), fraction)

    try:
        if magic == b"\x1f\x8b":
            streamed = StreamedText(_bounded(gzip_blocks(path), size, path))
            with gc_paused():
                for chunk in streamed.chunks(_events_decoder()):
                    take(chunk, 0.5 if seen[1] == 0 else 0.9)
            meta = metadata(streamed.head, streamed.tail)
        else:
            text = MappedText(path)
            try:
                head, first = find_events(text)
                tail = _mapped_ranges(text, first, take, cats, names, keys, parts)
                if tail is None:  # a worker failed: read it all here
                    cats, names, keys = _Coder(), _Coder(), _Coder()
                    parts.clear()
                    parts.update({k: [] for k in _PARTS})
                    with gc_paused():
                        tail = decode_range(
                            _events_decoder(), text, first, None,
                            lambda chunk: take(chunk, 0.5),
                        )  # fmt: skip
                meta = metadata(head, tail or b"}")
            finally:
                text.close()
    except (ChunkError, UnusualTraceError, OSError, EOFError, zlib.error, RecursionError):
        # (a nesting too deep for the decoder: the whole-text path refuses it by its depth)
        return None
    except MemoryError:
        raise TraceError(
            f"trace file {path} does not fit in this process's memory once read: not read"
        ) from None
    if progress:
        progress(0.65, "building columns")
    columns = _finish(parts, cats, names, keys, device_table(meta))
    if not meta and not len(columns):
        # a top-level array (no object around it) of which no element is an event
        raise TraceError(
            f"trace file {path} has no 'traceEvents' list and is not an array of trace events: "
            "not a torch.profiler Chrome trace"
        )
    return columns


def _bounded(blocks: Iterator[bytes], compressed: int, shown: str) -> Iterator[bytes]:
    """The inflated blocks of a gzip, refused (a ``TraceError``) once past the bounds on a
    trace's size and on its inflation ratio (:func:`check_inflated`): a gzip bomb read as a
    stream is stopped as the file read whole is."""
    from kernel_lens.analysis.trace_columns import check_inflated

    total = 0
    for block in blocks:
        total += len(block)
        check_inflated(total, compressed, shown)
        yield block


def _mapped_ranges(
    text: Any,
    first: int,
    take: Callable[[list[Any], float], None],
    cats: _Coder,
    names: _Coder,
    keys: _Coder,
    parts: dict[str, list[Any]],
) -> bytes | None:
    """Decode the mapped text's array from ``first`` (its ``[``): the first byte range here,
    the others in forked workers (files of ``_PARALLEL_BYTES`` and more). Returns the text
    after the array; None when a worker failed (nothing is appended then from the workers)."""
    from kernel_lens.traces import stream
    from kernel_lens.traces.stream import decode_range, range_starts

    workers = _workers(text.size // _BYTES_PER_EVENT)
    starts = range_starts(text, first, workers) if workers > 1 else [first]
    ends: list[int | None] = [*starts[1:], None]
    forked: list[tuple[int, int, Any]] = []
    total = max(text.size - first, 1)
    try:
        for lo, stop in zip(starts[1:], ends[1:], strict=True):
            forked.append(_fork_mapped(text, lo, stop))
        here_stop = ends[0]
        done = [0]

        def here(chunk: list[Any]) -> None:
            done[0] += 1
            take(chunk, min(1.0, done[0] * stream.CHUNK_BYTES / total))

        with gc_paused():
            tail = decode_range(_events_decoder(), text, first, here_stop, here)
        results: list[dict[str, Any]] = []
        while forked:
            pid, fd, out = forked[0]
            with os.fdopen(fd, "rb") as f:
                try:
                    result = pickle.load(f)
                except (EOFError, pickle.UnpicklingError):
                    result = {"error": "died"}
            forked.pop(0)
            _, status = os.waitpid(pid, 0)
            if status != 0 or "error" in result:
                out.close()
                if result.get("error") == "chunk":
                    from kernel_lens.traces.stream import ChunkError

                    raise ChunkError("an event needs the json parser")
                for _, fd2, out2 in forked:
                    os.close(fd2)
                    out2.close()
                return None
            result["file"] = out
            results.append(result)
        for result in results:
            remaps = {
                field: np.asarray([coder._code(v) for v in result[field]] or [0], dtype=np.int64)
                for field, coder in (("cats", cats), ("names", names), ("keys", keys))
            }
            n, out = result["n"], result["file"]
            out.seek(0)
            for key in _PARTS:
                column = np.fromfile(out, dtype=_PART_DTYPES[key], count=n)
                if key == "cat":
                    column = remaps["cats"][column]
                elif key == "name":
                    column = remaps["names"][column]
                elif key in ("pid", "tid", "stream", "device"):
                    column = remaps["keys"][column]
                parts[key].append(column)
            out.close()
        if results:  # the text after the array: found by the worker of the last range
            return results[-1]["tail"]  # type: ignore[no-any-return]
        return tail
    finally:
        for pid, fd, out in forked:  # left by an error here: stop them
            with contextlib.suppress(OSError):
                os.close(fd)
            out.close()
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


#: A rough lower bound of a torch trace's bytes per event (to size the workers before reading).
_BYTES_PER_EVENT = 200


def read_columns(
    path: str | os.PathLike[str],
    progress: Progress | None = None,
    on_prefix: Prefix | None = None,
) -> TraceColumns:
    """Read a trace file (``.json``, gzip, or a Perfetto ``.pftrace``) straight into columns.

    A JSON trace is read chunk by chunk (`_columns_streamed`: the file memory-mapped or the gzip
    inflated as a stream); an unusual layout, or an event only the standard parser takes, reads
    the whole text as before (`_columns_typed`, then ``json``).

    Args:
        path: the trace file.
        progress: told how far the reading has got.
        on_prefix: given the columns of the first chunk of a big file (`PREFIX_BYTES`) while the
            rest is read: a first view.

    Raises:
        TraceError: the file is missing or unreadable, is not valid JSON, or is not a trace.
    """
    shown = os.fspath(path)
    if progress:
        progress(0.0, "reading the file")
    from kernel_lens.traces.pftrace import is_pftrace, read_pftrace

    if is_pftrace(shown):
        return read_pftrace(shown)
    base = _exact_base(shown)
    _READING.base = base
    try:
        columns = _read_json(path, shown, progress, on_prefix)
    finally:
        _READING.base = None
    if base is not None and columns.ts_base == 0.0:
        columns = dataclasses.replace(columns, ts_base=float(base))
    return columns


def _read_json(
    path: str | os.PathLike[str],
    shown: str,
    progress: Progress | None,
    on_prefix: Prefix | None,
) -> TraceColumns:
    """`read_columns` of a JSON trace (`_READING` set for an exact one)."""
    columns = _columns_streamed(shown, progress, on_prefix)
    if columns is not None:
        return columns
    raw = read_trace_bytes(path)
    if len(raw) > max_trace_bytes():
        raise TraceError(
            f"trace file {shown} holds {len(raw) / 2**20:,.0f} MiB of JSON, past the bound on a "
            f"trace ({max_trace_bytes() / 2**20:,.0f} MiB; $KERNEL_LENS_TRACE_MAX_BYTES sets it)"
        )
    # Depth first: no parser (msgspec's, json's) recurses into a 10**6-deep nesting.
    check_json_depth(raw, shown)
    if progress:
        progress(0.1, f"parsing {len(raw) / 1e6:.0f} MB of JSON")
    try:
        columns = _columns_typed(raw, progress)
    except (RecursionError, MemoryError):
        columns = None  # the standard parser says what is wrong, as a TraceError
    if columns is not None:
        return columns
    trace = parse_trace_bytes(raw, shown, exact=_ts_base() is not None)
    del raw
    if progress:
        progress(0.55, "building columns")
    with gc_paused():
        return columns_from_trace(trace)


def summarize_file(path: str | os.PathLike[str], *, top: int = 20) -> TraceSummary:
    """Summarise a trace file (`.json` or gzip) read straight into columns (`read_columns`).

    Raises:
        TraceError: the file cannot be read as a trace.
    """
    return summarize_columns(read_columns(path), top=top)
