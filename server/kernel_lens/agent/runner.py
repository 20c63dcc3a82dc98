"""Run the requested stages on one function and return the JSON result.

The engine (:mod:`kernel_lens.agent.engine`) calls :func:`run_profile` for the ``profile`` and
``sweep`` methods, in the agent (for the editor and the CLI alike). The order is fixed: target →
warm-up call → timing (never under the profiler) → one profiled pass shared by *ops* and *trace*.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import platform
import sys
import types
from collections.abc import Callable
from typing import Any, Literal

from kernel_lens.agent.errors import ProfileError, format_exception, user_line_from_traceback
from kernel_lens.wire.errors import ErrorKind
from kernel_lens.wire.jobs import ALL_STAGES, DEFAULT_STAGES, ProfileRequest
from kernel_lens.wire.results import CompiledResult, SweepStageResult

__all__ = [
    "ALL_STAGES",
    "DEFAULT_STAGES",
    "NEEDS_GPU_MESSAGE",
    "ProfileRequest",
    "call_style",
    "call_user",
    "needs_gpu",
    "run_profile",
    "use_triton_interpreter",
    "with_call_style",
]

ProgressFn = Callable[[str, str], None]
CallStyle = Literal["called", "awaited", "consumed"]

#: The message of an ``unsupported`` error for code that asks for CUDA on a machine without it.
NEEDS_GPU_MESSAGE = "this code needs an NVIDIA GPU — run the agent on one (kernelLens.agentCommand)"
#: What torch (and the CUDA runtime) say when code asks for CUDA that is not there.
_NO_CUDA_MARKERS = (
    "Torch not compiled with CUDA enabled",
    "no CUDA GPUs are available",
    "Found no NVIDIA driver",
    "CUDA driver initialization failed",
    "0 active drivers",
)
#: The device label of a run whose Triton kernels ran under Triton's interpreter.
INTERPRETER_DEVICE = "CPU · Triton interpreter"
#: What the sweep says of its times under the interpreter.
INTERPRETER_SWEEP_NOTE = (
    "Triton interpreter on the CPU: these times are the interpreter's, not a GPU's; "
    "they say nothing about which value is fastest on a GPU"
)


def use_triton_interpreter() -> bool:
    """Without CUDA, make ``@triton.jit`` kernels run under Triton's interpreter.

    Triton reads ``TRITON_INTERPRET`` when ``@triton.jit`` decorates a kernel (its ``knobs``
    read the environment on each access), so setting it before the user's module runs is
    enough even though the agent imported triton while warming up. A value the user set is
    kept. Returns whether the interpreter is on.
    """
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def _is_interpreted(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "InterpretedFunction" and cls.__module__.startswith("triton")


def _uses_interpreted_kernels(module: types.ModuleType) -> bool:
    """Whether the user's module holds a kernel made under Triton's interpreter (its own, or
    one of a module it imported: ``from kernels import k`` or ``import kernels``)."""
    for value in list(vars(module).values()):
        if _is_interpreted(value):
            return True
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] not in (
            "triton",
            "torch",
        ):
            if any(_is_interpreted(v) for v in list(vars(value).values())):
                return True
    return False


def needs_gpu(message: str) -> bool:
    """Whether an error message says the code asked for CUDA on a machine without it."""
    lowered = message.lower()
    return any(marker.lower() in lowered for marker in _NO_CUDA_MARKERS)


def _as_needs_gpu(err: ProfileError) -> ProfileError:
    """``err`` as an ``unsupported`` error when it says that CUDA is missing."""
    if err.kind in ("import", "inputs", "runtime") and needs_gpu(err.message):
        return ProfileError(
            "unsupported", f"{NEEDS_GPU_MESSAGE} ({err.message})", err.line, err.traceback
        )
    return err


def call_style(code: types.CodeType) -> CallStyle:
    """How a function's body runs: ``awaited`` (``async def``), ``consumed`` (a generator,
    sync or async) or ``called``."""
    if code.co_flags & inspect.CO_COROUTINE:
        return "awaited"
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
        return "consumed"
    return "called"


async def _drain(agen: Any) -> list[Any]:
    return [item async for item in agen]


def _run_body(value: Any) -> Any:
    """Run what a call returned when it is a body not run yet: a coroutine is awaited on a
    fresh event loop, a generator (sync or async) is consumed to the end (its items returned
    as a list)."""
    if inspect.iscoroutine(value):
        return asyncio.run(value)
    if inspect.isasyncgen(value):
        return asyncio.run(_drain(value))
    if inspect.isgenerator(value):
        return list(value)
    return value


def with_call_style(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped so that each call runs its body to the end (see :func:`_run_body`); the
    signature is ``fn``'s (``inspect.signature`` follows ``__wrapped__``)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        return _run_body(fn(*args, **kwargs))

    return run


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
        if isinstance(exc, Exception) and needs_gpu(str(exc)):
            kind = "unsupported"
            message = f"{NEEDS_GPU_MESSAGE} ({what} raised {type(exc).__name__}: {exc})"
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
        from kernel_lens.wire.paths import CacheDirs

        trace_dir = CacheDirs.from_env().traces
    if request.script:
        return _run_script(request, report, trace_dir)
    report("target", "loading the file")
    interpreter = use_triton_interpreter()
    try:
        target = load_target(request.path, request.text, name=request.function, line=request.line)
    except ProfileError as err:
        raise _as_needs_gpu(err) from None
    style = call_style(target.code)
    # A coroutine is awaited and a generator consumed on every call (warm-up, timing,
    # profiling, sweep): a time is never one of a body that did not run.
    target.fn = with_call_style(target.fn)

    import torch

    report("target", f"first call of {target.info.qualname}")
    call_user(target.call, target.path, target.info.qualname)
    device, device_name = _device_of_run()
    interpreted = interpreter and device == "cpu" and _uses_interpreted_kernels(target.module)
    if interpreted:
        device_name = INTERPRETER_DEVICE
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
        "inputs": target.inputs if target.inputs else {"source": "none"},
        "versions": {
            "torch": torch.__version__,
            "python": platform.python_version(),
        },
        "stages": list(request.stages),
        "call_style": style,
        "triton_interpreter": interpreted,
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
        result["compiled"] = compiled
    if "sweep" in request.stages:
        from kernel_lens.agent.stages.sweep import run_sweep
        from kernel_lens.agent.stages.timing import TimingConfig

        param = request.extra.get("sweep_param")
        if not param:
            raise ProfileError("inputs", "a sweep needs a parameter name (--param NAME)")
        report("sweep", f"sweeping {param}")
        swept: SweepStageResult = call_user(
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
        result["sweep"] = swept
        if interpreted:
            result["sweep"]["note"] = INTERPRETER_SWEEP_NOTE
    report("done", "done")
    return result


def _run_script(request: ProfileRequest, report: ProgressFn, trace_dir: str) -> dict[str, Any]:
    """The whole file, run once as ``__main__`` (see :mod:`kernel_lens.agent.stages.script`)."""
    from kernel_lens.agent.stages.script import profile_script
    from kernel_lens.agent.stages.target import parse_source, read_source
    from kernel_lens.analysis.line_attribution import attribute_lines
    from kernel_lens.analysis.scripts import SCRIPT_NAME, WALL_LABEL

    path = os.path.abspath(request.path)
    text = request.text if request.text is not None else read_source(path)
    parse_source(text, path)
    interpreter = use_triton_interpreter()
    import torch

    cuda = torch.cuda.is_available()
    report("script", f"running {os.path.basename(path)} once as __main__, each line profiled")
    try:
        run = profile_script(path, text, trace_dir=trace_dir, cuda_available=cuda)
    except ProfileError as err:
        raise _as_needs_gpu(err) from None
    device, device_name = _device_of_run()
    source_lines = text.splitlines()
    interpreted = False
    if interpreter and device == "cpu":
        main = sys.modules.get(f"_kernel_lens_target_{os.path.splitext(os.path.basename(path))[0]}")
        interpreted = main is not None and _uses_interpreted_kernels(main)
        if interpreted:
            device_name = INTERPRETER_DEVICE
    report("ops", "attributing ops and kernels to lines")
    lines, unattributed = attribute_lines(run.trace, runs=1)
    lines_json = [
        stat.to_json(source_lines[no - 1].strip() if 1 <= no <= len(source_lines) else "")
        for no, stat in sorted(lines.items())
        if stat.ops  # a script's lines that ran no op (imports, defs) are left out
    ]
    result: dict[str, Any] = {
        "function": SCRIPT_NAME,
        "path": path,
        "def_line": 1,
        "first_line": 1,
        "last_line": max(1, len(source_lines)),
        "device": device_name,
        "device_kind": device,
        "inputs": {"source": "script", "label": "the script's own run", "args": []},
        "versions": {"torch": torch.__version__, "python": platform.python_version()},
        "stages": ["script", "ops", "trace"],
        "call_style": "script",
        "triton_interpreter": interpreted,
        "script": {"wall_s": round(run.wall_s, 6), "runs": 1, "label": WALL_LABEL},
        "notes": run.notes,
        "trace_path": run.trace_path,
        "profiled_runs": 1,
        "lines": lines_json,
        "kernels": _kernel_totals(lines_json),
        "unattributed": [k.to_json() for k in unattributed],
    }
    if "trace" in request.stages:
        from kernel_lens.analysis.trace_summary import summarize_trace

        report("trace", "summarising the trace")
        result["trace"] = summarize_trace(run.trace).to_json()
    report("done", "done")
    return result
