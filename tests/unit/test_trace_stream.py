"""The streaming trace reader (issue 28 item 4): chunk-by-chunk JSON (mapped file and gzip
stream), the first view of a big trace, and Perfetto protobuf traces."""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kernel_lens.analysis.trace_columns import TraceColumns, columns_from_trace
from kernel_lens.analysis.trace_store import build_store
from kernel_lens.analysis.trace_summary import load_trace, summarize_columns
from kernel_lens.traces import read, stream
from kernel_lens.traces.decode import EVENTS_DECODER
from kernel_lens.traces.pftrace import read_pftrace, trace_from_pftrace

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "data" / "h200" / "matmul_relu_trace.json"
PFTRACE = ROOT / "tests" / "data" / "pftrace" / "hand_built.pftrace"


def _same(a: TraceColumns, b: TraceColumns) -> None:
    assert len(a) == len(b)
    for f in ("ts", "dur", "ext_id", "corr", "nbytes"):
        assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f
    for f, t in (("cat", "cats"), ("name", "names"), ("pid", "keys"), ("tid", "keys"),
                 ("stream", "keys"), ("device", "keys")):  # fmt: skip
        assert [getattr(a, t)[i] for i in getattr(a, f)] == [
            getattr(b, t)[i] for i in getattr(b, f)
        ]
    assert a.device_name == b.device_name


def _awkward_trace(events: int) -> dict[str, Any]:
    """A replicated H200 trace with what a cut must not fall into: ``}, {`` inside strings
    and arrays of objects inside ``args``, and ``]`` after the array."""
    import sys

    sys.path.insert(0, str(ROOT))
    from benchmarks.trace_synth import replicate_trace

    trace = replicate_trace(load_trace(H200), events)
    for e in trace["traceEvents"][::37]:
        e.setdefault("args", {})["nest"] = [{"a": 1}, {"b": "x}, {y"}]
    trace["traceEvents"][5]["name"] = 'we}, {ird"], ['
    trace["traceName"] = "x]}"
    trace["distributedInfo"] = [{"rank": 0}, {"rank": 1}]
    return trace


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "CHUNK_BYTES", 40_000)


def test_mapped_and_gzip_streams_read_the_same_columns_as_the_json_parser(
    tmp_path: Path, small_chunks: None
) -> None:
    trace = _awkward_trace(8000)
    text = json.dumps(trace, indent=1).encode()
    plain, packed = tmp_path / "t.json", tmp_path / "t.json.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    expected = columns_from_trace(trace)
    mapped = read._columns_streamed(str(plain), None, None)
    streamed = read._columns_streamed(str(packed), None, None)
    assert mapped is not None and streamed is not None
    _same(mapped, expected)
    _same(streamed, expected)


def test_gzip_blocks_inflate_members_in_pieces_and_refuse_a_truncated_stream(
    tmp_path: Path,
) -> None:
    body = b'{"traceEvents": [' + b",".join([b'{"ph": "X", "ts": 1, "dur": 2}'] * 5000) + b"]}"
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(body[:1000]) + gzip.compress(body[1000:]))  # two members
    blocks = list(stream.gzip_blocks(str(path), block=512))
    assert len(blocks) > 1 and b"".join(blocks) == body
    path.write_bytes(gzip.compress(body)[:-40])
    with pytest.raises(EOFError):
        list(stream.gzip_blocks(str(path), block=512))
    # The reader falls back to the whole-file path, which names the broken gzip.
    from kernel_lens.analysis.trace_columns import TraceError

    with pytest.raises(TraceError, match="gzip"):
        read.read_columns(path)


def test_a_cut_is_proved_by_its_decode_not_by_the_bytes_it_falls_on(small_chunks: None) -> None:
    # Every "}, {" of this chunk but the real ones is inside a string or a nested array.
    events = [{"ph": "X", "ts": i, "dur": 1, "name": "a}, {b", "args": {"l": [{}, {}]}}
              for i in range(3000)]  # fmt: skip
    text = json.dumps({"traceEvents": events}).encode()
    got: list[Any] = []
    streamed = stream.StreamedText(iter([text[i : i + 777] for i in range(0, len(text), 777)]))
    for chunk in streamed.chunks(EVENTS_DECODER, chunk_bytes=5000):
        got.extend(chunk)
    assert [e.ts for e in got] == list(range(3000))
    assert stream.metadata(streamed.head, streamed.tail) == {"traceEvents": []}


