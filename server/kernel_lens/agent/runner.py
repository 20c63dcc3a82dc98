"""Run the requested stages on one function and return the JSON result.

The engine (:mod:`kernel_lens.agent.engine`) calls :func:`run_profile` for the ``profile`` and
``sweep`` methods, in the agent (for the editor and the CLI alike). The order is fixed: target →
warm-up call → one profiled pass shared by *ops* and *trace* (its per-line ops and kernels are
streamed at once: the first useful lens) → timing, in its own pass after the profiler has
stopped (never under it; streamed as it converges) → the trace's summary, the roofline and the
CUDA-graph timing → *compiled* → *sweep*. With a ``partial`` callback each stage boundary sends
what is known (:class:`_Stream`); the result returned at the end is whole.
The user's code is loaded and called through :mod:`kernel_lens.agent.usercode`; the result is
built by :mod:`kernel_lens.agent.results`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import types
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from kernel_lens.agent.deadline import remaining_s
from kernel_lens.agent.errors import ProfileError
from kernel_lens.agent.results import device_of_run, line_results, profile_result
from kernel_lens.agent.usercode import (
    as_main,
    as_needs_gpu,
    call_style,
    call_user,
    with_call_style,
)
from kernel_lens.analysis.line_attribution import interpreted_range_name
from kernel_lens.wire.jobs import ALL_STAGES, DEFAULT_STAGES, ProfileRequest
from kernel_lens.wire.paths import CacheDirs
from kernel_lens.wire.results import CompiledResult, ProfileTiming, SweepStageResult

if TYPE_CHECKING:
    from kernel_lens.agent.inductor_capture import CompileCapture
    from kernel_lens.agent.stages.ops import ProfiledPass
    from kernel_lens.agent.stages.script import ScriptRun
    from kernel_lens.agent.stages.target import Target
    from kernel_lens.agent.stages.timing import TimingConfig, TimingResult

__all__ = [
    "ALL_STAGES",
    "DEFAULT_STAGES",
    "INTERPRETER_DEVICE",
    "ProfileRequest",
    "run_profile",
    "use_triton_interpreter",
]

ProgressFn = Callable[[str, str], None]
#: ``partial(changed keys, final keys, stage)``: part of the result, known before the end.
PartialFn = Callable[[dict[str, Any], list[str], str], None]
#: Partials of a converging timing at most this often (seconds).
TIMING_PARTIAL_EVERY_S = 0.05


class _Stream:
    """Sends the result's parts as they become known (nothing without a ``partial``)."""

    def __init__(self, partial: PartialFn | None) -> None:
        self.partial = partial
        self.last = 0.0

    def send(self, patch: dict[str, Any], final: list[str], stage: str) -> None:
        if self.partial is None:
            return
        import time

        self.last = time.monotonic()
        self.partial(patch, final, stage)

    def timing(self, method: str) -> Callable[[Any, Any], None] | None:
        """An ``on_batch`` for the timing stage: the converging number, throttled."""
        if self.partial is None:
            return None
        import time

        from kernel_lens.agent.stages.timing import partial_timing

        def on_batch(samples: Any, decision: Any) -> None:
            if decision.stop or time.monotonic() - self.last < TIMING_PARTIAL_EVERY_S:
                return
            self.send({"timing": partial_timing(samples, decision, method)}, [], "timing")

        return on_batch


#: The device label of a run whose Triton kernels ran under Triton's interpreter.
INTERPRETER_DEVICE = "CPU · Triton interpreter"
#: What an error of a function whose Triton kernels ran under the interpreter ends with.
INTERPRETER_ERROR_NOTE = "(its Triton kernels ran under Triton's interpreter: no GPU here)"
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
    on = os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")
    # Triton's public tutorials ask its driver for their device at module level: with no GPU
    # driver here, the driver says the interpreter's device, the CPU (agent/triton_driver.py).
    # And triton.language's own @jit helpers (tl.zeros) interpreted: an agent forked from the
    # warm template imported them compiled.
    from kernel_lens.agent.triton_driver import hold_interpreter

    hold_interpreter(on)
    if on:
        # @triton.autotune benchmarks through the GPU driver: under the interpreter its first
        # config runs instead (said on the result). One job per agent: it stays for the job.
        from kernel_lens.agent.stages.triton_jit import keep_untimed_autotune

        keep_untimed_autotune()
    return on


