"""Triton's public tutorials on a machine without a GPU: they ask Triton's driver for their
device at module level (``DEVICE = triton.runtime.driver.active.get_active_torch_device()``),
and Triton has no driver here. Under the interpreter Kernel Lens stands in for it with the CPU
(agent/triton_driver.py), so the script's own launch runs: Profile, Show Values, Show Assembly
from the launch; what the stand-in cannot answer (the benchmarker) says so."""

from pathlib import Path

import pytest

from tests.conftest import FAST, HAS_CUDA, run_cli

TUTORIAL = (
    Path(__file__).resolve().parent.parent / "data" / "driver_device" / "vector_add_tutorial.py"
)

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="a GPU machine has Triton's real driver")


def test_profile_runs_the_tutorials_launcher_on_inputs_from_its_script() -> None:
    code, out, err = run_cli("profile", f"{TUTORIAL}::add", "--json", "--budget-ms", "300")
    assert code == 0, err
    assert out["device"] == "CPU · Triton interpreter"
    assert out["inputs"]["source"].startswith("captured"), out["inputs"]
    kernels = [op["name"] for line in out["lines"] for op in line.get("ops", [])]
    assert "triton::add_kernel (interpreted)" in kernels or any(
        "add_kernel" in k for k in kernels
    ), kernels


def test_show_values_and_show_assembly_take_the_scripts_launch() -> None:
    code, out, err = run_cli("values", f"{TUTORIAL}::add_kernel", "--pid", "2", "--json")
    assert code == 0, err
    assert out["grid"][0] == 3 and out["launcher"] == "add"
    masks = [v for row in out["lines"] for v in row["values"] if v["name"] == "mask"]
    assert masks and "72 lanes masked" in masks[0]["text"], masks  # 2048 + 1024 - 3000
    code, out, err = run_cli("asm", f"{TUTORIAL}::add_kernel", "--arch", "90", "--json")
    assert code == 0, err
    assert out["types_from"] == "launch" and out["launcher"] == "add"
    assert out["constexprs"] == {"BLOCK_SIZE": 1024}


def test_what_the_stand_in_cannot_answer_is_said() -> None:
    """The script's benchmark asks the driver for a GPU's benchmarker: a whole-script run
    fails there, saying that the file asked the GPU's driver and that there is no GPU."""
    code, out, _ = run_cli("profile", str(TUTORIAL), "--json")
    assert code == 1
    message = out["error"]["message"]
    assert out["error"]["kind"] == "unsupported" and message.startswith(
        "this code needs an NVIDIA GPU"
    )
    assert "get_device_interface: this file asks the GPU's driver for it" in message, message


TWO_KERNELS = """\
import torch
import triton
import triton.language as tl


@triton.jit
def half(x):
    return x * 0.5


@triton.jit
def fill_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = half(offs.to(tl.float32))  # a device function first, then a language helper
    acc += tl.zeros([BLOCK], dtype=tl.float32)
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit
def scale_kernel(out_ptr, n, factor, BLOCK: tl.constexpr):
    out_ptr += tl.program_id(0) * n  # (the layer-norm tutorial's `X += row * stride`)
    offs = tl.arange(0, BLOCK)
    x = tl.load(out_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * factor, mask=offs < n)


def step(n):
    out = torch.empty(n)
    fill_kernel[(1,)](out, n, BLOCK=triton.next_power_of_2(n))
    scale_kernel[(1,)](out, n, 2.0, BLOCK=triton.next_power_of_2(n))
    return out


def step_inputs():
    return (100,)
"""


@pytest.fixture
def two_kernels(tmp_path: Path) -> Path:
    path = tmp_path / "two_kernels.py"
    path.write_text(TWO_KERNELS)
    return path


@pytest.mark.fresh_agents  # the sitecustomize runs in a fresh agent only
def test_a_kernel_with_device_functions_runs_when_triton_was_imported_first(
    two_kernels: Path, tmp_path: Path
) -> None:
    """The language server's warm template imports triton, so triton.language's own helpers
    (tl.zeros) are compiled JITFunctions in every agent forked from it, which an interpreted
    kernel cannot call: here a sitecustomize imports it first, as the template does."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import triton.language  # as the warm template\n")
    code, out, err = run_cli(
        "profile", f"{two_kernels}::step", "--json", *FAST, env={"PYTHONPATH": str(site)}
    )
    assert code == 0, (out, err)
    ops = [op["name"] for line in out["lines"] for op in line.get("ops", [])]
    assert any("fill_kernel" in op for op in ops), ops


def test_show_assembly_compiles_after_a_kernel_with_device_functions_ran(
    two_kernels: Path,
) -> None:
    """On the way to scale_kernel's launch, fill_kernel runs whole under the interpreter (its
    tl.zeros interpreted, not skipped), and the compile that follows still works: Triton's
    interpreter leaves triton.language patched after a device function's call (tl.zeros's own
    module), which broke every later compile (`'ir.value' object has no attribute 'dtype'`)."""
    code, out, err = run_cli("asm", f"{two_kernels}::scale_kernel", "--arch", "90", "--json")
    assert code == 0, (out, err)
    assert out["types_from"] == "launch" and out["launcher"] == "step"
    assert out["signature"]["factor"] == "fp32" and out["constexprs"] == {"BLOCK": 128}
    assert not any("could not run" in w for w in out["warnings"]), out["warnings"]


def test_debug_kernels_session_program_runs_the_tutorials_launch() -> None:
    """What the Debug Kernel session runs under debugpy (here without a debugger attached: the
    stop is a no-op), on the tutorial as written."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "kernel_lens.agent.stages.interp_debug", str(TUTORIAL)]
        + ["add_kernel", "--pid", "2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "3 programs of grid 3 × 1 × 1; stopped for program (2, 0, 0)" in proc.stdout
