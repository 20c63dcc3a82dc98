"""On a CUDA GPU: a training step's kernels all on lines (the backward on the forward lines that
caused it), the optimizer on ``opt.step()``, and the calling context of a captured call kept.

Run on the lent H200 (see docs/benchmarks.md); skipped without CUDA.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import KERNELS, line_starting, profile_json

pytestmark = pytest.mark.gpu


def _trace_device_us(result: dict[str, Any]) -> float:
    with open(result["trace_path"], encoding="utf-8") as fh:
        trace = json.load(fh)
    cats = ("kernel", "gpu_memcpy", "gpu_memset")
    total = sum(e.get("dur", 0.0) for e in trace["traceEvents"] if e.get("cat") in cats)
    return float(total) / result["profiled_runs"]


def _on_lines_us(result: dict[str, Any]) -> float:
    return sum(
        line["device_us"] + (line.get("backward") or {}).get("device_us", 0.0)
        for line in result["lines"]
    )


@pytest.mark.parametrize("spec", ["train_step.py::train_step", "train_step.py::train_step_bf16"])
def test_a_training_steps_lines_sum_to_the_traces_kernel_time(spec: str, tmp_path: Any) -> None:
    result = profile_json(f"{KERNELS}/{spec}", tmp_path)
    total = _trace_device_us(result)
    assert result["accounting"]["device_us"] == pytest.approx(total, rel=1e-3)
    assert _on_lines_us(result) == pytest.approx(total, rel=0.01)
    assert result["accounting"]["on_lines_pct"] >= 99.0
    model = line_starting(result, "out = model(x)")
    names = [op["name"] for op in model["backward"]["ops"]]
    assert "AddmmBackward0" in names and "GeluBackward0" in names
    assert model["backward"]["device_us"] > model["device_us"]  # the backward costs ~2×
    bpass = line_starting(result, "loss.backward()")["backward_pass"]
    assert model["line"] in bpass["lines"]
    step = line_starting(result, "opt.step()")
    kernels = [k["name"] for op in step["ops"] for k in op["kernels"]]
    assert any("multi_tensor_apply_kernel" in k for k in kernels), kernels
    # the backward's kernels are in the totals too
    totals = sum(k["device_us"] for k in result["kernels"])
    assert totals == pytest.approx(total, rel=0.01)


def test_a_forward_called_under_autocast_is_profiled_under_it(tmp_path: Any) -> None:
    result = profile_json(f"{KERNELS}/train_step.py::forward_bf16", tmp_path)
    context = result["inputs"]["context"]
    assert context["label"] == "autocast cuda bfloat16 · no_grad", context
    kernels = [k["name"] for line in result["lines"] for op in line["ops"] for k in op["kernels"]]
    # bf16 GEMMs, not the fp32 sm80_xmma_gemm_f32f32 kernels the dropped context ran
    assert not any("f32f32_f32f32" in k for k in kernels), kernels
    assert all("backward" not in line for line in result["lines"])  # no_grad
    assert result["timing"]["median_ms"] < 1.0  # fp32 took 1.42 ms; bf16 ≈ 0.3 ms


def test_a_compiled_steps_kernels_are_on_the_forward_lines(tmp_path: Any) -> None:
    """Inductor's Triton kernels on MLP.forward's lines (forward and backward), not on the
    line that called the compiled model; all of the step's kernel time still on lines, once."""
    result = profile_json(f"{KERNELS}/train_compiled.py::train_step", tmp_path, "--timeout", "600")
    model = line_starting(result, "out = model(x)")
    assert not [k for op in model["ops"] for k in op["kernels"]]
    assert not [k for op in (model.get("backward") or {}).get("ops", []) for k in op["kernels"]]
    assert model["compile"]["graphs"] == 2
    gelu = line_starting(result, "h = F.gelu(self.fc1(x))")
    fwd = [k["name"] for op in gelu["ops"] for k in op["kernels"]]
    bwd = [k["name"] for op in gelu["backward"]["ops"] for k in op["kernels"]]
    assert any(k.startswith("triton_") for k in fwd), fwd
    assert any(k.startswith("triton_") for k in bwd), bwd
    assert result["accounting"]["on_lines_pct"] >= 99.0
