"""Stage *script*: the whole file, run once as ``__main__`` under the per-line attribution.

``kernel-lens profile PATH [-- ARGS…]`` (no ``::FUNC``) and the editor's ``Profile Script`` lens
run the file as ``python FILE ARGS…`` would (``__name__ == "__main__"``, ``sys.argv == [FILE,
*ARGS]``, the file's folder as the current folder and first on ``sys.path``), once — a script may
have side effects, so it is never repeated for a median. The deep tracer
(:mod:`kernel_lens.agent.stages.deep`) tags every line of every workspace file the run executes,
so each op and kernel is on the innermost workspace line on the Python stack: lines inside
``main()``, its helpers and the workspace's other modules get their own results (``files``).
Its time is the wall time of that one run, under the profiler, and is labelled so.

A window of a long run (``skip``/``steps``/``after_s``): the first steps run unprofiled, the next
ones profiled, then the script is stopped where the last one ended (it never runs to its end).

A script that starts ``torch.profiler`` itself would take the profiler over (Kineto allows one
session per process: the outer one records nothing), so while the script runs,
``torch.profiler.profile`` is a pass-through: the script's ``with profile(...)`` block runs,
its ``step()`` ends a step of the window and ``export_chrome_trace()`` does nothing, and the
result says so on its line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kernel_lens.agent.errors import ProfileError, format_exception, user_line_from_traceback
from kernel_lens.agent.stages.deep import (
    DeepTracer,
    Window,
    WindowDone,
    default_workspace,
    mark_line_ranges,
)
from kernel_lens.agent.usercode import call_user, compile_text, main_module
from kernel_lens.analysis.scripts import SCRIPT_NAME, WALL_LABEL

if TYPE_CHECKING:
    import types

    from kernel_lens.agent.tracefile import SavedTrace

__all__ = ["SCRIPT_NAME", "WALL_LABEL", "ScriptRun", "profile_script"]


class _PassThroughProfiler:
    """What ``torch.profiler.profile`` is while a whole script runs under Kernel Lens's own
    profiler: the block runs, nothing is recorded twice, the script's own exports do nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._notes = _PROFILER_NOTES
        frame = sys._getframe(1)
        tracer = _TRACER[0]
        while frame is not None and (
            tracer is None or tracer.file_index(frame.f_code.co_filename) is None
        ):
            frame = frame.f_back  # type: ignore[assignment]
        where = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None
        if where not in [n[0] for n in self._notes]:
            self._notes.append((where, "torch.profiler.profile"))

    def __enter__(self) -> _PassThroughProfiler:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def step(self) -> None:
        tracer = _TRACER[0]
        if tracer is not None:
            tracer.step("profiler step()")

    def key_averages(self, *args: Any, **kwargs: Any) -> Any:
        from torch.autograd.profiler_util import EventList

        return EventList([])

    def events(self) -> Any:
        from torch.autograd.profiler_util import EventList

        return EventList([])

    def export_chrome_trace(self, path: str) -> None:
        return None

    def export_stacks(self, *args: Any, **kwargs: Any) -> None:
        return None

    def export_memory_timeline(self, *args: Any, **kwargs: Any) -> None:
        return None


_PROFILER_NOTES: list[tuple[tuple[str, int] | None, str]] = []
_TRACER: list[DeepTracer | None] = [None]


@contextlib.contextmanager
def _script_profiler_pass_through(
    tracer: DeepTracer,
) -> Iterator[list[tuple[tuple[str, int] | None, str]]]:
    import torch.profiler
    import torch.profiler.profiler as profiler_module

    saved = (torch.profiler.profile, profiler_module.profile)
    _PROFILER_NOTES.clear()
    _TRACER[0] = tracer
    torch.profiler.profile = _PassThroughProfiler  # type: ignore[assignment,misc]
    profiler_module.profile = _PassThroughProfiler  # type: ignore[assignment,misc]
    try:
        yield _PROFILER_NOTES
    finally:
        torch.profiler.profile, profiler_module.profile = saved  # type: ignore[misc]
        _TRACER[0] = None


@contextlib.contextmanager
def _optimizer_steps(tracer: DeepTracer) -> Iterator[None]:
    """Each ``optimizer.step()`` that returns ends a step (torch's global post-step hook)."""
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except ImportError:
        yield
        return

    def ended(optimizer: Any, args: Any, kwargs: Any) -> None:
        tracer.step("optimizer.step()")

    handle = register_optimizer_step_post_hook(ended)
    try:
        yield
    finally:
        handle.remove()


