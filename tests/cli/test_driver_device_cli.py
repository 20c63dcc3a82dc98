"""Triton's public tutorials on a machine without a GPU: they ask Triton's driver for their
device at module level (``DEVICE = triton.runtime.driver.active.get_active_torch_device()``),
and Triton has no driver here. Under the interpreter Kernel Lens stands in for it with the CPU
(agent/triton_driver.py), so the script's own launch runs: Profile, Show Values, Show Assembly
from the launch; what the stand-in cannot answer (the benchmarker) says so."""

from pathlib import Path

import pytest

from tests.conftest import HAS_CUDA, run_cli

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