def _is_interpreted(value: Any) -> bool:
    """An interpreted kernel, or an ``@triton.autotune``/``@triton.heuristics`` wrapper of one."""
    for _ in range(8):
        cls = type(value)
        if cls.__name__ == "InterpretedFunction" and cls.__module__.startswith("triton"):
            return True
        if not cls.__module__.startswith("triton"):
            return False
        inner = getattr(value, "fn", None)
        if inner is None or inner is value:
            return False
        value = inner
    return False


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


def _source_in(file: str, no: int) -> str:
    """The stripped text of line ``no`` of ``file`` (a line of a run's other file)."""
    import linecache

    return linecache.getline(file, no).strip()


def _check_stages(stages: tuple[str, ...]) -> None:
    unknown = [s for s in stages if s not in ALL_STAGES]
    if unknown:
        raise ProfileError(
            "internal",
            f"unknown stage(s) {', '.join(unknown)}; known: {', '.join(ALL_STAGES)}",
        )


def run_profile(
    request: ProfileRequest,
    progress: ProgressFn | None = None,
    *,
    compiled_dir: str | None = None,
    partial: PartialFn | None = None,
) -> dict[str, Any]:
    """Run ``request`` and return the result object of the CLI's ``--json``.

    Args:
        request: the job; its ``trace_dir`` should be set (the engine sets it).
        progress: called with ``(stage, message)`` as stages start.
        compiled_dir: where the *compiled* stage writes inductor's code (default: beside the
            trace folder).
        partial: called with parts of the result as they are known (a function's profile:
            lines and kernels, then the converging timing, then the rest).

    Raises:
        ProfileError: with the kind and the user's line.
    """
    report = progress or (lambda stage, message: None)
    _check_stages(request.stages)
    from kernel_lens.agent import profiler_start

    profiler_start.install()
    # One job per agent process: the run's environment (a launch configuration's) stays.
    os.environ.update({str(k): str(v) for k, v in (request.env or {}).items()})
    trace_dir = request.trace_dir
    if trace_dir is None:
        trace_dir = CacheDirs.from_env().traces
    if request.script:
        return _run_script(request, report, trace_dir)
    with contextlib.ExitStack() as context:
        return _run_function(request, report, trace_dir, compiled_dir, context, _Stream(partial))


