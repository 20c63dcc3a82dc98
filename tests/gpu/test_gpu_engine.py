"""On a CUDA GPU: the right kernels on the right lines, and timings that agree with do_bench.

Run on the lent H200 (see docs/benchmarks.md); skipped without CUDA.
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from tests.conftest import KERNELS, line_starting, profile_json, run_cli

pytestmark = pytest.mark.gpu


def _chain(line: dict[str, Any]) -> list[str]:
    return [n for op in line["ops"] for n in [op["name"], *op["dispatch"]]]


def _kernels(line: dict[str, Any]) -> list[dict[str, Any]]:
    return [k for op in line["ops"] for k in op["kernels"]]


def test_three_square_variants_map_to_pow_mul_and_an_elementwise_kernel(tmp_path: Any) -> None:
    result = profile_json(f"{KERNELS}/square.py::square_three_ways", tmp_path)
    assert result["device_kind"] == "cuda"
    expected = {
        "a = torch.square(x)": "aten::pow",
        "b = x * x": "aten::mul",
        "c = x**2": "aten::pow",
    }
    for start, op in expected.items():
        line = line_starting(result, start)
        assert op in _chain(line), (start, _chain(line))
        kernels = _kernels(line)
        assert len(kernels) == 1, kernels
        assert kernels[0]["short_name"] == "vectorized_elementwise_kernel"
        assert kernels[0]["calls"] == 1
        # 400 MB read + 400 MB written: about 0.19 ms on an H200, and never free.
        assert 50 < kernels[0]["device_us"] < 5000
    assert len(result["kernels"]) >= 2  # pow and mul kernels have different names
    assert sum(k["calls"] for k in result["kernels"]) == 3
    assert result["timing"]["method"] == "cuda-events" and result["timing"]["l2_flushed"]


def test_matmul_line_maps_to_a_gemm_kernel(tmp_path: Any) -> None:
    result = profile_json(f"{KERNELS}/fusion.py::matmul_relu", tmp_path)
    line = line_starting(result, "z = x @ y")
    names = [k["name"].lower() for k in _kernels(line)]
    assert any("gemm" in n or "cutlass" in n or "xmma" in n for n in names), names
    relu = line_starting(result, "z = torch.relu(z)")
    assert [k["short_name"] for k in _kernels(relu)] == ["vectorized_elementwise_kernel"]


def test_triton_kernel_is_on_its_launch_line(tmp_path: Any) -> None:
    result = profile_json(f"{KERNELS}/triton_square.py::square", tmp_path)
    line = line_starting(result, "square_kernel[grid]")
    assert [k["name"] for k in _kernels(line)] == ["square_kernel"]


def test_load_inline_kernel_is_on_its_call_line(tmp_path: Any) -> None:
    code, out, err = run_cli(
        "profile",
        f"{KERNELS}/inline_square.py::square",
        "--json",
        "--trace-dir",
        str(tmp_path),
        timeout=900,
    )
    if code != 0 and out["error"]["kind"] == "unsupported":
        pytest.skip(out["error"]["message"])
    assert code == 0, (out, err)
    line = line_starting(out, "return _extension().square(x)")
    assert "square_kernel" in [k["short_name"] for k in _kernels(line)]


def test_square_timing_agrees_with_do_bench() -> None:
    import torch
    from triton.testing import do_bench

    from kernel_lens.agent.stages.timing import time_function

    x = torch.randn(10_000, 10_000, device="cuda")

    def fn() -> Any:
        return x**2

    ours = [time_function(fn, device="cuda").median_ms for _ in range(3)]
    ref = [do_bench(fn, warmup=25, rep=100, return_mode="median") for _ in range(3)]
    a, b = statistics.median(ours), statistics.median(ref)
    assert abs(a - b) / b < 0.03, (ours, ref)


def test_cli_three_ways_timing_agrees_with_do_bench(tmp_path: Any) -> None:
    import torch
    from triton.testing import do_bench

    result = profile_json(f"{KERNELS}/square.py::square_three_ways", tmp_path, "--stages", "timing")
    x = torch.randn(10_000, 10_000, device="cuda")

    def three() -> Any:
        return torch.square(x), x * x, x**2

    ref = do_bench(three, warmup=25, rep=200, return_mode="median")
    assert abs(result["timing"]["median_ms"] - ref) / ref < 0.03, (result["timing"], ref)
