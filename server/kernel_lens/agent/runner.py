"""Run the requested stages on one function and return the JSON result.

The engine (:mod:`kernel_lens.agent.engine`) calls :func:`run_profile` for the ``profile`` and
``sweep`` methods, in the agent (for the editor and the CLI alike). The order is fixed: target →
warm-up call → timing (never under the profiler) → one profiled pass shared by *ops* and *trace*.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from typing import Any

from kernel_lens.agent.errors import ProfileError, format_exception, user_line_from_traceback
from kernel_lens.agent.types import (
    ALL_STAGES,
    DEFAULT_STAGES,
    CompiledResult,
    ErrorKind,
    ProfileRequest,
    SweepResult,
)

__all__ = ["ALL_STAGES", "DEFAULT_STAGES", "ProfileRequest", "call_user", "run_profile"]

ProgressFn = Callable[[str, str], None]


def _check_stages(stages: tuple[str, ...]) -> None:
    unknown = [s for s in stages if s not in ALL_STAGES]
    if unknown:
        raise ProfileError(
            "internal",
            f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(ALL_STAGES)}",
        )


def _device_of_run() -> tuple[str, str]:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return "cuda", torch.cuda.get_device_name()
    return "cpu", "CPU"


def call_user(target_call: Callable[[], Any], path: str, what: str) -> Any:
    """Call user code; whatever way it ends badly becomes a :class:`ProfileError` with its line.

    An exception is ``runtime`` (``unsupported`` for ``NotImplementedError``), ``sys.exit()``
    is ``exit`` and ``KeyboardInterrupt`` is ``interrupted``: none of them ends the agent.
    """
    try:
        return target_call()
    except ProfileError:
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        kind: ErrorKind = "runtime"
        message = f"{what} raised {type(exc).__name__}: {exc}"
        if isinstance(exc, NotImplementedError):
            kind = "unsupported"
        elif isinstance(exc, SystemExit):
            kind = "exit"
            message = f"{what} called sys.exit({'' if exc.code is None else repr(exc.code)})"
        elif isinstance(exc, KeyboardInterrupt):
            kind = "interrupted"
            message = f"{what} raised KeyboardInterrupt"
        raise ProfileError(
            kind,
            message,
            user_line_from_traceback(exc.__traceback__, path),
            format_exception(exc),
        ) from None


def _kernel_totals(lines_json: list[dict[str, Any]]) -> list[dict[str, Any]]:
    totals: dict[str, dict[str, Any]] = {}
    for line in lines_json:
        for op in line["ops"]:
            for k in op["kernels"]:
                row = totals.setdefault(
                    k["name"],
                    {
                        "name": k["name"],
                        "short_name": k["short_name"],
                        "kind": k["kind"],
                        "device_us": 0.0,
                        "calls": 0.0,
                        "lines": [],
                    },
                )
                row["device_us"] += k["device_us"]
                row["calls"] += k["calls"]
                if line["line"] not in row["lines"]:
                    row["lines"].append(line["line"])
    out = sorted(totals.values(), key=lambda r: -r["device_us"])
    for row in out:
        row["device_us"] = round(row["device_us"], 3)
        calls = row["calls"]
        row["calls"] = int(calls) if float(calls).is_integer() else round(calls, 3)
    return out


def run_profile(
    request: ProfileRequest,
    progress: ProgressFn | None = None,
    *,
    compiled_dir: str | None = None,
) -> dict[str, Any]:
    """Run ``request`` and return the result object of the CLI's ``--json``.

    Args:
        request: the job; its ``trace_dir`` should be set (the engine sets it).
        progress: called with ``(stage, message)`` as stages start.
        compiled_dir: where the *compiled* stage writes inductor's code (default: beside the
            trace folder).

    Raises:
        ProfileError: with the kind and the user's line.
    """
    from kernel_lens.agent.stages.target import load_target

    report = progress or (lambda stage, message: None)
    _check_stages(request.stages)
    trace_dir = request.trace_dir
    if trace_dir is None:
        from kernel_lens.agent.engine import CacheDirs

        trace_dir = CacheDirs.from_env().traces
    report("target", "loading the file")
    target = load_target(request.path, request.text, name=request.function, line=request.line)

    import torch

    report("target", f"first call of {target.info.qualname}")
    call_user(target.call, target.path, target.info.qualname)
    device, device_name = _device_of_run()
    if device == "cuda":
        torch.cuda.synchronize()

    result: dict[str, Any] = {
        "function": target.info.qualname,
        "path": target.path,
        "def_line": target.info.def_line,
        "first_line": target.info.first_line,
        "last_line": target.info.last_line,
        "device": device_name,
        "device_kind": device,
        "inputs": target.inputs_source,
        "versions": {
            "torch": torch.__version__,
            "python": platform.python_version(),
        },
        "stages": list(request.stages),
    }

    if "timing" in request.stages:
        from kernel_lens.agent.stages.timing import TimingConfig, time_function

        report("timing", "timing (warm-up, then repetitions)")
        config = TimingConfig(
            warmup_ms=request.warmup_ms, budget_ms=request.budget_ms, reps=request.reps
        )
        timing = call_user(
            lambda: time_function(target.call, device=device, config=config),
            target.path,
            target.info.qualname,
        )
        result["timing"] = timing.to_json(with_samples=request.keep_samples)

    if "ops" in request.stages or "trace" in request.stages:
        from kernel_lens.agent.stages.ops import profile_pass
        from kernel_lens.analysis.line_attribution import attribute_lines

        report("ops", "profiling each line")
        stem = os.path.splitext(os.path.basename(target.path))[0]
        label = f"{stem}-{target.info.qualname}".replace(".", "_")
        passed = call_user(
            lambda: profile_pass(
                target.call,
                target.code,
                device=device,
                runs=request.profile_runs,
                trace_dir=trace_dir,
                label=label,
            ),
            target.path,
            target.info.qualname,
        )
        result["trace_path"] = passed.trace_path
        result["profiled_runs"] = passed.runs
        if "ops" in request.stages:
            lines, unattributed = attribute_lines(passed.trace, runs=passed.runs)
            lines_json = [
                stat.to_json(target.source_line(no))
                for no, stat in lines.items()
                if target.info.first_line <= no <= target.info.last_line
            ]
            result["lines"] = lines_json
            result["kernels"] = _kernel_totals(lines_json)
            result["unattributed"] = [k.to_json() for k in unattributed]
        if "trace" in request.stages:
            from kernel_lens.analysis.trace_summary import summarize_trace

            report("trace", "summarising the trace")
            result["trace"] = summarize_trace(passed.trace).to_json()
    if "compiled" in request.stages:
        from kernel_lens.agent.stages.compiled import compile_and_compare
        from kernel_lens.agent.stages.timing import TimingConfig

        report("compiled", "torch.compile: capturing generated code, eager vs compiled")
        cache = compiled_dir or os.path.join(os.path.dirname(trace_dir), "compiled")
        compiled: CompiledResult = call_user(
            lambda: compile_and_compare(
                target,
                device=device,
                timing_config=TimingConfig(
                    warmup_ms=request.warmup_ms, budget_ms=request.budget_ms, reps=request.reps
                ),
                cache_dir=cache,
            ),
            target.path,
            target.info.qualname,
        )
        result["compiled"] = compiled.to_json()
    if "sweep" in request.stages:
        from kernel_lens.agent.stages.sweep import run_sweep
        from kernel_lens.agent.stages.timing import TimingConfig

        param = request.extra.get("sweep_param")
        if not param:
            raise ProfileError("inputs", "a sweep needs a parameter name (--param NAME)")
        report("sweep", f"sweeping {param}")
        swept: SweepResult = call_user(
            lambda: run_sweep(
                target,
                param=str(param),
                values=[int(v) for v in request.extra.get("sweep_values") or []] or None,
                device=device,
                timing_config=TimingConfig(
                    warmup_ms=request.warmup_ms, budget_ms=request.budget_ms, reps=request.reps
                ),
            ),
            target.path,
            target.info.qualname,
        )
        result["sweep"] = swept.to_json()
    report("done", "done")
    return result