def _run_function(
    request: ProfileRequest,
    report: ProgressFn,
    trace_dir: str,
    compiled_dir: str | None,
    context: contextlib.ExitStack,
    stream: _Stream,
) -> dict[str, Any]:
    """A function's stages, every one of them under the target's calling context (entered on
    ``context`` once the target is loaded, before its first call)."""
    from kernel_lens.agent.inductor_capture import CompileCapture, capture_compiled

    # What Inductor says of the graphs compiled from here on (the first call compiles).
    capture = context.enter_context(capture_compiled(CompileCapture()))
    target, style, interpreted, device, device_name = _first_call(request, report, context)
    auto_memory = request.memory_auto and not request.memory and device == "cuda"
    if auto_memory:
        # On by default where it costs under 10% (CUDA; docs/benchmarks.md): this run records it.
        request = dataclasses.replace(request, memory=True)
    result = profile_result(
        function=target.info.qualname,
        path=target.path,
        def_line=target.info.def_line,
        first_line=target.info.first_line,
        last_line=target.info.last_line,
        device=device_name,
        device_kind=device,
        inputs=target.inputs if target.inputs else {"source": "none"},
        stages=list(request.stages),
        call_style=style,
        triton_interpreter=interpreted,
    )
    timed = "timing" in request.stages
    if "ops" in request.stages or "trace" in request.stages:
        # The profiled pass first: its lines and kernels are the first useful lens.
        passed, summarize = _profiled_pass(request, target, device, trace_dir, report, capture)
        events = passed.pop("_trace_events", None) or []
        result.update(passed)
        if auto_memory and isinstance(result.get("memory"), dict):
            result["memory"]["auto"] = True  # recorded by default, not asked for
        stream.send(dict(result), list(result), "trace" if summarize else "timing")
        # The rest of what the trace says, and the trace itself let go of, before the timing:
        # the timing runs after the profiler has stopped (its state gone; caches warm, as
        # after any warm-up), never under it.
        if summarize is not None:
            report("trace", "summarising the trace")
            result["trace"] = summarize()
        if device == "cuda" and result.get("kernels") and not _in_rank():
            roofline = _roofline(result, target, events)
            if roofline:
                result["roofline"] = roofline
        del events, summarize
        rest: dict[str, Any] = {k: result[k] for k in ("trace", "roofline") if k in result}
        if rest:
            stream.send(rest, list(rest), "timing")
    if timed:
        result["timing"] = _timing_stage(request, target, device, report, stream)
    if isinstance(result.get("timing"), dict):
        _graph_timing(result, target, device, report)
        timing = result["timing"]
        stopped = (timing.get("policy") or {}).get("stopped") or ""
        # "timed": nothing is timed from here on (a client may start its next agent now).
        report("timed", f"timed: {timing.get('reps')} reps, {stopped or 'done'}")
    later = [s for s in ("compiled", "compare_compiled", "sweep") if s in request.stages]
    if later and "timing" in result:
        stream.send({"timing": _without_samples(result["timing"])}, ["timing"], later[0])
    if "compiled" in request.stages:
        cache = compiled_dir or os.path.join(os.path.dirname(trace_dir), "compiled")
        result["compiled"] = _compiled_stage(request, target, device, cache, report, capture)
    if "compare_compiled" in request.stages:
        result["compare_compiled"] = _compare_stage(
            request, target, device, trace_dir, report, capture, result
        )
    if "sweep" in request.stages:
        result["sweep"] = _sweep_stage(request, target, device, interpreted, report)
    report("done", "done")
    return result


def _in_rank() -> bool:
    """Whether this is one rank of a distributed profile (:mod:`kernel_lens.agent.rank`)."""
    from kernel_lens.agent.tracefile import RANK_ENV

    return bool(os.environ.get(RANK_ENV))


def _first_call(
    request: ProfileRequest, report: ProgressFn, context: contextlib.ExitStack
) -> tuple[Target, str, bool, str, str]:
    """Load the target and call it once (the warm-up every stage needs): the target, its call
    style, whether its Triton kernels run under the interpreter, and the device (kind, name).

    The target's calling context (autocast, grad mode, backends flags, …) is entered on
    ``context`` before that call; with ``request.backward`` each call is followed by the
    backward of its output."""
    from kernel_lens.agent.stages.target import load_target

    report("target", "loading the file")
    interpreter = use_triton_interpreter()
    try:
        target = load_target(
            request.path,
            request.text,
            name=request.function,
            line=request.line,
            driver=request.driver,
            argv=list(request.argv),
            cwd=request.cwd,
        )
    except ProfileError as err:
        raise as_needs_gpu(err) from None
    context.enter_context(as_main(target.module))
    style = call_style(target.code)
    # A coroutine is awaited and a generator consumed on every call (warm-up, timing,
    # profiling, sweep): a time is never one of a body that did not run.
    target.fn = with_call_style(target.fn)
    if target.context is not None:
        context.enter_context(target.context.applied())
    if request.backward:
        from kernel_lens.agent.backward import with_backward

        target.fn = with_backward(target.fn, qualname=target.info.qualname)

    import torch

    report("target", f"first call of {target.info.qualname}")
    watch_only = False
    try:
        if request.memory or (request.memory_auto and torch.cuda.is_available()):
            watch_only = _first_call_watched(target)
        else:
            call_user(target.call, target.path, target.info.qualname)
    except ProfileError as err:
        through = "InterpreterError" in err.message or (
            "triton/runtime/interpreter" in (err.traceback or "").replace("\\", "/")
        )
        if interpreter and err.kind == "runtime" and through:
            # An error of a kernel run by Triton's interpreter says so (it may be the
            # interpreter's, and the same kernel on a GPU is compiled, not interpreted).
            first, _, rest = err.message.partition("\n")
            err.message = f"{first} {INTERPRETER_ERROR_NOTE}" + (f"\n{rest}" if rest else "")
        raise
    device, device_name = device_of_run()
    if watch_only:
        # CUDA was started by the out-of-memory watch alone: the function itself is CPU work.
        device, device_name = "cpu", "CPU"
    interpreted = interpreter and device == "cpu" and _uses_interpreted_kernels(target.module)
    if interpreted:
        device_name = INTERPRETER_DEVICE
        # Each interpreted launch is one op on its line (``triton::k (interpreted)``), the
        # interpreter's own tensor plumbing (``aten::set_``, ``aten::copy_``) folded into it.
        context.enter_context(_interpreted_launch_ranges())
    if device == "cuda":
        torch.cuda.synchronize()
    return target, style, interpreted, device, device_name


