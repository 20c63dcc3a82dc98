"""On a CUDA GPU with Nsight Compute: the ncu stage's DRAM bytes and FLOP counters place the
kernel on the roofline (issue 25 item 4, ``source: "ncu"``)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.conftest import KERNELS, run_cli

pytestmark = pytest.mark.gpu


@pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute not installed")
def test_ncu_counts_the_square_kernels_bytes_and_flops() -> None:
    """``square_kernel`` on 10⁸ fp32 elements reads 4·10⁸ bytes, writes 4·10⁸ and does one FMUL
    per element: 10⁸ FLOPs (masked-off lanes are not counted: ``pred_on``)."""
    code, out, err = run_cli(
        "ncu", "run", f"{KERNELS / 'triton_square.py'}::square", "--json", timeout=600
    )
    assert code == 0, (out, err)
    (kernel,) = out["kernels"]
    print("ncu square_kernel:", {k: kernel.get(k) for k in
          ("duration_us", "dram_bytes_read", "dram_bytes_write", "flops")})  # fmt: skip
    assert kernel["dram_bytes_read"] == pytest.approx(4e8, rel=0.05)
    assert kernel["dram_bytes_write"] == pytest.approx(4e8, rel=0.15)  # L2 may keep a tail
    assert kernel["flops"] == pytest.approx(1e8, rel=0.01)
    (roof,) = out["roofline"]
    print("ncu roofline:", roof["text"])
    assert roof["source"] == "ncu" and roof["name"] == kernel["demangled"]
    assert roof["intensity"] == pytest.approx(1e8 / 8e8, rel=0.15)
    # under ncu (clocks untouched) the copy-like kernel still reaches most of the measured copy
    assert 50 < roof["bandwidth_pct"] < 110


@pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute not installed")
def test_ncu_puts_the_backward_on_the_forward_lines() -> None:
    """A training step under ncu (issue 34 item 2): the backward's kernels on the forward lines
    that caused them, as the profile puts them, the optimizer's on ``opt.step()``; on
    ``loss.backward()`` only its seed gradient's fill, and (almost) none without a line."""
    source = (KERNELS / "train_step.py").read_text().splitlines()
    # train_step's lines: the file's first occurrence of each (train_step_bf16 below repeats
    # them; a dict of the last put every forward GEMM "off" its line, the H200 on 2026-12-06)
    line_of: dict[str, int] = {}
    for no, text in enumerate(source, 1):
        line_of.setdefault(text.strip(), no)
    code, out, err = run_cli(
        "ncu", "run", f"{KERNELS / 'train_step.py'}::train_step", "--json", timeout=600
    )
    assert code == 0, (out, err)
    kernels = out["kernels"]
    lines = [k["line"] for k in kernels]
    print("ncu train_step lines:", [(k["demangled"][:40], k["line"]) for k in kernels])
    forward = {line_of["out = model(x)"], line_of["loss = F.mse_loss(out, y)"]}
    step = line_of["opt.step()"]
    assert sum(line is not None for line in lines) >= 0.95 * len(lines)
    # on loss.backward() only what the call itself launches: the seed gradient's fill
    # (aten::ones_like, as the eager profile puts it there), none of the pass's kernels
    seed = [k for k in kernels if k["line"] == line_of["loss.backward()"]]
    assert len(seed) <= 1 and all("elementwise" in k["demangled"] for k in seed), seed
    # fc1, fc2 forward GEMMs and three backward ones (both weights' gradients, fc2's input
    # gradient; x needs none, so fc1's input gradient is never computed: 5 on the H200), all on
    # `out = model(x)`
    gemms = [k for k in kernels if "gemm" in k["demangled"].lower() or "nvjet" in k["demangled"]]
    assert len(gemms) >= 5 and all(k["line"] == line_of["out = model(x)"] for k in gemms)
    assert {line for line in lines if line is not None} <= forward | {
        step,
        line_of["loss.backward()"],
    }
    assert step in lines


BF16_GEMM = """
import torch

M = N = K = 4096
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)


def gemm(a=a, b=b):
    return a @ b
"""


@pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute not installed")
def test_ncu_counts_a_bf16_gemms_tensor_flops(tmp_path: Any) -> None:
    """Issue 34 item 3: a 4096³ bf16 GEMM's FLOPs within 5% of 2·M·N·K from the tensor-path
    counters, taken against the BF16 tensor peak (not FP32's), and under 100% of it."""
    path = tmp_path / "bf16_gemm.py"
    path.write_text(BF16_GEMM)
    code, out, err = run_cli("ncu", "run", f"{path}::gemm", "--json", timeout=600)
    assert code == 0, (out, err)
    gemms = [k for k in out["kernels"] if (k.get("tensor_flops") or 0) > 0]
    assert len(gemms) == 1, out["kernels"]
    (k,) = gemms
    print("ncu bf16 gemm:", {f: k.get(f) for f in ("demangled", "duration_us", "flops",
                                                   "tensor_flops", "math")})  # fmt: skip
    assert k["tensor_flops"] == pytest.approx(2 * 4096**3, rel=0.05)
    assert k["math"] == "bf16 tensor"
    (roof,) = [r for r in out["roofline"] if r["name"] == k["demangled"]]
    print("ncu bf16 roofline:", roof["text"])
    assert roof["math"] == "BF16 tensor" and roof["impossible"] is None
    assert 10 < roof["flop_pct"] < 100
