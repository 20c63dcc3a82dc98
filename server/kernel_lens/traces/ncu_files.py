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
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from kernel_lens.analysis.ncu import NcuError, NcuKernel, kernels_from_report, read_ncu_csv
from kernel_lens.analysis.regular_files import check_regular, read_regular

__all__ = [
    "IMPORT_TIMEOUT_S",
    "find_ncu",
    "load_ncu_report_module",
    "read_kernel_lines",
    "read_ncu_file",
]

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


def read_kernel_lines(
    report: str,
    path: str,
    text: str,
    *,
    kernel: str | None = None,
    sass: str | None = None,
    read_files: bool = True,
    find_sass: Callable[[Any], str | None] | None = None,
) -> list[dict[str, Any]]:
    """The kernels of a report with source counters, each folded onto ``text`` (the file at
    ``path``): the wire's ``KernelLinesKernel`` rows, hottest kernel first. The blame reads
    ``sass`` (a ``cuobjdump -sass`` file) or, without it, what ``find_sass(kernel)`` finds (the
    binary that ran, on this machine)."""
    from kernel_lens.analysis.kernel_lines import kernel_pcs_from_report

    module = load_ncu_report_module()
    if module is None:
        raise NcuError(
            "reading Nsight Compute reports needs NVIDIA's ncu_report module "
            "(pip install ncu-report)"
        )
    try:
        check_regular(report)
    except OSError:
        raise NcuError(f"no such report: {report}") from None
    kernels = kernel_pcs_from_report(module.load_report(report), kernel)
    if not kernels:
        raise NcuError(
            f"{os.path.basename(report)} has no source counters"
            + (f" for {kernel}" if kernel else "")
            + " (profile with --section SourceCounters)"
        )
    if find_sass is None:
        # the binary that ran, on this machine (Triton's cache, the extensions' folder)
        from kernel_lens.kernel_sass import sass_of_kernel

        find_sass = sass_of_kernel
    sass_text = None
    if sass:
        try:
            with open(sass, encoding="utf-8", errors="replace") as fh:
                sass_text = fh.read(1 << 26)
        except OSError as exc:
            raise NcuError(f"cannot read {sass}: {exc.strerror}") from None
    out = [
        _fold_kernel(
            k,
            path,
            text,
            sass_text or (find_sass(k) if find_sass is not None else None),
            read_files,
        )
        for k in kernels
    ]
    out.sort(key=lambda k: -(k["duration_us"] or 0.0) * max(k["launches"], 1))
    return out


def _short_name(demangled: str) -> str:
    """``strided_sum(const float *, …)`` → ``strided_sum``; ``ns::k<int>(…)`` → ``k``."""
    head = re.sub(r"<.*>$", "", demangled.split("(", 1)[0].strip())
    return head.rsplit("::", 1)[-1].split()[-1] if head.split() else head


def _fold_kernel(
    k: Any, path: str, text: str, sass_text: str | None, read_files: bool
) -> dict[str, Any]:
    """One kernel's PCs on the document's lines, as the wire's ``KernelLinesKernel``."""
    from kernel_lens.analysis.kernel_lines import (
        blame_explained,
        fold_lines,
        kernel_lines_json,
        kernel_span,
    )

    name = _short_name(k.demangled) or k.name
    span = kernel_span(text, name) or kernel_span(text, k.name)
    explained = blame_explained(k, sass_text)
    lines = fold_lines(
        k,
        text,
        doc_path=path,
        span=span,
        blamed=explained[0] if explained else None,
        read_files=read_files,
        causes=explained[1] if explained else None,
        links=explained[2] if explained else None,
    )
    row = kernel_lines_json(lines)
    row["span"] = list(span) if span else None
    return row