def _first_call_watched(target: Target) -> bool:
    """The first call under the out-of-memory watch (*Profile memory*, CUDA): an
    out-of-memory error carries what was alive at the failure, by line, and the allocation
    that failed, from the allocator's snapshot taken then.

    Returns whether CUDA was started by the watch alone (a CPU function on a GPU machine: the
    recording starts CUDA, the function allocated nothing there)."""
    import torch

    from kernel_lens.agent.memory import OomWatch

    def allocations() -> int:
        # The allocator's count of device allocations so far (CUDA may be initialised already:
        # the agent warms it up; what tells is whether the call itself allocated there).
        if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
            return 0
        return int(torch.cuda.memory_stats().get("allocation.all.allocated", 0))

    before = allocations()
    watch = OomWatch()
    try:
        with watch:
            call_user(target.call, target.path, target.info.qualname)
        return torch.cuda.is_available() and allocations() == before
    except ProfileError as err:
        if watch.snapshot is not None:
            from kernel_lens.analysis.memory import oom_from_snapshot

            observed = watch.observed or {}
            err.memory = dict(
                oom_from_snapshot(
                    watch.snapshot,
                    path=target.path,
                    first_line=target.info.first_line,
                    last_line=target.info.last_line,
                    workspace=os.path.dirname(os.path.abspath(target.path)),
                    source_of=target.source_line,
                    device=observed.get("device"),
                    failed_bytes=observed.get("alloc"),
                )
            )
        raise


@contextlib.contextmanager
def _interpreted_launch_ranges() -> Iterator[None]:
    """Wrap each launch of an interpreted ``@triton.jit`` kernel in a ``record_function`` range
    named by :func:`interpreted_range_name` (cheap outside the profiler: the launch takes ms)."""
    import torch

    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover - a triton without the interpreter
        yield
        return
    original = InterpretedFunction.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = interpreted_range_name(str(getattr(self.fn, "__name__", "kernel")))
        with torch.profiler.record_function(name):
            return original(self, *args, **kwargs)

    InterpretedFunction.run = run  # type: ignore[method-assign]
    try:
        yield
    finally:
        InterpretedFunction.run = original  # type: ignore[method-assign]


def _without_samples(timing: Any) -> Any:
    """A timing object without its raw samples (a partial need not carry thousands)."""
    if isinstance(timing, dict) and "samples_ms" in timing:
        return {k: v for k, v in timing.items() if k != "samples_ms"}
    return timing


def _timing_config(request: ProfileRequest) -> TimingConfig:
    from kernel_lens.agent.stages.timing import TimingConfig

    return TimingConfig(warmup_ms=request.warmup_ms, budget_ms=request.budget_ms, reps=request.reps)


