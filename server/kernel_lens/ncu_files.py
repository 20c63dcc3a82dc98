"""Nsight Compute files on this machine: finding ``ncu`` and NVIDIA's ``ncu_report`` module,
and reading a ``.ncu-rep`` with one or the other (``ncu --import`` runs a subprocess).

Used by the language server (``kernelLens/ncuFile``, off its event loop), the CLI (``kernel-lens
ncu show``) and the agent's ncu stage. The parsing itself is pure and lives in
:mod:`kernel_lens.analysis.ncu`.
"""

from __future__ import annotations

import glob
import importlib
import os
import shutil
import subprocess
import sys
from types import ModuleType

from kernel_lens.analysis.ncu import NcuError, NcuKernel, kernels_from_report, read_ncu_csv
from kernel_lens.analysis.regular_files import check_regular, read_regular

__all__ = ["IMPORT_TIMEOUT_S", "find_ncu", "load_ncu_report_module", "read_ncu_file"]

#: ``ncu --import`` of a large report can take minutes.
IMPORT_TIMEOUT_S = 300
#: The largest ncu CSV export read (far beyond any report's).
MAX_CSV_BYTES = 1 << 30


def load_ncu_report_module() -> ModuleType | None:
    """``ncu_report``: installed, or from Nsight Compute's ``extras/python`` next to ``ncu``."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    candidates: list[str] = []
    ncu = find_ncu()
    if ncu:
        root = os.path.dirname(os.path.realpath(ncu))
        candidates += [
            os.path.join(root, "extras", "python"),
            os.path.join(root, "..", "extras", "python"),
        ]
    candidates += sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True)
    candidates += sorted(glob.glob("/usr/local/cuda*/nsight-compute*/extras/python"), reverse=True)
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "ncu_report.py")):
            sys.path.insert(0, folder)
            try:
                return importlib.import_module("ncu_report")
            except ImportError:
                sys.path.remove(folder)
    return None


def find_ncu() -> str | None:
    """The ``ncu`` executable: PATH, ``$CUDA_HOME/bin``, or /opt/nvidia/nsight-compute."""
    found = shutil.which("ncu")
    if found:
        return found
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for candidate in [
        os.path.join(home, "bin", "ncu"),
        *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True),
    ]:
        if os.path.isfile(candidate):
            return candidate
    return None


def read_ncu_file(path: str) -> tuple[list[NcuKernel], str]:
    """Kernels of a ``.ncu-rep`` (``ncu_report``, else ``ncu --import --csv``) or a ``.csv``.

    Returns:
        ``(kernels, reader)`` where reader is ``ncu_report``, ``csv`` or ``ncu --import``.

    Raises:
        NcuError: missing or unreadable file, or no reader available.
    """
    try:
        check_regular(path)  # a FIFO or a device is refused, never opened
        if path.endswith(".csv"):
            data = read_regular(path, MAX_CSV_BYTES)
            return read_ncu_csv(data.decode("utf-8", errors="replace")), "csv"
    except FileNotFoundError:
        raise NcuError(f"no such file: {path}") from None
    except OSError as exc:
        raise NcuError(f"cannot read {path}: {exc.strerror or exc}") from None
    module = load_ncu_report_module()
    if module is not None:
        kernels = kernels_from_report(module, module.load_report(path))
        if not kernels:
            raise NcuError(f"{os.path.basename(path)} holds no profiled kernel (not a report?)")
        return kernels, "ncu_report"
    ncu = find_ncu()
    if ncu is None:
        raise NcuError(
            "reading .ncu-rep files needs NVIDIA's ncu_report module (pip install ncu-report) "
            "or Nsight Compute (ncu) on PATH"
        )
    try:
        proc = subprocess.run(
            [ncu, "--import", path, "--csv", "--page", "details"],
            capture_output=True, text=True, timeout=IMPORT_TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise NcuError(f"ncu --import did not finish within {IMPORT_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise NcuError(f"ncu --import failed: {proc.stderr.strip()[:300]}")
    return read_ncu_csv(proc.stdout), "ncu --import"
