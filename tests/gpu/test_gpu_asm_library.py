"""On a GPU (an H200; not run in the session that wrote it, which had none): Show Assembly of
five kernels of the library-shaped packages in tests/data/launch_libs, each from its launch in
a driver (``asm PATH::KERNEL --from DRIVER``) — a package member with absolute and relative
imports, a launch through an alias, a kernel made by ``triton.jit(k)``, a kernel launched from
another module, an autotuned kernel under a heuristic — reads the launch's own compiled
kernel, and its registers equal those Nsight Compute measures for the same launches."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.gpu

LIBS = ROOT / "tests" / "data" / "launch_libs"
DRIVER = LIBS / "drive_gpu.py"
KERNELS = [
    "normlib/ops/absolute.py::rms_norm_kernel",
    "normlib/ops/relative.py::scale_kernel",
    "normlib/ops/relative.py::twice_kernel",
    "gluepkg/kernels/forward.py::fwd_kernel",
    "normlib/ops/tuned.py::add_kernel",
]


def _ncu_registers() -> dict[str, set[int]]:
    """``launch__registers_per_thread`` of every kernel the driver launches, by name (the
    autotuner's benchmark launches of add_kernel included: the chosen config's count is one of
    them, and the last launch is the chosen config's)."""
    ncu = shutil.which("ncu")
    if ncu is None:
        pytest.skip("ncu is not on PATH")
    proc = subprocess.run(
        [ncu, "--metrics", "launch__registers_per_thread", "--csv", "--page", "raw",
         sys.executable, str(DRIVER)],
        capture_output=True, text=True, timeout=600, cwd=LIBS, env=dict(os.environ),
    )  # fmt: skip
    rows = [line for line in proc.stdout.splitlines() if line.startswith('"')]
    out: dict[str, list[int]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        value = (row.get("launch__registers_per_thread") or "").replace(",", "")
        if value.isdigit():
            out.setdefault(row["Kernel Name"], []).append(int(value))
    return {name: set(values) for name, values in out.items()}


def test_registers_of_five_library_kernels_from_their_driver_equal_nsight_computes() -> None:
    measured = _ncu_registers()
    for target in KERNELS:
        code, out, err = run_cli("asm", str(LIBS / target), "--from", str(DRIVER), "--json")
        assert code == 0, (target, err)
        assert out["types_from"] == "launch" and out["launcher"] == "drive_gpu.py", out
        assert out["compiled_from"] == "launch", out.get("compiled_note")
        registers = measured.get(out["kernel"])
        assert registers, (out["kernel"], measured)
        # Nsight Compute's figure never reads under 16 (10 used read 16; 28 read 28)
        assert out["registers_allocated"] == max(out["registers"], 16), out
        assert out["registers_allocated"] in registers, (target, out["registers"], registers)
        if out["kernel"] != "add_kernel":  # one launch, one count
            assert registers == {out["registers_allocated"]}
    tuned = run_cli("asm", str(LIBS / KERNELS[-1]), "--from", str(DRIVER), "--json")[1]
    assert tuned["autotune"] and all(r["ms"] for r in tuned["autotune"]["configs"])