def _timing_stage(
    request: ProfileRequest,
    target: Target,
    device: str,
    report: ProgressFn,
    stream: _Stream | None = None,
) -> ProfileTiming:
    """The *timing* stage: the result's ``timing`` (with the raw samples when asked), streamed
    as it converges when ``stream`` sends partials."""
    from kernel_lens.agent.stages.timing import time_function

    report("timing", "timing (warm-up, then repetitions until the median is known)")
    config = _timing_config(request)
    method = "cuda-events" if device == "cuda" else "perf-counter"
    on_batch = stream.timing(method) if stream is not None else None
    timing: TimingResult = call_user(
        lambda: time_function(target.call, device=device, config=config, on_batch=on_batch),
        target.path,
        target.info.qualname,
    )
    return timing.to_json(with_samples=request.keep_samples)


def _roofline(
    result: dict[str, Any], target: Target, events: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each kernel against the device's limit (:mod:`kernel_lens.analysis.roofline`): bytes and
    FLOPs from Inductor's launch metadata in the trace, else — for a function that launches one
    kernel once — the tensors it reads and the result it writes (one more call, untimed)."""
    from kernel_lens.agent.stages.sweep import tensor_bytes
    from kernel_lens.analysis.roofline import kernel_rooflines, work_from_trace

    inductor = work_from_trace(events)
    kernels = [k for k in result["kernels"] if k.get("kind", "kernel") == "kernel"]
    function_bytes: float | None = None
    if len(kernels) == 1 and float(kernels[0].get("calls") or 0) == 1.0 and not inductor:
        try:
            out = target.call()
            function_bytes = float(
                tensor_bytes(target.args) + tensor_bytes(target.kwargs) + tensor_bytes(out)
            )
        except Exception:  # the roofline is a bonus: a failing extra call leaves it out
            function_bytes = None
    return kernel_rooflines(
        result["kernels"],
        str(result.get("device") or ""),
        inductor=inductor,
        function_bytes=function_bytes,
    )


def _graph_timing(result: dict[str, Any], target: Target, device: str, report: ProgressFn) -> None:
    """A launch-bound CUDA function is also timed in a CUDA graph (after the ops stage, whose
    kernel times tell an idle device): ``timing.graph`` holds the time per call or why it could
    not be captured; on the CPU ``timing.graph`` says it does not apply."""
    from kernel_lens.analysis.timing_policy import (
        graph_calls,
        kernels_us_per_call,
        launch_bound,
    )

    timing = result["timing"]
    if device != "cuda":
        timing["graph"] = {"reason": "not applicable on CPU"}
        return
    if _in_rank():
        # A graph is timed only where the function is launch-bound, a decision each rank makes
        # alone: under torchrun every rank must call the function the same number of times.
        timing["graph"] = {"reason": "not timed in a CUDA graph under torchrun"}
        return
    kernels_us = kernels_us_per_call(result)
    why = launch_bound(float(timing.get("median_ms") or 0.0), kernels_us)
    if why is None:
        return
    from kernel_lens.agent.stages.timing import time_in_graph

    launches = sum(float(k.get("calls") or 0) for k in result.get("kernels") or [])
    report("timing", f"launch-bound ({why}): timing in a CUDA graph")
    # L2 warm, as do_bench_cudagraph: no flush inside the timed window (a flush in the graph,
    # even subtracted, leaves its tail and the dependency on it in every call: +38% on a 1 µs
    # kernel, issue 34); a launch-bound kernel's few bytes stay in L2 between calls anyway.
    graph = time_in_graph(target.call, calls=graph_calls(launches), flush_l2=False)
    timing["graph"] = graph.to_json(why=why, kernels_us=kernels_us)


def _profiled_pass(
    request: ProfileRequest,
    target: Target,
    device: str,
    trace_dir: str,
    report: ProgressFn,
    capture: CompileCapture | None = None,
) -> tuple[dict[str, Any], Callable[[], dict[str, Any]] | None]:
    """One profiled pass shared by *ops* and *trace*: the trace's path and the lines with their
    ops and kernels (*ops*); and (*trace*) a function that summarises the trace, called later
    (once the lines are sent: the summary is not what the first lens needs)."""
    from kernel_lens.agent.packages import PackageFiles, resolve_packages
    from kernel_lens.agent.stages.ops import profile_pass

    named = resolve_packages(request.packages)
    report("ops", "profiling each line")
    stem = os.path.splitext(os.path.basename(target.path))[0]
    label = f"{stem}-{target.info.qualname}".replace(".", "_")
    passed: ProfiledPass = call_user(
        lambda: profile_pass(
            target.call,
            target.code,
            device=device,
            runs=request.profile_runs,
            trace_dir=trace_dir,
            label=label,
            memory=request.memory,
            packages=PackageFiles(named) if named else None,
        ),
        target.path,
        target.info.qualname,
    )
    out: dict[str, Any] = {"trace_path": passed.trace_path, "profiled_runs": passed.runs}
    if device == "cuda":  # Inductor's launch metadata (bytes, FLOPs) for the roofline; popped
        out["_trace_events"] = passed.trace.get("traceEvents") or []
        # No kernels on CUDA while another CUPTI client holds the process: an error naming it,
        # never lines without kernels (issue 36).
        from kernel_lens.agent.cupti_guard import check_recorded

        check_recorded(
            f"the profile of {target.info.qualname}",
            cuda_ran=True,
            kernels=sum(
                1 for e in out["_trace_events"] if isinstance(e, dict) and e.get("cat") == "kernel"
            ),
            own="torch.profiler",
        )
    if passed.trace_error is not None:
        out["trace_error"] = passed.trace_error
    if "ops" in request.stages:
        _add_lines(out, passed, target, capture, named)
    if "trace" not in request.stages:
        return out, None
    trace = passed.trace

    def summary() -> dict[str, Any]:
        # pandas, imported here: after the per-line ops are sent (an agent that took its job
        # on `ready` has not imported it yet; issue 36)
        from kernel_lens.analysis.trace_summary import summarize_trace

        return summarize_trace(trace).to_json()

    return out, summary


def _add_lines(
    out: dict[str, Any],
    passed: ProfiledPass,
    target: Target,
    capture: CompileCapture | None,
    named: dict[str, str],
) -> None:
    """*ops*: the profiled pass's ops and kernels on the function's lines (and those of the
    other workspace files it ran), into ``out``, with what Inductor compiled and the packages'
    parts."""
    from kernel_lens.agent.inductor_capture import add_compile_report, line_keys, placed_graphs
    from kernel_lens.agent.package_lines import add_package_parts
    from kernel_lens.agent.stages.deep import default_workspace

    files = [os.path.abspath(target.path), *(passed.files or [])[1:]]
    line_key = line_keys(files, [default_workspace(target.path)])
    graphs = placed_graphs(capture, line_key) if capture is not None else {}
    out.update(
        line_results(
            passed.trace,
            runs=passed.runs,
            source_of=target.source_line,
            within=(target.info.first_line, target.info.last_line),
            compiled=graphs,
            files=files if len(files) > 1 else None,
            sources=_source_in if len(files) > 1 else None,
        )
    )
    if capture is not None:
        # (the function's first call compiled: before the profiled pass, said here)
        add_compile_report(out, capture, line_key, files)
    # (each line's time inside installed packages always; the file split when named)
    add_package_parts(
        out,
        trace_events=passed.trace.get("traceEvents") or [],
        files=files,
        packages=named,
        main_path=files[0],
        runs=passed.runs,
    )


def _compiled_stage(
    request: ProfileRequest,
    target: Target,
    device: str,
    cache: str,
    report: ProgressFn,
    capture: CompileCapture | None = None,
) -> CompiledResult:
    """The *compiled* stage: inductor's code for the function, eager against compiled."""
    from kernel_lens.agent.stages.compiled import compile_and_compare

    report("compiled", "torch.compile: capturing generated code, eager vs compiled")
    compiled: CompiledResult = call_user(
        lambda: compile_and_compare(
            target,
            device=device,
            timing_config=_timing_config(request),
            cache_dir=cache,
            capture=capture,
        ),
        target.path,
        target.info.qualname,
    )
    return compiled


def _compare_stage(
    request: ProfileRequest,
    target: Target,
    device: str,
    trace_dir: str,
    report: ProgressFn,
    capture: CompileCapture | None,
    result: dict[str, Any],
) -> dict[str, Any]:
    """The *compare_compiled* stage: the function eager (this profile's lines and timing)
    against compiled, per line (:mod:`kernel_lens.agent.stages.compare_compiled`)."""
    from kernel_lens.agent.stages.compare_compiled import compare_compiled

    report("compare_compiled", "eager vs compiled: torch.compile, then profiling and timing")
    compared: dict[str, Any] = call_user(
        lambda: compare_compiled(
            target,
            device=device,
            timing_config=_timing_config(request),
            trace_dir=trace_dir,
            runs=request.profile_runs,
            eager_lines=result.get("lines"),
            capture=capture,
            progress=lambda text: report("compare_compiled", text),
        ),
        target.path,
        target.info.qualname,
    )
    return compared


def _sweep_stage(
    request: ProfileRequest, target: Target, device: str, interpreted: bool, report: ProgressFn
) -> SweepStageResult:
    """The *sweep* stage: the function timed over the values of one int parameter."""
    from kernel_lens.agent.stages.sweep import run_sweep

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
            timing_config=_timing_config(request),
        ),
        target.path,
        target.info.qualname,
    )
    if interpreted:
        swept["note"] = INTERPRETER_SWEEP_NOTE
    return swept


