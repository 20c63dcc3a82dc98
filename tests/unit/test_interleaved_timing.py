"""A/B timing interleaved (issue 34 item 5): on CPU, with real calls, a slowdown that happens
while the two are timed moves both sides alike, where timing one after the other reads it as a
difference between them."""

from __future__ import annotations

import pytest

from kernel_lens.agent.stages.timing import TimingConfig, time_function, time_interleaved
from kernel_lens.analysis.compare import compare_samples


def _work(n: int) -> float:
    total = 0.0
    for i in range(n):
        total += i * 0.5
    return total


class Heating:
    """Every call costs more than the one before (a clock that falls as the GPU heats up)."""

    def __init__(self) -> None:
        self.calls = 0

    def make(self, size: int):  # noqa: ANN201 (a call)
        def call() -> float:
            self.calls += 1
            return _work(size + 40 * self.calls)

        return call


# Real calls timed against each other: alone, after the parallel workers (under three workers on
# two cores a preempted call splits the samples into modes as far apart as the change itself).
pytestmark = pytest.mark.serial

CONFIG = TimingConfig(warmup_ms=0.0, reps=120, flush_l2=False)


def test_interleaved_sides_take_turns_and_keep_their_order() -> None:
    fast, slow = (lambda: _work(2_000)), (lambda: _work(20_000))
    a, b = time_interleaved(fast, slow, device="cpu", config=CONFIG)
    assert a.reps == b.reps == 120
    assert a.method == b.method == "perf-counter"
    assert b.median_ms > 3 * a.median_ms  # ten times the work
    verdict = compare_samples(a.samples_ms, b.samples_ms)
    assert verdict.kind == "slower"


def test_a_drift_during_the_run_is_not_a_difference_when_interleaved() -> None:
    # Two identical calls, both slowing down as the run goes on.
    heating = Heating()
    a, b = time_interleaved(heating.make(3_000), heating.make(3_000), device="cpu", config=CONFIG)
    interleaved = compare_samples(a.samples_ms, b.samples_ms)
    assert interleaved.kind not in ("faster", "slower"), interleaved.text()
    # Timed one after the other, the second side ran later — hotter — and reads as slower.
    heating = Heating()
    first = time_function(heating.make(3_000), device="cpu", config=CONFIG)
    second = time_function(heating.make(3_000), device="cpu", config=CONFIG)
    sequential = compare_samples(first.samples_ms, second.samples_ms)
    assert sequential.significant and sequential.change_pct > 20, sequential.text()