@dataclass(frozen=True)
class ScriptRun:
    """One run of a whole script.

    Attributes:
        trace: the Chrome trace, loaded.
        trace_path: where it was written (``None``: it could not be, see ``trace_error``).
        notes: notes on lines of the workspace's files (``{"line", "message"}``, and ``path``
            for a file other than the script).
        wall_s: wall time of the run, profiler overhead included (the profiled window's, for
            a window).
        files: the workspace files the run executed, the script first (the deep tracer's).
        window: what the window did (:meth:`Window.to_json`), ``None`` without one.
        cpu_s: the process's CPU time over the same span as ``wall_s``.
        trace_error: ``trace not saved: <why>`` when the cache could not take the file.
    """

    trace: dict[str, Any]
    trace_path: str | None
    notes: list[dict[str, Any]]
    wall_s: float
    files: list[str]
    window: dict[str, Any] | None = None
    cpu_s: float = 0.0
    trace_error: str | None = None


def profile_script(
    path: str,
    text: str,
    *,
    trace_dir: str,
    cuda_available: bool,
    argv: Sequence[str] = (),
    workspace: Sequence[str] = (),
    skip: int = 0,
    steps: int | None = None,
    after_s: float | None = None,
    cwd: str | None = None,
    memory: bool = False,
    cut_after_s: float | None = None,
    progress: Callable[[str], None] | None = None,
    only_lines: tuple[int, int] | None = None,
    packages: Mapping[str, str] | None = None,
) -> ScriptRun:
    """Run the file once as ``__main__`` with every workspace line tagged; export the trace
    (with ``memory``, every allocation and free too: ``profile_memory``).

    Args:
        path, text: the script and its (buffer) text.
        trace_dir: where the trace goes.
        cuda_available: whether to record CUDA activity.
        argv: ``sys.argv[1:]`` of the run.
        workspace: the workspace folders (default: the enclosing git checkout, else the
            script's folder).
        skip, steps, after_s: the window (see :class:`Window`); none of them: the whole run.
        cwd: the run's folder (default: the script's).
        cut_after_s: cut the run this many seconds in (shortly before the job's time limit),
            keeping what was profiled (``window.cut_at_limit``).
        progress: told where the run is now and then (``line 45 of train.py · 12 s``).
        only_lines: tag only these lines of the script (a notebook's profiled cell).
        packages: the named packages' folders, by name: their files' lines are tagged as the
            workspace's are (:func:`kernel_lens.agent.packages.resolve_packages`).

    Raises:
        ProfileError: ``syntax``; or how the script ended badly (``runtime``, ``exit``,
            ``interrupted``) on the line that raised. ``sys.exit(0)``/``sys.exit()`` is a normal
            end, and so is the end of the window.
    """

    import torch

    code = compile_text(path, text)
    switch = _ProfilerSwitch(cuda_available=cuda_available, memory=memory)
    window = Window(
        skip=max(0, skip),
        steps=steps,
        after_s=after_s,
        start=switch.start,
        stop_run=switch.stop,
        cut_after_s=cut_after_s,
        progress=progress,
    )
    roots = list(workspace) or [default_workspace(path)]
    tracer = DeepTracer(
        path,
        roots,
        texts={os.path.abspath(path): text},
        window=window,
        only_lines=only_lines,
        packages=packages,
    )
    switch.tracer = tracer
    with main_module(path, argv, cwd) as module, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
        with _script_profiler_pass_through(tracer) as notes, _optimizer_steps(tracer):
            window.begin()
            try:
                # However the script ends badly, a ProfileError on its line.
                call_user(
                    lambda: _run_as_main(code, module.__dict__, tracer, path, argv),
                    path,
                    "the script",
                )
            finally:
                switch.stop()
        seen = list(notes)
    clock = switch.clock
    if "start" not in clock:
        raise ProfileError("not-found", _never_started(window), None)
    wall_s = clock["end"] - clock["start"]
    saved = _save_script_trace(switch.prof, trace_dir, path)
    trace, trace_path = saved.trace, saved.path
    if cuda_available:
        _check_kernels_recorded(trace, cuda_ran=bool(torch.cuda.is_initialized()))
    return ScriptRun(
        trace,
        trace_path,
        _pass_through_notes(seen, path),
        wall_s,
        list(tracer.files),
        window.to_json() if window.active or window.cut else None,
        clock["cpu_end"] - clock["cpu_start"],
        saved.error,
    )