def test_workers_over_byte_ranges_read_the_same_columns(
    tmp_path: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read, "_PARALLEL_EVENTS", 1)
    monkeypatch.setenv("KERNEL_LENS_TRACE_WORKERS", "3")
    trace = _awkward_trace(8000)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    got = read._columns_streamed(str(path), None, None)
    assert got is not None
    _same(got, columns_from_trace(trace))


def test_a_big_trace_gives_a_first_view_then_the_full_view_equals_the_one_shot_one(
    tmp_path: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(read, "PREFIX_BYTES", 100_000)
    trace = _awkward_trace(8000)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    firsts: list[tuple[TraceColumns, float]] = []
    full = read.read_columns(path, on_prefix=lambda c, f: firsts.append((c, f)))
    assert len(firsts) == 1
    first, fraction = firsts[0]
    assert 0 < len(first) < len(full) and 0 < fraction < 1
    # The first view is the trace's first events, exactly.
    assert np.array_equal(first.ts, full.ts[: len(first)])
    assert build_store(first).event_count == len(first)
    one_shot = columns_from_trace(trace)
    _same(full, one_shot)
    a = build_store(full, summary=summarize_columns(full).to_json())
    b = build_store(one_shot, summary=summarize_columns(one_shot).to_json())
    assert a.summary == b.summary
    assert a.timeline() == b.timeline()


# --- Perfetto protobuf: a hand-built trace (field numbers in kernel_lens.traces.pftrace) ---


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _f(number: int, value: int | bytes | str | float) -> bytes:
    if isinstance(value, float):
        return _varint(number << 3 | 1) + struct.pack("<d", value)
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _packet(*parts: bytes) -> bytes:
    return _f(1, b"".join(parts))


def hand_built_pftrace() -> bytes:
    """A CPU thread with an op and its child, a GPU stream track with a kernel (interned name
    and category, ``External id``/``correlation``/``device``/``stream`` annotations)."""
    seq = _f(10, 7)
    process = _packet(_f(60, _f(1, 1) + _f(3, _f(1, 4242))))
    thread = _packet(_f(60, _f(1, 2) + _f(5, 1) + _f(4, _f(1, 4242) + _f(2, 4243))))
    gpu = _packet(_f(60, _f(1, 3) + _f(2, "stream 7") + _f(5, 1)))
    names = (
        _f(1, _f(1, 1) + _f(2, "kernel"))
        + _f(2, _f(1, 5) + _f(2, "gemm_kernel"))
        + _f(3, _f(1, 9) + _f(2, "stream"))
    )
    interned = _packet(seq, _f(13, 1), _f(12, names))

    def ann(name: str, value: int) -> bytes:
        return _f(4, _f(10, name) + _f(4, value))

    def begin(ts: int, uuid: int, *fields: bytes) -> bytes:
        return _packet(seq, _f(8, ts), _f(11, _f(9, 1) + _f(11, uuid) + b"".join(fields)))

    def end(ts: int, uuid: int) -> bytes:
        return _packet(seq, _f(8, ts), _f(11, _f(9, 2) + _f(11, uuid)))

    return b"".join([
        process, thread, gpu, interned,
        begin(1_000_000, 2, _f(22, "cpu_op"), _f(23, "aten::linear"), ann("External id", 11)),
        begin(1_001_000, 2, _f(22, "cuda_runtime"), _f(23, "cudaLaunchKernel"),
              ann("correlation", 99), ann("External id", 11)),
        end(1_003_000, 2),
        end(1_010_000, 2),
        begin(1_004_000, 3, _f(3, 1), _f(10, 5), ann("correlation", 99),
              ann("External id", 11), ann("device", 0), _f(4, _f(1, 9) + _f(4, 7))),
        end(1_006_500, 3),
        begin(1_020_000, 2, _f(22, "cpu_op"), _f(23, "never ended")),
    ])  # fmt: skip


def test_the_committed_hand_built_pftrace_is_the_one_built_here() -> None:
    assert PFTRACE.read_bytes() == hand_built_pftrace()


def test_a_pftrace_reads_as_the_chrome_trace_it_stands_for(tmp_path: Path) -> None:
    trace = trace_from_pftrace(PFTRACE.read_bytes())
    by_name = {e["name"]: e for e in trace["traceEvents"]}
    assert set(by_name) == {"aten::linear", "cudaLaunchKernel", "gemm_kernel"}
    op, launch, kernel = (
        by_name["aten::linear"],
        by_name["cudaLaunchKernel"],
        by_name["gemm_kernel"],
    )
    assert (op["ts"], op["dur"], op["pid"], op["tid"]) == (1000.0, 10.0, 4242, 4243)
    assert (launch["ts"], launch["dur"], launch["cat"]) == (1001.0, 2.0, "cuda_runtime")
    assert kernel["cat"] == "kernel" and (kernel["ts"], kernel["dur"]) == (1004.0, 2.5)
    assert kernel["pid"] == 4242 and kernel["tid"] == "stream 7"
    assert kernel["args"] == {"correlation": 99, "External id": 11, "device": 0, "stream": 7}
    columns = read.read_columns(PFTRACE)
    summary = summarize_columns(columns).to_json()
    assert len(columns) == 3
    assert json.dumps(summary)  # the summary of a pftrace is the summary of its events
    packed = tmp_path / "t.pftrace.gz"
    packed.write_bytes(gzip.compress(PFTRACE.read_bytes()))
    _same(read_pftrace(str(packed)), columns)


def test_a_file_that_is_not_protobuf_is_refused_with_its_name(tmp_path: Path) -> None:
    from kernel_lens.analysis.trace_columns import TraceError

    path = tmp_path / "bad.pftrace"
    path.write_bytes(b"\x0b\xff\xfe not a protobuf Trace, nor JSON")
    with pytest.raises(TraceError, match="bad.pftrace"):
        read.read_columns(path)


def test_the_typed_columns_take_absent_and_null_args_and_mixed_keys_as_the_json_parser(
    tmp_path: Path, small_chunks: None
) -> None:
    # What the column building codes through dicts: args absent, null or partial (stream and
    # device fall back to tid and pid only when absent), int and str keys that print alike,
    # null names and categories, events that are not complete ones, in chunks of ~40 kB.
    events: list[dict[str, Any]] = []
    for i in range(3000):
        e: dict[str, Any] = {
            "ph": "X" if i % 11 else "i",
            "cat": ["cpu_op", "kernel", None][i % 3],
            "name": None if i % 17 == 0 else f"op{i % 23}",
            "ts": i * 2.5,
            "dur": 1.25,
            "pid": [1, "1", 0][i % 3],
            "tid": [7, "7", "main"][i % 3],
        }
        shape = i % 6
        if shape == 1:
            e["args"] = None
        elif shape == 2:
            e["args"] = {"stream": [7, "7", None][i % 3], "External id": i}
        elif shape == 3:
            e["args"] = {"device": [0, "0"][i % 2], "correlation": i, "bytes": 64}
        elif shape == 4:
            e["args"] = {"stream": 3, "device": 1, "Record function id": 5}
        elif shape == 5:
            e["args"] = {}
        if i % 29 == 0:
            del e["cat"]
        events.append(e)
    trace = {"traceEvents": events}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    got = read._columns_streamed(str(path), None, None)
    assert got is not None  # the typed reader took it (no fallback to the json parser)
    _same(got, columns_from_trace(trace))
    assert -1 not in set(got.stream.tolist()) | set(got.device.tolist())


def test_the_streamed_synthetic_writer_writes_what_dumping_the_replica_writes() -> None:
    import io
    import sys

    sys.path.insert(0, str(ROOT))
    from benchmarks.trace_synth import replicate_trace, write_replicated

    recorded = load_trace(H200)
    for events in (1, 700, 5000):
        out = io.StringIO()
        write_replicated(recorded, events, out, block=3)
        assert out.getvalue() == json.dumps(replicate_trace(recorded, events)), events


@pytest.mark.slow
def test_reading_holds_the_columns_and_a_chunk_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python's and numpy's allocations while a ~20 MB trace is read in one process in chunks
    # of 1 MB: the columns (88 bytes an event) and one chunk's records, far below the file
    # (the whole-text reading held the file's bytes, then its events' records).
    import sys
    import tracemalloc

    sys.path.insert(0, str(ROOT))
    from benchmarks.trace_synth import write_replicated

    monkeypatch.setattr(stream, "CHUNK_BYTES", 1 << 20)
    monkeypatch.setenv("KERNEL_LENS_TRACE_WORKERS", "1")
    path = tmp_path / "t.json"
    with open(path, "w") as f:
        write_replicated(load_trace(H200), 80_000, f)
    size = path.stat().st_size

    def peak_reading() -> tuple[int, int]:
        tracemalloc.start()
        try:
            n = len(read.read_columns(path))
            return n, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    events, chunked = peak_reading()
    assert events > 75_000 and size > 15e6
    # The columns are built twice over at the end (the chunks' parts joined): ~0.7x the file.
    assert chunked < 0.8 * size, (chunked, size)
    monkeypatch.setattr(read, "_columns_streamed", lambda *a: None)  # the whole-text reading
    whole = peak_reading()[1]
    assert whole > size > chunked / 0.8, (whole, size)


@pytest.mark.parametrize("aside", [True, False], ids=["forked", "here"])
def test_the_reader_saves_the_summary_it_computes_beside_the_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    aside: bool,
) -> None:  # fmt: skip
    # From _SUMMARY_ASIDE_EVENTS a forked process computes the summary while the store is laid
    # out; the saved store is the same either way, and equals the one built in one go.
    import os

    from kernel_lens.traces import reader
    from kernel_lens.traces.cache import load_store

    monkeypatch.setattr(reader, "_SUMMARY_ASIDE_EVENTS", 1 if aside else 10**9)
    forks: list[int] = []
    fork = os.fork

    def counted_fork() -> int:
        forks.append(1)
        return fork()

    monkeypatch.setattr(os, "fork", counted_fork)
    trace = _awkward_trace(3000)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    folder = str(tmp_path / "store")
    assert reader.main([str(path), folder]) == 0
    done = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert done["done"] == folder and done.get("decoder") in ("msgspec", "json"), done
    saved = load_store(folder)
    columns = columns_from_trace(trace)
    expected = build_store(columns, summary=summarize_columns(columns).to_json())
    assert saved is not None and saved.summary is not None
    assert saved.summary == json.loads(json.dumps(expected.summary))
    assert saved.summary["event_count"] == len(columns) > 2000
    assert saved.timeline() == expected.timeline()
    assert len(forks) == (1 if aside else 0)


