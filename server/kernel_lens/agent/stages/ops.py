"""Stages *ops* and *trace*: one profiled pass with every line of the function tagged.

A ``sys.settrace`` hook, active only on the profiled function's own frame, opens a
``record_function("src:<line>")`` range when a line starts and closes it when the next one starts
or the function returns. So every op, runtime call and kernel launched while a line runs —
operator syntax (``x * x``), calls into helper functions, Triton launches, extension calls — is
attributed to that line of the profiled function, by its exact line number. The trace is
exported as a Chrome trace and analysed by the pure :mod:`kernel_lens.analysis.line_attribution`.
"""

from __future__ import annotations

import os
import sys
import time
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernel_lens.agent.packages import PackageFiles, installed_package_of
from kernel_lens.agent.phases import mark
from kernel_lens.analysis.line_attribution import line_range_name
from kernel_lens.analysis.package_share import PACKAGE_RANGE_PREFIX


def package_range_name(package: str) -> str:
    """The range open while the outermost frame of installed ``package`` runs."""
    return PACKAGE_RANGE_PREFIX + package


__all__ = ["LineTagger", "NvtxRange", "ProfiledPass", "profile_pass"]


class NvtxRange:
    """An NVTX push/pop range with ``record_function``'s context-manager shape (for ncu)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> NvtxRange:
        import torch

        torch.cuda.nvtx.range_push(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        import torch

        torch.cuda.nvtx.range_pop()


class LineTagger:
    """Tags each line of one code object's frame with a ``record_function`` range.

    Use as a context manager around calls of the function. Only the first (outermost) frame of
    ``code`` is traced, so recursion and helper functions stay on the calling line — except the
    frames of the named ``packages`` (``--in-package``) that the function calls: their lines are
    tagged too (``src:<k>:<line>``, the ``k``-th file of :attr:`files`), so the work inside them
    is on their innermost line.
    """

    def __init__(
        self,
        code: types.CodeType,
        range_factory: Any = None,
        *,
        packages: PackageFiles | None = None,
        files: list[str] | None = None,
        probe: bool = False,
    ) -> None:
        if range_factory is None:
            from torch.autograd.profiler import record_function

            range_factory = record_function
        self._packages = packages if packages else None
        #: the files whose lines were tagged: the function's first (shared between passes)
        self.files = files if files is not None else [os.path.abspath(code.co_filename)]
        self._index: dict[str, int] = {os.path.abspath(f): i for i, f in enumerate(self.files)}
        # The open range of each package frame being traced, by frame id.
        self._package_open: dict[int, Any] = {}
        # ``probe``: the time the function's lines spend inside other installed packages (not
        # named, not torch's), as ``pkg:<name>`` ranges around each package's outermost frame
        # (see ``analysis/package_share.py``).
        self._probe = probe
        self._probe_of: dict[str, str | None] = {}
        self._probe_open: dict[str, tuple[int, Any]] = {}
        self._code = code
        self._record_function = range_factory
        self._frame: types.FrameType | None = None
        self._open: Any = None
        self._previous: Any = None

    def _close(self) -> None:
        if self._open is not None:
            self._open.__exit__(None, None, None)
            self._open = None

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame is not self._frame:
            return None
        if event == "line":
            self._close()
            rf = self._record_function(line_range_name(frame.f_lineno))
            rf.__enter__()
            self._open = rf
        elif event == "return":
            self._close()
            self._frame = None
        return self._local

    def _global(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code is self._code and self._frame is None:
            self._frame = frame
            return self._local
        if event != "call" or self._frame is None:
            return None
        filename = frame.f_code.co_filename
        if self._packages is not None and self._packages.package_of(filename) is not None:
            return self._package_local
        if self._probe:
            name = self._probe_of.get(filename, "")
            if name == "":
                name = installed_package_of(filename)
                if name is not None and self._packages is not None:
                    name = None if name in self._packages.roots else name
                self._probe_of[filename] = name
            if name is not None and name not in self._probe_open:
                rng = self._record_function(package_range_name(name))
                rng.__enter__()
                self._probe_open[name] = (id(frame), rng)
                frame.f_trace_lines = False
                return self._probe_local
        return None

    def _probe_local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "return":
            for name, (key, rng) in list(self._probe_open.items()):
                if key == id(frame):
                    del self._probe_open[name]
                    rng.__exit__(None, None, None)
        return self._probe_local

    def _package_index(self, filename: str) -> int:
        path = os.path.abspath(filename)
        index = self._index.get(path)
        if index is None:
            index = self._index[path] = len(self.files)
            self.files.append(path)
        return index

    def _package_local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        key = id(frame)
        if event == "line":
            held = self._package_open.pop(key, None)
            if held is not None:
                held.__exit__(None, None, None)
            index = self._package_index(frame.f_code.co_filename)
            rf = self._record_function(f"src:{index}:{frame.f_lineno}")
            rf.__enter__()
            self._package_open[key] = rf
        elif event == "return":
            held = self._package_open.pop(key, None)
            if held is not None:
                held.__exit__(None, None, None)
        return self._package_local

    def __enter__(self) -> LineTagger:
        self._previous = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)
        for held in reversed(list(self._package_open.values())):
            held.__exit__(None, None, None)
        self._package_open.clear()
        for _, rng in reversed(list(self._probe_open.values())):
            rng.__exit__(None, None, None)
        self._probe_open.clear()
        self._close()
        self._frame = None


@dataclass(frozen=True)
class ProfiledPass:
    """The result of one profiled pass.

    Attributes:
        trace: the Chrome trace, loaded.
        trace_path: where it was written (``None``: it could not be, see ``trace_error``).
        runs: calls of the function inside the profiler.
        wall_ms: wall time of the profiled calls, in milliseconds (profiler overhead included:
            never shown as the function's time).
        trace_error: ``trace not saved: <why>`` when the cache could not take the file.
    """

    trace: dict[str, Any]
    trace_path: str | None
    runs: int
    wall_ms: float
    trace_error: str | None = None
    files: list[str] | None = None
    """The files whose lines were tagged: the function's, then the named packages' it ran."""


def profile_pass(
    fn: Callable[[], Any],
    code: types.CodeType,
    *,
    device: str,
    runs: int = 3,
    trace_dir: str,
    label: str = "profile",
    memory: bool = False,
    packages: PackageFiles | None = None,
) -> ProfiledPass:
    """Call ``fn`` ``runs`` times under torch.profiler with line tags; export the trace.

    Args:
        fn: the call (inputs bound); it was already called at least once (warm-up, compilation).
        code: the code object whose lines are tagged.
        device: ``cuda`` adds the CUDA activity and synchronises after each call.
        runs: profiled calls; numbers derived from the trace are divided by it.
        trace_dir: folder for the trace file (the engine's :attr:`CacheDirs.traces`).
        label: file name stem.
        memory: record every allocation and free (``profile_memory``): ``[memory]`` events.
        packages: the named packages (``--in-package``): their lines the function's calls run
            are tagged too; the files are the pass's :attr:`ProfiledPass.files`.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
        torch.cuda.synchronize()
    with warnings.catch_warnings():
        # torch 2.11 warns that a profiler without a schedule "clears events": not our case.
        warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
        # One unrecorded warm-up step first: the profiler's own start-up cost lands on it, not on
        # the first recorded call.
        with profile(
            activities=activities,
            record_shapes=True,
            profile_memory=memory,
            schedule=schedule(wait=0, warmup=1, active=runs, repeat=1),
        ) as prof:
            mark("profiled pass: profiler started")
            wall_ms = 0.0
            files = [os.path.abspath(code.co_filename)]
            for step in range(runs + 1):
                t0 = time.perf_counter()
                with LineTagger(code, packages=packages, files=files, probe=True):
                    fn()
                if device == "cuda":
                    torch.cuda.synchronize()
                if step > 0:
                    wall_ms += (time.perf_counter() - t0) * 1e3
                prof.step()
            mark("profiled pass: calls done")
    mark("profiled pass: profiler stopped")
    from kernel_lens.agent.tracefile import rank_suffix, save_trace

    stamp = time.strftime("%Y%m%d-%H%M%S")
    saved = save_trace(
        prof.export_chrome_trace, trace_dir, f"{label}-{stamp}-{os.getpid()}{rank_suffix()}.json"
    )
    mark("profiled pass: trace exported and read")
    return ProfiledPass(
        trace=saved.trace,
        trace_path=saved.path,
        runs=runs,
        wall_ms=wall_ms,
        trace_error=saved.error,
        files=files,
    )