class _ProfilerSwitch:
    """Kernel Lens's own profiler, switched on when the window starts and off when it ends
    (or the run does), with the wall and CPU clocks read at both ends."""

    def __init__(self, *, cuda_available: bool, memory: bool) -> None:
        import torch
        from torch.profiler import ProfilerActivity

        self.torch = torch
        self.cuda_available = cuda_available
        activities = [ProfilerActivity.CPU]
        if cuda_available:
            activities.append(ProfilerActivity.CUDA)
        self.prof = torch.profiler.profile(
            activities=activities, record_shapes=True, profile_memory=memory
        )
        self.clock: dict[str, float] = {}
        self.on = False
        self.tracer: DeepTracer | None = None

    def _sync(self) -> None:
        if self.cuda_available and self.torch.cuda.is_initialized():
            self.torch.cuda.synchronize()

    def _reopened(self) -> contextlib.AbstractContextManager[None]:
        assert self.tracer is not None
        return self.tracer.reopened()

    def start(self) -> None:
        self._sync()
        with self._reopened():
            self.prof.start()
        self.on = True
        self.clock["start"] = time.perf_counter()
        self.clock["cpu_start"] = time.process_time()

    def stop(self) -> None:
        if self.on:
            self._sync()
            self.clock["end"] = time.perf_counter()
            self.clock["cpu_end"] = time.process_time()
            with self._reopened():
                self.prof.stop()
            self.on = False


def _run_as_main(
    code: types.CodeType,
    namespace: dict[str, Any],
    tracer: DeepTracer,
    path: str,
    argv: Sequence[str],
) -> None:
    """Execute the script's code under the tracer; the end of the window and ``sys.exit(0)``
    are normal ends, an exit from a command-line reader says which arguments are missing."""
    try:
        with tracer:
            exec(code, namespace)
    except WindowDone:
        pass  # the window's last step ended: the script stops there
    except SystemExit as exc:
        if exc.code in (None, 0):  # sys.exit() / sys.exit(0): a normal end
            return
        reader = _argv_problem(exc)
        if reader:
            raise ProfileError(
                "exit",
                f"the script needs command-line arguments: {reader} exited "
                f"(sys.exit({exc.code!r})) with sys.argv = {[path, *argv]!r}; give them "
                "after `--` (kernel-lens profile FILE -- ARGS…) or as the script's "
                "arguments in the editor",
                user_line_from_traceback(exc.__traceback__, path),
                format_exception(exc),
            ) from None
        raise


def _save_script_trace(prof: Any, trace_dir: str, path: str) -> SavedTrace:
    """Export the run's trace into ``trace_dir``, each line's range marked."""
    from kernel_lens.agent.tracefile import rank_suffix, save_trace

    stem = os.path.splitext(os.path.basename(path))[0]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return save_trace(
        prof.export_chrome_trace,
        trace_dir,
        f"{stem}-script-{stamp}-{os.getpid()}{rank_suffix()}.json",
        transform=mark_line_ranges,
    )


def _check_kernels_recorded(trace: Any, *, cuda_ran: bool) -> None:
    """Another CUPTI client (an injected nsys/libcupti, a profiler already on) leaves Kineto
    with no GPU activity: an error that says so, never a run with no kernels."""
    from kernel_lens.agent.cupti_guard import check_recorded

    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    kernels = sum(1 for e in events or () if isinstance(e, dict) and e.get("cat") == "kernel")
    check_recorded(
        "the whole-script profile",
        cuda_ran=cuda_ran,
        kernels=kernels,
        own="torch.profiler",
    )


def _pass_through_notes(
    seen: list[tuple[tuple[str, int] | None, str]], path: str
) -> list[dict[str, Any]]:
    """A note on each line where the script started its own profiler (a pass-through)."""
    out_notes: list[dict[str, Any]] = []
    main_path = os.path.abspath(path)
    for where, what in seen:
        note: dict[str, Any] = {
            "line": where[1] if where is not None else None,
            "message": (
                f"the script's own {what} is a pass-through while Kernel Lens profiles the whole "
                "script (one profiler per process): its block ran, recorded nothing of its own "
                "and exported nothing"
            ),
        }
        if where is not None and os.path.abspath(where[0]) != main_path:
            note["path"] = os.path.abspath(where[0])
            note["line"] = where[1]
        out_notes.append(note)
    return out_notes


def _argv_problem(exc: BaseException) -> str | None:
    """The command-line reader a ``SystemExit`` came out of (argparse, click, fire, typer,
    hydra, configurator.py…: the script wants other arguments), ``None`` for a script's own
    exit."""
    import traceback

    from kernel_lens.analysis.script_args import exit_reader

    return exit_reader(f.filename for f in traceback.extract_tb(exc.__traceback__))


def _never_started(window: Window) -> str:
    """Why a window's profile never started (the run ended first)."""
    counted = f" (counted from {window.source})" if window.source else ""
    if window.after_s is not None:
        return (
            f"the script ended before the window started: it ran {window.seen} step(s){counted}, "
            f"and the window starts {window.after_s:g} s into the run"
            + (f" after {window.skip} step(s)" if window.skip else "")
        )
    return (
        f"the script ended after {window.seen} step(s){counted}, before the window's first step "
        f"(--skip {window.skip}); steps are counted at optimizer.step(), the profiler's step() "
        "or a `# kernel-lens: step` marker line"
    )
