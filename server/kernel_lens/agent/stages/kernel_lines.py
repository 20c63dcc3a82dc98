"""Stage *kernel_lines* (Profile Kernel Lines, issue 35): Nsight Compute's source counters for a
kernel's launches, folded onto the kernel's own lines.

The profiled process is the *ncu* stage's child (:mod:`kernel_lens.agent.ncu_child`): the
function that launches the kernel (the one asked for, else the kernel's launcher in its file or
package, found as Show Assembly finds it), its inputs from a directive, a factory, the script's
run or a driver, warmed up, then one call between ``cudaProfilerStart/Stop`` under

    ncu --section SourceCounters --import-source yes --clock-control none
        --profile-from-start off -k regex:^KERNEL -c N

A kernel too short for enough samples is profiled again with the call repeated (each launch is
one more set of samples; the launches of a kernel are summed), and says so when it still has
few. A recorded report (``report``) is read instead, on any machine with ``ncu_report``.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.analysis.kernel_lines import MIN_SAMPLES
from kernel_lens.wire.jobs import KernelLinesRequest

__all__ = ["SECTIONS", "ncu_command", "run_kernel_lines"]

#: What ncu collects: the source counters, and Speed of Light for the kernel's time.
SECTIONS = ("SourceCounters", "SpeedOfLight")
#: The most times the call is repeated to gather samples.
MAX_REPEAT = 16


def _launcher(path: str, text: str, kernel: str) -> str | None:
    """A function of the file (else of its package) that launches ``kernel``."""
    from kernel_lens.agent.stages.triton_launch import (
        kernels_in_text,
        launcher_candidates,
    )

    try:
        tree = ast.parse(text, path)
    except SyntaxError:
        return None
    kernels = kernels_in_text(tree)
    names = {n for n, k in kernels.items() if k.def_name == kernel} | {kernel}
    found = launcher_candidates(tree, names, set(kernels))
    return found[0] if found else None


def _kernel_asked(request: KernelLinesRequest, path: str, text: str) -> KernelLinesRequest:
    """``PATH::KERNEL`` (a ``@triton.jit`` kernel named as the function): the kernel, launched
    by its launcher."""
    import dataclasses

    from kernel_lens.agent.stages.triton_launch import kernels_in_text

    if request.kernel is not None or request.function is None:
        return request
    try:
        kernels = kernels_in_text(ast.parse(text, path))
    except SyntaxError:
        return request
    if request.function in kernels:
        return dataclasses.replace(
            request, kernel=kernels[request.function].def_name, function=None
        )
    return request


def ncu_command(
    ncu: str,
    report: str,
    child: list[str],
    *,
    kernel: str | None,
    launches: int,
) -> list[str]:
    """The ncu command line for ``child`` (the profiled process's argv)."""
    cmd = [ncu]
    for section in SECTIONS:
        cmd += ["--section", section]
    cmd += ["--import-source", "yes", "--clock-control", "none", "--profile-from-start", "off"]
    if kernel:
        cmd += ["-k", f"regex:^{re.escape(kernel)}"]
    cmd += ["-c", str(max(1, launches)), "--export", report, "--force-overwrite", *child]
    return cmd


def _read(report: str, path: str, text: str, request: KernelLinesRequest) -> list[dict[str, Any]]:
    from kernel_lens.analysis.ncu import NcuError
    from kernel_lens.traces.ncu_files import read_kernel_lines

    try:
        return read_kernel_lines(report, path, text, kernel=request.kernel, sass=request.sass)
    except NcuError as exc:
        if "ncu_report" in str(exc):
            raise ProfileError("unsupported", str(exc)) from None
        raise ProfileError("not-found", str(exc)) from None


def run_kernel_lines(
    request: KernelLinesRequest,
    text: str,
    *,
    report_dir: str,
    progress: Callable[[str, str], None] | None = None,
) -> dict[str, Any]:
    """Profile the kernel's launches under ncu (or read ``request.report``); the result:
    ``{"report_path", "function", "kernel", "repeat", "kernels": [KernelLinesKernel…]}``.

    Raises:
        ProfileError: ``unsupported`` (no ncu, no GPU, counters not permitted, no
            ``ncu_report``), ``not-found`` (no such kernel or function, nothing profiled),
            ``timeout``, ``runtime``.
    """
    path = os.path.abspath(request.path)
    request = _kernel_asked(request, path, text)
    if request.report:
        kernels = _read(request.report, path, text, request)
        return {
            "report_path": request.report,
            "function": request.function,
            "kernel": request.kernel,
            "repeat": None,
            "kernels": kernels,
        }
    function = request.function
    if function is None:
        if request.kernel is None:
            raise ProfileError("not-found", "give the kernel or the function that launches it")
        function = _launcher(path, text, request.kernel)
        if function is None:
            raise ProfileError(
                "not-found",
                f"no function of {os.path.basename(path)} launches {request.kernel}: give one "
                "(--from a driver, or PATH::FUNC of a function that launches it)",
            )
    repeat = 1
    report = _profile(request, text, function, repeat, report_dir)
    kernels = _read(report, path, text, request)
    samples = sum(k["samples"] for k in kernels)
    if samples < request.min_samples and request.min_samples > 0:
        repeat = min(MAX_REPEAT, max(2, math.ceil(request.min_samples / max(samples, 1.0))))
        if progress is not None:
            progress("kernel_lines", f"{samples:.0f} samples: again with {repeat} calls")
        report = _profile(request, text, function, repeat, report_dir)
        kernels = _read(report, path, text, request)
    return {
        "report_path": report,
        "function": function,
        "kernel": request.kernel,
        "repeat": repeat,
        "kernels": kernels,
    }


def _profile(
    request: KernelLinesRequest, text: str, function: str, repeat: int, report_dir: str
) -> str:
    """One ncu run of the call (repeated ``repeat`` times); the report's path."""
    from kernel_lens.agent.stages.ncu import NO_GPU_HELP, _has_gpu, run_ncu_command
    from kernel_lens.traces.ncu_files import find_ncu

    ncu = find_ncu()
    gpu = _has_gpu()
    if ncu is None:
        raise ProfileError(
            "unsupported",
            "Nsight Compute (ncu) was not found: install it or put it on PATH"
            + ("" if gpu else f"; {NO_GPU_HELP}"),
        )
    path = os.path.abspath(request.path)
    os.makedirs(report_dir, exist_ok=True)
    stem = f"{os.path.splitext(os.path.basename(path))[0]}-{request.kernel or function}-lines"
    report = os.path.join(
        report_dir, f"{stem.replace('.', '_')}-{time.strftime('%Y%m%d-%H%M%S')}.ncu-rep"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as fh:
        fh.write(text)
        text_file = fh.name
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env.update({str(k): str(v) for k, v in request.env.items()})
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [env.get("PYTHONPATH", ""), os.path.dirname(package_root)] if p
    )
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env["KERNEL_LENS_NCU_REPEAT"] = str(repeat)
    child = [sys.executable, "-m", "kernel_lens.agent.ncu_child", path, function, text_file]
    if request.driver is not None:
        child.append(
            json.dumps(
                {
                    "driver": os.path.abspath(request.driver),
                    "argv": list(request.argv),
                    "cwd": request.cwd,
                }
            )
        )
    cmd = ncu_command(ncu, report, child, kernel=request.kernel, launches=request.launches * repeat)
    which = f"{request.kernel}" if request.kernel else "CUDA kernel"
    run_ncu_command(
        cmd, report=report, function=function, what=which, timeout=request.timeout, env=env,
        gpu=gpu, text_file=text_file,
    )  # fmt: skip
    return report


#: Kept for readers of the module: the threshold the stage repeats below.
DEFAULT_MIN_SAMPLES = MIN_SAMPLES
