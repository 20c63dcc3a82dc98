"""A comparison calls a change only when every one of its conditions holds (issue 25): the
Mann–Whitney p-value under ALPHA, the change at least MIN_EFFECT_PCT, and the runs' medians
apart by more than their interval. Each condition failing alone stops the call. And two runs
timed on different GPU clocks (or L2 cold against warm) are not compared at all: the history
keeps the clocks and the policy, and the comparison says why instead of calling a change."""

from __future__ import annotations

import math
import statistics

from kernel_lens.analysis.compare import (
    ALPHA,
    MIN_EFFECT_PCT,
    compare_results,
    compare_samples,
    format_comparison,
    mann_whitney,
    median_interval,
)
from kernel_lens.history import entry_summary, make_entry


def _conditions(before: list[float], after: list[float]) -> tuple[bool, bool, bool]:
    """Each condition computed independently of compare_samples: (p, size, apart)."""
    _, p = mann_whitney(before, after)
    m1, m2 = statistics.median(before), statistics.median(after)
    change = 100 * (m2 / m1 - 1)
    half = math.hypot(*(math.log(hi / lo) / 2 for lo, hi in map(median_interval, (before, after))))
    return p < ALPHA, abs(change) >= MIN_EFFECT_PCT, abs(math.log(m2 / m1)) > half


def _tight(centre: float, n: int, step: float = 1e-5) -> list[float]:
    return [centre + step * (i - n // 2) for i in range(n)]


def test_all_three_hold_the_change_is_called() -> None:
    before, after = _tight(1.0, 200), _tight(1.1, 200)
    assert _conditions(before, after) == (True, True, True)
    verdict = compare_samples(before, after)
    assert verdict.significant and verdict.text() == "+10.0% vs 1 ms"


def test_the_p_value_alone_fails_no_call() -> None:
    # 5 against 5, entirely apart: the best a rank test can say at n = 5 is p ≈ 0.012
    before = [1.0, 1.001, 1.002, 1.003, 1.004]
    after = [1.1, 1.101, 1.102, 1.103, 1.104]
    assert _conditions(before, after) == (False, True, True)
    verdict = compare_samples(before, after)
    assert verdict.p_value is not None and verdict.p_value >= ALPHA
    assert not verdict.significant


def test_the_size_alone_fails_no_call() -> None:
    # thousands of tight samples make a 0.5% shift "significant" and far outside its interval
    before, after = _tight(1.0, 400, 1e-6), _tight(1.005, 400, 1e-6)
    assert _conditions(before, after) == (True, False, True)
    assert not compare_samples(before, after).significant


def test_the_intervals_alone_fail_no_call() -> None:
    # wide uniform runs, one 4% slower: the rank test rejects, the change is over 1%, but the
    # medians' intervals overlap the ratio
    n = 1000
    before = [0.5 + i / n for i in range(n)]
    after = [v * 1.04 for v in before]
    assert _conditions(before, after) == (True, True, False)
    assert not compare_samples(before, after).significant


def _run(sm_mhz: float, samples: list[float], l2: str = "cold") -> dict[str, object]:
    reading = {"sm_mhz": sm_mhz, "mem_mhz": 3201, "temperature_c": 40, "throttle": 0}
    timing = {
        "median_ms": statistics.median(samples),
        "spread_pct": 0.1,
        "reps": len(samples),
        "method": "cuda-events",
        "samples_ms": samples,
        "policy": {"l2": l2, "mode": "eager", "cpu_overhead": "included",
                   "reps": len(samples), "text": "…"},
        "clocks": {"before": reading, "after": reading},
    }  # fmt: skip
    result = {"function": "f", "path": "/w/f.py", "device": "NVIDIA H200",
              "device_kind": "cuda", "timing": timing, "lines": [], "kernels": []}  # fmt: skip
    return make_entry(result)


def test_the_history_keeps_the_clocks_and_the_policy() -> None:
    entry = _run(1980, _tight(1.0, 50))
    assert entry["timing"]["clocks"]["after"]["sm_mhz"] == 1980
    assert entry["timing"]["policy"]["l2"] == "cold"
    summary = entry_summary({**entry, "id": "1"})
    assert summary["timing"]["clocks"]["before"]["sm_mhz"] == 1980


def test_runs_on_different_clocks_are_not_compared() -> None:
    # the same change that is called on equal clocks…
    same = compare_results(_run(1980, _tight(1.0, 200)), _run(1980, _tight(1.5, 200)))
    assert same["verdict"]["significant"] and same["verdict"]["text"] == "+50.0% vs 1 ms"
    # …is not called when the second run's SM clock was lower
    comparison = compare_results(_run(1980, _tight(1.0, 200)), _run(1410, _tight(1.5, 200)))
    verdict = comparison["verdict"]
    assert verdict["significant"] is False and verdict["method"] == "incomparable"
    assert verdict["text"] == "not compared: different GPU clocks (SM 1980 → 1410 MHz)"
    assert "timed differently" in format_comparison(comparison, before="#1", after="#2")


def test_l2_cold_against_warm_is_not_compared() -> None:
    comparison = compare_results(
        _run(1980, _tight(1.0, 200)), _run(1980, _tight(0.5, 200), l2="warm")
    )
    assert comparison["verdict"]["text"] == (
        "not compared: different timing policy (L2 cold → warm)"
    )
