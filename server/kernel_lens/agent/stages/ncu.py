"""Stage *ncu*: Nsight Compute on the function's own kernels, in a child process under ``ncu``.

The child (``kernel_lens.agent.ncu_child``) profiles one call, after warm-up, between
``cudaProfilerStart/Stop``, with each line of the function in an NVTX range, so every kernel's
report carries the line that launched it. Clocks are left alone (``--clock-control none``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import cast

from kernel_lens.agent.errors import ProfileError
from kernel_lens.analysis.ncu_lines import SeqMarks, kernel_lines
from kernel_lens.wire.results import KernelRoofline, NcuKernel, NcuResult

__all__ = ["kernel_lines_from_report", "kernel_ranges_from_report", "run_ncu"]

PERMISSION_HELP = (
    "the GPU's performance counters are restricted to administrators (ERR_NVGPUCTRPERM). "
    "Run as root, or allow all users: add `options nvidia NVreg_RestrictProfilingToAdminUsers=0` "
    "to /etc/modprobe.d/nvidia-profiler.conf and reload the driver "
    "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
)


NO_GPU_HELP = (
    "Nsight Compute needs an NVIDIA GPU and this machine has none (torch sees no CUDA): "
    "run the agent on one (kernelLens.agentCommand)"
)


def _has_gpu() -> bool:
    """Whether torch sees a CUDA device (without initialising it)."""
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # no torch: the child would fail anyway
        return False


def kernel_ranges_from_report(path: str) -> list[list[str]]:
    """For each profiled kernel in order, the NVTX push/pop ranges open on its thread at
    launch, outermost first."""
    from kernel_lens.traces.ncu_files import load_ncu_report_module

    module = load_ncu_report_module()
    if module is None:
        return []
    ctx = module.load_report(path)
    out: list[list[str]] = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            names: list[str] = []
            state = rng.action_by_idx(a).nvtx_state()
            if state is not None:
                for domain_id in state.domains():
                    names.extend(str(n) for n in state.domain_by_id(domain_id).push_pop_ranges())
            out.append(names)
    return out


def kernel_lines_from_report(path: str, marks: SeqMarks | None = None) -> list[int | None]:
    """For each profiled kernel in order, its line: the ``src:<line>`` NVTX range it ran in,
    or for a backward kernel the forward line that created its autograd node (``marks``, see
    ``analysis/ncu_lines.py``)."""
    return kernel_lines(kernel_ranges_from_report(path), marks)


def tensor_metrics(ncu: str, *, timeout: float = 60) -> tuple[str, ...]:
    """The tensor-core FLOP counters this GPU has (``ncu --query-metrics``, for the device
    present): asking ncu for a metric the chip lacks fails the whole run, so only these are
    added. Empty when the query fails (then tensor FLOPs are unknown, never zero)."""
    from kernel_lens.analysis.ncu import tensor_metric_names

    try:
        proc = subprocess.run(
            [ncu, "--query-metrics"], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if proc.returncode != 0:
        return ()
    return tensor_metric_names(line.split()[0] for line in proc.stdout.splitlines() if line.strip())


def _read_marks(path: str) -> SeqMarks | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return SeqMarks.from_json(json.load(fh))
    except (OSError, ValueError):
        return None


def run_ncu_command(
    cmd: list[str],
    *,
    report: str,
    function: str,
    what: str,
    timeout: float,
    env: dict[str, str],
    gpu: bool,
    text_file: str,
) -> str:
    """Run an ncu command line that writes ``report`` (``text_file``, the buffer the child
    read, is removed either way); every way it can fail said as a ``ProfileError``:
    ``timeout``, ``unsupported`` (counters not permitted, no CUDA device), ``not-found`` (the
    call launched no ``what``), ``runtime`` (ncu's own failure, its output's tail). Returns
    ncu's output."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise ProfileError("timeout", f"ncu did not finish within {timeout:.0f} s") from None
    finally:
        os.unlink(text_file)
    output = proc.stdout + proc.stderr
    if "ERR_NVGPUCTRPERM" in output:
        raise ProfileError("unsupported", PERMISSION_HELP)
    if proc.returncode == 3 and "no CUDA device" in output:
        raise ProfileError("unsupported", NO_GPU_HELP)
    if not os.path.exists(report):
        if "No kernels were profiled" in output or proc.returncode == 0:
            raise ProfileError(
                "not-found",
                f"{function} launched no {what} inside the profiled call, so ncu had nothing "
                "to measure",
            )
        tail = "" if gpu else f" ({NO_GPU_HELP})"
        raise ProfileError("runtime", f"ncu failed (exit {proc.returncode}): {output[-600:]}{tail}")
    return output


