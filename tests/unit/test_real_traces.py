"""Real Kineto traces nobody here wrote (issue 49), read right: every schema since 2020, ops
credited with their kernels through the launch, the JSON array format, non-CUDA devices, and
never a silent zero.

The traces and their sources are in ``tests/data/real_traces/README.md``; ``totals.json`` there
was counted from each file's JSON by ``totals.py`` (exact decimals, nothing of ours imported).
Every total of ``kernel-lens trace summarize --json`` must equal it.
"""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from kernel_lens.analysis.trace_columns import columns_from_trace
from kernel_lens.analysis.trace_store import build_store
from kernel_lens.analysis.trace_summary import format_trace_summary, summarize_columns
from kernel_lens.cli import main
from kernel_lens.traces.read import read_columns, summarize_file
from tests.traces import REAL_TRACES as DATA
from tests.traces import TOTALS, check_totals


def test_the_set_covers_every_era_and_device() -> None:
    names = set(TOTALS)
    assert len(names) >= 10
    assert any(n.startswith("kineto_2021") for n in names)  # the 2021 schema
    assert {t["device_kind"] for t in TOTALS.values()} >= {"GPU", "MTIA"}
    assert any("mi250" in n for n in names) and any("array" in n for n in names)
    assert sum((DATA / n).stat().st_size for n in names) < 300_000  # the repo stays lean


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_cli_json_equals_the_independent_count(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trace", "summarize", str(DATA / name), "--json", "--top", "100000"]) == 0
    check_totals(json.loads(capsys.readouterr().out), TOTALS[name], all_kernels=True)


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_the_parsed_trace_gives_the_same_summary(name: str) -> None:
    """The agent's path (a trace object in memory) and the json fallback agree with the file
    reader: the categories are normalised where each builds its table."""
    raw = (DATA / name).read_bytes()
    trace = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    got = summarize_columns(columns_from_trace(trace), top=100000).to_json()
    if name.startswith("hta_2024-04"):  # epoch µs with ns fractions: floats lose a digit here
        want = dict(TOTALS[name])
        assert got["kernel_calls"] == want["kernel_calls"]
        return
    check_totals(got, TOTALS[name], all_kernels=True)


def test_the_hta_cross_check_agrees_with_the_count() -> None:
    """HolisticTraceAnalysis (recorded by ``totals.py --hta``) counts the same kernels; on traces
    in whole µs it gives the same kernel time."""
    checked = 0
    for name, want in TOTALS.items():
        hta = want.get("hta")
        if not hta or "error" in hta:
            continue
        assert hta["kernel_calls"] == want["kernel_calls"], name
        if Decimal(want["kernel_total_us"]) == Decimal(want["kernel_total_us"]).to_integral():
            assert Decimal(hta["kernel_total_us"]) == Decimal(want["kernel_total_us"]), name
        checked += 1
    assert checked >= 8


def test_the_2021_schema_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    """``Kernel``, ``Memcpy``, ``Runtime``, ``Operator`` and ``external id`` (PyTorch 1.8/1.9),
    and the mid-2021 ``computeProperties``: read as today's spellings."""
    columns = read_columns(DATA / "kineto_2021-05_v100_gpu_metrics.json.gz")
    assert {"kernel", "gpu_memcpy", "cuda_runtime", "cpu_op"} <= set(columns.cats)
    assert not {"Kernel", "Memcpy", "Runtime", "Operator"} & set(columns.cats)
    assert columns.device_name == "Tesla V100-DGXS-32GB"  # from computeProperties
    runtime = columns.cat == columns.cat_code("cuda_runtime")
    assert np.isfinite(columns.ext_id[runtime]).all()  # "external id"
    text = format_trace_summary(summarize_columns(columns))
    assert "GPU busy 50.0 µs of 13681.0 µs wall" in text
    assert "Top kernels (30 kernel calls, 48.0 µs of kernel time)" in text
    store = build_store(columns)
    kinds = {lane["kind"] for lane in store.lanes}
    assert kinds == {"cpu", "runtime", "gpu"}
    assert "GPU 0 · stream 7" in {lane["title"] for lane in store.lanes}


def test_op_device_time_through_the_launch_when_external_id_is_the_correlation() -> None:
    """In this A100 trace every kernel's External id is its correlation: matching ops by
    External id credited nothing; through the launch, the ops get their kernels."""
    name = "hta_2023_a100_event_sync.json.gz"
    summary = summarize_file(DATA / name, top=100)
    assert summary.op_device_us == float(Decimal(TOTALS[name]["op_device_us"])) > 0
    assert sum(o.device_us for o in summary.ops) == summary.op_device_us
    share = summary.op_device_us / summary.kernel_total_us * 100
    assert summary.notes[0].startswith(f"{share:.1f}% of the kernel time")
    text = " ".join(format_trace_summary(summary).split())  # unwrapped
    assert "each credited through its launch to the innermost op around it" in text
    assert "kernels the op launched itself)" not in text


def test_every_kernel_credited_says_no_share() -> None:
    summary = summarize_file(DATA / "kineto_2021-01_v100_resnet50_excerpt.json.gz")
    assert summary.op_device_us == summary.kernel_total_us == 293.0
    assert not any("credited" in n for n in summary.notes)


def test_a_top_level_array_is_a_trace() -> None:
    """The Chrome trace format's "JSON Array Format": the events alone."""
    array = summarize_file(DATA / "array_of_hta_mi250_rocm6.2.json.gz").to_json()
    whole = summarize_file(DATA / "hta_2024-12_mi250_rocm6.2.json.gz").to_json()
    assert array["device"] is None and whole["device"] == "AMD Radeon Graphics"
    assert {**array, "device": None} == {**whole, "device": None}
    assert array["kernel_calls"] == 14


def test_a_top_level_array_through_the_json_parser(tmp_path: Path) -> None:
    """An event the typed decoder cannot hold sends the reading to the json parser: an array
    is a trace there too."""
    events = json.loads(gzip.decompress((DATA / "array_of_hta_mi250_rocm6.2.json.gz").read_bytes()))
    events.append({"ph": "X", "cat": "cpu_op", "name": "odd", "ts": "12", "dur": 1})
    path = tmp_path / "array.json"
    path.write_text(json.dumps(events))
    assert summarize_file(path).kernel_calls == 14


def test_an_mtia_trace_is_named_as_what_it_is() -> None:
    name = "hta_mtia_inference_excerpt.json.gz"
    columns = read_columns(DATA / name)
    summary = summarize_columns(columns)
    assert summary.device_kind == "MTIA" and summary.device == "ARTEMIS"
    assert summary.kernel_calls == TOTALS[name]["kernel_calls"] == 31
    text = format_trace_summary(summary)
    assert text.startswith("Trace: ARTEMIS (MTIA) · ")
    assert "MTIA busy 13693.4 µs" in text and "GPU" not in text
    titles = {lane["title"] for lane in build_store(columns).lanes}
    assert "MTIA runtime" in titles and "MTIA 17 · stream 109" in titles


def test_other_devices_runtimes_are_read(tmp_path: Path) -> None:
    """``xpu_*`` and ``privateuse1_*`` runtime calls are launches of their device."""
    for prefix, kind in (("xpu", "XPU"), ("privateuse1", "PrivateUse1")):
        trace = {"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 0, "dur": 10, "pid": 1,
             "tid": 1},
            {"ph": "X", "cat": f"{prefix}_runtime", "name": "LaunchKernel", "ts": 2, "dur": 3,
             "pid": 1, "tid": 1, "args": {"correlation": 5}},
            {"ph": "X", "cat": "kernel", "name": "add_k", "ts": 6, "dur": 4, "pid": 0, "tid": 2,
             "args": {"correlation": 5, "device": 0, "stream": 2}},
        ]}  # fmt: skip
        path = tmp_path / f"{prefix}.json"
        path.write_text(json.dumps(trace))
        summary = summarize_file(path)
        assert summary.device_kind == kind
        assert summary.launches.count == 1
        assert summary.ops[0].device_us == 4.0
        assert f"{kind} busy 4.0 µs" in format_trace_summary(summary)


