"""A Chrome trace's usable complete events as columns (numpy arrays).

`TraceColumns` holds one row per usable complete event (``ph == "X"`` with a finite ``ts`` and a
finite, non-negative ``dur``), in file order; strings and ids are codes into small tables. Both
the summary (`trace_summary.summarize_columns`) and the timeline store (`trace_store`) work on it.

Two ways in:

- `columns_from_trace` takes an already parsed trace (the agent's path: it has the trace object
  in memory) and reads it event by event with the exact rules of the summary.
- `kernel_lens.traces.read.read_columns` reads a file fast (msgspec's typed records, forked
  workers for big traces); it falls back to `parse_trace_bytes` and `columns_from_trace`, so the
  answer is the same either way.

Pure: no process is started and no memory is shared here (that is `kernel_lens.traces`).
"""

from __future__ import annotations

import dataclasses
import gc
import gzip
import io
import math
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from kernel_lens.analysis.regular_files import open_regular
from kernel_lens.analysis.trace_errors import TraceError

__all__ = [
    "Progress",
    "TraceColumns",
    "TraceError",
    "columns_from_trace",
    "gc_paused",
    "check_json_depth",
    "device_table",
    "grouping_key",
    "normalize_columns",
    "max_trace_bytes",
    "parse_trace_bytes",
    "read_trace_bytes",
    "trace_device_name",
]

