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
            assert isinstance(n, int), "torch.empty takes an int size"
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
    # The budget's mechanics: the stopping rule (tests/unit/test_stopping.py) is off here, as
    # constant fake samples would converge at once.
    config.setdefault("target_ci_pct", 0.0)
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


def test_a_slow_estimate_batch_does_not_cut_a_converging_kernel_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The estimate batch's 5 calls take 8 ms (clocks still rising), the kernel then ~1 ms,
    with a median known only after ~80 repetitions: planned once, 500 / 8 = 62 repetitions
    stopped it saying ``budget`` after 66 ms of its 500; planned again from each batch's cost,
    it converges."""
    cycle = [1.0] * 4 + [1.0625] * 3 + [1.125] * 4  # 5.9% wide until the interval fits the middle

    def cost(i: int) -> float:
        return 8.0 if i < 6 else cycle[(i - 6) % 11]

    result, fake = _time_cuda(monkeypatch, cost, flush_ms=0.0, target_ci_pct=1.0)
    assert result.stopped == "converged (CI ±0.0%)", (result.reps, result.stopped)
    assert 62 < result.reps < 120
    # Batches of 20, 10, 15, 22, 33 (half again as many as so far): one synchronisation each.
    assert fake.log.count("sync") == 3 + [20, 30, 45, 67, 100].index(result.reps) + 1
    # The flush counts in a repetition's cost: 2 ms flushes, 1 ms calls, a 300 ms budget ends
    # near 100 repetitions, not at the 300 the calls alone would allow.
    result, _ = _time_cuda(monkeypatch, lambda i: 1.0, flush_ms=2.0, budget_ms=300,
                           target_ci_pct=1.0, min_time_ms=1e9)  # fmt: skip
    assert result.stopped == "budget" and 95 <= result.reps <= 110, result.reps


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
    config.setdefault("target_ci_pct", 0.0)  # the budget's mechanics (see _time_cuda)
    return time_function(clock.fn, device="cpu", config=TimingConfig(**config)), clock


MS = 2.0**-10  # 0.9765625 ms, in seconds: exact in binary


def test_cpu_loop_runs_until_the_budgets_measured_time(monkeypatch: pytest.MonkeyPatch) -> None:
    result, clock = _time_cpu(monkeypatch, lambda i: 2 * MS, warmup_ms=5, budget_ms=60)
    # Warm-up: 2 calls (3.9 ms) < 5 ms, a third one; then repetitions until the measured time
    # is past 60 ms: 31 × 1.953125 = 60.5 ms.
    assert result.warmup_calls == 3
    assert result.reps == 31 and clock.calls == 34
    assert result.median_ms == 2 * MS * 1e3
    assert (result.method, result.device, result.l2_flushed) == ("perf-counter", "cpu", False)


def test_cold_warm_up_calls_do_not_cut_a_fast_function_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two cold warm-up calls of 62.5 ms make a ~1 ms function look 62.5 ms a call: a count
    planned from that (500 / 62.5 → the 10 minimum) stopped it after 10 ms of a 500 ms budget
    and said ``budget`` (the flaky stable-function CLI test, on a slow machine)."""

    def cold(i: int) -> float:
        return 64 * MS if i < 2 else MS

    result, _ = _time_cpu(monkeypatch, cold, warmup_ms=5, budget_ms=500)
    assert result.warmup_calls == 2
    assert result.reps == int(500 / (MS * 1e3)) + 1 == 513
    assert result.stopped == "budget"
    # With the stopping rule on: samples whose median is known only after ~40 repetitions
    # (1.5% wide while the interval spans all three values) converge; they are not cut at 10.
    cycle = [1.0, 1.0, 1.015625, 1.015625, 1.015625, 1.03125, 1.03125]

    def settling(i: int) -> float:
        return 64 * MS if i < 2 else cycle[(i - 2) % 7] * MS

    result, _ = _time_cpu(monkeypatch, settling, warmup_ms=5, budget_ms=500, target_ci_pct=1.0)
    assert result.stopped == "converged (CI ±0.0%)", (result.reps, result.stopped)
    assert 20 <= result.reps < 60  # the old count stopped at 10, "budget"


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


