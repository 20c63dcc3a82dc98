"""Per-line attribution of ops and kernels, on a trace recorded on an NVIDIA H200.

The trace (tests/data/h200/matmul_relu_trace.json) holds ``z = x @ y`` on line 10 and
``torch.relu(z) + 1.0`` on line 11, each op wrapped in ``record_function("src:<line>")``.
"""

import json
from pathlib import Path

import pytest

from kernel_lens.analysis.line_attribution import attribute_lines

DATA = Path(__file__).parent.parent / "data"
GEMM = (
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_"
    "aligna4_alignc4_execute_kernel__5x_cublas"
)


@pytest.fixture(scope="module")
def h200_trace() -> dict:
    return json.loads((DATA / "h200" / "matmul_relu_trace.json").read_text())


def test_matmul_line_maps_to_its_gemm_kernel(h200_trace: dict) -> None:
    lines, unattributed = attribute_lines(h200_trace)
    assert sorted(lines) == [10, 11]
    assert unattributed == []
    line10 = lines[10].to_json()
    assert [op["name"] for op in line10["ops"]] == ["aten::matmul"]
    op = line10["ops"][0]
    assert op["dispatch"] == ["aten::mm"]
    assert op["kernels"][0]["name"] == GEMM
    assert op["kernels"][0]["device_us"] == pytest.approx(56.513, abs=1e-3)
    assert op["kernels"][0]["calls"] == 1
    # Not the 2x of device_time_total that a gpu_user_annotation causes (pytorch#130730).
    assert line10["device_us"] == pytest.approx(56.513, abs=1e-3)
    assert op["cpu_us"] == pytest.approx(3076.852, abs=1e-3)


def test_relu_add_line_has_two_top_level_ops(h200_trace: dict) -> None:
    lines, _ = attribute_lines(h200_trace)
    line11 = lines[11].to_json()
    names = [op["name"] for op in line11["ops"]]
    assert names == ["aten::relu", "aten::add"]
    relu, add = line11["ops"]
    assert relu["dispatch"] == ["aten::clamp_min"]
    assert relu["kernels"][0]["short_name"] == "vectorized_elementwise_kernel"
    assert relu["device_us"] == pytest.approx(2.272, abs=1e-3)
    assert add["dispatch"] == []
    assert add["kernels"][0]["device_us"] == pytest.approx(2.016, abs=1e-3)
    assert line11["device_us"] == pytest.approx(4.288, abs=1e-3)
    assert line11["hits"] == 2


def test_runs_divide_every_number(h200_trace: dict) -> None:
    lines, _ = attribute_lines(h200_trace, runs=2)
    line10 = lines[10].to_json()
    assert line10["device_us"] == pytest.approx(56.513 / 2, abs=1e-3)
    assert line10["ops"][0]["kernels"][0]["calls"] == 0.5


def _x(cat: str, name: str, ts: float, dur: float, tid: int = 1, **args: object) -> dict:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 1,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def test_direct_launch_without_an_aten_op_is_listed_under_the_runtime_call() -> None:
    trace = {
        "traceEvents": [
            _x("user_annotation", "src:35", 0, 100, **{"External id": 1}),
            _x("cpu_op", "aten::empty", 5, 5, **{"External id": 2}),
            _x("cuda_driver", "cuLaunchKernelEx", 20, 10, correlation=9, **{"External id": 1}),
            _x("kernel", "square_kernel", 40, 190.0, tid=7, correlation=9, **{"External id": 1}),
            # A kernel nobody on a tagged line launched.
            _x("kernel", "stray", 300, 3.0, tid=7, correlation=99),
        ]
    }
    lines, unattributed = attribute_lines(trace)
    ops = lines[35].to_json()["ops"]
    assert [op["name"] for op in ops] == ["aten::empty", "cuLaunchKernelEx"]
    assert ops[1]["calls"] == 1
    assert ops[1]["kernels"][0]["name"] == "square_kernel"
    assert ops[1]["device_us"] == 190.0
    assert [k.name for k in unattributed] == ["stray"]


def test_memcpy_is_attributed_with_its_kind() -> None:
    trace = {
        "traceEvents": [
            _x("user_annotation", "src:/w/f.py:7", 0, 100),
            _x("cpu_op", "aten::to", 1, 90, **{"External id": 3}),
            _x("cpu_op", "aten::copy_", 2, 80, **{"External id": 4}),
            _x("cuda_runtime", "cudaMemcpyAsync", 3, 70, correlation=5),
            _x("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 10, 12.5, tid=7, correlation=5),
        ]
    }
    lines, _ = attribute_lines(trace)
    op = lines[7].to_json()["ops"][0]
    assert op["name"] == "aten::to" and op["dispatch"] == ["aten::copy_"]
    assert op["kernels"] == [
        {
            "name": "Memcpy HtoD (Pageable -> Device)",
            "short_name": "Memcpy HtoD (Pageable -> Device)",
            "device_us": 12.5,
            "calls": 1,
            "kind": "memcpy",
        }
    ]