def _run_script(request: ProfileRequest, report: ProgressFn, trace_dir: str) -> dict[str, Any]:
    """The whole file, run once as ``__main__`` (see :mod:`kernel_lens.agent.stages.script`)."""
    from kernel_lens.agent.inductor_capture import CompileCapture, capture_compiled
    from kernel_lens.agent.packages import resolve_packages
    from kernel_lens.agent.usercode import parse_source, read_source
    from kernel_lens.analysis.scripts import SCRIPT_NAME

    path = os.path.abspath(request.path)
    text = request.text if request.text is not None else read_source(path)
    parse_source(text, path)
    interpreter = use_triton_interpreter()
    import torch

    cuda = torch.cuda.is_available()
    report("script", f"running {os.path.basename(path)} once as __main__, each line profiled")
    cut_after_s = _cut_before_the_limit()
    packages = resolve_packages(request.packages)
    capture = CompileCapture()
    try:
        with capture_compiled(capture):
            run = _profile_whole_script(
                request, path, text, report, trace_dir, cuda, cut_after_s, packages
            )
    except ProfileError as err:
        raise as_needs_gpu(err) from None
    device, device_name = device_of_run()
    source_lines = text.splitlines()
    interpreted = False
    if interpreter and device == "cpu":
        main = sys.modules.get(f"_kernel_lens_target_{os.path.splitext(os.path.basename(path))[0]}")
        interpreted = main is not None and _uses_interpreted_kernels(main)
        if interpreted:
            device_name = INTERPRETER_DEVICE
    report("ops", "attributing ops and kernels to lines")
    lines_part = _script_lines(request, path, source_lines, run, packages, capture)
    result = profile_result(
        function=SCRIPT_NAME,
        path=path,
        def_line=1,
        first_line=1,
        last_line=max(1, len(source_lines)),
        device=device_name,
        device_kind=device,
        inputs={"source": "script", "label": "the script's own run", "args": []},
        stages=["script", "ops", "trace"],
        call_style="script",
        triton_interpreter=interpreted,
        script=_script_info(request, run),
        notes=lines_part.pop("notes"),
        trace_path=run.trace_path,
        **({"trace_error": run.trace_error} if run.trace_error else {}),
        profiled_runs=1,
        # A script's lines that ran no op (imports, defs) are left out; the other workspace
        # files' lines are under ``files``.
        **lines_part,
    )
    if "trace" in request.stages:
        from kernel_lens.analysis.trace_summary import summarize_trace

        report("trace", "summarising the trace")
        result["trace"] = summarize_trace(run.trace).to_json()
    report("done", "done")
    return result


