"""The engine: one entry point per agent method, shared by the agent's loop and (through the
agent) the CLI; it chooses the cache folders (:class:`~kernel_lens.wire.paths.CacheDirs`).

Each method takes its typed request (:mod:`kernel_lens.wire.jobs`) and a progress callback and
returns the JSON object of its result. :data:`METHODS` / :func:`dispatch` map the protocol's
method names onto them; the agent's protocol loop calls :func:`dispatch` for each job. Runs in the
user's interpreter (it runs user code): the language server never imports it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import (
    AsmRequest,
    InlineRequest,
    JobRequest,
    KernelLinesRequest,
    LightRequest,
    NcuRequest,
    ProfileRequest,
    SanitizerRequest,
    SweepRequest,
    ValuesRequest,
)
from kernel_lens.wire.paths import CacheDirs
from kernel_lens.wire.results import InlineResult, LightResult, NcuResult

__all__ = ["METHODS", "STREAMING", "Engine", "Partial", "Progress", "dispatch"]

#: ``progress(stage, message)``: one line of progress for the user.
Progress = Callable[[str, str], None]
#: ``partial(changed keys, final keys, stage)``: part of a profile's result, known before its
#: end (the agent sends it as a ``partial`` message, :mod:`kernel_lens.wire.envelope`).
Partial = Callable[[dict[str, Any], list[str], str], None]


def _no_progress(stage: str, message: str) -> None:
    del stage, message


class Engine:
    """The methods of the agent, each on its typed request.

    Args:
        cache: the cache folders (default: :meth:`CacheDirs.from_env`, read per job so a change
            of ``KERNEL_LENS_CACHE`` in tests is seen).
    """

    def __init__(self, cache: CacheDirs | None = None) -> None:
        self._cache = cache

    @property
    def cache(self) -> CacheDirs:
        """The cache folders in use."""
        return self._cache or CacheDirs.from_env()

    def profile(
        self,
        request: ProfileRequest,
        progress: Progress = _no_progress,
        partial: Partial | None = None,
    ) -> dict[str, Any]:
        """Timing, ops per line, trace (and *compiled* / *sweep* when asked): the profile JSON;
        ``partial`` gets its parts as they are known.

        A relative ``trace_dir`` is taken from the current folder *now*, before user code can
        ``os.chdir``; the *compiled* stage's code goes beside the trace folder.
        """
        from kernel_lens.agent.runner import run_profile

        trace_dir = os.path.abspath(request.trace_dir or self.cache.traces)
        request = dataclasses.replace(request, trace_dir=trace_dir)
        if request.nproc_per_node > 0:
            # On N ranks under torchrun, each rank a profile of its own, merged here.
            from kernel_lens.agent.distributed import run_distributed

            return run_distributed(request, progress, trace_dir)
        compiled_dir = os.path.join(os.path.dirname(trace_dir), "compiled")
        return run_profile(request, progress, compiled_dir=compiled_dir, partial=partial)

    def sweep(self, request: SweepRequest, progress: Progress = _no_progress) -> dict[str, Any]:
        """The profile JSON with a ``sweep`` key (the rows, the best value, the method)."""
        profile = ProfileRequest(
            path=request.path,
            text=request.text,
            function=request.function,
            stages=("sweep",),
            warmup_ms=request.warmup_ms,
            budget_ms=request.budget_ms,
            reps=request.reps,
            extra={"sweep_param": request.param, "sweep_values": list(request.values)},
            # A driver's call gives the inputs and self, as in a profile of the function.
            driver=request.driver,
            argv=list(request.argv),
            cwd=request.cwd,
            env=dict(request.env),
        )
        return self.profile(profile, progress)

    def asm(self, request: AsmRequest, progress: Progress = _no_progress) -> dict[str, Any]:
        """One kernel's compiled assembly; every kernel's (``{"kernels": […]}``) without a name."""
        from kernel_lens.agent.runner import use_triton_interpreter
        from kernel_lens.agent.stages.triton_ir import compile_file_kernels

        progress("asm", f"compiling {request.kernel or 'every @triton.jit kernel'}")
        # Without a GPU the launchers run their kernels in Triton's interpreter, so that a
        # kernel launched after another one (a backward's second kernel) is reached too.
        # triton.language first, as the warmed agent has it: its own @jit functions (tl.sum,
        # tl.cdiv, …) stay compilable; only the user's kernels become interpreted.
        import triton.language  # noqa: F401

        use_triton_interpreter()
        os.environ.update(request.env)
        compiled = compile_file_kernels(
            request.path,
            request.text,
            kernel=request.kernel,
            arch=request.arch,
            overrides=request.overrides,
            driver=request.driver,
            argv=list(request.argv),
            cwd=request.cwd,
            config=request.config,
        )
        if request.kernel is not None:
            return compiled[0].to_json(request.stage)
        from kernel_lens.agent.stages.triton_ir import FAILED

        return {
            "kernels": [c.to_json(request.stage) for c in compiled],
            # Every kernel of the file is listed: those that did not compile say why.
            "failed": [{"kernel": name, "error": err.to_json()} for name, err in FAILED],
        }

    def inline(self, request: InlineRequest, progress: Progress = _no_progress) -> InlineResult:
        """Every ``load_inline`` call of the file: sources, PTX and line map, nvcc errors."""
        from kernel_lens.agent.stages.inline_ext import analyze_inline

        progress("inline", "nvcc: compiling the CUDA source to PTX")
        return analyze_inline(
            request.path, request.text, arch=request.arch, build=request.build, sass=request.sass
        )

    def values(self, request: ValuesRequest, progress: Progress = _no_progress) -> dict[str, Any]:
        """One kernel's launch under Triton's interpreter: each line's values for the chosen
        program, the out-of-bounds loads and stores of every program."""
        from kernel_lens.agent.stages.interp_values import run_values
        from kernel_lens.agent.usercode import read_source

        progress("values", f"running {request.kernel} under Triton's interpreter")
        text = request.text if request.text is not None else read_source(request.path)
        saved = {k: os.environ.get(k) for k in request.env}
        os.environ.update(request.env)
        try:
            return run_values(
                os.path.abspath(request.path),
                text,
                request.kernel,
                program=request.program,
                iteration=request.iteration,
                driver=request.driver,
                argv=list(request.argv),
                cwd=request.cwd,
            )
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def sanitize(
        self, request: SanitizerRequest, progress: Progress = _no_progress
    ) -> dict[str, Any]:
        """Check Memory: the function's call under compute-sanitizer, reports on their lines."""
        from kernel_lens.agent.stages.sanitizer import run_sanitizer
        from kernel_lens.agent.usercode import read_source

        progress("sanitize", f"compute-sanitizer --tool {request.tool}")
        text = request.text if request.text is not None else read_source(request.path)
        return run_sanitizer(
            os.path.abspath(request.path),
            text,
            request.function,
            tool=request.tool,
            timeout=request.timeout,
            driver=request.driver,
            argv=list(request.argv),
            cwd=request.cwd,
            env=dict(request.env),
        )

    def kernel_lines(
        self, request: KernelLinesRequest, progress: Progress = _no_progress
    ) -> dict[str, Any]:
        """Inside a kernel: Nsight Compute's source counters on the kernel's own lines."""
        from kernel_lens.agent.stages.kernel_lines import run_kernel_lines
        from kernel_lens.agent.usercode import read_source

        progress("kernel_lines", "Nsight Compute source counters")
        text = request.text if request.text is not None else read_source(request.path)
        return run_kernel_lines(request, text, report_dir=self.cache.ncu, progress=progress)

    def light(self, request: LightRequest, progress: Progress = _no_progress) -> LightResult:
        """*Profile Script (Light)*: the script run once under Triton's Proton, in a process of
        its own; every workspace line's kernel time for the whole run."""
        from kernel_lens.agent.stages.light_run import run_light

        progress("light", "running the script under Triton's Proton (the light profile)")
        return run_light(request, request.text)

    def ncu(self, request: NcuRequest, progress: Progress = _no_progress) -> NcuResult:
        """Nsight Compute on the function's kernels: metrics, hints, source lines, report file."""
        from kernel_lens.agent.stages.ncu import run_ncu
        from kernel_lens.agent.usercode import read_source

        progress("ncu", f"Nsight Compute ({request.set} set)")
        text = request.text if request.text is not None else read_source(request.path)
        return run_ncu(
            os.path.abspath(request.path),
            text,
            request.function,
            section_set=request.set,
            report_dir=self.cache.ncu,
            timeout=request.timeout,
            driver=request.driver,
            argv=list(request.argv),
            cwd=request.cwd,
            env=dict(request.env),
        )