def run_ncu(
    path: str,
    text: str,
    function: str,
    *,
    section_set: str = "basic",
    report_dir: str,
    timeout: float = 600,
    driver: str | None = None,
    argv: list[str] | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> NcuResult:
    """Profile ``function`` under ncu; return kernels with metrics, hints and lines.

    With ``driver`` the profiled process takes the function's inputs, ``self`` and calling
    context from its first call in ``python DRIVER ARGV…`` (run in ``cwd``, with ``env``), as
    a profile ``--from DRIVER`` does; the driver's own kernels before that call are not
    profiled (``--profile-from-start off``).

    Raises:
        ProfileError: ``unsupported`` (no ncu, no GPU, counters not permitted), ``not-found``
            (no kernel in the profiled call), ``runtime`` (the child failed).
    """
    from kernel_lens.analysis.ncu import ROOFLINE_METRICS, NcuError
    from kernel_lens.analysis.roofline import ncu_rooflines
    from kernel_lens.traces.ncu_files import find_ncu, read_ncu_file

    ncu = find_ncu()
    gpu = _has_gpu()
    if ncu is None:
        raise ProfileError(
            "unsupported",
            "Nsight Compute (ncu) was not found: install it or put it on PATH"
            + ("" if gpu else f"; {NO_GPU_HELP}"),
        )
    os.makedirs(report_dir, exist_ok=True)
    stem = f"{os.path.splitext(os.path.basename(path))[0]}-{function}".replace(".", "_")
    report = os.path.join(report_dir, f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.ncu-rep")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as fh:
        fh.write(text)
        text_file = fh.name
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child_env = dict(os.environ)
    child_env.update({str(k): str(v) for k, v in (env or {}).items()})
    env = child_env
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [env.get("PYTHONPATH", ""), os.path.dirname(package_root)] if p
    )
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    seq_file = report + ".seq.json"
    env["KERNEL_LENS_NCU_SEQ_FILE"] = seq_file
    cmd = [
        ncu, "--set", section_set, "--metrics", ",".join((*ROOFLINE_METRICS, *tensor_metrics(ncu))),
        "--clock-control", "none", "--profile-from-start", "off",
        "--nvtx", "--import-source", "yes", "--export", report, "--force-overwrite",
        sys.executable, "-m", "kernel_lens.agent.ncu_child", os.path.abspath(path), function,
        text_file,
    ]  # fmt: skip
    if driver is not None:
        cmd.append(json.dumps({"driver": os.path.abspath(driver), "argv": list(argv or []),
                               "cwd": cwd}))  # fmt: skip
    output = run_ncu_command(
        cmd, report=report, function=function, what="CUDA kernel", timeout=timeout, env=env,
        gpu=gpu, text_file=text_file,
    )  # fmt: skip
    try:
        kernels, reader = read_ncu_file(report)
    except NcuError as exc:
        raise ProfileError("runtime", str(exc)) from None
    marks = _read_marks(seq_file)
    with contextlib.suppress(OSError):
        os.unlink(seq_file)
    lines = kernel_lines_from_report(report, marks) if reader == "ncu_report" else []
    out: list[NcuKernel] = []
    for i, k in enumerate(kernels):
        # The parser's dataclass as the wire's NcuKernel, less its line.
        row = k.to_json()
        row["line"] = lines[i] if i < len(lines) else None
        out.append(row)
    result: NcuResult = {
        "report_path": report,
        "set": section_set,
        "reader": reader,
        "kernels": out,
        "ncu_log": "\n".join(
            line for line in output.splitlines() if line.startswith(("==PROF==", "==WARNING=="))
        ),
    }
    # Each kernel against the limit from ncu's own DRAM bytes and FLOPs (issue 25).
    roofline = ncu_rooflines([dict(k) for k in out])
    if roofline:
        result["roofline"] = cast("list[KernelRoofline]", roofline)
    return result
