"""``kernel-lens ncu lines`` as a user runs it: a recorded report's source counters on the kernel's
lines (text and ``--json``, ``--compare`` with an earlier report), and without a GPU the reason."""

from __future__ import annotations

import pytest

from tests.conftest import HAS_CUDA, ROOT, run_cli

H200 = ROOT / "tests" / "data" / "h200"
KERNEL_FILE = H200 / "triton_fused_kernel.py"
REPORT = H200 / "triton_fused_full.ncu-rep"


def test_a_recorded_report_per_line_as_text_and_json() -> None:
    pytest.importorskip("ncu_report")
    code, out, err = run_cli("ncu", "lines", str(KERNEL_FILE), "--report", str(REPORT))
    assert code == 0, err
    assert "triton_fused_kernel.py:26  71% of samples · long scoreboard (waiting on memory)" in out
    assert "hottest line 26: Warps wait for global or local memory" in out
    code, data, err = run_cli(
        "ncu", "lines", f"{KERNEL_FILE}::triton_poi_fused_add_mul_relu_0", "--report",
        str(REPORT), "--compare", str(REPORT), "--json",
    )  # fmt: skip
    assert code == 0, err
    (kernel,) = data["kernels"]
    assert kernel["lines"][0]["line"] == 26 and kernel["interval_cycles"] == 2048
    assert data["before"]["kernels"][0]["samples"] == kernel["samples"] == 341


def test_a_report_that_is_not_one_says_so() -> None:
    pytest.importorskip("ncu_report")
    code, data, _ = run_cli(
        "ncu", "lines", str(KERNEL_FILE), "--report", str(KERNEL_FILE), "--json"
    )
    assert code != 0 and "has no source counters" in data["error"]["message"]


@pytest.mark.skipif(HAS_CUDA, reason="runs for real there (tests/gpu/test_gpu_kernel_lines.py)")
def test_without_a_gpu_the_reason_is_said() -> None:
    target = f"{ROOT / 'tests' / 'data' / 'inside' / 'tl_vector_add.py'}::add_kernel"
    code, data, _ = run_cli("ncu", "lines", target, "--json", timeout=300)
    assert code != 0
    assert data["error"]["kind"] == "unsupported"
    assert "ncu" in data["error"]["message"] or "GPU" in data["error"]["message"]
