"""Stage *script*: the whole file, run once as ``__main__`` under the per-line attribution.

``kernel-lens profile PATH`` (no ``::FUNC``) and the editor's ``Profile Script`` lens run the file
as ``python FILE`` would (``__name__ == "__main__"``, ``sys.argv == [FILE]``, the file's folder
as the current folder and first on ``sys.path``), once — a script may have side effects, so it
is never repeated for a median. Each module-level line (the ``__main__`` block's included) is
tagged with a ``record_function("src:<line>")`` range, so the ops and kernels it launches —
calls into the file's functions included — are attributed to that line. Its time is the wall
time of that one run, under the profiler, and is labelled so.

A script that starts ``torch.profiler`` itself would take the profiler over (Kineto allows one
session per process: the outer one records nothing), so while the script runs,
``torch.profiler.profile`` is a pass-through: the script's ``with profile(...)`` block runs,
its ``step()``/``export_chrome_trace()`` do nothing, and the result says so on its line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kernel_lens.agent.usercode import call_user, compile_text, main_module
from kernel_lens.analysis.scripts import SCRIPT_NAME, WALL_LABEL

__all__ = ["SCRIPT_NAME", "WALL_LABEL", "ScriptRun", "profile_script"]


class _PassThroughProfiler:
    """What ``torch.profiler.profile`` is while a whole script runs under Kernel Lens's own
    profiler: the block runs, nothing is recorded twice, the script's own exports do nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._notes = _PROFILER_NOTES
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != _SCRIPT_PATH[0]:
            frame = frame.f_back  # type: ignore[assignment]
        line = frame.f_lineno if frame is not None else None
        if line not in [n[0] for n in self._notes]:
            self._notes.append((line, "torch.profiler.profile"))

    def __enter__(self) -> _PassThroughProfiler:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def step(self) -> None:
        return None

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


_PROFILER_NOTES: list[tuple[int | None, str]] = []
_SCRIPT_PATH: list[str] = [""]


@contextlib.contextmanager
def _script_profiler_pass_through(path: str) -> Iterator[list[tuple[int | None, str]]]:
    import torch.profiler
    import torch.profiler.profiler as profiler_module

    saved = (torch.profiler.profile, profiler_module.profile)
    _PROFILER_NOTES.clear()
    _SCRIPT_PATH[0] = path
    torch.profiler.profile = _PassThroughProfiler  # type: ignore[assignment,misc]
    profiler_module.profile = _PassThroughProfiler  # type: ignore[assignment,misc]
    try:
        yield _PROFILER_NOTES
    finally:
        torch.profiler.profile, profiler_module.profile = saved  # type: ignore[misc]


@dataclass(frozen=True)
class ScriptRun:
    """One run of a whole script.

    Attributes:
        trace: the Chrome trace, loaded.
        trace_path: where it was written.
        notes: notes on lines of the file (``{"line", "message"}``).
        wall_s: wall time of the run, profiler overhead included.
    """

    trace: dict[str, Any]
    trace_path: str
    notes: list[dict[str, Any]]
    wall_s: float


def profile_script(
    path: str, text: str, *, trace_dir: str, cuda_available: bool, memory: bool = False
) -> ScriptRun:
    """Run the file once as ``__main__`` with each module-level line tagged; export the trace
    (with ``memory``, every allocation and free too: ``profile_memory``).

    Raises:
        ProfileError: ``syntax``; or how the script ended badly (``runtime``, ``exit``,
            ``interrupted``) on the line that raised. ``sys.exit(0)``/``sys.exit()`` is a normal
            end.
    """
    import json

    import torch
    from torch.profiler import ProfilerActivity

    from kernel_lens.agent.stages.ops import LineTagger

    code = compile_text(path, text)
    real_profile = torch.profiler.profile
    activities = [ProfilerActivity.CPU]
    if cuda_available:
        activities.append(ProfilerActivity.CUDA)
    with main_module(path) as module, warnings.catch_warnings():

        def run_main() -> None:
            try:
                with LineTagger(code):
                    exec(code, module.__dict__)
            except SystemExit as exc:
                if exc.code not in (None, 0):  # sys.exit() / sys.exit(0): a normal end
                    raise

        warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
        with real_profile(activities=activities, record_shapes=True, profile_memory=memory) as prof:
            start = time.perf_counter()
            with _script_profiler_pass_through(path) as notes:
                try:
                    # However the script ends badly, a ProfileError on its line.
                    call_user(run_main, path, "the script")
                finally:
                    if cuda_available and torch.cuda.is_initialized():
                        torch.cuda.synchronize()
            wall_s = time.perf_counter() - start
            seen = list(notes)
    os.makedirs(trace_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    trace_path = os.path.join(trace_dir, f"{stem}-script-{stamp}-{os.getpid()}.json")
    prof.export_chrome_trace(trace_path)
    with open(trace_path, encoding="utf-8") as fh:
        trace = json.load(fh)
    out_notes = [
        {
            "line": line,
            "message": (
                f"the script's own {what} is a pass-through while Kernel Lens profiles the whole "
                "script (one profiler per process): its block ran, recorded nothing of its own "
                "and exported nothing"
            ),
        }
        for line, what in seen
    ]
    return ScriptRun(trace, trace_path, out_notes, wall_s)
