"""The timing policy, pinned without a GPU and without wall-clock time.

CUDA: a stand-in ``torch`` (events, ``synchronize``, the L2 flush buffer) records the order of
calls on a virtual clock, so the tests see what ``do_bench``'s method requires: the flush runs
*before* each start event (outside the timed pair), one synchronisation per batch, the number of
repetitions planned from the estimate and the budget (never doubled on noise). CPU: a virtual
``perf_counter`` makes the adaptive loop's stopping rules exact.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from kernel_lens.agent.stages import timing
from kernel_lens.agent.stages.timing import (
    L2_FLUSH_BYTES,
    CpuUsage,
    TimingConfig,
    time_function,
)

QUIET = CpuUsage(cpus=2, load1=0.0, others_cores=0.0)


class _QuietUsage:
    """``_Usage`` on an idle machine: no interference warning from this test machine's load."""

    def stop(self) -> CpuUsage:
        return QUIET


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "_Usage", _QuietUsage)


class FakeCuda:
    """A stand-in for the parts of ``torch`` the CUDA timing loop uses, on a virtual clock (ms).

    ``log`` holds every call in order: ``alloc``, ``flush`` (the L2 buffer zeroed), ``fn``,
    ``start``/``end``/``event`` records and ``sync``.
    """

    def __init__(self, cost: Callable[[int], float], flush_ms: float) -> None:
        self.now = 0.0
        self.log: list[str] = []
        self.cost = cost
        self.flush_ms = flush_ms
        self.calls = 0
        self.allocated: list[tuple[int, Any, str]] = []
        fake = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                assert enable_timing
                self.t: float | None = None

            def record(self) -> None:
                self.t = fake.now
                fake.log.append("record")

            def elapsed_time(self, end: Event) -> float:
                assert self.t is not None and end.t is not None, "event read before recording"
                assert fake.log and fake.log[-1] == "sync", "events read without a synchronise"
                return end.t - self.t

        class Buffer:
            def zero_(self) -> None:
                fake.now += fake.flush_ms
                fake.log.append("flush")

        def empty(n: int, *, dtype: Any, device: str) -> Buffer:
            fake.allocated.append((n, dtype, device))
            fake.log.append("alloc")
            return Buffer()

        def synchronize() -> None:
            fake.log.append("sync")

        self.module = types.SimpleNamespace(
            int32="int32",
            empty=empty,
            cuda=types.SimpleNamespace(Event=Event, synchronize=synchronize),
        )

    def fn(self) -> None:
        self.now += self.cost(self.calls)
        self.calls += 1
        self.log.append("fn")


def _time_cuda(
    monkeypatch: pytest.MonkeyPatch,
    cost: Callable[[int], float],
    flush_ms: float = 0.5,
    **config: Any,
) -> tuple[timing.TimingResult, FakeCuda]:
    fake = FakeCuda(cost, flush_ms)
    monkeypatch.setitem(sys.modules, "torch", fake.module)
    result = time_function(fake.fn, device="cuda", config=TimingConfig(**config))
    return result, fake