#: ``progress(fraction, message)``: how far reading a trace has got (0 to 1).
Progress = Callable[[float, str], None]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class TraceColumns:
    """One row per usable complete event, in file order. Times are the file's, in µs.

    ``cat`` and ``name`` are codes into ``cats`` and ``names``; ``pid``, ``tid``, ``stream``
    (``args.stream``, else ``tid``) and ``device`` (``args.device``, else ``pid``) are codes into
    ``keys`` (an int stays an int, anything else becomes its ``str``, a missing one ``""``).
    ``ext_id`` and ``corr`` are ``args["External id"]`` and ``args.correlation`` (NaN when
    absent), ``nbytes`` is ``args.bytes`` (0 when absent).
    """

    cat: I64
    cats: tuple[str, ...]
    name: I64
    names: tuple[str, ...]
    ts: F64
    dur: F64
    pid: I64
    tid: I64
    stream: I64
    device: I64
    keys: tuple[int | str, ...]
    ext_id: F64
    corr: F64
    nbytes: I64
    device_name: str | None
    device_kind: str = "GPU"
    """What the device is: ``GPU`` (CUDA or ROCm), ``MTIA``, ``XPU`` or ``PrivateUse1`` (a
    custom backend), from the categories its runtime's events have (`normalize_columns`)."""
    ts_base: float = 0.0
    """``ts`` is relative to this (µs): an epoch-scale trace with nanosecond fractions is read
    with its base subtracted before the float conversion, so no digit is lost."""

    def __len__(self) -> int:
        return len(self.ts)

    def cat_code(self, cat: str) -> int:
        """The code of category ``cat`` (-1 when no event has it)."""
        try:
            return self.cats.index(cat)
        except ValueError:
            return -1

    def cat_in(self, cats: frozenset[str] | set[str]) -> npt.NDArray[np.bool_]:
        """Which rows have a category in ``cats``."""
        wanted = np.array([c in cats for c in self.cats] + [False], dtype=bool)
        return wanted[self.cat]


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off: parsing makes millions of objects and none is garbage."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _number(value: Any) -> float | None:
    """`value` as a finite float, or None (bools and strings are not numbers here)."""
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def grouping_key(value: Any) -> int | str:
    """A pid, tid or stream id as a grouping key: ints stay ints, anything else a string."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return "" if value is None else str(value)


def trace_device_name(trace: Mapping[str, Any]) -> str | None:
    """The name of the trace's first device (``deviceProperties``, or ``computeProperties``
    as mid-2021 traces call it), if it has one."""
    table = device_table(trace)
    return table[0][1] if table else None


def device_table(trace: Mapping[str, Any]) -> tuple[tuple[int | str, str], ...]:
    """The trace's devices as ``(id, name)``, in the file's order: ``deviceProperties``, or
    ``computeProperties`` (its mid-2021 name); an entry without an ``id`` has its index."""
    props = trace.get("deviceProperties")
    if not isinstance(props, list) or not props:
        props = trace.get("computeProperties")
    if not isinstance(props, list):
        return ()
    table: list[tuple[int | str, str]] = []
    for i, prop in enumerate(props):
        if not isinstance(prop, Mapping):
            continue
        name = prop.get("name")
        if isinstance(name, str) and name:
            table.append((grouping_key(prop.get("id", i)), name))
    return tuple(table)


#: Categories as other schemas spell them, into the spellings every consumer of the columns
#: reads (Kineto's since late 2021). The 2021 schema (PyTorch 1.8 and 1.9) wrote ``Kernel``,
#: ``Memcpy``, ``Memset``, ``Operator``, ``Runtime`` and ``User`` (a GPU-side annotation);
#: other devices' runtimes and device work are read as the CUDA ones are (the columns'
#: `TraceColumns.device_kind` says which device it was).
CATEGORY_ALIASES: Mapping[str, str] = {
    "Kernel": "kernel",
    "Memcpy": "gpu_memcpy",
    "Memset": "gpu_memset",
    "Operator": "cpu_op",
    "Runtime": "cuda_runtime",
    "Driver": "cuda_driver",
    "User": "gpu_user_annotation",
    "gpu_user_Annotation": "gpu_user_annotation",
    "mtia_ccp_events": "kernel",
    "mtia_runtime": "cuda_runtime",
    "xpu_runtime": "cuda_runtime",
    "xpu_driver": "cuda_driver",
    "privateuse1_runtime": "cuda_runtime",
    "privateuse1_driver": "cuda_driver",
}
#: The device a category's events belong to, when it is not a GPU's.
_DEVICE_KIND_OF: Mapping[str, str] = {
    "mtia_ccp_events": "MTIA",
    "mtia_runtime": "MTIA",
    "mtia_insight": "MTIA",
    "xpu_runtime": "XPU",
    "xpu_driver": "XPU",
    "privateuse1_runtime": "PrivateUse1",
    "privateuse1_driver": "PrivateUse1",
}
#: The legacy profiler's export (PyTorch up to 1.7, a top-level JSON array) names no category:
#: its ops are in the process ``CPU functions``, its kernels in ``CUDA functions``.
_LEGACY_PROCESSES: Mapping[str, str] = {"CPU functions": "cpu_op", "CUDA functions": "kernel"}


def normalize_columns(
    columns: TraceColumns, devices: Sequence[tuple[int | str, str]] = ()
) -> TraceColumns:
    """The columns with their categories in one spelling (`CATEGORY_ALIASES`, the legacy
    export's processes), `TraceColumns.device_kind` set, and `TraceColumns.device_name` the
    name of the device the kernels ran on (``devices``: the trace's ``(id, name)`` table; the
    device with the most kernel time, else the first listed).

    Called once where the columns are built, so that no consumer spells a category twice.
    """
    kinds = {_DEVICE_KIND_OF[c] for c in columns.cats if c in _DEVICE_KIND_OF}
    device_kind = "GPU" if len(kinds) != 1 else kinds.pop()
    cat, cats = columns.cat, columns.cats
    if any(c in CATEGORY_ALIASES for c in cats) or (
        "" in cats and any(k in _LEGACY_PROCESSES for k in columns.keys if isinstance(k, str))
    ):
        spelled = [CATEGORY_ALIASES.get(c, c) for c in cats]
        if "" in cats:  # the legacy export: the process says what an event is
            spelled += list(_LEGACY_PROCESSES.values())
        codes, table = pd.factorize(np.array(spelled + [""], dtype=object))
        remap = np.asarray(codes, dtype=np.int64)
        cat = remap[cat] if len(cat) else cat
        cats = tuple(str(c) for c in table.tolist())
        if "" in columns.cats:
            blank = cats.index("")
            for process, meant in _LEGACY_PROCESSES.items():
                if process in columns.keys:
                    here = (cat == blank) & (columns.pid == columns.keys.index(process))
                    cat = np.where(here, cats.index(meant), cat)
    device_name = columns.device_name
    if devices:
        device_name = devices[0][1]
        kernel = cats.index("kernel") if "kernel" in cats else -1
        rows = cat == kernel
        if rows.any():
            time = np.bincount(columns.device[rows], weights=columns.dur[rows])
            busiest = columns.keys[int(np.argmax(time))]
            names = {str(i): n for i, n in devices}
            device_name = names.get(str(busiest), device_name)
    return dataclasses.replace(
        columns, cat=cat, cats=cats, device_name=device_name, device_kind=device_kind
    )


def _codes(values: Sequence[Any], normalize: Callable[[Any], Any]) -> tuple[I64, list[Any]]:
    """Codes of ``values`` into a table of distinct ``normalize``-d values (None is missing)."""
    if not values:
        return np.zeros(0, dtype=np.int64), []
    array = np.empty(len(values), dtype=object)
    array[:] = values
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    normal = [normalize(u) for u in uniques.tolist()] + [normalize(None)]
    # Distinct raw values can become one key (None and "", 1.5 and "1.5"): merge their codes.
    final, table = pd.factorize(np.array(normal + [None], dtype=object)[:-1])
    remap = np.asarray(final, dtype=np.int64)
    return remap[np.asarray(codes, dtype=np.int64)], table.tolist()


def _assemble(
    *,
    cat: Sequence[Any],
    name: Sequence[Any],
    ts: F64,
    dur: F64,
    pid: Sequence[Any],
    tid: Sequence[Any],
    stream: Sequence[Any],
    device: Sequence[Any],
    ext_id: F64,
    corr: F64,
    nbytes: I64,
    devices: Sequence[tuple[int | str, str]],
) -> TraceColumns:
    n = len(ts)
    cat_codes, cats = _codes(cat, lambda v: str(v))
    name_codes, names = _codes(name, lambda v: str(v))
    key_codes, keys = _codes([*pid, *tid, *stream, *device], grouping_key)
    columns = TraceColumns(
        cat=cat_codes,
        cats=tuple(cats),
        name=name_codes,
        names=tuple(names),
        ts=ts,
        dur=dur,
        pid=key_codes[:n],
        tid=key_codes[n : 2 * n],
        stream=key_codes[2 * n : 3 * n],
        device=key_codes[3 * n :],
        keys=tuple(keys),
        ext_id=ext_id,
        corr=corr,
        nbytes=nbytes,
        device_name=None,
    )
    return normalize_columns(columns, devices)


def columns_from_trace(trace: Mapping[str, Any] | list[Any]) -> TraceColumns:
    """The usable complete events of a parsed trace as columns.

    ``trace`` is the trace object, or a bare list of events (the Chrome trace format's "JSON
    Array Format").

    Raises:
        TraceError: ``trace`` has no ``traceEvents`` list.
    """
    if isinstance(trace, list):
        trace = {"traceEvents": trace}
    raw_events = trace.get("traceEvents")
    if not isinstance(raw_events, list):
        raise TraceError("trace has no 'traceEvents' list: not a torch.profiler Chrome trace")
    cat: list[str] = []
    name: list[str] = []
    ts: list[float] = []
    dur: list[float] = []
    pid: list[int | str] = []
    tid: list[int | str] = []
    stream: list[int | str] = []
    device: list[int | str] = []
    ext: list[float | None] = []
    corr: list[float | None] = []
    nbytes: list[int] = []
    exact: list[Any] = []  # each ts as the file has it (a Decimal when parsed exactly)
    for ev in raw_events:
        if not isinstance(ev, Mapping) or ev.get("ph") != "X":
            continue
        raw_ts = ev.get("ts")
        t, d = _number(raw_ts), _number(ev.get("dur"))
        if t is None or d is None or d < 0:
            continue
        args = ev.get("args")
        if not isinstance(args, Mapping):
            args = {}
        cat.append(str(ev.get("cat", "")))
        name.append(str(ev.get("name", "")))
        ts.append(t)
        exact.append(raw_ts)
        dur.append(d)
        pid.append(grouping_key(ev.get("pid")))
        tid.append(grouping_key(ev.get("tid")))
        stream.append(grouping_key(args.get("stream", ev.get("tid"))))
        device.append(grouping_key(args.get("device", ev.get("pid"))))
        external = _number(args.get("External id"))
        # the 2021 schema's spelling on runtime calls and device events
        ext.append(external if external is not None else _number(args.get("external id")))
        corr.append(_number(args.get("correlation")))
        nbytes.append(int(_number(args.get("bytes")) or 0))
    ts_base = 0
    first = next((v for v in exact if isinstance(v, Decimal)), None)
    if first is not None and abs(first) >= 2**43:  # as `read._EXACT_FROM_US`
        # past a float's nanoseconds: the base off before the conversion
        ts_base = int(first)
        ts = [float((v if isinstance(v, Decimal | int) else Decimal(v)) - ts_base) for v in exact]
    columns = _assemble(
        cat=cat,
        name=name,
        ts=np.array(ts, dtype=np.float64),
        dur=np.array(dur, dtype=np.float64),
        pid=pid,
        tid=tid,
        stream=stream,
        device=device,
        ext_id=np.array(ext, dtype=np.float64),
        corr=np.array(corr, dtype=np.float64),
        nbytes=np.array(nbytes, dtype=np.int64),
        devices=device_table(trace),
    )
    return dataclasses.replace(columns, ts_base=float(ts_base)) if ts_base else columns


def read_trace_bytes(path: str | os.PathLike[str]) -> bytes | bytearray:
    """The JSON text of a trace file, gunzipped when it starts with gzip's magic bytes.

    Raises:
        TraceError: the file is missing, unreadable or broken gzip.
    """
    shown = os.fspath(path)
    bound = max_trace_bytes()
    try:
        # Only a regular file (a FIFO or a link to /dev/zero is refused, never waited on),
        # and never more than the bound on a trace: a plain read is bounded as gzip's is.
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size > bound:
                raise TraceError(_too_big(shown, size))
            raw: bytes | bytearray = bytearray(size)
            got = f.readinto(raw)
            if got != size or f.read(1):  # the file changed while it was read
                f.seek(0)
                raw = f.read(bound + 1)
                if len(raw) > bound:
                    raise TraceError(_too_big(shown, len(raw)))
    except FileNotFoundError:
        raise TraceError(f"trace file not found: {shown}") from None
    except OSError as exc:
        raise TraceError(f"cannot read trace file {shown}: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(raw, shown)
    return raw


#: The most JSON a trace file may hold (gzip's contents included), unless
#: ``$KERNEL_LENS_TRACE_MAX_BYTES`` says otherwise: beyond any trace a profiler writes.
MAX_TRACE_BYTES = 16 * 2**30
#: A gzip that inflates more than this many times its size, past :data:`_RATIO_FLOOR`, is a
#: gzip bomb (JSON traces compress 3–40×: 2.7–9.4× the H200 traces here, at most ~40× the real
#: traces of tests/data/real_traces; a file of zeros, 1000×). The floor and the ratio bound what
#: a bomb may cost before it is stopped (issue 39 item 6: a 2 MB bomb had reached 4.3 GB).
MAX_GZIP_RATIO = 100
_RATIO_FLOOR = 64 * 2**20
#: Deepest JSON nesting a trace may have (a torch.profiler trace: 5 or 6); deeper is refused
#: before any parser recurses into it.
MAX_JSON_DEPTH = 64
_INFLATE_STEP = 16 * 2**20


def _too_big(shown: str, size: int) -> str:
    return (
        f"trace file {shown} holds {size / 2**20:,.0f} MiB of JSON, past the bound on a "
        f"trace ({max_trace_bytes() / 2**20:,.0f} MiB; $KERNEL_LENS_TRACE_MAX_BYTES sets it)"
    )


def max_trace_bytes() -> int:
    """The bound on a trace's JSON size (:data:`MAX_TRACE_BYTES`, or the environment's)."""
    try:
        return max(1, int(os.environ["KERNEL_LENS_TRACE_MAX_BYTES"]))
    except (KeyError, ValueError):
        return MAX_TRACE_BYTES


def check_inflated(inflated: int, compressed: int, shown: str) -> None:
    """Refuse a gzip that has inflated past the bounds: :func:`max_trace_bytes` of JSON, or —
    past :data:`_RATIO_FLOOR` — :data:`MAX_GZIP_RATIO` times its ``compressed`` size (a gzip
    bomb). Called as it inflates, so a bomb is refused before it fills the memory.

    Raises:
        TraceError: past a bound.
    """
    limit = max_trace_bytes()
    if inflated > limit:
        raise TraceError(
            f"trace file {shown} inflates past {limit / 2**20:,.0f} MiB of JSON "
            "(the bound on a trace; $KERNEL_LENS_TRACE_MAX_BYTES sets it): not read"
        )
    if inflated > max(_RATIO_FLOOR, compressed * MAX_GZIP_RATIO):
        raise TraceError(
            f"trace file {shown} inflates more than {MAX_GZIP_RATIO}× its "
            f"{compressed:,} bytes (a gzip bomb, not a profiler trace): not read"
        )


def gzip_trailer_size(trailer: bytes, compressed: int) -> int | None:
    """The inflated size a gzip's trailer records (its last 4 bytes, modulo 4 GiB, taken as
    the smallest size consistent with a ratio of at least 1), or ``None`` without one."""
    if len(trailer) != 4:
        return None
    size = int.from_bytes(trailer, "little")
    while size < compressed and compressed > 2**32:
        size += 2**32
    return size


def check_gzip_trailer(
    trailer: bytes, compressed: int, shown: str, blocks: Callable[[], Iterable[bytes]]
) -> None:
    """Refuse, before keeping a byte, a gzip whose trailer says it inflates past the bounds
    (:func:`check_inflated`): an honest bomb says so itself. The trailer of a file cut short is
    any 4 bytes, so before calling it a bomb the stream is inflated (and dropped) up to the
    bound: a damaged file then says so instead. A trailer that lies is stopped by the check
    as the reading inflates.

    Args:
        blocks: the file's compressed bytes, a block at a time (read again here).

    Raises:
        TraceError: past a bound, or not valid gzip.
    """
    size = gzip_trailer_size(trailer, compressed)
    if size is None:
        return
    try:
        check_inflated(size, compressed, shown)
    except TraceError:
        limit = max(_RATIO_FLOOR, compressed * MAX_GZIP_RATIO)
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        total = 0
        try:
            for block in blocks():
                data = block
                while data and total <= limit:
                    total += len(inflater.decompress(data, _INFLATE_STEP))
                    data = inflater.unconsumed_tail
                if total > limit or inflater.eof:
                    break
        except zlib.error as exc:
            raise TraceError(f"trace file {shown} is not valid gzip: {exc}") from None
        if total <= limit and not inflater.eof:
            raise TraceError(
                f"trace file {shown} is not valid gzip: it ends before its end-of-stream "
                "marker (cut short)"
            ) from None
        raise


def _gunzip(raw: bytes | bytearray, shown: str) -> bytes | bytearray:
    """Inflate a gzip file a step at a time, never past the bounds (a gzip bomb is refused
    when it has inflated to the bound, not after it has filled the memory)."""
    check_gzip_trailer(bytes(raw[-4:]), len(raw), shown, lambda: [bytes(raw)])
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            while True:
                chunk = stream.read(_INFLATE_STEP)
                if not chunk:
                    break
                out += chunk
                check_inflated(len(out), len(raw), shown)
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(f"trace file {shown} is not valid gzip: {exc}") from None
    except MemoryError:
        raise TraceError(f"trace file {shown} does not fit in memory once inflated") from None
    return out


def check_json_depth(raw: bytes | bytearray, shown: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` (brackets inside strings do not count).

    Vectorised: the brackets and quotes are found with numpy, an escaped quote is one after an
    odd run of backslashes, and the depth is a running sum over the brackets outside strings.

    Raises:
        TraceError: the text is nested deeper than ``limit``.
    """
    data = np.frombuffer(raw, dtype=np.uint8)
    if not len(data):
        return
    interesting = np.flatnonzero(
        (data == 0x22) | (data == 0x5B) | (data == 0x5D) | (data == 0x7B) | (data == 0x7D)
    )
    if not len(interesting):
        return
    values = data[interesting]
    quotes = interesting[values == 0x22]
    if len(quotes):
        # A quote is escaped when an odd number of backslashes stands right before it.
        backslashes = data == 0x5C
        escaped = np.zeros(len(quotes), dtype=bool)
        run = np.zeros(len(quotes), dtype=np.int64)
        pos = quotes - 1
        active = pos >= 0
        while active.any():
            hit = np.zeros(len(quotes), dtype=bool)
            hit[active] = backslashes[pos[active]]
            run += hit
            pos = pos - 1
            active = hit & (pos >= 0)
        escaped = run % 2 == 1
        real = np.ones(len(values), dtype=bool)
        real[np.flatnonzero(values == 0x22)[escaped]] = False
        keep = (values != 0x22) | real
        interesting, values = interesting[keep], values[keep]
    is_quote = values == 0x22
    in_string = (np.cumsum(is_quote) - is_quote) % 2 == 1
    bracket = ~is_quote & ~in_string
    step = np.where((values == 0x5B) | (values == 0x7B), 1, -1)[bracket]
    if len(step) and int(np.cumsum(step).max()) > limit:
        raise TraceError(
            f"trace file {shown} is JSON nested more than {limit} levels deep "
            "(a profiler trace has a few): not read"
        )


