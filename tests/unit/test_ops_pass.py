"""The profiled pass on CPU torch: what is recorded, what is timed, where the trace goes.

The profiler is real (torch's CPU build); ``time`` is a stand-in whose clock advances one second
per reading, so the pass's wall time is exact. NVTX ranges (for ncu) use a stand-in ``torch``.
"""

from __future__ import annotations

import os
import sys
import time
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.stages import ops
from kernel_lens.agent.stages.ops import NvtxRange, profile_pass
from kernel_lens.analysis.line_attribution import attribute_lines


def work(x: Any) -> Any:
    y = x * 2
    return y + 1


class Ticks:
    """``time`` whose ``perf_counter`` advances by one second at each reading."""

    def __init__(self) -> None:
        self.readings = 0

    def perf_counter(self) -> float:
        self.readings += 1
        return float(self.readings)

    @staticmethod
    def strftime(fmt: str) -> str:
        return time.strftime(fmt, time.gmtime(0))


def test_the_recorded_calls_are_the_runs_after_one_unrecorded_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    ticks = Ticks()
    monkeypatch.setattr(ops, "time", ticks)
    x = torch.ones(8)
    calls: list[int] = []

    def fn() -> Any:
        calls.append(1)
        return work(x)

    result = profile_pass(
        fn, work.__code__, device="cpu", runs=2, trace_dir=str(tmp_path / "t"), label="lbl"
    )
    assert len(calls) == 3  # one warm-up step, two recorded
    assert result.runs == 2
    # A reading before each step and one after each recorded step: 2 recorded steps × 1 s.
    assert ticks.readings == 5 and result.wall_ms == 2000.0
    assert result.trace_path == str(tmp_path / "t" / f"lbl-19700101-000000-{os.getpid()}.json")
    assert Path(result.trace_path).is_file()
    lines, unattributed = attribute_lines(result.trace, runs=result.runs)
    first = work.__code__.co_firstlineno
    assert sorted(lines) == [first + 1, first + 2]
    assert all(line.hits == 1 for line in lines.values())  # per call: the warm-up step is out
    assert list(lines[first + 1].ops) == ["aten::mul"]
    assert list(lines[first + 2].ops) == ["aten::add"]
    assert lines[first + 1].ops["aten::mul"].calls == 1
    assert unattributed == []


def test_nvtx_range_pushes_and_pops(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[str] = []
    nvtx = types.SimpleNamespace(
        range_push=lambda name: log.append(f"push {name}"),
        range_pop=lambda: log.append("pop"),
    )
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(nvtx=nvtx))
    monkeypatch.setitem(sys.modules, "torch", fake)
    with NvtxRange("src:7") as rng:
        assert rng.name == "src:7"
        log.append("body")
    assert log == ["push src:7", "body", "pop"]


class Profiles:
    """``torch.profiler.profile`` that logs the arguments each profiler was made with, then is
    the real one."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.made: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.made.append(kwargs)
        return self.real(**kwargs)


def test_defaults_cpu_activity_only_shapes_recorded_and_an_existing_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    profiles = Profiles(torch.profiler.profile)
    monkeypatch.setattr(torch.profiler, "profile", profiles)
    x = torch.ones(8)
    calls: list[int] = []

    def fn() -> Any:
        calls.append(1)
        return work(x)

    # The folder exists already (every pass after the first writes into the same one).
    result = profile_pass(fn, work.__code__, device="cpu", trace_dir=str(tmp_path))
    assert result.runs == 3 and len(calls) == 4
    name = Path(result.trace_path).name
    assert Path(result.trace_path).parent == tmp_path and name.startswith("profile-")
    assert len(profiles.made) == 1
    # A CPU pass asks for CPU activity only (torch's default would add CUDA where it exists).
    assert profiles.made[0]["activities"] == [torch.profiler.ProfilerActivity.CPU]
    assert profiles.made[0]["record_shapes"] is True
    muls = [e for e in result.trace["traceEvents"] if e.get("name") == "aten::mul"]
    assert muls and all(e["args"]["Input Dims"] == [[8], []] for e in muls)


def test_cuda_synchronises_before_profiling_and_after_each_call_before_the_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    log: list[str] = []

    class LoggedTicks(Ticks):
        def perf_counter(self) -> float:
            log.append("clock")
            return super().perf_counter()

    monkeypatch.setattr(ops, "time", LoggedTicks())
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: log.append("sync"))
    profiles = Profiles(torch.profiler.profile)
    monkeypatch.setattr(torch.profiler, "profile", profiles)
    x = torch.ones(8)

    def fn() -> Any:
        log.append("call")
        return work(x)

    with warnings.catch_warnings():
        # torch's CPU build says it drops the CUDA activity; with CUDA it profiles it (x is on
        # the CPU either way: no kernel).
        warnings.filterwarnings("ignore", message="CUDA is not available")
        result = profile_pass(fn, work.__code__, device="cuda", runs=2, trace_dir=str(tmp_path))
    activity = torch.profiler.ProfilerActivity
    assert profiles.made[0]["activities"] == [activity.CPU, activity.CUDA]
    step = ["clock", "call", "sync"]
    # The warm-up step's time is not read; each recorded step's after its synchronisation.
    assert log == ["sync", *step, *step, "clock", *step, "clock"]
    assert result.wall_ms == 2000.0


def test_the_users_own_warnings_still_show(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    x = torch.ones(8)

    def fn() -> Any:
        warnings.warn("from the profiled function", UserWarning, stacklevel=1)
        return work(x)

    with pytest.warns(UserWarning, match="from the profiled function") as seen:
        profile_pass(fn, work.__code__, device="cpu", runs=1, trace_dir=str(tmp_path))
    assert len([w for w in seen if "from the profiled function" in str(w.message)]) == 2
