"""The columnar trace store (issue 12): the fast file reader gives the same columns as the
event-by-event one, window queries equal a brute-force filter, a saved store reads back equal,
and the overview of a big trace shows its density rather than one block per lane."""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from benchmarks.trace_synth import replicate_trace

from kernel_lens.analysis.trace_columns import TraceColumns, columns_from_trace
from kernel_lens.analysis.trace_store import build_store
from kernel_lens.analysis.trace_summary import load_trace, summarize_trace
from kernel_lens.traces.cache import load_store, save_store
from kernel_lens.traces.read import read_columns, summarize_file
from tests.traces import RECORDED, odd_trace

H200 = Path(__file__).parents[1] / "data" / "h200" / "matmul_relu_trace.json"


def _same_columns(a: TraceColumns, b: TraceColumns) -> None:
    assert a.device_name == b.device_name and len(a) == len(b)
    for field in ("ts", "dur", "ext_id", "corr", "nbytes"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    for field, table in (("cat", "cats"), ("name", "names")):
        got = [getattr(a, table)[i] for i in getattr(a, field)]
        assert got == [getattr(b, table)[i] for i in getattr(b, field)], field
    for field in ("pid", "tid", "stream", "device"):
        got = [(type(a.keys[i]), a.keys[i]) for i in getattr(a, field)]
        assert got == [(type(b.keys[i]), b.keys[i]) for i in getattr(b, field)], field


@pytest.mark.parametrize("packed", [False, True], ids=["json", "gzip"])
def test_the_file_reader_gives_the_columns_of_the_parsed_trace(
    tmp_path: Path, packed: bool
) -> None:
    traces = {p.name: load_trace(p) for p in RECORDED}
    traces["replica.json"] = replicate_trace(traces["matmul_relu_trace.json"], 3000)
    # Python's json writes the odd trace's infinity as `Infinity`: the typed reader refuses it
    # and the reader falls back to the standard parser, with the same answer.
    traces["odd.json"] = odd_trace()
    for name, trace in traces.items():
        text = json.dumps(trace).encode()
        path = tmp_path / (name + (".gz" if packed else ""))
        path.write_bytes(gzip.compress(text) if packed else text)
        _same_columns(read_columns(path), columns_from_trace(json.loads(text)))
        assert summarize_file(path) == summarize_trace(json.loads(text))


def test_read_columns_reports_progress() -> None:
    seen: list[tuple[float, str]] = []
    read_columns(H200, lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and len(seen) >= 3


def _brute(trace: dict[str, Any], window: tuple[float, float]) -> dict[str, list[tuple[Any, ...]]]:
    """Per lane id, the events overlapping ``window``: (start, dur, name), from the raw events."""
    full = build_store(columns_from_trace(trace)).timeline(resolution=10**9)
    return {
        lane["id"]: sorted(
            (e["start"], e["dur"], e["name"])
            for e in lane["events"]
            if e["start"] + e["dur"] >= window[0] and e["start"] <= window[1]
        )
        for lane in full["lanes"]
    }


@pytest.mark.slow
def test_window_queries_equal_a_brute_force_filter() -> None:
    trace = replicate_trace(load_trace(H200), 20_000)
    store = build_store(columns_from_trace(trace))
    full = store.timeline(resolution=10**9)
    # At that resolution nothing is merged; every event of a lane's category is there.
    assert not any(e.get("merged") for lane in full["lanes"] for e in lane["events"])
    lane_cats = {"cpu_op", "user_annotation", "python_function", "cuda_runtime", "kernel"}
    assert full["kept"] == sum(
        1 for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") in lane_cats
    )
    rng = random.Random(12)
    for _ in range(20):
        width = store.span_us * 10 ** rng.uniform(-5, 0)
        start = rng.uniform(-width / 2, store.span_us - width / 2)
        window = (start, start + width)
        want = _brute(trace, window)
        exact = store.timeline(resolution=10**9, window=window)
        got = {
            lane["id"]: sorted((e["start"], e["dur"], e["name"]) for e in lane["events"])
            for lane in exact["lanes"]
        }
        assert got == want
        # At the panel's resolution every event is still there, alone or in a block.
        merged = store.timeline(window=window)
        for lane in merged["lanes"]:
            assert sum(e.get("count", 1) for e in lane["events"]) == len(want[lane["id"]])
            # A short event stands alone only at the end of its depth (as ever).
            lone = [e for e in lane["events"] if not e.get("merged") and e["dur"] < width / 4000]
            for e in lone:
                same = [x["start"] for x in lane["events"] if x["depth"] == e["depth"]]
                assert e["start"] == max(same)


def test_a_saved_store_reads_back_equal(tmp_path: Path) -> None:
    trace = replicate_trace(load_trace(H200), 5000)
    summary = summarize_trace(trace).to_json()
    store = build_store(columns_from_trace(trace), summary=summary)
    save_store(store, str(tmp_path / "store"))
    loaded = load_store(str(tmp_path / "store"))
    assert loaded is not None and loaded.summary == summary
    # the trace's first timestamp survives (a distributed step's ranks are aligned with it)
    assert loaded.origin_us == store.origin_us == float(columns_from_trace(trace).ts.min()) > 0
    window = (store.span_us * 0.3, store.span_us * 0.31)
    assert loaded.timeline() == store.timeline()
    assert loaded.timeline(window=window) == store.timeline(window=window)
    assert load_store(str(tmp_path / "missing")) is None
    (tmp_path / "store" / "meta.json").write_text('{"format": -1}')
    assert load_store(str(tmp_path / "store")) is None
    # a folder written before the origin was kept: read the trace again
    save_store(store, str(tmp_path / "old"))
    meta = json.loads((tmp_path / "old" / "meta.json").read_text())
    del meta["origin_us"]
    (tmp_path / "old" / "meta.json").write_text(json.dumps(meta))
    assert load_store(str(tmp_path / "old")) is None


def test_the_overview_of_a_big_trace_shows_density_not_one_block_per_lane() -> None:
    trace = replicate_trace(load_trace(H200), 100_000)
    overview = build_store(columns_from_trace(trace)).timeline()
    for lane in overview["lanes"]:
        starts = sorted(e["start"] for e in lane["events"] if e["depth"] == 0)
        # The copies of the step are spread over the whole span: so are the lane's blocks.
        assert len(starts) >= 50, lane["id"]
        assert starts[-1] - starts[0] > 0.9 * overview["span_us"], lane["id"]
    assert overview["kept"] < 100_000 // 2


def test_the_typed_reader_is_used_when_msgspec_is_there_and_json_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kernel_lens.traces import read as trace_read

    pytest.importorskip("msgspec")
    raw = json.dumps(replicate_trace(load_trace(H200), 1000)).encode()
    typed = trace_read._columns_typed(raw, None)
    assert typed is not None  # a torch trace takes the fast path
    assert trace_read._columns_typed(json.dumps(odd_trace()).encode(), None) is None
    # Without msgspec (the agent's interpreter may lack it) the file reads the same.
    monkeypatch.setitem(sys.modules, "kernel_lens.traces.decode", None)
    assert trace_read._columns_typed(raw, None) is None
    _same_columns(typed, columns_from_trace(json.loads(raw)))


@pytest.mark.parametrize("workers", [2, 3])
def test_a_trace_read_by_several_processes_gives_the_same_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Big traces are decoded by forked workers, each with its own code tables merged in file
    order: the columns (codes, tables, mixed int/str ids) equal the one-process reading."""
    pytest.importorskip("msgspec")
    from kernel_lens.traces import read as trace_read

    monkeypatch.setattr(trace_read, "_PARALLEL_EVENTS", 100)
    monkeypatch.setattr(trace_read, "_CHUNK", 700)  # several chunks in each worker's range
    monkeypatch.setenv("KERNEL_LENS_TRACE_WORKERS", str(workers))
    traces = {p.name: load_trace(p) for p in RECORDED}
    traces["replica.json"] = replicate_trace(traces["matmul_relu_trace.json"], 5000)
    assert len(traces["replica.json"]["traceEvents"]) >= 5000
    for name, trace in traces.items():
        text = json.dumps(trace).encode()
        path = tmp_path / name
        path.write_bytes(text)
        if len(trace["traceEvents"]) >= 100:
            assert trace_read._workers(len(trace["traceEvents"])) == workers
        _same_columns(read_columns(path), columns_from_trace(json.loads(text)))
        assert summarize_file(path) == summarize_trace(json.loads(text))


@pytest.mark.parametrize(
    "layout",
    [{"separators": (",", ":")}, {}, {"indent": 2}],
    ids=["compact", "spaced", "indented"],
)
def test_chunks_are_decoded_from_the_text_itself_which_is_put_back(
    monkeypatch: pytest.MonkeyPatch, layout: dict[str, Any]
) -> None:
    """A chunk of events is decoded where it lies in the file's text (its two neighbouring
    separators turned into brackets for the time of the decoding), or from one copy when the
    text is immutable: the same columns either way, and the text is left as it was."""
    pytest.importorskip("msgspec")
    from kernel_lens.traces import read as trace_read

    monkeypatch.setattr(trace_read, "_CHUNK", 37)  # chunk edges land everywhere
    trace = replicate_trace(load_trace(H200), 1500)
    text = json.dumps(trace, **layout).encode()
    expected = columns_from_trace(json.loads(text))
    in_place = bytearray(text)
    got = trace_read._columns_typed(in_place, None)
    assert got is not None
    _same_columns(got, expected)
    assert bytes(in_place) == text
    copied = trace_read._columns_typed(text, None)
    assert copied is not None
    _same_columns(copied, expected)


def test_a_worker_that_dies_costs_speed_not_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked worker that dies (killed, out of memory) leaves no process behind and the
    trace is read by the standard parser instead, to the same columns."""
    pytest.importorskip("msgspec")
    import os

    from kernel_lens.traces import read as trace_read

    parent, decode = os.getpid(), trace_read._decode_range

    def dying(bounds: tuple[int, int]) -> dict[str, Any] | None:
        if os.getpid() != parent:
            os._exit(9)
        return decode(bounds)

    monkeypatch.setattr(trace_read, "_decode_range", dying)
    monkeypatch.setattr(trace_read, "_PARALLEL_EVENTS", 100)
    monkeypatch.setenv("KERNEL_LENS_TRACE_WORKERS", "3")
    trace = replicate_trace(load_trace(H200), 3000)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    _same_columns(read_columns(path), columns_from_trace(trace))
    if sys.platform.startswith("linux"):  # every worker was waited for: no zombie is left
        zombies = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(") ", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] == "Z" and int(fields[1]) == parent:
                zombies.append(stat.parent.name)
        assert zombies == []


def _x(name: str, cat: str, ts: float, dur: float, tid: int = 1, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": tid,
            "args": args}  # fmt: skip


def test_each_lane_names_where_its_own_time_goes_in_view() -> None:
    """A lane's "most time" ranks names by own time (an op's time less its children's), not by
    the time of the outermost event that holds everything; in a window only the part inside
    counts; a GPU stream's kernels (short names) by their device time."""
    events = [
        _x("step", "user_annotation", 0, 100),
        _x("aten::linear", "cpu_op", 10, 60),  # 60 - 50 of children = 10 own
        _x("aten::addmm", "cpu_op", 15, 50),  # 50 own
        _x("aten::relu", "cpu_op", 75, 20),  # 20 own
        _x("step", "user_annotation", 100, 20),  # 20 own (the two steps: 20 + 20 = 40)
        _x(
            "void at::native::vectorized_elementwise_kernel<4>(float)",
            "kernel",
            20,
            30,
            tid=7,
            stream=7,
            device=0,
            correlation=1,
        ),  # fmt: skip
        _x("ampere_sgemm_128x64_tn", "kernel", 60, 10, tid=7, stream=7, device=0, correlation=2),
    ]
    store = build_store(columns_from_trace({"traceEvents": events}))
    lanes = {lane["kind"]: lane for lane in store.timeline()["lanes"]}
    cpu = [(t["name"], t["us"], round(t["share"], 4)) for t in lanes["cpu"]["top"]]
    assert cpu == [("aten::addmm", 50, 0.4167), ("step", 40, 0.3333), ("aten::relu", 20, 0.1667)]
    gpu = [(t["name"], t["us"]) for t in lanes["gpu"]["top"]]
    assert gpu == [("vectorized_elementwise_kernel", 30), ("ampere_sgemm_128x64_tn", 10)]
    # The window [70, 110): relu 20 in it, the first step's own time 30..: parts inside only.
    window = {lane["kind"]: lane for lane in store.timeline(window=(70, 110))["lanes"]}
    top = {t["name"]: t["us"] for t in window["cpu"]["top"]}
    assert top["aten::relu"] == 20
    assert top["step"] == pytest.approx(20 * 30 / 100 + 20 * 10 / 20)  # parts of both steps
    assert sum(t["share"] for t in window["cpu"]["top"]) <= 1 + 1e-9


def test_threads_walked_in_pieces_nest_as_walked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # A piece starts only where every earlier event of the thread has ended, so depths and
    # lines are the whole walk's; the replica's ranges outlive the Python calls they start in,
    # so the events are not properly nested (what the walk is for).
    from kernel_lens.analysis import trace_store

    trace = replicate_trace(load_trace(H200), 6000)
    columns = columns_from_trace(trace)
    whole = build_store(columns)
    walked: list[int] = []
    nest = trace_store._nest

    def counted(start: list[float], end: list[float], own: list[int]) -> Any:
        walked.append(len(start))
        return nest(start, end, own)

    monkeypatch.setattr(trace_store, "_NEST_PIECE", 50)
    monkeypatch.setattr(trace_store, "_nest", counted)
    pieces = build_store(columns)
    assert len(walked) > 20 and max(walked) < len(columns) // 10
    for field in ("segments", "start", "end", "dur", "reach", "name", "label", "cat", "line",
                  "self_dur"):  # fmt: skip
        np.testing.assert_array_equal(getattr(pieces, field), getattr(whole, field), field)
    assert (whole.line >= 0).any() and len(np.unique(whole.segments[:, 1])) > 3  # lines, depths


def test_the_layout_order_is_lexsorts_order() -> None:
    # Ties of starts (and -0.0 against 0.0), ties of the tie-breaker, groups that fit 16 bits
    # and groups that do not: always np.lexsort's (stable) order.
    from kernel_lens.analysis.trace_store import _order

    rng = np.random.default_rng(5)
    for trial in range(600):
        n = int(rng.integers(0, 80))
        start = rng.integers(0, 9, n).astype(float)
        start[rng.random(n) < 0.1] = -0.0
        tie = -rng.integers(0, 4, n).astype(float)
        group = rng.integers(0, [1, 3, 70_000][trial % 3], n)
        np.testing.assert_array_equal(_order(start, tie, group), np.lexsort((tie, start, group)))