def _cut_before_the_limit() -> float | None:
    """Seconds after which a whole run is cut: shortly before the job's time limit (``None``:
    no limit)."""
    # A run that would reach the job's time limit is cut shortly before it: what was profiled
    # is kept (exported, attributed, labelled partial) rather than lost with a killed agent.
    left = remaining_s()
    if left is None:
        return None
    seconds, limit = left
    return max(seconds - max(3.0, 0.15 * limit), 0.5)


def _profile_whole_script(
    request: ProfileRequest,
    path: str,
    text: str,
    report: ProgressFn,
    trace_dir: str,
    cuda: bool,
    cut_after_s: float | None,
    packages: dict[str, str],
) -> ScriptRun:
    """The script run once under the profiler, as the request asks."""
    from kernel_lens.agent.stages.script import profile_script

    return profile_script(
        path,
        text,
        trace_dir=trace_dir,
        cuda_available=cuda,
        argv=list(request.argv),
        workspace=list(request.workspace),
        skip=request.skip,
        steps=request.steps,
        after_s=request.after_s,
        cwd=request.cwd,
        memory=request.memory,
        cut_after_s=cut_after_s,
        progress=lambda text: report("script", text),
        only_lines=tuple(request.only_lines) if request.only_lines else None,  # type: ignore[arg-type]
        packages=packages,
    )


