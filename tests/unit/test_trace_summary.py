"""summarize_trace and friends on recorded traces (H200 and CPU) and on small hand-made ones.

The expected numbers for the recorded traces were worked out from the raw events with exact
decimal arithmetic, apart from this module's code. Re-recording a trace means working them out
again.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.trace_summary import (
    TraceError,
    TraceSummary,
    format_trace_summary,
    load_trace,
    summarize_trace,
)

DATA = Path(__file__).parents[1] / "data"
H200_TRACE = DATA / "h200" / "matmul_relu_trace.json"
CPU_TRACE = DATA / "cpu" / "square_cpu_trace.json"


def approx(value: float) -> Any:
    return pytest.approx(value, abs=1e-3)


def x_event(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "ts": ts,
        "dur": dur,
        "pid": 1,
        "tid": 1,
        "args": args,
    }


def kernel(name: str, ts: float, dur: float, stream: int, **args: Any) -> dict[str, Any]:
    event = x_event("kernel", name, ts, dur, stream=stream, device=0, **args)
    event.update(pid=0, tid=stream)
    return event


@pytest.fixture(scope="module")
def h200() -> TraceSummary:
    return summarize_trace(load_trace(H200_TRACE))


@pytest.fixture(scope="module")
def cpu() -> TraceSummary:
    return summarize_trace(load_trace(CPU_TRACE))


def test_h200_device_and_event_count(h200: TraceSummary) -> None:
    assert h200.device == "NVIDIA H200"
    # 320 python_function + 5 cpu_op + 5 cuda_runtime + 3 user_annotation + 3 kernel
    # + 3 gpu_user_annotation + 1 overhead + 1 Trace; metadata and flow events are not counted.
    assert h200.event_count == 341


def test_h200_kernel_table(h200: TraceSummary) -> None:
    assert [(k.short_name, k.calls) for k in h200.kernels] == [
        (h200.kernels[0].name, 1),
        ("vectorized_elementwise_kernel", 1),
        ("vectorized_elementwise_kernel", 1),
    ]
    gemm, clamp, add = h200.kernels
    assert gemm.name.startswith("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8")
    assert "launch_clamp_scalar" in clamp.name
    assert "CUDAFunctorOnSelf_add" in add.name
    assert [k.total_us for k in h200.kernels] == [approx(56.513), approx(2.272), approx(2.016)]
    assert (gemm.mean_us, gemm.min_us, gemm.max_us) == (approx(56.513),) * 3
    assert [k.pct for k in h200.kernels] == [approx(92.947), approx(3.737), approx(3.316)]
    assert h200.kernel_calls == 3
    assert h200.kernel_total_us == approx(60.801)


def test_h200_op_table(h200: TraceSummary) -> None:
    rows = {o.name: o for o in h200.ops}
    assert [o.name for o in h200.ops] == [
        "aten::matmul",
        "aten::mm",
        "aten::relu",
        "aten::clamp_min",
        "aten::add",
    ]
    assert all(o.calls == 1 for o in h200.ops)
    assert rows["aten::mm"].device_us == approx(56.513)
    assert rows["aten::mm"].cpu_total_us == approx(3061.641)
    # cudaLaunchKernelExC nests in aten::mm but is a runtime call, not a cpu_op child.
    assert rows["aten::mm"].cpu_self_us == approx(3061.641)
    # The gemm was launched by aten::mm, so matmul itself has no device time.
    assert rows["aten::matmul"].device_us == 0.0
    assert rows["aten::matmul"].cpu_total_us == approx(3076.852)
    assert rows["aten::matmul"].cpu_self_us == approx(3076.852 - 3061.641)
    assert rows["aten::relu"].cpu_self_us == approx(92.47 - 78.958)
    assert rows["aten::clamp_min"].device_us == approx(2.272)
    assert rows["aten::add"].device_us == approx(2.016)
    assert rows["aten::add"].cpu_self_us == approx(55.954)


def test_h200_launches_busy_gaps_and_streams(h200: TraceSummary) -> None:
    assert (h200.launches.count, h200.launches.total_us) == (3, approx(59.04 + 26.209 + 17.763))
    assert h200.gpu_busy_us == approx(60.801)
    assert h200.gpu_span_us == approx(555.169)
    # From src:10's start to the end of the last cudaDeviceSynchronize.
    assert h200.wall_us == approx(3930.686)
    assert h200.gpu_busy_pct == approx(60.801 / 3930.686 * 100)
    assert (h200.gaps.count, h200.gaps.total_us, h200.gaps.max_us) == (
        2,
        approx(494.368),
        approx(326.112),
    )
    assert [(s.device, s.stream, s.kernels) for s in h200.streams] == [(0, 7, 3)]
    assert h200.streams[0].busy_us == approx(60.801)
    assert h200.memcpy == ()
    assert (h200.memset.calls, h200.memset.bytes, h200.memset.total_us) == (0, 0, 0.0)


def test_h200_to_json(h200: TraceSummary) -> None:
    data = h200.to_json()
    json.dumps(data, allow_nan=False)
    assert data["device"] == "NVIDIA H200"
    assert data["gpu_busy_us"] == 60.801
    assert data["wall_us"] == 3930.686
    assert data["gpu_busy_pct"] == 1.547
    assert data["launches"] == {"count": 3, "total_us": 103.012}
    assert data["kernels"][1]["short_name"] == "vectorized_elementwise_kernel"
    assert data["kernels"][0]["pct"] == 92.947
    assert data["ops"][0] == {
        "name": "aten::matmul",
        "calls": 1,
        "cpu_total_us": 3076.852,
        "cpu_self_us": 15.211,
        "device_us": 0.0,
    }
    assert data["streams"] == [{"stream": 7, "device": 0, "kernels": 3, "busy_us": 60.801}]
    assert data["gaps"] == {"count": 2, "total_us": 494.368, "max_us": 326.112}


def test_top_cuts_tables_but_not_totals() -> None:
    summary = summarize_trace(load_trace(H200_TRACE), top=1)
    assert [k.total_us for k in summary.kernels] == [approx(56.513)]
    assert summary.kernels[0].pct == approx(92.947)
    assert summary.kernel_calls == 3
    assert [o.name for o in summary.ops] == ["aten::matmul"]


def test_h200_text_report(h200: TraceSummary) -> None:
    text = format_trace_summary(h200)
    assert "NVIDIA H200" in text
    assert "GPU busy 60.8 µs of 3930.7 µs wall (1.5%)" in text
    assert "2 idle gaps, 494.4 µs in all, longest 326.1 µs" in text
    assert "Kernel launches: 3 calls, 103.0 µs of CPU time" in text
    assert "no GPU activity" not in text
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Top kernels"))
    assert lines[header] == "Top kernels (3 kernel calls, 60.8 µs of kernel time)"
    assert lines[header + 2].split()[-4:] == ["1", "56.5", "56.5", "92.9"]
    # two different vectorized_elementwise_kernels: told apart by what they compute
    assert lines[header + 3].split() == [
        "vectorized_elementwise_kernel", "‹launch_clamp_scalar›", "1", "2.3", "2.3", "3.7"
    ]  # fmt: skip
    assert lines[header + 4].split()[:2] == [
        "vectorized_elementwise_kernel", "‹CUDAFunctorOnSelf_add›"
    ]  # fmt: skip
    mm = next(line for line in lines if line.strip().startswith("aten::mm "))
    assert mm.split() == ["aten::mm", "1", "3061.6", "3061.6", "56.5"]
    assert all(len(line) <= 100 for line in lines)
    narrow = format_trace_summary(h200, width=60)
    assert all(len(line) <= 60 for line in narrow.splitlines())
    assert "sm80_xmma_gemm_f32f32_f32…" in narrow


def test_cpu_trace(cpu: TraceSummary) -> None:
    assert cpu.device is None
    assert cpu.event_count == 19
    assert cpu.gpu_busy_pct is None
    assert not cpu.has_gpu_activity
    assert (cpu.gpu_busy_us, cpu.gpu_span_us) == (0.0, 0.0)
    assert cpu.kernels == () and cpu.streams == () and cpu.memcpy == ()
    assert (cpu.launches.count, cpu.launches.total_us) == (0, 0.0)
    assert (cpu.gaps.count, cpu.gaps.total_us, cpu.gaps.max_us) == (0, 0.0, 0.0)
    assert cpu.wall_us == approx(369.371)
    rows = {o.name: o for o in cpu.ops}
    assert cpu.ops[0].name == "aten::sum"
    # aten::sum runs nested in aten::sum: total counts both, self subtracts the inner one.
    assert (rows["aten::sum"].calls, rows["aten::sum"].cpu_total_us) == (2, approx(171.115))
    assert rows["aten::sum"].cpu_self_us == approx(67.361)
    # `.to(torch.float64)`: aten::to > aten::_to_copy > (aten::empty_strided, aten::copy_).
    assert rows["aten::to"].cpu_self_us == approx(65.308 - 51.757)
    assert rows["aten::_to_copy"].cpu_self_us == approx(51.757 - 6.409 - 23.134)
    assert (rows["aten::copy_"].calls, rows["aten::copy_"].cpu_total_us) == (2, approx(25.888))
    assert (rows["aten::as_strided"].calls, rows["aten::as_strided"].cpu_self_us) == (
        3,
        approx(5.188),
    )
    assert all(o.device_us == 0.0 for o in cpu.ops)

    data = cpu.to_json()
    json.dumps(data, allow_nan=False)
    assert data["device"] is None and data["gpu_busy_pct"] is None

    text = format_trace_summary(cpu)
    assert "no GPU activity in this trace" in text
    assert "GPU busy" not in text and "device µs" not in text
    assert "Kernel launches: none" in text


def test_overlapping_device_intervals_count_once() -> None:
    trace = {
        "traceEvents": [
            x_event("cpu_op", "aten::foo", -10.0, 15.0, **{"External id": 1}),
            kernel("k_a", 0.0, 10.0, stream=1, **{"External id": 1}),
            kernel("k_a", 5.0, 10.0, stream=1),
            kernel("k_b", 12.0, 8.0, stream=2),
            kernel("k_b", 30.0, 5.0, stream=2),
            kernel("k_c", 31.0, 1.0, stream=2),
            x_event("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 40.0, 5.0, stream=3),
            x_event("gpu_memset", "Memset (Device)", 44.0, 6.0, stream=3, bytes=64),
            # Python stack events and the profiler's own span do not stretch the wall time.
            x_event("python_function", "<module>", -1000.0, 5000.0),
            x_event("Trace", "PyTorch Profiler (0)", -2000.0, 9000.0),
            # None of these is a usable complete event.
            {"ph": "B", "cat": "kernel", "name": "k_x", "ts": 100.0, "pid": 0, "tid": 1},
            {"ph": "X", "cat": "kernel", "name": "no_ts", "dur": 3.0},
            {"ph": "X", "cat": "kernel", "name": "str_dur", "ts": 1.0, "dur": "3"},
            {"ph": "X", "cat": "kernel", "name": "negative", "ts": 1.0, "dur": -1.0},
            {"ph": "X", "cat": "kernel", "name": "nan", "ts": float("nan"), "dur": 1.0},
            "not an event",
        ]
    }
    summary = summarize_trace(trace)

    assert summary.event_count == 10
    # [0, 20] + [30, 35] + [40, 50]: overlaps across kernels, streams and copies count once.
    assert summary.gpu_busy_us == approx(35.0)
    assert summary.gpu_span_us == approx(50.0)
    assert summary.wall_us == approx(60.0)
    assert summary.gpu_busy_pct == approx(35.0 / 60.0 * 100)
    assert (summary.gaps.count, summary.gaps.total_us, summary.gaps.max_us) == (
        2,
        approx(15.0),
        approx(10.0),
    )
    assert [(s.stream, s.kernels, s.busy_us) for s in summary.streams] == [
        (1, 2, approx(15.0)),
        (2, 3, approx(13.0)),
        (3, 0, approx(10.0)),
    ]
    assert [(k.name, k.calls, k.total_us) for k in summary.kernels] == [
        ("k_a", 2, approx(20.0)),
        ("k_b", 2, approx(13.0)),
        ("k_c", 1, approx(1.0)),
    ]
    assert summary.kernel_total_us == approx(34.0)
    assert summary.ops[0].device_us == approx(10.0)
    assert (summary.memset.calls, summary.memset.bytes, summary.memset.total_us) == (
        1,
        64,
        approx(6.0),
    )


def test_memcpy_directions_bytes_and_bandwidth() -> None:
    trace = {
        "traceEvents": [
            x_event("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0.0, 10.0, bytes=1_000_000),
            x_event("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 20.0, 10.0, bytes=1_000_000),
            x_event("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 40.0, 2.0, bytes=1_000_000),
            x_event("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 50.0, 40.0, bytes=4_000_000),
            x_event("gpu_memcpy", "Memcpy PtoP (Device -> Device)", 100.0, 1.0, bytes=50_000),
            x_event("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 110.0, 0.0, bytes=8),
            x_event("gpu_memcpy", "Memcpy HtoH (Pinned -> Pinned)", 120.0, 0.5),
            x_event("gpu_memcpy", "Memcpy", 130.0, 0.5, bytes=16),
            x_event("gpu_memset", "Memset (Device)", 140.0, 1.5, bytes=1024),
            x_event("gpu_memset", "Memset (Device)", 150.0, 2.5, bytes=2048),
        ]
    }
    summary = summarize_trace(trace)
    rows = [(m.kind, m.direction, m.calls, m.bytes, m.total_us, m.gb_per_s) for m in summary.memcpy]

    assert rows == [
        ("Memcpy DtoH (Device -> Pageable)", "DtoH", 1, 4_000_000, approx(40.0), approx(100.0)),
        ("Memcpy HtoD (Pageable -> Device)", "HtoD", 2, 2_000_000, approx(20.0), approx(100.0)),
        ("Memcpy HtoD (Pinned -> Device)", "HtoD", 1, 1_000_000, approx(2.0), approx(500.0)),
        ("Memcpy PtoP (Device -> Device)", "PtoP", 1, 50_000, approx(1.0), approx(50.0)),
        ("Memcpy", "unknown", 1, 16, approx(0.5), approx(0.032)),
        ("Memcpy HtoH (Pinned -> Pinned)", "HtoH", 1, 0, approx(0.5), approx(0.0)),
        ("Memcpy DtoD (Device -> Device)", "DtoD", 1, 8, 0.0, None),
    ]
    assert (summary.memset.calls, summary.memset.bytes, summary.memset.total_us) == (
        2,
        3072,
        approx(4.0),
    )
    assert summary.to_json()["memcpy"][-1]["gb_per_s"] is None
    text = format_trace_summary(summary)
    assert "Memset: 2 calls, 3072 bytes, 4.0 µs" in text
    dtoh = next(line for line in text.splitlines() if "DtoH" in line)
    assert dtoh.split()[-4:] == ["1", "4000000", "40.0", "100.0"]


def test_launches_and_nesting_per_thread() -> None:
    def on(tid: int, event: dict[str, Any]) -> dict[str, Any]:
        event["tid"] = tid
        return event

    trace = {
        "traceEvents": [
            on(1, x_event("cpu_op", "aten::outer", 0.0, 100.0)),
            on(1, x_event("cpu_op", "aten::inner", 10.0, 30.0)),
            on(1, x_event("cpu_op", "aten::leaf", 15.0, 5.0)),
            on(1, x_event("cpu_op", "aten::inner", 50.0, 20.0)),
            # Starts as the previous op ends: a sibling, not a child.
            on(1, x_event("cpu_op", "aten::leaf", 70.0, 10.0)),
            # Same time span but another thread: not nested in aten::outer.
            on(2, x_event("cpu_op", "aten::other", 20.0, 40.0)),
            on(1, x_event("cuda_runtime", "cudaLaunchKernel", 20.0, 4.0)),
            on(1, x_event("cuda_runtime", "cudaLaunchKernelExC", 30.0, 6.0)),
            on(1, x_event("cuda_driver", "cuLaunchKernel", 40.0, 2.0)),
            on(1, x_event("cuda_driver", "cuLaunchKernelEx", 45.0, 1.0)),
            on(1, x_event("cuda_runtime", "cudaMemcpyAsync", 60.0, 8.0)),
            on(1, x_event("cpu_op", "cudaLaunchKernel-lookalike", 90.0, 1.0)),
        ]
    }
    summary = summarize_trace(trace)
    rows = {o.name: o for o in summary.ops}

    assert (summary.launches.count, summary.launches.total_us) == (4, approx(13.0))
    assert rows["aten::outer"].cpu_self_us == approx(100.0 - 30.0 - 20.0 - 10.0 - 1.0)
    assert (rows["aten::inner"].calls, rows["aten::inner"].cpu_self_us) == (2, approx(45.0))
    assert (rows["aten::leaf"].cpu_total_us, rows["aten::leaf"].cpu_self_us) == (
        approx(15.0),
        approx(15.0),
    )
    assert rows["aten::other"].cpu_self_us == approx(40.0)
    assert summary.gpu_busy_pct is None
    assert summary.wall_us == approx(100.0)


def test_load_trace_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(TraceError, match=r"^trace file not found: .*nope\.json$"):
        load_trace(missing)


def test_load_trace_invalid_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [\n  {"ph": "X",,}\n]}')
    with pytest.raises(
        TraceError,
        match=r"bad\.json is not valid JSON \(line 2, column 14: Expecting property name",
    ):
        load_trace(bad)


@pytest.mark.parametrize("content", ['{"schemaVersion": 1}', "[]", '{"traceEvents": {}}'])
def test_load_trace_without_trace_events(tmp_path: Path, content: str) -> None:
    path = tmp_path / "other.json"
    path.write_text(content)
    with pytest.raises(TraceError, match=r"other\.json has no 'traceEvents' list"):
        load_trace(path)
    assert issubclass(TraceError, ValueError)


def test_summarize_trace_without_trace_events() -> None:
    with pytest.raises(TraceError, match="no 'traceEvents' list"):
        summarize_trace({"schemaVersion": 1})


def test_load_trace_gzip(tmp_path: Path) -> None:
    packed = tmp_path / "trace.json.gz"
    with H200_TRACE.open("rb") as src, gzip.open(packed, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert load_trace(packed) == load_trace(H200_TRACE)
    assert load_trace(str(packed))["deviceProperties"][0]["name"] == "NVIDIA H200"

    truncated = tmp_path / "truncated.json.gz"
    truncated.write_bytes(packed.read_bytes()[:100])
    corrupt = tmp_path / "corrupt.json.gz"
    corrupt.write_bytes(packed.read_bytes()[:20] + b"\xff" * 64 + packed.read_bytes()[84:])
    for broken in (truncated, corrupt):
        with pytest.raises(TraceError, match=rf"{broken.name} is not valid gzip"):
            load_trace(broken)


def test_empty_trace() -> None:
    summary = summarize_trace({"traceEvents": []})
    assert summary.event_count == 0
    assert summary.wall_us == 0.0 and summary.gpu_busy_pct is None
    assert summary.kernels == () and summary.ops == ()
    assert "no GPU activity in this trace" in format_trace_summary(summary)
    json.dumps(summary.to_json(), allow_nan=False)