def test_launches_without_kernel_activity_say_so() -> None:
    summary = summarize_file(DATA / "hta_2023-03_a100_cupti_range_profiler.json.gz")
    assert summary.launches.count == 77 and summary.kernel_calls == 0
    text = format_trace_summary(summary)
    assert "no GPU activity in this trace" in text
    assert "77 kernel launches but no kernel, memcpy or memset recorded" in text


def test_unknown_categories_are_named_not_zeroed(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "Frobnicate", "name": "f", "ts": 0, "dur": 5, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "Frobnicate", "name": "g", "ts": 5, "dur": 5, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "Other", "name": "h", "ts": 5, "dur": 5, "pid": 1, "tid": 1},
    ]}))  # fmt: skip
    text = " ".join(format_trace_summary(summarize_file(path)).split())
    assert "categories found: Frobnicate ×2, Other ×1" in text


def test_the_legacy_exports_processes_say_what_an_event_is(tmp_path: Path) -> None:
    """PyTorch ≤ 1.7's export: a top-level array, no categories; ops in ``CPU functions``,
    kernels in ``CUDA functions`` (the format of ``torch.autograd.profiler``'s template)."""
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps([
        {"name": "aten::mm", "ph": "X", "ts": 10, "dur": 30, "tid": 0, "pid": "CPU functions",
         "args": {}},
        {"name": "gemm_kernel", "ph": "X", "ts": 20, "dur": 15, "tid": 0,
         "pid": "CUDA functions", "args": {}},
    ]))  # fmt: skip
    summary = summarize_file(path)
    assert summary.kernel_calls == 1 and summary.kernel_total_us == 15.0
    assert [o.name for o in summary.ops] == ["aten::mm"]


