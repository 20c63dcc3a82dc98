"""Honest sweeps: a best value only when it is significantly faster than the runner-up,
otherwise the values equal within noise (the comparison's statistics, in the agent's sweep)."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from kernel_lens.agent.stages.sweep import honest_best, run_sweep
from kernel_lens.agent.stages.timing import TimingConfig


def _draws(rng: random.Random, median: float, n: int = 40) -> tuple[float, ...]:
    return tuple(median * rng.lognormvariate(0.0, 0.03) for _ in range(n))


def test_honest_best_names_ties_or_a_significant_best() -> None:
    rng = random.Random(5)
    tied = [
        (256, _draws(rng, 2.0)),
        (512, _draws(rng, 1.0)),
        (1024, _draws(rng, 1.0)),
        (2048, _draws(rng, 1.6)),
    ]
    assert honest_best(tied, "BLOCK_SIZE") == (
        [512, 1024],
        "BLOCK_SIZE 512–1024 equal within noise",
    )
    apart = [(256, _draws(rng, 1.0)), (512, _draws(rng, 1.5)), (1024, _draws(rng, 1.0))]
    ties, text = honest_best(apart, "B")
    assert ties == [256, 1024] and text == "B 256, 1024 equal within noise"
    clear = [(64, _draws(rng, 1.0)), (128, _draws(rng, 1.3))]
    assert honest_best(clear, "B") == ([], "B 64 fastest (significantly)")
    assert honest_best([(64, _draws(rng, 1.0))], "B") == ([], "B 64 fastest")


def _target(fn: Any) -> Any:
    return SimpleNamespace(
        fn=fn, args=[], kwargs={}, info=SimpleNamespace(qualname=fn.__name__, def_line=1)
    )


class _VirtualTime:
    """``time`` for the timing stage: ``sleep`` advances ``perf_counter`` exactly, so the
    sweeps below are deterministic whatever the machine's load (real sleeps or spins are not)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _VirtualTime:
    from kernel_lens.agent.stages import timing

    virtual = _VirtualTime()
    monkeypatch.setattr(timing, "time", virtual)
    return virtual


def test_a_sweep_whose_parameter_changes_nothing_has_no_best(clock: _VirtualTime) -> None:
    rng = random.Random(11)

    def same(BLOCK: int = 64) -> None:  # noqa: N803 (a kernel parameter's usual name)
        clock.sleep(0.002 * rng.lognormvariate(0.0, 0.03))

    config = TimingConfig(warmup_ms=2, budget_ms=60, reps=0, min_reps=15)
    result = run_sweep(_target(same), param="BLOCK", values=[64, 128], device="cpu",
                       timing_config=config)  # fmt: skip
    # The same 2 ms with the same noise: equal within noise, whichever median came out smaller.
    assert result["ties"] == [64, 128]
    assert result["verdict"] == "BLOCK 64–128 equal within noise"


def test_a_sweep_with_a_clearly_faster_value_has_a_best(clock: _VirtualTime) -> None:
    rng = random.Random(12)

    def scaled(BLOCK: int = 64) -> None:  # noqa: N803
        clock.sleep(0.0005 * BLOCK / 64 * rng.lognormvariate(0.0, 0.03))

    config = TimingConfig(warmup_ms=2, budget_ms=80, reps=0, min_reps=15)
    result = run_sweep(_target(scaled), param="BLOCK", values=[256, 64], device="cpu",
                       timing_config=config)  # fmt: skip
    assert result["best"]["value"] == 64 and result["ties"] == []
    assert result["verdict"] == "BLOCK 64 fastest (significantly)"


def test_a_sweep_result_keeps_the_shape_the_tools_read(clock: _VirtualTime) -> None:
    def block(BLOCK: int = 64) -> None:  # noqa: N803
        if BLOCK == 0:
            raise ValueError("no")
        clock.sleep(0.001)

    config = TimingConfig(warmup_ms=2, budget_ms=20, reps=0, min_reps=5)
    result = run_sweep(_target(block), param="BLOCK", values=[0, 64], device="cpu",
                       timing_config=config)  # fmt: skip
    assert list(result) == ["param", "current", "rows", "best", "method", "ties", "verdict"]
    assert result["current"] == 64 and result["method"] == "perf-counter"
    failed, timed = result["rows"]
    assert failed == {"value": 0, "error": "ValueError: no"}
    assert list(timed) == [
        "value", "median_ms", "spread_pct", "reps", "bytes", "gb_per_s", "error", "stopped",
    ]  # fmt: skip
    assert timed["error"] is None
    assert result["best"] == {"value": 64, "median_ms": timed.get("median_ms")}
