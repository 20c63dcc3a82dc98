"""The stopping rule of the timing (issue 28 item 2) on sample sets made with a seeded RNG:
stable, noisy, drifting, bimodal — fed to the rule as the timing stage feeds it (growing
batches), with the time spent as the samples' sum."""

from __future__ import annotations

import random

import pytest

from kernel_lens.analysis.compare import compare_timing
from kernel_lens.analysis.lens_text import running_lens_title
from kernel_lens.analysis.stopping import (
    MIN_REPS,
    Decision,
    converged,
    median_ci_pct,
    should_stop,
)
from kernel_lens.wire.envelope import merge_partial

BUDGET_MS = 500.0


def _feed(samples: list[float], budget_ms: float = BUDGET_MS) -> tuple[Decision, int]:
    """The rule asked after each batch (half again as many each time), as the timing does."""
    n = MIN_REPS
    while True:
        n = min(n, len(samples))
        taken = samples[:n]
        decision = should_stop(taken, spent_ms=sum(taken), budget_ms=budget_ms)
        if decision.stop or n == len(samples):
            return decision, n
        n += max(n // 2, 10)


def stable(n: int = 20_000, median_ms: float = 0.070, seed: int = 1) -> list[float]:
    """A steady 70 µs kernel: 0.5% jitter and a rare slow outlier."""
    rng = random.Random(seed)
    out = [median_ms * (1 + rng.gauss(0, 0.005)) for _ in range(n)]
    for i in range(0, n, 97):
        out[i] *= 1.3
    return out


def noisy(n: int = 20_000, median_ms: float = 0.070, seed: int = 2) -> list[float]:
    """A loaded machine: a 60% spread that never settles within the budget."""
    rng = random.Random(seed)
    return [median_ms * rng.uniform(0.5, 2.5) for _ in range(n)]


def drifting(n: int = 20_000, median_ms: float = 0.070, seed: int = 3) -> list[float]:
    """A GPU clocking down fast: each sample 0.2% slower than the first one more (2% jitter).
    (A drift slow against the time to converge converges: the median of what was measured is
    known; the timing's ``samples drifting`` warning says the rest.)"""
    rng = random.Random(seed)
    return [median_ms * (1 + i * 2e-3) * (1 + rng.gauss(0, 0.02)) for i in range(n)]


def bimodal(n: int = 20_000, seed: int = 4) -> list[float]:
    """Two modes, half the samples each (70 µs and 95 µs)."""
    rng = random.Random(seed)
    return [(0.070 if rng.random() < 0.5 else 0.095) * (1 + rng.gauss(0, 0.002)) for _ in range(n)]


def test_a_stable_70_us_kernel_stops_converged_far_before_the_budget() -> None:
    decision, n = _feed(stable())
    assert decision.stop and decision.reason == "converged", decision
    assert decision.text.startswith("converged (CI ±") and decision.ci_pct is not None
    assert decision.ci_pct <= 1.0
    spent = sum(stable()[:n])
    assert spent < BUDGET_MS / 10, (n, spent)  # ~10 ms (the minimum time), not 500 ms


def test_a_noisy_measurement_runs_to_the_budget_and_says_so() -> None:
    decision, n = _feed(noisy())
    assert decision.stop and decision.reason == "budget" and decision.text == "budget"
    assert sum(noisy()[:n]) >= BUDGET_MS
    assert decision.ci_pct is not None and decision.ci_pct > 1.0


def test_drifting_samples_stop_as_not_shrinking() -> None:
    decision, _ = _feed(drifting())
    assert decision.stop and decision.reason == "not shrinking", decision
    assert decision.text.startswith("not shrinking (CI ±")


def test_bimodal_samples_stop_as_not_shrinking() -> None:
    decision, _ = _feed(bimodal())
    assert decision.stop and decision.reason == "not shrinking", decision


@pytest.mark.parametrize("seed", range(5))
def test_independent_noisy_samples_are_never_called_not_shrinking(seed: int) -> None:
    """The plateau rule must not cut a stationary measurement short (its interval shrinks)."""
    decision, _ = _feed(noisy(seed=100 + seed), budget_ms=3000)
    assert decision.reason != "not shrinking", decision


def test_the_rule_waits_for_its_minimum_reps_and_time() -> None:
    few = stable()[: MIN_REPS - 1]
    assert not should_stop(few, spent_ms=100.0, budget_ms=BUDGET_MS).stop
    enough = stable()[:MIN_REPS]
    # Converged but under the minimum time: not yet.
    assert not should_stop(enough, spent_ms=1.0, budget_ms=BUDGET_MS).stop
    assert should_stop(enough, spent_ms=20.0, budget_ms=BUDGET_MS).reason == "converged"


def test_the_hard_cap_stops_even_a_slow_function_before_its_minimum() -> None:
    slow = [200.0] * 3
    decision = should_stop(slow, spent_ms=600.0, budget_ms=500.0, max_total_ms=4000.0)
    assert not decision.stop  # a slow function gets its 10 reps …
    decision = should_stop(slow * 5, spent_ms=4001.0, budget_ms=500.0, max_total_ms=4000.0)
    assert decision.stop and decision.reason == "budget"  # … up to the hard cap


def test_median_ci_is_none_without_two_samples() -> None:
    assert median_ci_pct([1.0]) is None
    assert median_ci_pct([0.0, 0.0]) is None
    assert median_ci_pct([1.0, 1.0, 1.0]) == 0.0


def test_converged_reads_the_policy() -> None:
    assert converged({"policy": {"stopped": "converged (CI ±0.8%)"}}) is True
    assert converged({"policy": {"stopped": "budget"}}) is False
    assert converged({"policy": {"stopped": "fixed reps"}}) is None
    assert converged({"median_ms": 1.0}) is None


def _timing(samples: list[float], stopped: str | None) -> dict[str, object]:
    out: dict[str, object] = {
        "median_ms": sorted(samples)[len(samples) // 2],
        "samples_ms": samples,
    }
    if stopped:
        out["policy"] = {"l2": "n/a", "stopped": stopped}
    return out


def test_a_comparison_of_a_run_that_did_not_converge_says_so() -> None:
    a, b = stable(2000, seed=5), stable(2000, seed=6)
    both = compare_timing(_timing(a, "converged (CI ±0.1%)"), _timing(b, "converged (CI ±0.1%)"))
    assert both.unconverged is None and "not converged" not in both.text()
    late = compare_timing(_timing(a, "converged (CI ±0.1%)"), _timing(b, "budget"))
    assert late.unconverged == "this run" and late.text().endswith("· not converged (this run)")
    ref = compare_timing(_timing(a, "not shrinking (CI ±3%)"), _timing(b, None))
    assert ref.unconverged == "the reference" and ref.to_json()["unconverged"] == "the reference"
    old = compare_timing(_timing(a, None), _timing(b, None))  # runs that do not say: as before
    assert old.unconverged is None


def test_partials_merge_into_the_result_so_far() -> None:
    known: dict[str, object] = {}
    final: list[str] = []
    stage = merge_partial(
        known, final, {"result": {"lines": [1]}, "final": ["lines"], "stage": "timing"}
    )
    assert stage == "timing" and known == {"lines": [1]} and final == ["lines"]
    merge_partial(
        known, final, {"result": {"timing": {"reps": 20}}, "final": [], "stage": "timing"}
    )
    merge_partial(
        known, final, {"result": {"timing": {"reps": 90}}, "final": ["lines"], "stage": "x"}
    )
    assert known == {"lines": [1], "timing": {"reps": 90}} and final == ["lines"]
    with pytest.raises(ValueError):
        merge_partial(known, final, {"result": 3, "final": []})


def test_the_running_summary_lens_says_what_it_does_and_how_close_the_timing_is() -> None:
    assert running_lens_title({}, "ops") == "$(sync~spin) Profiling…"
    result = {"lines": [{"line": 3, "ops": []}], "device": "CPU", "device_kind": "cpu"}
    assert running_lens_title(result, "timing").endswith("CPU · timing…")
    result["timing"] = {"median_ms": 0.07, "spread_pct": 0.4, "ci_pct": 2.13, "converging": True}
    title = running_lens_title(result, "timing")
    assert title.startswith("$(sync~spin) $(watch) 0.070 ms ±0.4%") and title.endswith(
        "timing… CI ±2.1%"
    )