def parse_trace_bytes(raw: bytes | bytearray, shown: str, *, exact: bool = False) -> dict[str, Any]:
    """Parse a trace's JSON text with the standard parser (collector paused); ``exact``: every
    fractional number as a `decimal.Decimal` (timestamps past a float's precision, read by
    `columns_from_trace` with their base subtracted first).

    Raises:
        TraceError: not UTF-8 JSON, or no ``traceEvents`` list.
    """
    import json

    check_json_depth(raw, shown)
    try:
        with gc_paused():
            data = json.loads(raw, parse_float=Decimal) if exact else json.loads(raw)
    except UnicodeDecodeError as exc:
        raise TraceError(f"trace file {shown} is not UTF-8 JSON: {exc}") from None
    except RecursionError:
        raise TraceError(f"trace file {shown} is JSON nested too deeply to read") from None
    except MemoryError:
        raise TraceError(f"trace file {shown} does not fit in memory as parsed JSON") from None
    except json.JSONDecodeError as exc:
        raise TraceError(
            f"trace file {shown} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg})"
        ) from None
    if isinstance(data, list):
        if not any(isinstance(e, dict) and "ph" in e for e in data):
            raise TraceError(
                f"trace file {shown} has no 'traceEvents' list and is not an array of trace "
                "events: not a torch.profiler Chrome trace"
            )
        data = {"traceEvents": data}  # the "JSON Array Format": the events alone
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TraceError(
            f"trace file {shown} has no 'traceEvents' list: not a torch.profiler Chrome trace"
        )
    return data