# --- the warnings on a result, at their thresholds ----------------------------------------------


U = 2.0**-10 * 1e3  # ms: 0.9765625, exact in binary, as are its multiples by halves


def _scripted(monkeypatch: pytest.MonkeyPatch, units: list[float]) -> timing.TimingResult:
    """A CPU timing whose timed calls take exactly ``units`` × U ms (a fixed count, no warm-up
    cost)."""
    costs = [0.0, 0.0] + [u * 2.0**-10 for u in units]
    result, _ = _time_cpu(monkeypatch, lambda i: costs[i], warmup_ms=0, reps=len(units))
    assert list(result.samples_ms) == [u * U for u in units]
    return result


def test_noisy_is_an_iqr_over_a_tenth_of_the_median(monkeypatch: pytest.MonkeyPatch) -> None:
    # Quartiles 8 and 9 around a median of 8.5: 11.8% → noisy.
    noisy = _scripted(monkeypatch, [8, 8, 8, 9, 9, 9, 8.5])
    assert noisy.warnings == ("noisy: the interquartile range is 12% of the median",)
    # 12.5% reads 12% (round half to even), also for a median under 1 ms.
    assert _scripted(monkeypatch, [0.5, 0.5, 0.5, 0.5, 0.5625, 0.5625, 0.5625]).warnings == (
        "noisy: the interquartile range is 12% of the median",
    )
    # IQR exactly 10% of the median: not noisy.
    calm = _scripted(monkeypatch, [9.5, 9.5, 9.5, 10, 10.5, 10.5, 10.5])
    assert calm.iqr_ms / calm.median_ms == 0.1
    assert calm.warnings == ()


def test_fewer_than_five_repetitions_are_said(monkeypatch: pytest.MonkeyPatch) -> None:
    four = _scripted(monkeypatch, [1] * 4)
    assert four.warnings == ("only 4 repetitions fit in the time budget",)
    assert _scripted(monkeypatch, [1] * 5).warnings == ()
    one = _scripted(monkeypatch, [2])
    assert one.quartiles_ms == (2 * U, 2 * U) and one.spread_pct == 0.0
    assert one.warnings == ("only 1 repetitions fit in the time budget",)


def test_under_10_us_is_said_on_cuda_only(monkeypatch: pytest.MonkeyPatch) -> None:
    result, _ = _time_cuda(monkeypatch, lambda i: 0.0078125, flush_ms=0.0, reps=8)
    assert result.warnings == (
        "under 10 µs: launch overhead and event resolution dominate this number",
    )
    result, _ = _time_cuda(monkeypatch, lambda i: 0.01, flush_ms=0.0, reps=8)
    assert result.warnings == ()
    assert _scripted(monkeypatch, [2.0**-7] * 8).warnings == ()  # 7.6 µs on CPU: not said


def test_the_interference_warning_joins_the_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = CpuUsage(cpus=2, load1=3.5, others_cores=1.5)
    monkeypatch.setattr(timing, "_Usage", lambda: types.SimpleNamespace(stop=lambda: busy))
    result = _scripted(monkeypatch, [1] * 8)
    text = "busy machine: load 3.5 on 2 cores, other processes used 1.5 cores while timing"
    assert result.warning == text
    assert result.warnings == (text,)
    out = result.to_json()
    assert out["warning"] == text and out["warnings"] == [text]