@pytest.mark.parametrize("child_fails", [False, True], ids=["forked", "child-fails"])
def test_the_nesting_walked_in_two_processes_is_the_walk_in_one(
    monkeypatch: pytest.MonkeyPatch, child_fails: bool
) -> None:
    import os

    from kernel_lens.analysis import trace_store
    from kernel_lens.traces import reader

    monkeypatch.setattr(trace_store, "_NEST_PIECE", 200)
    monkeypatch.setattr(reader, "_WALK_TWO_EVENTS", 1)
    columns = columns_from_trace(_awkward_trace(6000))
    one = build_store(columns)
    parent, walks = os.getpid(), []

    def walk(pieces: list[Any]) -> Any:
        walks.append(len(pieces))
        if child_fails and os.getpid() != parent:
            raise RuntimeError("the child's walk fails")
        return trace_store.walk_pieces(pieces)

    monkeypatch.setattr(reader, "walk_pieces", walk)
    two = build_store(columns, walk=reader.walk_in_two)
    # Here: the earlier half, then (the child failed) the later half again.
    assert len(walks) == (2 if child_fails else 1) and walks[0] > 5
    for field in ("segments", "start", "end", "dur", "reach", "name", "label", "cat", "line",
                  "self_dur"):  # fmt: skip
        np.testing.assert_array_equal(getattr(two, field), getattr(one, field), field)
    assert (one.line >= 0).any()