_ENGINE = Engine()
_R = TypeVar("_R", bound=JobRequest)


def _parse(cls: type[_R], params: dict[str, Any]) -> _R:
    try:
        return cls.from_json(params)
    except (TypeError, ValueError) as exc:
        raise ProfileError("internal", f"bad params for {cls.method!r}: {exc}") from None


def _profile(
    params: dict[str, Any], progress: Progress, partial: Partial | None = None
) -> dict[str, Any]:
    return _ENGINE.profile(_parse(ProfileRequest, params), progress, partial)


def _sweep(params: dict[str, Any], progress: Progress) -> dict[str, Any]:
    return _ENGINE.sweep(_parse(SweepRequest, params), progress)


def _asm(params: dict[str, Any], progress: Progress) -> dict[str, Any]:
    return _ENGINE.asm(_parse(AsmRequest, params), progress)


def _inline(params: dict[str, Any], progress: Progress) -> InlineResult:
    return _ENGINE.inline(_parse(InlineRequest, params), progress)


def _ncu(params: dict[str, Any], progress: Progress) -> NcuResult:
    return _ENGINE.ncu(_parse(NcuRequest, params), progress)


def _values(params: dict[str, Any], progress: Progress) -> dict[str, Any]:
    return _ENGINE.values(_parse(ValuesRequest, params), progress)


