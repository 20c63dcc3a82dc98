"""On a GPU (an H200): Show Assembly reads the launch's own compiled kernel, and its registers
are those Nsight Compute measures for the same launch; the autotuned kernel shows its chosen
config; the square kernels against the measured copy bandwidth."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KERNELS, ROOT, run_cli

pytestmark = pytest.mark.gpu

GPU_ONLY = ROOT / "tests" / "data" / "gpu_only"
#: Every file with a Triton kernel in kernels/ and tests/data/gpu_only (non-autotuned ones:
#: every launch of a kernel name has one register count).
TRITON_FILES = [KERNELS / "triton_square.py", GPU_ONLY / "vector_add_cuda.py"]


def _ncu_registers(path: Path) -> dict[str, set[int]]:
    """``ncu``'s ``launch__registers_per_thread`` of every kernel the asm command launches (the
    agent's child process included), by kernel name."""
    ncu = shutil.which("ncu")
    if ncu is None:
        pytest.skip("ncu is not on PATH")
    env = dict(os.environ)
    proc = subprocess.run(
        [ncu, "--target-processes", "all", "--metrics", "launch__registers_per_thread",
         "--csv", "--page", "raw", "--launch-count", "50",
         sys.executable, "-m", "kernel_lens", "asm", str(path), "--json"],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT,
    )  # fmt: skip
    rows = [line for line in proc.stdout.splitlines() if line.startswith('"')]
    out: dict[str, set[int]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        value = (row.get("launch__registers_per_thread") or "").replace(",", "")
        if value.isdigit():
            out.setdefault(row["Kernel Name"], set()).add(int(value))
    return out


@pytest.mark.parametrize("path", TRITON_FILES, ids=lambda p: p.name)
def test_registers_from_the_launch_equal_nsight_computes(path: Path) -> None:
    code, out, err = run_cli("asm", str(path), "--json")
    assert code == 0, err
    measured = _ncu_registers(path)
    for kernel in out:
        assert kernel["compiled_from"] == "launch", kernel.get("compiled_note")
        assert kernel["num_warps"] and kernel["registers"]
        assert measured.get(kernel["kernel"]) == {kernel["registers"]}, (kernel, measured)


def test_the_autotuned_kernel_shows_its_chosen_config() -> None:
    path = GPU_ONLY / "matmul_autotuned_cuda.py"
    code, out, err = run_cli("asm", f"{path}::matmul_kernel", "--json")
    assert code == 0, err
    assert out["compiled_from"] == "launch"
    tuned: dict[str, Any] = out["autotune"]
    assert tuned and len(tuned["configs"]) == 2
    assert sum(r["chosen"] for r in tuned["configs"]) == 1
    assert all(r["ms"] is not None and r["ms"] > 0 for r in tuned["configs"])
    chosen = tuned["chosen_kwargs"]
    # The assembly is the chosen config's: its constexprs and warps.
    assert out["constexprs"]["BLOCK_SIZE_M"] == chosen["BLOCK_SIZE_M"]
    assert out["num_warps"] == chosen["num_warps"]
    print("autotune", tuned)


@pytest.mark.parametrize(
    "target", [f"{KERNELS / 'triton_square.py'}::square", f"{KERNELS / 'square.py'}::square_mul"]
)
def test_square_kernels_against_the_measured_copy_bandwidth(target: str) -> None:
    code, out, err = run_cli("profile", target, "--json", "--no-samples")
    assert code == 0, err
    (roof,) = out["roofline"]
    print(target, roof["text"], roof["peak_note"])
    assert roof["source"] == "tensors"
    # a square is a copy: between 70% and 105% of the measured copy bandwidth (4.30 TB/s)
    assert 70 <= roof["bandwidth_pct"] <= 105