def _script_lines(
    request: ProfileRequest,
    path: str,
    source_lines: list[str],
    run: ScriptRun,
    packages: dict[str, str],
    capture: CompileCapture,
) -> dict[str, Any]:
    """The run's ops and kernels on the lines of the workspace's files (and the packages'),
    with its notes and what Inductor compiled."""
    from kernel_lens.agent.inductor_capture import add_compile_report, line_keys, placed_graphs
    from kernel_lens.agent.package_lines import add_package_parts
    from kernel_lens.agent.stages.deep import default_workspace

    def source_of(no: int) -> str:
        return source_lines[no - 1].strip() if 1 <= no <= len(source_lines) else ""

    files = list(run.files)
    line_key = line_keys(files, list(request.workspace) or [default_workspace(path)])
    graphs = placed_graphs(capture, line_key)
    lines_part = line_results(
        run.trace,
        runs=1,
        source_of=source_of,
        only_with_ops=True,
        in_line_order=True,
        files=files,
        sources=_source_in,
        compiled=graphs,
    )
    notes = list(run.notes)
    lines_part["notes"] = notes
    add_package_parts(
        lines_part,
        trace_events=run.trace.get("traceEvents") or [],
        files=files,
        packages=packages,
        main_path=os.path.abspath(path),
    )
    add_compile_report(lines_part, capture, line_key, files)
    return lines_part


def _script_info(request: ProfileRequest, run: ScriptRun) -> dict[str, Any]:
    """The result's ``script`` object: the run's wall time and label, its arguments, its
    window and, for a run cut short, why and when."""
    from kernel_lens.analysis.scripts import WALL_LABEL, WINDOW_LABEL

    script_info: dict[str, Any] = {"wall_s": round(run.wall_s, 6), "runs": 1, "label": WALL_LABEL}
    if request.argv:
        script_info["argv"] = list(request.argv)
    if run.window is not None:
        script_info["window"] = run.window
        script_info["label"] = WINDOW_LABEL
        if run.window.get("cut_at_limit") or run.window.get("cancelled"):
            # Seconds into the run (``wall_s`` is the profiled window's, which may start late).
            into_run = float(run.window.get("started_s") or 0.0) + run.wall_s
            script_info["partial"] = {
                "reason": "cancelled" if run.window.get("cancelled") else "time limit",
                "after_s": round(into_run, 3),
                "setting": "kernelLens.timeoutSeconds",
            }
    return script_info