def test_nanosecond_fractions_of_epoch_timestamps_are_exact() -> None:
    """``1712195495505543.234``: the base is taken off before the float conversion."""
    path = DATA / "hta_2024-04_v100_ns_resolution_excerpt.json.gz"
    columns = read_columns(path)
    assert columns.ts_base > 2**43
    events = json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)["traceEvents"]
    exact = [e["ts"] - int(columns.ts_base) for e in events if e.get("ph") == "X"]
    assert any(t != t.to_integral_value() for t in exact)
    assert [Decimal(repr(t)).quantize(Decimal("0.001")) for t in columns.ts.tolist()] == [
        t.quantize(Decimal("0.001")) for t in exact
    ]
    # a plain float reading is off by up to 0.125 µs there
    lossy = np.array([float(e["ts"]) for e in events if e.get("ph") == "X"]) - columns.ts_base
    assert np.abs(lossy - columns.ts).max() > 0.05


def test_the_device_is_the_one_the_kernels_ran_on(tmp_path: Path) -> None:
    trace = {
        "deviceProperties": [{"id": 0, "name": "GPU Zero"}, {"id": 3, "name": "GPU Three"}],
        "traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 4, "pid": 3, "tid": 7,
             "args": {"device": 3, "stream": 7}},
        ],
    }  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    assert summarize_file(path).device == "GPU Three"
    assert summarize_columns(columns_from_trace(trace)).device == "GPU Three"
    mi250 = read_columns(DATA / "hta_2024-12_mi250_rocm6.2.json.gz")
    assert set(mi250.keys[int(d)] for d in mi250.device[mi250.cat == mi250.cat_code("kernel")]) == {
        2
    }