def test_a_pftrace_decodes_every_field_it_reads() -> None:
    """Characterisation of `trace_from_pftrace` beyond the hand-built trace: two packet
    sequences with their own interned names (one cleared and refilled), annotations of every
    value type, a track with no process (its uuid stands for the pid, its name for the tid), a
    thread track whose process is two tracks up, nested slices on one track, an end with no
    begin, a packet without a timestamp and one without an event."""
    a, b = _f(10, 1), _f(10, 2)

    def interned(seq: bytes, *entries: bytes, clear: bool = False) -> bytes:
        return _packet(seq, *([_f(13, 1)] if clear else []), _f(12, b"".join(entries)))

    def entry(kind: int, iid: int, name: str) -> bytes:
        return _f(kind, _f(1, iid) + _f(2, name))

    def event(seq: bytes, ts: int, kind: int, uuid: int, *fields: bytes) -> bytes:
        return _packet(seq, _f(8, ts), _f(11, _f(9, kind) + _f(11, uuid) + b"".join(fields)))

    data = b"".join([
        _packet(_f(60, _f(1, 10) + _f(3, _f(1, 77)))),  # process 77
        _packet(_f(60, _f(1, 11) + _f(5, 10))),  # a track under it
        _packet(_f(60, _f(1, 12) + _f(5, 11) + _f(4, _f(1, 77) + _f(2, 78)))),  # thread 78
        _packet(_f(60, _f(1, 20) + _f(2, "lonely"))),  # no process anywhere
        _packet(_f(60, _f(2, "no uuid"))),  # dropped
        interned(a, entry(1, 1, "cpu_op"), entry(2, 1, "outer"), entry(3, 1, "flag"),
                 clear=True),
        interned(b, entry(1, 1, "kernel"), entry(2, 1, "k0"), entry(3, 1, "bytes")),
        interned(a, entry(2, 2, "inner")),
        event(a, 5_000, 1, 12, _f(3, 1), _f(10, 1),
              _f(4, _f(1, 1) + _f(2, 1)),  # bool by interned name
              _f(4, _f(10, "u") + _f(3, 5)),  # uint
              _f(4, _f(10, "i") + _f(4, (1 << 64) - 3)),  # negative int
              _f(4, _f(10, "d") + _f(5, 2.5)),  # double
              _f(4, _f(10, "s") + _f(6, "text")),  # string
              _f(4, _f(1, 99) + _f(3, 1))),  # unknown name: dropped
        event(a, 6_000, 1, 12, _f(3, 1), _f(10, 2)),
        event(a, 7_500, 2, 12),
        event(a, 9_000, 2, 12),
        event(a, 9_500, 2, 12),  # nothing open: ignored
        event(b, 10_000, 1, 20, _f(3, 1), _f(10, 1), _f(4, _f(1, 1) + _f(3, 4096))),
        event(b, 12_000, 2, 20),
        _packet(a, _f(11, _f(9, 1) + _f(11, 12) + _f(23, "no timestamp"))),
        _packet(a, _f(8, 13_000)),
    ])  # fmt: skip
    assert trace_from_pftrace(data) == {
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "outer", "ts": 5.0, "dur": 4.0,
             "args": {"flag": True, "u": 5, "i": -3, "d": 2.5, "s": "text"},
             "pid": 77, "tid": 78},
            {"ph": "X", "cat": "cpu_op", "name": "inner", "ts": 6.0, "dur": 1.5, "args": {},
             "pid": 77, "tid": 78},
            {"ph": "X", "cat": "kernel", "name": "k0", "ts": 10.0, "dur": 2.0,
             "args": {"bytes": 4096}, "pid": 20, "tid": "lonely"},
        ]
    }  # fmt: skip
