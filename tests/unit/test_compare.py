"""The statistics of ``kernel_lens.analysis.compare`` on synthetic samples, and the per-line diff
of two recorded profiles."""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

import pytest

from kernel_lens.analysis.compare import (
    ALPHA,
    NOISY_PCT,
    SAME_PCT,
    Verdict,
    compare_results,
    compare_samples,
    compare_timing,
    equal_within_noise,
    format_comparison,
    line_delta,
    mann_whitney,
    median_interval,
    sample_shape,
    summary_delta,
)
from tests.conftest import ROOT

H200 = ROOT / "tests" / "data" / "h200"


def _draws(rng: random.Random, median: float, n: int, spread: float = 0.03) -> list[float]:
    """Positive, right-skewed timings around ``median`` (log-normal, as repetition times are)."""
    return [median * rng.lognormvariate(0.0, spread) for _ in range(n)]


def test_mann_whitney_matches_a_hand_computed_case() -> None:
    # a = [1, 2, 3], b = [4, 5, 6]: a is never larger: U_a = 0; z = (4.5 - 0.5) / sqrt(5.25).
    u, p = mann_whitney([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert u == 0.0
    assert p == pytest.approx(0.0808556, rel=1e-4)
    # Ties: half a pair each.
    u, p = mann_whitney([1.0, 1.0], [1.0, 1.0])
    assert u == 2.0 and p == 1.0
    assert mann_whitney([], [1.0]) == (0.0, 1.0)


def test_median_interval_holds_the_median() -> None:
    values = [float(v) for v in range(1, 101)]
    lo, hi = median_interval(values)
    assert lo < 50.5 < hi
    assert (lo, hi) == (41.0, 60.0)
    assert median_interval([3.0]) == (3.0, 3.0)


@pytest.mark.parametrize("factor, sign", [(0.5, -1), (0.9, -1), (1.2, 1), (2.0, 1)])
def test_clearly_different_distributions_are_significant_with_the_right_sign(
    factor: float, sign: int
) -> None:
    rng = random.Random(7)
    before, after = _draws(rng, 0.383, 60), _draws(rng, 0.383 * factor, 60)
    verdict = compare_samples(before, after)
    assert verdict.significant and verdict.method == "mann-whitney"
    assert verdict.p_value is not None and verdict.p_value < ALPHA
    assert (verdict.change_pct > 0) == (sign > 0)
    assert verdict.change_pct == pytest.approx((factor - 1) * 100, abs=3)
    text = verdict.text()
    assert text.startswith({-1: "\u2212", 1: "+", 2: "×"}[sign if factor < 2 else 2])
    assert text.endswith(" ms")
    assert " vs 0.3" in text


def test_the_text_of_a_halving() -> None:
    before = [0.383] * 11 + [0.384] * 9
    after = [0.1923] * 11 + [0.1928] * 9
    verdict = compare_samples(before, after)
    assert verdict.text() == "\u221249.8% vs 0.383 ms"
    baseline = compare_samples(before, after, reference="baseline")
    assert baseline.text() == "\u221249.8% vs baseline 0.383 ms"


@pytest.mark.parametrize("n, spread", [(20, 0.02), (100, 0.05), (400, 0.2)])
def test_draws_from_one_distribution_are_same_in_95_percent_of_seeded_trials(
    n: int, spread: float
) -> None:
    same = 0
    trials = 200
    for seed in range(trials):
        rng = random.Random(seed)
        verdict = compare_samples(_draws(rng, 1.0, n, spread), _draws(rng, 1.0, n, spread))
        same += verdict.kind == "same"
        assert verdict.kind in ("same", "ambiguous", "faster", "slower")
        if verdict.kind == "same":
            assert verdict.text().startswith("≈ same (±")
        if verdict.kind == "ambiguous":
            assert verdict.text().startswith("too noisy to tell")
    assert same >= 0.95 * trials, same


def test_a_tiny_real_shift_under_the_floor_is_not_called() -> None:
    # 0.3% apart with 5000 tight samples each: the test rejects, the effect floor does not call it.
    rng = random.Random(3)
    before, after = _draws(rng, 1.0, 5000, 0.002), _draws(rng, 1.003, 5000, 0.002)
    verdict = compare_samples(before, after)
    assert verdict.p_value is not None and verdict.p_value < ALPHA
    assert not verdict.significant
    assert verdict.text() == "≈ same (±0.3%)"
    assert (
        compare_samples(before, after, reference="baseline")
        .text()
        .startswith("≈ same as baseline (±")
    )


def test_without_samples_the_interquartile_ranges_decide() -> None:
    a = {"median_ms": 1.0, "q1_ms": 0.99, "q3_ms": 1.01, "spread_pct": 1.0}
    b = {"median_ms": 0.5, "q1_ms": 0.49, "q3_ms": 0.51, "spread_pct": 2.0}
    overlapping = {"median_ms": 1.005, "q1_ms": 0.995, "q3_ms": 1.02, "spread_pct": 1.2}
    assert compare_timing(a, b).significant and compare_timing(a, b).method == "iqr"
    assert not compare_timing(a, overlapping).significant
    untested = compare_timing({"median_ms": 1.0}, {"median_ms": 2.0})
    assert untested.method == "none" and not untested.significant
    assert untested.text() == "too noisy to tell: too few samples to test (1 ms → 2 ms)"
    assert compare_timing({}, {"median_ms": 2.0}).text() == "no timing to compare"


def test_sweep_ties_are_equal_within_noise() -> None:
    rng = random.Random(11)
    rows = [
        (256, _draws(rng, 2.0, 40)),
        (512, _draws(rng, 1.0, 40)),
        (1024, _draws(rng, 1.0, 40)),
    ]
    assert equal_within_noise(rows) == (None, [512, 1024])
    rows[2] = (1024, _draws(rng, 1.5, 40))
    assert equal_within_noise(rows) == (512, [])
    assert equal_within_noise([(1, [])]) == (None, [])


def _profile(name: str) -> dict:
    return json.loads((H200 / name).read_text())


def test_per_line_diff_of_two_recorded_profiles() -> None:
    """square_three_ways as recorded on the H200, then an edit: the `x * x` and `x**2` lines
    replaced by one line launching one kernel (two launches fused into one), the first line
    unchanged but slower."""
    before = _profile("square_three_ways_profile.json")
    after = copy.deepcopy(before)
    lines = after["lines"]
    fused = copy.deepcopy(lines[1])
    fused["source"] = "b = c = x * x"
    lines[:] = [lines[0], fused, lines[3]]
    lines[0]["device_us"] = before["lines"][0]["device_us"] * 1.5
    lines[2]["line"] = 37  # `return a, b, c` moved up one line
    after["kernels"] = [k for k in after["kernels"] if "MulFunctor" in k["name"]] + [
        k for k in after["kernels"] if "pow_tensor_scalar" in k["name"]
    ][:1]
    comparison = compare_results(before, after)
    by_line = {d["line"]: d for d in comparison["lines"]}
    assert by_line[35]["status"] == "same" and by_line[35]["text"] == "device +50%"
    assert by_line[36]["status"] == "changed" and by_line[36]["before_lines"] == [36, 37]
    assert by_line[36]["text"] == "2 → 1 kernels: fused · device \u221250%"
    assert by_line[37]["status"] == "same" and by_line[37]["text"] is None
    assert comparison["kernel_count"] == [3, 2]
    assert line_delta({"comparison": comparison}, 36).startswith("2 → 1 kernels: fused")
    assert line_delta({"comparison": comparison}, 37) is None
    # No raw samples in these recorded files: the interquartile ranges stand in; same timing.
    assert comparison["verdict"]["method"] == "iqr"
    assert summary_delta({"comparison": comparison}) == "≈ same (±0.2%)"
    text = format_comparison(comparison, before="#1", after="#2")
    assert "kernels per call: 3 → 2" in text and "36,37 → 36" in text


def test_per_kernel_diff_of_two_different_recorded_profiles() -> None:
    before = _profile("square_three_ways_profile.json")
    after = _profile("triton_square_profile.json")
    comparison = compare_results(before, after)
    status = {k["short_name"]: k["status"] for k in comparison["kernels"]}
    assert status.get("vectorized_elementwise_kernel") == "removed"
    assert "added" in status.values()
    assert comparison["verdict"]["significant"] is True
    assert comparison["verdict"]["change_pct"] < 0


def test_on_the_cpu_lines_compare_op_counts_not_profiler_times() -> None:
    def line(n: int, source: str, ops: int, cpu_us: float) -> dict:
        op = {"name": "aten::mul", "calls": 1, "cpu_us": cpu_us, "device_us": 0.0, "kernels": []}
        return {"line": n, "source": source, "cpu_us": cpu_us, "device_us": 0.0, "ops": [op] * ops}

    before = {
        "device_kind": "cpu",
        "lines": [line(3, "y = x * 2", 1, 10.0), line(4, "return y", 0, 1)],
    }
    after = {
        "device_kind": "cpu",
        "lines": [line(3, "y = x * 2", 1, 30.0), line(4, "return y", 3, 9)],
    }
    deltas = compare_results(before, after)["lines"]
    assert [(d["line"], d["unit"], d["text"]) for d in deltas] == [
        (3, "ops", None),  # three times the CPU time under the profiler: not a measure, not shown
        (4, "ops", "0 → 3 ops: new"),
    ]


def test_runs_too_noisy_to_compare_say_so_instead_of_same() -> None:
    """Two runs with the same median but a wide interval of their ratio (a few samples, one
    slow outlier half the time): not "≈ same", which would read as a verdict, but "ambiguous"
    with the interval; ±5% (SAME_PCT) is the line between them."""
    before = [1.0, 1.0, 1.0, 12.0, 12.0, 1.0, 12.0]
    after = [1.0, 12.0, 1.0, 1.0, 12.0, 1.0, 12.0]
    verdict = compare_samples(before, after)
    assert not verdict.significant and verdict.interval_pct > NOISY_PCT
    assert verdict.text() == f"too noisy to tell (±{verdict.interval_pct:.0f}%)"
    assert verdict.kind == "ambiguous"
    assert (
        compare_samples(before, after, reference="baseline")
        .text()
        .startswith("too noisy to tell vs baseline (±")
    )
    at_line = Verdict(1.0, 1.0, 0.0, SAME_PCT, 0.5, False, "mann-whitney")
    assert at_line.text() == "≈ same (±5.0%)" and at_line.kind == "same"
    past = Verdict(1.0, 1.0, 0.0, SAME_PCT + 0.1, 0.5, False, "mann-whitney")
    assert past.text() == "too noisy to tell (±5.1%)"
    # A change larger than the interval widens what is said, as before.
    assert Verdict(1.0, 1.3, 30.0, 2.0, 0.5, False, "mann-whitney").text() == (
        "too noisy to tell (±30.0%)"
    )


def _sequence(rng: random.Random, n: int, value: Any, spread: float = 0.005) -> list[float]:
    """``n`` samples in the order taken, ``value(i)`` each, with multiplicative noise."""
    return [value(i) * math.exp(rng.gauss(0, spread)) for i in range(n)]


def test_four_verdicts_on_recorded_kinds_of_samples() -> None:
    """Issue 34 item 5: stable, noisy, drifting and bimodal runs each get the verdict they
    support — FASTER/SLOWER only when the change outweighs what moved inside a run, SAME only
    when a change past ±5% is ruled out, AMBIGUOUS (with the reason) otherwise."""
    rng = random.Random(7)
    stable = _sequence(rng, 200, lambda i: 1.0)
    # stable against stable, 3% faster: called
    faster = compare_samples(stable, _sequence(rng, 200, lambda i: 0.97))
    assert faster.kind == "faster" and faster.text().startswith("\u22123.")
    slower = compare_samples(stable, _sequence(rng, 200, lambda i: 1.05))
    assert slower.kind == "slower"
    same = compare_samples(stable, _sequence(rng, 200, lambda i: 1.0))
    assert same.kind == "same" and same.text().startswith("≈ same (±")
    # noisy: 12 samples at ±30% cannot rule out a 5% change either way
    noisy = compare_samples(
        _sequence(rng, 12, lambda i: 1.0, 0.3), _sequence(rng, 12, lambda i: 1.0, 0.3)
    )
    assert noisy.kind == "ambiguous" and noisy.text().startswith("too noisy to tell (±")
    # drifting: the clock fell while this run was timed (1.00 → 1.08 ms over 200 samples);
    # its median is 4% above the reference, less than twice its own 8% drift
    drifting = _sequence(rng, 200, lambda i: 1.0 + 0.08 * i / 199)
    shape = sample_shape(drifting)
    assert shape is not None and shape[0].startswith("drifts +") and 4 < shape[1] < 6
    verdict = compare_samples(stable, drifting)
    assert verdict.significant  # the test alone would call it…
    assert verdict.kind == "ambiguous"  # …but the run moved as much as the change
    assert verdict.text() == f"too noisy to tell: this run {shape[0]}"
    assert verdict.to_json()["kind"] == "ambiguous"
    # bimodal: half the samples 30% slower (another process on the GPU)
    bimodal = _sequence(rng, 200, lambda i: 1.0 if i % 2 else 1.3)
    shape = sample_shape(bimodal)
    assert shape is not None and shape[0].startswith("is bimodal (")
    assert compare_samples(stable, bimodal).kind == "ambiguous"
    # a change far past the drift stands: twice as slow is slower, drift or not
    assert compare_samples(drifting, _sequence(rng, 200, lambda i: 2.2)).kind == "slower"
    # …and so does a 93× speed-up whose fast run drifts +83% (a CPU run seen in CI): the
    # change and the drift are compared as factors (−98.9% is ×0.011; +83% is ×1.83)
    fast_drift = _sequence(rng, 200, lambda i: 0.0073 * (1 + 0.83 * i / 199))
    assert sample_shape(fast_drift) is not None
    sped = compare_samples(stable, fast_drift)
    assert sped.kind == "faster" and sped.text().startswith("\u2212") and sped.shape is None
    # a falling drift is sized as a factor too: the thirds' medians fall 0.93 → 0.67 ms,
    # "−29%" in words and ×1.41 (41%) as a size, as large as a rise of +41% would be
    falling = sample_shape(_sequence(rng, 200, lambda i: 1.0 - 0.4 * i / 199))
    assert falling is not None and falling[0].startswith("drifts \u221229.")
    assert 38 < falling[1] < 44
    # steady samples have no shape
    assert sample_shape(stable) is None and sample_shape(stable[:5]) is None
    # the baseline is named
    named = compare_samples(stable, drifting, reference="baseline")
    assert named.text().startswith("too noisy to tell vs baseline: this run drifts")


def test_a_change_timed_on_a_busy_machine_is_too_noisy_to_tell_not_a_win() -> None:
    """Issue 41 item 6: on a loaded machine an unchanged function read ``−91.4% vs 22.8 ms``
    and an edit that added work a green ``−76.5%``. With the timing stage's own ``busy
    machine`` warning on a run, a change is "too noisy to tell" for unchanged code, against the
    work done, or under ×2; the lines' time changes are not said either."""
    import random

    rng = random.Random(7)
    loaded = [22.8 * (1 + 0.3 * rng.random()) for _ in range(40)]
    quiet = [1.96 * (1 + 0.01 * rng.random()) for _ in range(40)]
    busy = {"median_ms": 22.8, "samples_ms": loaded, "warning": "busy machine: load 5.2 on 2 cores"}
    after = {"median_ms": 1.96, "samples_ms": quiet}

    def line(us: float, kernels: int = 1) -> dict[str, Any]:
        k = [{"name": f"gemm{i}", "device_us": us / kernels, "calls": 1} for i in range(kernels)]
        op = {"name": "aten::mm", "device_us": us, "cpu_us": 5.0, "kernels": k}
        return {"line": 3, "source": "y = x @ w", "kernels": k, "ops": [op]}

    def run(timing: dict[str, Any], us: float, text: str, kernels: int = 1) -> dict[str, Any]:
        return {
            "timing": timing,
            "lines": [line(us, kernels)],
            "device_kind": "cuda",
            "text": [text],
        }

    quiet_before = {**busy, "warning": None}
    as_it_read = compare_results(run(quiet_before, 900, "a"), run(after, 90, "a"))
    assert as_it_read["verdict"]["kind"] == "faster"  # without the warning, as it read
    same_code = compare_results(run(busy, 900, "a"), run(after, 90, "a"))
    assert same_code["verdict"]["kind"] == "ambiguous"
    assert same_code["verdict"]["text"] == "too noisy to tell: same code, busy machine"
    assert [d["text"] for d in same_code["lines"]] == [None]  # no line "device −90%" either
    more_work = compare_results(run(busy, 900, "a"), run(after, 950, "b", kernels=3))
    assert more_work["verdict"]["text"] == "too noisy to tell: more work yet faster, busy machine"
    # an edit that really cut the time by more than the load can: still a change
    edited = compare_results(run(busy, 900, "a", kernels=3), run(after, 90, "b"))
    assert edited["verdict"]["kind"] == "faster"