def test_flush_before_each_start_event_and_one_sync_for_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, fake = _time_cuda(monkeypatch, lambda i: 0.5, flush_ms=0.5)
    # A 256 MiB int32 buffer on the GPU.
    assert fake.allocated == [(L2_FLUSH_BYTES // 4, "int32", "cuda")]
    assert L2_FLUSH_BYTES == 256 * 1024 * 1024
    # Set-up: one call, sync; the estimate batch of 5 (flush + call) between two events, sync;
    # warm-up calls, sync.
    estimate = 0.5 + 0.5  # ms per (flush + call) in the estimate batch
    warm = 6 + int(25.0 / estimate)
    head = ["alloc", "fn", "sync", "record", *["flush", "fn"] * 5, "record", "sync"]
    head += ["fn"] * (warm - 6) + ["sync"]
    assert fake.log[: len(head)] == head
    # The timed batch: flush, start, call, end for each repetition, one sync at the end.
    batch = fake.log[len(head) :]
    assert batch == ["flush", "record", "fn", "record"] * result.reps + ["sync"]
    assert fake.log.count("sync") == 4
    # 500 ms budget / 1 ms estimate.
    assert result.reps == 500
    assert result.warmup_calls == warm == 31
    assert fake.calls == 1 + 5 + (warm - 6) + result.reps
    # The flush is outside the timed pair: every sample is the call alone.
    assert set(result.samples_ms) == {0.5}
    assert (result.method, result.device, result.l2_flushed) == ("cuda-events", "cuda", True)
    assert result.warnings == () and result.warning is None


def test_without_the_flush_nothing_is_allocated_or_zeroed(monkeypatch: pytest.MonkeyPatch) -> None:
    result, fake = _time_cuda(monkeypatch, lambda i: 2.0, flush_l2=False)
    assert fake.allocated == [] and "flush" not in fake.log
    assert result.l2_flushed is False
    # 500 / 2 ms estimate; 6 + 25 / 2 warm-up calls.
    assert result.reps == 250 and result.warmup_calls == 6 + 12


def test_repetitions_are_not_doubled_on_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every other call takes 10× longer: noisy samples, the same planned count.
    result, fake = _time_cuda(monkeypatch, lambda i: 0.5 if i % 2 else 5.0, flush_ms=0.0)
    assert fake.log[-1] == "sync" and fake.log.count("sync") == 4
    estimate = (0.5 + 5.0 + 0.5 + 5.0 + 0.5) / 5  # the estimate batch: calls 1..5
    assert result.reps == int(500 / estimate)
    assert any(w.startswith("noisy: the interquartile range is") for w in result.warnings)


def test_the_hard_cap_limits_a_long_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # 10 ms calls, a 10 s budget: 1000 planned, the 4 s cap allows 400.
    result, _ = _time_cuda(monkeypatch, lambda i: 10.0, flush_ms=0.0, budget_ms=10_000)
    assert result.reps == 400
    # A slow function still gets min_reps, whatever the cap.
    result, _ = _time_cuda(monkeypatch, lambda i: 1000.0, flush_ms=0.0)
    assert result.reps == 10
    assert result.warmup_calls == 7  # at least one warm-up call after the estimate


def test_fixed_reps_are_exact_on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fixed count ignores both the budget and the cap.
    result, _ = _time_cuda(monkeypatch, lambda i: 1000.0, flush_ms=0.0, reps=17)
    assert result.reps == 17


def test_tiny_kernels_hit_max_reps_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    result, _ = _time_cuda(monkeypatch, lambda i: 0.005, flush_ms=0.0)
    # 500 ms / 5 µs = 100000 planned, clipped to max_reps.
    assert result.reps == 10_000
    assert result.median_ms == pytest.approx(0.005)
    assert "under 10 µs: launch overhead and event resolution dominate this number" in (
        result.warnings
    )
    result, _ = _time_cuda(monkeypatch, lambda i: 0.0, flush_ms=0.0, max_reps=50)
    assert result.reps == 50  # a zero estimate does not divide by zero


class FakeClock:
    """``time.perf_counter`` on a virtual clock: each call of ``fn`` advances it by its cost.

    Costs are binary fractions of a second, so every sum and difference is exact.
    """

    def __init__(self, cost: Callable[[int], float]) -> None:
        self.now = 0.0
        self.calls = 0
        self.cost = cost

    def perf_counter(self) -> float:
        return self.now

    def fn(self) -> None:
        self.now += self.cost(self.calls)
        self.calls += 1


def _time_cpu(
    monkeypatch: pytest.MonkeyPatch, cost: Callable[[int], float], **config: Any
) -> tuple[timing.TimingResult, FakeClock]:
    clock = FakeClock(cost)
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    return time_function(clock.fn, device="cpu", config=TimingConfig(**config)), clock


MS = 2.0**-10  # 0.9765625 ms, in seconds: exact in binary


def test_cpu_loop_plans_from_the_warm_up_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    result, clock = _time_cpu(monkeypatch, lambda i: 2 * MS, warmup_ms=5, budget_ms=60)
    # Warm-up: 2 calls (3.9 ms) < 5 ms, a third one; then 60 / 1.953125 = 30 repetitions.
    assert result.warmup_calls == 3
    assert result.reps == 30 and clock.calls == 33
    assert result.median_ms == 2 * MS * 1e3
    assert (result.method, result.device, result.l2_flushed) == ("perf-counter", "cpu", False)


def test_cpu_budget_ends_the_loop_once_min_reps_are_in(monkeypatch: pytest.MonkeyPatch) -> None:
    # Cheap while warming up (estimate 1 call per ~1 ms: 512 planned), then 8× slower: the
    # 500 ms budget ends it after the first sample past 500 ms.
    def cost(i: int) -> float:
        return MS if i < 26 else 8 * MS

    result, clock = _time_cpu(monkeypatch, cost, warmup_ms=25, budget_ms=500)
    assert result.warmup_calls == 26
    spent = 8 * MS * 1e3  # ms per timed call
    assert result.reps == int(500 / spent) + 1 == 65
    # min_reps holds even past the budget; the hard cap does not wait for them.
    result, _ = _time_cpu(monkeypatch, lambda i: MS if i < 2 else 64 * MS, budget_ms=10)
    assert result.reps == 10
    result, _ = _time_cpu(
        monkeypatch, lambda i: MS if i < 2 else 1024 * MS, budget_ms=10, max_total_ms=3000
    )
    assert result.reps == 4  # 3 × 1000 ms is not over the 3000 ms cap; the 4th sample is
    assert "only 4 repetitions fit in the time budget" in result.warnings


def test_cpu_fixed_reps_ignore_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    result, _ = _time_cpu(monkeypatch, lambda i: 1024 * MS, reps=7, max_total_ms=1)
    assert result.reps == 7


def test_cpu_warm_up_stops_at_1000_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    result, _ = _time_cpu(monkeypatch, lambda i: 0.0, warmup_ms=25, reps=3)
    assert result.warmup_calls == 1000 and result.reps == 3
