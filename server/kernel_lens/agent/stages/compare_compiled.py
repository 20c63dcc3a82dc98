"""Stage *compare_compiled*: the function eager against ``torch.compile``'d, per line (issue 33).

The eager side is the profile's own (its ``lines``, from the *ops* stage, and its ``timing``);
this stage compiles the function and measures the compiled side the same ways:

1. the first compiled call compiles (its seconds said, never timed), with what Inductor records
   of each kernel's FX nodes captured (:mod:`kernel_lens.agent.inductor_capture`);
2. a profiled pass of the compiled function (:func:`kernel_lens.agent.stages.ops.profile_pass`)
   attributed with those graphs: each kernel on the lines of the nodes it fused, counted once —
   the placement the Generated Code view shares (:func:`~kernel_lens.analysis.compiled_lines.\
called_kernels`). The compiled function's own frame never runs as Python (Dynamo runs its
   graph instead), so its call is tagged as its ``def`` line: the compiled region's overhead
   stays there, the kernels go to their lines;
3. eager and compiled timed **interleaved** (A B, B A…: a clock or temperature that moves
   moves both alike), after the profiler has stopped, with the four-way verdict of
   :func:`kernel_lens.analysis.compare.compare_samples` on their samples.

The rows and texts are :mod:`kernel_lens.analysis.compiled_compare`'s.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kernel_lens.agent.errors import ProfileError, format_exception, user_line_from_traceback

if TYPE_CHECKING:
    from kernel_lens.agent.inductor_capture import CompileCapture
    from kernel_lens.agent.stages.ops import ProfiledPass
    from kernel_lens.agent.stages.timing import TimingResult
    from kernel_lens.wire.lsp import CompareVerdict

__all__ = ["compare_compiled"]


def compare_compiled(
    target: Any,
    *,
    device: str,
    timing_config: Any,
    trace_dir: str,
    runs: int = 3,
    eager_lines: list[dict[str, Any]] | None = None,
    capture: CompileCapture | None = None,
    progress: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """Compile ``target``'s function, profile and time it, and compare it with eager per line.

    Args:
        target: the loaded :class:`~kernel_lens.agent.stages.target.Target`.
        device: ``cuda`` or ``cpu``.
        timing_config: the timing stage's config (the same method for both sides).
        trace_dir: where the compiled pass's trace goes.
        runs: profiled calls of the compiled function.
        eager_lines: the eager profile's ``lines`` (``None``: no per-line eager side).
        capture: the run's capture of what Inductor compiles (one is made when ``None``).

    Returns:
        the result's ``compare_compiled`` object.
    """
    from kernel_lens.agent.stages.timing import time_interleaved
    from kernel_lens.analysis.compare import compare_samples

    compiled = _compile_and_profile(
        target, device=device, trace_dir=trace_dir, runs=runs, capture=capture, progress=progress
    )
    compiled_part, graphs = _compiled_lines(target, compiled.passed, compiled.graphs_raw)

    # Eager and compiled timed interleaved (A B, B A…) in their own pass, after the profiler:
    # a clock or temperature that moves while they are timed moves both alike (issue 34).
    progress("timing eager and compiled, interleaved")
    eager_run, compiled_timing = time_interleaved(
        target.call, compiled.call, device=device, config=timing_config
    )
    verdict = compare_samples(eager_run.samples_ms, compiled_timing.samples_ms, reference="eager")
    return _compare_result(
        target,
        compiled,
        cuda=device == "cuda",
        eager_run=eager_run,
        compiled_timing=compiled_timing,
        verdict=verdict.to_json(),
        eager_lines=eager_lines or [],
        compiled_lines=compiled_part["lines"],
        provenance=any(k.lines for g in graphs.values() for k in g.kernels.values()),
    )


@dataclass(frozen=True)
class _Compiled:
    """The function compiled and profiled: its call, its compile seconds, the profiled pass and
    the graphs Inductor compiled for it."""

    call: Callable[[], Any]
    compile_s: float
    passed: ProfiledPass
    graphs_raw: dict[str, Any]


def _failed(exc: BaseException, what: str, path: str) -> ProfileError:
    return ProfileError(
        "runtime",
        f"{what}: {type(exc).__name__}: {str(exc).splitlines()[0][:400] if str(exc) else ''}",
        user_line_from_traceback(exc.__traceback__, path),
        format_exception(exc),
    )


def _compile_and_profile(
    target: Any,
    *,
    device: str,
    trace_dir: str,
    runs: int,
    capture: CompileCapture | None,
    progress: Callable[[str], None],
) -> _Compiled:
    """Compile the function afresh (its first call: the compile, not timed) and profile it,
    its call tagged as its ``def`` line, with what Inductor compiled captured."""
    import torch

    from kernel_lens.agent.inductor_capture import CompileCapture, capture_compiled
    from kernel_lens.agent.stages.ops import profile_pass
    from kernel_lens.analysis.line_attribution import line_range_name

    info = target.info
    watching = (
        contextlib.nullcontext(capture)
        if capture is not None
        else capture_compiled(CompileCapture())
    )
    with watching as cap:
        before = set(cap.graphs)
        # Compiled afresh: Dynamo's cache is per code object, and a graph compiled before (the
        # compiled stage's, the function's own) would be reused without telling its kernels.
        torch._dynamo.reset()
        compiled_fn = torch.compile(target.fn)

        def call_compiled() -> Any:
            return compiled_fn(*target.args, **target.kwargs)

        progress("torch.compile: compiling (not timed)")
        started = time.perf_counter()
        try:
            call_compiled()
            if device == "cuda":
                torch.cuda.synchronize()
        except Exception as exc:
            raise _failed(exc, "torch.compile failed", target.path) from None
        compile_s = time.perf_counter() - started

        def tagged() -> Any:
            # Dynamo runs the graph instead of the function's frame: the call is its def line.
            with torch.profiler.record_function(line_range_name(info.def_line)):
                return call_compiled()

        progress("profiling the compiled function, each kernel on the lines it fused")
        stem = os.path.splitext(os.path.basename(target.path))[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            passed = profile_pass(
                tagged,
                target.code,
                device=device,
                runs=runs,
                trace_dir=trace_dir,
                label=f"{stem}-{info.qualname}-compiled".replace(".", "_"),
            )
        graphs_raw = {k: v for k, v in cap.graphs.items() if k not in before}
    return _Compiled(call_compiled, compile_s, passed, graphs_raw)


def _compiled_lines(
    target: Any, passed: ProfiledPass, graphs_raw: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The compiled pass attributed per line with its graphs: ``(line results, placed graphs)``."""
    from kernel_lens.agent.inductor_capture import CompileCapture, line_keys, placed_graphs
    from kernel_lens.agent.results import line_results
    from kernel_lens.agent.stages.deep import default_workspace

    info = target.info
    files = [os.path.abspath(target.path)]
    line_key = line_keys(files, [default_workspace(target.path)])
    probe = CompileCapture(graphs=graphs_raw)
    graphs = placed_graphs(probe, line_key)
    compiled_part = line_results(
        passed.trace,
        runs=passed.runs,
        source_of=target.source_line,
        within=(info.first_line, info.last_line),
        compiled=graphs,
    )
    return compiled_part, graphs


