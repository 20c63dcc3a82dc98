"""The timing result's statistics, and the CPU timing loop on a function of known cost."""

import pytest

from kernel_lens.agent.stages import timing
from kernel_lens.agent.stages.timing import TimingConfig, TimingResult, time_function


def test_statistics_from_samples() -> None:
    r = TimingResult("cuda-events", "cuda", (1.0, 2.0, 3.0, 4.0, 100.0), 10, True)
    assert r.median_ms == 3.0
    assert r.quartiles_ms == (2.0, 4.0)
    assert r.spread_pct == pytest.approx(100 / 3)
    out = r.to_json()
    assert out["median_ms"] == 3.0 and out["reps"] == 5 and out["max_ms"] == 100.0
    assert out["samples_ms"] == [1.0, 2.0, 3.0, 4.0, 100.0]
    assert "samples_ms" not in r.to_json(with_samples=False)


class _VirtualTime:
    """``time`` for the timing stage on a virtual clock: ``sleep`` advances ``perf_counter``
    exactly, so the loop's counts do not depend on the machine's load."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_cpu_timing_of_a_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _VirtualTime()
    monkeypatch.setattr(timing, "time", clock)
    # 2**-8 s = 3.90625 ms, exact in binary: every sum and difference below is exact.
    result = time_function(
        lambda: clock.sleep(2.0**-8), device="cpu", config=TimingConfig(warmup_ms=5, budget_ms=60)
    )
    assert result.method == "perf-counter" and result.warmup_calls >= 2
    assert 10 <= result.reps <= 60
    assert 2.0 <= result.median_ms < 4.0
    # Exactly: 2 warm-up calls pass 5 ms; the 16th repetition takes the measured time past the
    # 60 ms budget (15 × 3.90625 = 58.6 ms).
    assert (result.warmup_calls, result.reps, result.median_ms) == (2, 16, 3.90625)
    assert result.spread_pct == 0.0


def test_fixed_reps_are_exact() -> None:
    result = time_function(lambda: None, device="cpu", config=TimingConfig(reps=17))
    assert result.reps == 17