def _sanitize(params: dict[str, Any], progress: Progress) -> dict[str, Any]:
    return _ENGINE.sanitize(_parse(SanitizerRequest, params), progress)


def _kernel_lines(params: dict[str, Any], progress: Progress) -> dict[str, Any]:
    return _ENGINE.kernel_lines(_parse(KernelLinesRequest, params), progress)


def _light(params: dict[str, Any], progress: Progress) -> LightResult:
    return _ENGINE.light(_parse(LightRequest, params), progress)


#: The agent's job methods: each takes the request's ``params`` and a progress callback.
METHODS: dict[str, Callable[[dict[str, Any], Progress], Mapping[str, Any]]] = {
    ProfileRequest.method: _profile,
    SweepRequest.method: _sweep,
    AsmRequest.method: _asm,
    InlineRequest.method: _inline,
    NcuRequest.method: _ncu,
    ValuesRequest.method: _values,
    SanitizerRequest.method: _sanitize,
    KernelLinesRequest.method: _kernel_lines,
    LightRequest.method: _light,
}


#: The methods that stream parts of their result (``partial``) before it ends.
STREAMING: dict[str, Callable[[dict[str, Any], Progress, Partial | None], Mapping[str, Any]]] = {
    ProfileRequest.method: _profile,
}


def dispatch(
    method: str,
    params: dict[str, Any],
    progress: Progress = _no_progress,
    partial: Partial | None = None,
) -> Mapping[str, Any]:
    """Run one job of ``method`` on its JSON ``params``; return the result's JSON (a
    streaming method sends parts of it to ``partial`` first).

    Raises:
        ProfileError: the job's failure (``internal`` for an unknown method or bad params).
    """
    handler = METHODS.get(method)
    if handler is None:
        raise ProfileError("internal", f"unknown method {method!r}; known: {', '.join(METHODS)}")
    streaming = STREAMING.get(method)
    if streaming is not None:
        return streaming(params, progress, partial)
    return handler(params, progress)