def _compare_result(
    target: Any,
    compiled: _Compiled,
    *,
    cuda: bool,
    eager_run: TimingResult,
    compiled_timing: TimingResult,
    verdict: CompareVerdict,
    eager_lines: list[dict[str, Any]],
    compiled_lines: list[dict[str, Any]],
    provenance: bool,
) -> dict[str, Any]:
    """The ``compare_compiled`` object: both sides' numbers, the verdict, the rows per line."""
    from kernel_lens.analysis.compiled_compare import compare_lines, compare_summary_text, speedup

    eager_ms = float(eager_run.median_ms)
    compiled_ms = float(compiled_timing.median_ms)
    rows = compare_lines(
        eager_lines,
        compiled_lines,
        cuda=cuda,
        eager_ms=eager_ms,
        compiled_ms=compiled_ms,
        call_line=target.info.def_line,
    )
    out: dict[str, Any] = {
        "eager": {
            "median_ms": eager_ms,
            "spread_pct": round(eager_run.spread_pct, 3),
            "reps": eager_run.reps,
            "kernels": sum(float(r["eager_kernels"]) for r in rows),
        },
        "compiled": {
            "median_ms": compiled_ms,
            "spread_pct": round(compiled_timing.spread_pct, 3),
            "reps": compiled_timing.reps,
            "kernels": sum(float(r["compiled_kernels"]) for r in rows),
            "compile_s": round(compiled.compile_s, 3),
            "graphs": len(compiled.graphs_raw),
        },
        "speedup": speedup(eager_ms, compiled_ms),
        "verdict": verdict,
        "interleaved": True,
        "method": "cuda-events" if cuda else "perf-counter",
        "lines": rows,
        "trace_path": compiled.passed.trace_path,
        "provenance": provenance,
    }
    out["summary"] = compare_summary_text(out) or ""
    return out