def test_to_json_carries_every_statistic(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _scripted(monkeypatch, [4, 1, 2, 3, 5])
    out = result.to_json()
    assert out == {
        "median_ms": 3 * U,
        "spread_pct": round(50.0 * 2 / 3, 3),
        "reps": 5,
        "method": "perf-counter",
        "device": "cpu",
        "mean_ms": 3 * U,
        "min_ms": 1 * U,
        "max_ms": 5 * U,
        "q1_ms": 2 * U,
        "q3_ms": 4 * U,
        "warmup_calls": 2,
        "l2_flushed": False,
        "warnings": ["noisy: the interquartile range is 67% of the median"],
        "warning": None,
        "policy": {
            "l2": "n/a",
            "mode": "eager",
            "cpu_overhead": "n/a",
            "reps": 5,
            "rel_stdev_pct": 52.705,
            "stable": False,
            # why the repetitions stopped, and the median's interval then (issue 28)
            "stopped": "fixed reps",
            "ci_pct": 66.667,
            "text": "eager · 5 reps · calls vary (σ 52.7%) · fixed reps",
        },
        "samples_ms": [4 * U, 1 * U, 2 * U, 3 * U, 5 * U],
    }
    assert timing.TimingResult("x", "cpu", (0.0, 0.0), 1, False).spread_pct == 0.0


# --- what the cores did, from /proc ---------------------------------------------------------------


def _fake_proc(monkeypatch: pytest.MonkeyPatch, stat: str, self_stat: str) -> None:
    import io

    files = {"/proc/stat": stat, "/proc/self/stat": self_stat}
    monkeypatch.setattr(timing, "open", lambda path: io.StringIO(files[path]), raising=False)


def test_ticks_read_busy_total_and_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat = "cpu  10 20 30 400 50 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8\n"
    # The command name holds ") " itself; utime and stime are the 14th and 15th fields.
    self_stat = "123 (a) b) S " + " ".join(str(i) for i in range(1, 11)) + " 70 30 5 5\n"
    _fake_proc(monkeypatch, stat, self_stat)
    assert timing._ticks() == (531 - 450, 531, 100)
    # Five columns: iowait counts as idle.
    _fake_proc(monkeypatch, "cpu 1 2 3 4 5\n", self_stat)
    assert timing._ticks() == (6, 15, 100)
    # An old kernel's four columns: no iowait.
    _fake_proc(monkeypatch, "cpu 1 2 3 4\n", self_stat)
    assert timing._ticks() == (6, 10, 100)
    _fake_proc(monkeypatch, "cpu x\n", self_stat)
    assert timing._ticks() is None


def test_ticks_without_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(path: str) -> Any:
        raise FileNotFoundError(path)

    monkeypatch.setattr(timing, "open", missing, raising=False)
    assert timing._ticks() is None


def test_usage_is_other_processes_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real _Usage
    readings = iter([(1000, 5000, 10), (1040, 5040, 20)])
    monkeypatch.setattr(timing, "_ticks", lambda: next(readings))
    monkeypatch.setattr(timing.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (1.25, 0.0, 0.0))
    # 40 busy ticks in a window of 20 per core, 10 of them this process's: 1.5 cores of others.
    assert timing._Usage().stop() == CpuUsage(cpus=2, load1=1.25, others_cores=1.5)
    # Exactly MIN_TICKS per core still counts; one fewer does not.
    readings = iter([(0, 0, 0), (20, 20, 0)])
    assert timing._Usage().stop().others_cores == 2.0
    readings = iter([(0, 0, 0), (19, 19, 0)])
    assert timing._Usage().stop().others_cores is None
    # /proc readable at one end of the window only: unknown.
    readings = iter([None, (20, 20, 0)])
    assert timing._Usage().stop().others_cores is None
    readings = iter([(0, 0, 0), None])
    assert timing._Usage().stop().others_cores is None
    # This process busier than the machine's count: never below zero.
    readings = iter([(0, 0, 0), (20, 40, 30)])
    assert timing._Usage().stop().others_cores == 0.0

    def no_load() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(timing.os, "getloadavg", no_load)
    monkeypatch.setattr(timing, "_ticks", lambda: None)
    monkeypatch.setattr(timing.os, "cpu_count", lambda: None)
    assert timing._Usage().stop() == CpuUsage(cpus=1, load1=0.0, others_cores=None)


# --- the samples' shape and the busy-machine rule, at their thresholds ----------------------------


def _mix(fast: int, slow: int, lo: float = 1.0, hi: float = 2.0) -> list[float]:
    """``fast`` samples of ``lo`` and ``slow`` of ``hi``, spread evenly (no drift)."""
    n = fast + slow
    return [hi if (i + 1) * slow // n > i * slow // n else lo for i in range(n)]


def test_bimodal_needs_twenty_samples_and_a_tenth_on_each_side() -> None:
    assert timing.sample_shape(_mix(10, 10)) == ["samples bimodal (1 ms and 2 ms, 10 of 20 slow)"]
    assert not any(x.startswith("samples bimodal") for x in timing.sample_shape(_mix(10, 9)))
    assert timing.sample_shape(_mix(18, 2)) == ["samples bimodal (1 ms and 2 ms, 2 of 20 slow)"]
    assert timing.sample_shape(_mix(19, 1)) == []
    assert timing.sample_shape(_mix(2, 18)) == ["samples bimodal (1 ms and 2 ms, 18 of 20 slow)"]
    assert timing.sample_shape(_mix(1, 19)) == []
    # Past 20 samples the edge is a tenth: 4 of 40 are a group, 3 are outliers.
    assert timing.sample_shape(_mix(36, 4)) == ["samples bimodal (1 ms and 2 ms, 4 of 40 slow)"]
    assert timing.sample_shape(_mix(37, 3)) == []


def test_bimodal_gap_is_a_ratio_of_1_3() -> None:
    assert timing.BIMODAL_GAP == 1.3
    assert timing.sample_shape(_mix(10, 10, 1.0, 1.3)) == [
        "samples bimodal (1 ms and 1.3 ms, 10 of 20 slow)"
    ]
    assert timing.sample_shape(_mix(10, 10, 1.0, 1.29)) == []
    # The widest gap names the groups; a zero sample is infinitely far from a positive one,
    # and no gap from another zero (20 zeros were called bimodal, "18 of 20 slow").
    assert timing.sample_shape(_mix(10, 10, 0.0, 0.5)) == [
        "samples bimodal (0 ms and 0.5 ms, 10 of 20 slow)"
    ]
    assert timing.sample_shape(_mix(5, 15, 0.0, 0.001)) == [
        "samples bimodal (0 ms and 0.001 ms, 15 of 20 slow)"
    ]
    assert timing.sample_shape([0.0] * 20) == []
    three = [1.0] * 8 + [1.5] * 4 + [4.0] * 8  # the gap 1.5 → 4 is the widest
    assert "samples bimodal (1 ms and 4 ms, 8 of 20 slow)" in timing.sample_shape(three)


def test_drift_needs_fifteen_samples_and_a_fifth() -> None:
    assert timing.DRIFT_RATIO == 0.2
    drift = [5.0] * 5 + [5.5] * 5 + [6.0] * 5  # thirds' medians 5 → 6: exactly 20%
    assert timing.sample_shape(drift) == ["samples drifting (5 ms → 6 ms)"]
    assert timing.sample_shape(drift[1:]) == []  # 14 samples: not judged
    assert timing.sample_shape([6.0] * 5 + [5.5] * 5 + [5.0] * 5) == [
        "samples drifting (6 ms → 5 ms)"
    ]
    assert timing.sample_shape([5.0] * 5 + [5.5] * 5 + [5.9375] * 5) == []  # 18.75%
    assert timing.sample_shape([0.0] * 5 + [1.0] * 10) == []  # no ratio from zero


def test_busy_is_a_quarter_of_the_cores_and_half_a_core_at_least() -> None:
    def usage(cpus: int, others: float | None, load1: float = 0.0) -> CpuUsage:
        return CpuUsage(cpus=cpus, load1=load1, others_cores=others)

    steady = [1.0] * 30
    assert timing.interference_warning(steady, usage(2, 0.5)) == (
        "busy machine: load 0.0 on 2 cores, other processes used 0.5 cores while timing"
    )
    assert timing.interference_warning(steady, usage(2, 0.49)) is None
    assert timing.interference_warning(steady, usage(4, 1.0)) is not None
    assert timing.interference_warning(steady, usage(4, 0.9)) is None
    # Unknown use of the cores: the load average over the core count decides.
    assert timing.interference_warning(steady, usage(2, None, 2.01)) == (
        "busy machine: load 2.0 on 2 cores"
    )
    assert timing.interference_warning(steady, usage(2, None, 2.0)) is None
    # The shape alone: a question; with a busy machine: both.
    bimodal = _mix(15, 15)
    assert timing.interference_warning(bimodal, usage(2, 0.0)) == (
        "interference? samples bimodal (1 ms and 2 ms, 15 of 30 slow)"
    )
    drifting_bimodal = [1.0] * 15 + [2.0] * 15
    assert timing.interference_warning(drifting_bimodal, usage(2, 1.0, 2.5)) == (
        "busy machine: load 2.5 on 2 cores, other processes used 1.0 cores while timing; "
        "samples bimodal (1 ms and 2 ms, 15 of 30 slow); samples drifting (1 ms → 2 ms)"
    )
    assert timing.interference_warning(drifting_bimodal, usage(2, 0.0)) == (
        "interference? samples bimodal (1 ms and 2 ms, 15 of 30 slow); "
        "samples drifting (1 ms → 2 ms)"
    )


def test_cpu_loop_on_a_clock_that_does_not_start_at_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    # perf_counter's origin is arbitrary: only differences count. 3 calls of 2U ms reach a
    # warm-up set just above 2 calls' time; a budget of exactly 30 calls' time is spent, not
    # passed, by 30 (an origin near 1024 s would round a sum of differences off): the 31st ends it.
    clock = FakeClock(lambda i: 2 * MS)
    clock.now = 1024.0
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    config = TimingConfig(warmup_ms=4 * U * 1.0005, budget_ms=30 * 2 * U, target_ci_pct=0.0)
    result = time_function(clock.fn, device="cpu", config=config)
    assert (result.warmup_calls, result.reps) == (3, 31)


def test_equal_gaps_split_at_the_first() -> None:
    samples = [1.0] * 7 + [2.0] * 6 + [4.0] * 7
    assert "samples bimodal (1 ms and 4 ms, 13 of 20 slow)" in timing.sample_shape(samples)


def test_a_noisy_function_whose_median_converged_reads_as_one_statement() -> None:
    """The samples' spread and the median's interval are two facts: the text says which is
    which (the calls vary; the median is known), never "not stable" beside "converged"."""
    from kernel_lens.analysis.timing_policy import make_policy, stopped_words

    samples = [1.0] * 40 + [9.0] * 3
    policy = make_policy(
        method="cpu-clock",
        l2_flushed=False,
        reps=len(samples),
        samples_ms=samples,
        stopped="converged (CI ±0.9%)",
        ci_pct=0.9,
    )
    assert policy["stable"] is False
    assert policy["stopped"] == "converged (CI ±0.9%)"  # stored as the stopping rule said it
    assert policy["text"].endswith(" · median converged (95% CI ±0.9%)"), policy["text"]
    assert " · calls vary (σ " in policy["text"] and "not stable" not in policy["text"]
    assert stopped_words("not shrinking (CI ±3.1%)") == "median's CI stopped shrinking at ±3.1%"
    assert stopped_words("budget") == "hit the time budget"
    assert stopped_words("fixed reps") == "fixed reps"