def test_short_name_collisions_are_told_apart() -> None:
    summary = summarize_file(DATA / "kineto_2021-05_v100_gpu_metrics.json.gz")
    labels = [k["label"] for k in summary.to_json()["kernels"]]  # what the trace view shows
    assert "vectorized_elementwise_kernel ‹FillFunctor›" in labels
    assert "volta_sgemm_128x32_nt" in labels  # a name of its own stays as it is
    assert len(labels) == len(set(labels))
    text = format_trace_summary(summary)
    rows = [line.split("  ")[1].strip() for line in text.splitlines() if "_kernel ‹" in line]
    assert "vectorized_elementwise_kernel ‹AddFunctor›" in rows
    assert "vectorized_elementwise_kernel ‹FillFunctor›" in rows
    assert len(rows) == len(set(rows))


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_forked_workers_and_small_chunks_read_the_same(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The byte ranges of forked workers, chunk after chunk (the path of big traces): the same
    summary, the exact timestamps and the 2021 spellings included."""
    from kernel_lens.traces import read as trace_read
    from kernel_lens.traces import stream

    one = summarize_file(DATA / name, top=100000).to_json()
    plain = tmp_path / name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress((DATA / name).read_bytes()))
    monkeypatch.setattr(trace_read, "_PARALLEL_EVENTS", 10)
    monkeypatch.setattr(trace_read, "_BYTES_PER_EVENT", 1)
    monkeypatch.setattr(trace_read, "_CHUNK", 50)
    monkeypatch.setattr(stream, "CHUNK_BYTES", 4096)
    monkeypatch.setenv("KERNEL_LENS_TRACE_WORKERS", "3")
    assert summarize_file(plain, top=100000).to_json() == one
    assert summarize_file(DATA / name, top=100000).to_json() == one  # gzip, streamed


def test_nothing_to_summarise_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An array of objects that are not events is not a trace; a trace of no complete event
    says so rather than showing zeros."""
    path = tmp_path / "rows.json"
    path.write_text('[{"a": 1}, {"b": 2}]')
    assert main(["trace", "summarize", str(path), "--json"]) == 1
    assert (
        "is not an array of trace events" in json.loads(capsys.readouterr().out)["error"]["message"]
    )
    path.write_text('{"traceEvents": [{"ph": "M", "name": "process_name"}]}')
    assert main(["trace", "summarize", str(path)]) == 0
    assert 'the trace has no complete event ("ph": "X"' in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    "path",
    [DATA / n for n in sorted(TOTALS) if n.startswith("hta_")]
    + [DATA.parent / "h200" / "matmul_relu_trace.json"],
    ids=lambda p: p.name,
)
def test_the_op_of_each_kernel_is_the_line_attributions(path: Path) -> None:
    """The summary's rule is the profile's: each kernel's op is the innermost op around the
    runtime call of its correlation (else the op of its External id), as the line attribution's
    index (``runtime_by_corr``, ``op_by_external``, a node's ``inner``) finds it."""
    from kernel_lens.analysis.launch_links import kernel_ops
    from kernel_lens.analysis.line_attribution import _Index

    raw = path.read_bytes()
    trace = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    events = [e for e in trace["traceEvents"] if isinstance(e, dict)]
    index = _Index(events)
    want = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "mtia_ccp_events"):
            continue
        args = e.get("args") or {}
        launcher = index.runtime_by_corr.get(args.get("correlation"))
        if launcher is None and args.get("External id") != args.get("correlation"):
            launcher = index.op_by_external.get(args.get("External id"))
        op = launcher.inner if launcher is not None else None
        want.append(None if op is None else (op.name, op.start))
    columns = columns_from_trace(trace)
    kernels = np.flatnonzero(columns.cat == columns.cat_code("kernel"))
    owner = kernel_ops(columns, columns.ts, columns.ts + columns.dur, kernels).tolist()
    got = [None if o < 0 else (columns.names[columns.name[o]], float(columns.ts[o])) for o in owner]
    assert got == want


def test_exact_and_plain_traces_read_at_once_in_threads() -> None:
    """The server reads small traces in threads, maybe two at once: one trace's exact reading
    (its base) never leaks into the other's."""
    from concurrent.futures import ThreadPoolExecutor

    names = ["hta_2024-04_v100_ns_resolution_excerpt.json.gz", "hta_2024-12_mi250_rocm6.2.json.gz"]
    alone = {n: summarize_file(DATA / n).to_json() for n in names}
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda n: (n, summarize_file(DATA / n).to_json()), names * 8))
    assert all(summary == alone[n] for n, summary in got)
