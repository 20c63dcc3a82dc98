"""Two profiles of one function compared: a verdict on the time that respects noise, and what
changed per line and per kernel. Pure and standard-library only (the agent's sweep uses it too).

The verdict on the time uses the raw timing samples of both runs:

- a two-sided **Mann–Whitney U** test (normal approximation with tie correction) says whether
  one run's samples tend to be smaller than the other's; the level is :data:`ALPHA`;
- a distribution-free 95% interval of each median (order statistics) gives an interval of the
  ratio of medians (on a log scale), whose half-width is the ``±`` shown;
- a change is called only when the test rejects, the change is outside the interval, and it is at
  least :data:`MIN_EFFECT_PCT` (two runs of unchanged code on one machine drift by a fraction of
  a percent, which thousands of GPU samples would otherwise call "significant").

Two runs timed on different GPU clocks (NVML readings differ by more than
:data:`kernel_lens.analysis.timing_policy.CLOCK_COMPARE_PCT`) or under a different policy (L2
cold against warm) are not compared: the verdict says so (``not compared: different GPU clocks
(SM 1980 → 1410 MHz)``) instead of calling a change.

Without raw samples (a ``profile --json --no-samples`` file, an old recorded result) the
interquartile ranges stand in: a change is called when they do not overlap.

Four verdicts (issue 34, after nvbench-compare-robust's): **faster** / **slower** (a change is
called), **same** (not called, and the whole interval of the ratio lies within
±:data:`SAME_PCT`: a change that size is ruled out), **ambiguous** (neither: the interval is too
wide to rule out a change, or a run's own samples drift or split into two modes by as much as
the change — then more samples, not a verdict, are the answer: *Re-profile longer*). Samples
are in the order they were taken, so a run whose clock or temperature moved while it was timed
shows as a trend (:func:`sample_shape`).

Text shown to users: ``−49.8% vs 0.383 ms`` (faster; the sign says which), ``≈ same (±0.4%)``,
``ambiguous (±12%)``, ``ambiguous: this run drifts +6.1% while timed``, with ``baseline`` named
when the reference is the pinned baseline.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kernel_lens.analysis.line_attribution import all_ops
from kernel_lens.analysis.timing_policy import clocks_differ
from kernel_lens.wire import lsp as wire

#: How a verdict was reached (``CompareVerdict.method``).
Method = Literal["mann-whitney", "iqr", "none", "incomparable"]
#: What happened to a line between two runs (``LineDelta.status``).
LineStatus = Literal["same", "changed", "added", "removed"]
#: The four-way verdict, or why there is none (``CompareVerdict.kind``).
VerdictKind = Literal["faster", "slower", "same", "ambiguous", "incomparable", "untested"]

#: How noise reads, first, wherever a comparison is shown (the lens, History, the Report).
TOO_NOISY = "too noisy to tell"

__all__ = [
    "ALPHA",
    "TOO_NOISY",
    "LINE_NOISE_PCT",
    "MIN_EFFECT_PCT",
    "NOISY_PCT",
    "SAME_PCT",
    "KernelDelta",
    "LineDelta",
    "Verdict",
    "compare_memory",
    "compare_results",
    "compare_samples",
    "compare_timing",
    "equal_within_noise",
    "format_comparison",
    "incomparable",
    "line_delta",
    "mann_whitney",
    "median_interval",
    "sample_shape",
    "summary_delta",
]

#: Two-sided level of the Mann–Whitney test.
ALPHA = 0.01
#: A change of the median smaller than this (percent) is never called: run-to-run drift.
MIN_EFFECT_PCT = 1.0
#: A line's device (or CPU) time is said to go up or down only past this change (percent): a
#: line's time is one number per run (the profiled calls' mean), with no samples to test.
LINE_NOISE_PCT = 10.0
#: Fewer samples than this per side: no test (the normal approximation needs a few).
MIN_SAMPLES = 5
#: A change that is not called, with an interval of the ratio wider than this (± percent), is
#: the "too noisy" end of "ambiguous" (kept for callers; the line between "same" and
#: "ambiguous" is :data:`SAME_PCT`).
NOISY_PCT = 25.0
#: "Same" only when the interval of the ratio of medians (and the change itself) is within
#: this (± percent): a wider interval could hide a change worth knowing, so it is "ambiguous".
SAME_PCT = 5.0
#: A run's samples drift when the medians of their first and last thirds differ by this much
#: (percent) with a monotone trend that chance would not give (Spearman's ρ·√(n−1) ≥
#: :data:`DRIFT_Z`, about p < 0.003) — clocks or heat moving while it was timed.
DRIFT_PCT = 2.0
DRIFT_Z = 3.0
#: Samples are bimodal when sorting them leaves a gap of this many percent of the median
#: between two groups that each hold at least :data:`MODE_SHARE` of them, the gap wider than
#: twice either group's interquartile range (a few noisy samples always leave some gap), in a
#: run of at least :data:`MODE_MIN_SAMPLES`.
MODE_GAP_PCT = 5.0
MODE_SHARE = 0.2
MODE_MIN_SAMPLES = 30
_Z95 = 1.959963984540054
MINUS = "\u2212"


def _ms(value: float) -> str:
    """``0.383 ms``, ``12.4 µs``, ``1.25 s``: three significant digits."""
    if value >= 1000:
        return f"{value / 1000:.3g} s"
    if value >= 0.1:
        return f"{value:.3g} ms"
    return f"{value * 1000:.3g} µs"


def _signed_pct(value: float, digits: int = 1) -> str:
    text = f"{abs(value):.{digits}f}%"
    return f"{MINUS}{text}" if value < 0 else f"+{text}"


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """The Mann–Whitney U statistic of ``a`` and its two-sided p-value.

    Normal approximation with a continuity correction and the tie correction of the variance.

    Args:
        a: the first sample.
        b: the second sample.

    Returns:
        ``(u_a, p)``: ``u_a`` counts the pairs where ``a``'s value is larger (ties half);
        ``p`` is 1.0 when either side is empty or every value is tied.
    """
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 0.0, 1.0
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    n = n1 + n2
    rank_sum_a = 0.0
    tie_term = 0.0
    i = 0
    while i < n:
        j = i
        while j + 1 < n and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        rank = (i + j) / 2 + 1  # mean 1-based rank of the tied run
        count = j - i + 1
        tie_term += count**3 - count
        rank_sum_a += rank * sum(1 for k in range(i, j + 1) if pooled[k][1] == 0)
        i = j + 1
    u_a = rank_sum_a - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))) if n > 1 else 0.0
    if variance <= 0:
        return u_a, 1.0
    z = max(abs(u_a - mean) - 0.5, 0.0) / math.sqrt(variance)
    return u_a, math.erfc(z / math.sqrt(2))


def median_interval(samples: Sequence[float]) -> tuple[float, float]:
    """A distribution-free ~95% interval of the median (order statistics, normal approximation
    of the binomial); the sample's range when it is small."""
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        raise ValueError("no samples")
    k = int(math.floor((n - _Z95 * math.sqrt(n)) / 2))
    k = max(0, min(k, (n - 1) // 2))
    return ordered[k], ordered[n - 1 - k]


@dataclass(frozen=True)
class Verdict:
    """How one run's time compares with a reference run's.

    Attributes:
        before_ms: the reference's median, milliseconds.
        after_ms: this run's median, milliseconds.
        change_pct: ``after / before − 1`` in percent (negative: faster).
        interval_pct: half-width of the ~95% interval of the ratio of medians, percent (on a
            log scale: ``±10%`` spans ×1/1.1 to ×1.1).
        p_value: the Mann–Whitney p-value (``None`` without raw samples).
        significant: the change is called (see the module docstring).
        method: ``mann-whitney`` or ``iqr`` (no raw samples) or ``none`` (nothing to test) or
            ``incomparable`` (different clocks or policy: ``note`` says which).
        reference: ``previous``, ``baseline`` or another label of the reference run.
        note: why the runs were not compared (``incomparable``).
        unconverged: which run's timing did not converge (``this run``, ``the reference``,
            ``both runs``: it stopped at the time budget, or its interval stopped shrinking),
            said after the verdict; ``None`` when both did or a run does not say.
    """

    before_ms: float
    after_ms: float
    change_pct: float
    interval_pct: float
    p_value: float | None
    significant: bool
    method: Method
    reference: str = "previous"
    note: str | None = None
    unconverged: str | None = None
    shape: str | None = None
    """Why a called change (or a "same") is not trusted: a run's samples drift or are bimodal
    by as much as the change (``this run drifts +6.1% while timed``)."""

    @property
    def kind(self) -> VerdictKind:
        """``faster``, ``slower``, ``same``, ``ambiguous`` — or ``incomparable`` (timed
        differently) or ``untested`` (too few samples to test)."""
        if self.method == "incomparable":
            return "incomparable"
        if self.method == "none":
            return "untested"
        if self.shape:
            return "ambiguous"
        if self.significant:
            return "faster" if self.change_pct < 0 else "slower"
        within = max(self.interval_pct, abs(self.change_pct))
        return "same" if within <= SAME_PCT else "ambiguous"

    def text(self) -> str:
        """:meth:`verdict_text`, then ``· not converged (this run)`` when a timing did not."""
        text = self.verdict_text()
        if self.unconverged and self.method != "incomparable":
            text += f" · not converged ({self.unconverged})"
        return text

    def verdict_text(self) -> str:
        """``−49.8% vs 0.383 ms`` / ``×3.2 vs 0.383 ms`` (twice as slow or more) /
        ``≈ same (±0.4%)``, or ``ambiguous (±180%)`` when the runs' interval is wider
        than :data:`NOISY_PCT`; the baseline is named when it is the reference (``vs baseline
        0.383 ms``, ``≈ same as baseline (±0.4%)``)."""
        named = "" if self.reference == "previous" else f"{self.reference} "
        vs = "" if self.reference == "previous" else f" vs {self.reference}"
        # Noise says so first, never as a percentage that reads like a change (issue 41).
        if self.method != "incomparable" and self.method != "none" and self.shape:
            return f"{TOO_NOISY}{vs}: {self.shape}"
        if self.method == "incomparable":
            return f"not compared: {self.note or 'the runs were timed differently'}"
        if self.method == "none":
            if self.before_ms <= 0 or self.after_ms <= 0:
                return "no timing to compare"
            return (
                f"{TOO_NOISY}{vs}: too few samples to test "
                f"({_ms(self.before_ms)} → {_ms(self.after_ms)})"
            )
        if self.significant:
            ratio = 1 + self.change_pct / 100
            # Past doubling a factor reads better than +12322%.
            change = (
                _signed_pct(self.change_pct)
                if ratio < 2
                else f"×{ratio:.1f}"
                if ratio < 100
                else f"×{ratio:.0f}"
            )
            return f"{change} vs {named}{_ms(self.before_ms)}"
        within = max(self.interval_pct, abs(self.change_pct))
        spread = f"±{within:.1f}%" if within < 100 else f"±{within:.0f}%"
        if self.kind == "ambiguous":
            return f"{TOO_NOISY}{vs} ({spread})"
        as_ = "" if self.reference == "previous" else f" as {self.reference}"
        return f"≈ same{as_} ({spread})"

    def to_json(self) -> wire.CompareVerdict:
        """The wire's ``CompareVerdict``, with ``kind`` and ``text``."""
        return {
            "before_ms": self.before_ms,
            "after_ms": self.after_ms,
            "change_pct": round(self.change_pct, 3),
            "interval_pct": round(self.interval_pct, 3),
            "p_value": self.p_value,
            "significant": self.significant,
            "method": self.method,
            "reference": self.reference,
            "note": self.note,
            "unconverged": self.unconverged,
            "shape": self.shape,
            "kind": self.kind,
            "text": self.text(),
        }


def _spearman(values: Sequence[float]) -> float:
    """Spearman's ρ of ``values`` against their order (ties averaged); 0 for fewer than 3."""
    n = len(values)
    if n < 3:
        return 0.0
    order = sorted(range(n), key=lambda i: values[i])
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2
        i = j + 1
    mean = (n - 1) / 2
    cov = sum((r - mean) * (k - mean) for k, r in enumerate(ranks))
    var_r = sum((r - mean) ** 2 for r in ranks)
    var_k = sum((k - mean) ** 2 for k in range(n))
    return cov / math.sqrt(var_r * var_k) if var_r > 0 and var_k > 0 else 0.0


def sample_shape(samples: Sequence[float]) -> tuple[str, float] | None:
    """What is wrong with one run's samples (in the order taken), with its size in percent:
    ``("drifts +6.1% while timed", 6.1)`` (a monotone trend: clocks or heat moved) or
    ``("is bimodal (0.381 ms | 0.52 ms)", 36.5)`` (two groups: another process, a clock
    step); ``None`` for a steady run or fewer than :data:`MIN_SAMPLES` × 2 samples."""
    n = len(samples)
    if n < 2 * MIN_SAMPLES:
        return None
    median = statistics.median(samples)
    if median <= 0:
        return None
    third = n // 3
    first, last = statistics.median(samples[:third]), statistics.median(samples[-third:])
    drift = (last / first - 1) * 100 if first > 0 else 0.0
    if abs(drift) >= DRIFT_PCT and abs(_spearman(samples)) * math.sqrt(n - 1) >= DRIFT_Z:
        # Its size as a factor either way (a −40% drift moves the samples ×1.67).
        factor = max(last / first, first / last) if last > 0 else math.inf
        return f"drifts {_signed_pct(drift)} while timed", (factor - 1) * 100
    ordered = sorted(samples)
    low = math.ceil(MODE_SHARE * n)
    best: tuple[float, int] | None = None
    for i in range(low - 1, n - low):
        gap = ordered[i + 1] - ordered[i]
        if best is None or gap > best[0]:
            best = (gap, i)
    if n < MODE_MIN_SAMPLES or best is None or best[0] / median * 100 < MODE_GAP_PCT:
        return None
    groups = ordered[: best[1] + 1], ordered[best[1] + 1 :]
    widths = [q[2] - q[0] for q in (statistics.quantiles(g, n=4) for g in groups)]
    if best[0] < 2 * max(widths):
        return None
    lo, hi = (statistics.median(g) for g in groups)
    return f"is bimodal ({_ms(lo)} | {_ms(hi)})", (hi / lo - 1) * 100


def compare_samples(
    before: Sequence[float], after: Sequence[float], *, reference: str = "previous"
) -> Verdict:
    """The verdict on two runs' raw samples (milliseconds)."""
    if not before or not after:
        raise ValueError("both runs need samples")
    m1, m2 = statistics.median(before), statistics.median(after)
    change = (m2 / m1 - 1) * 100 if m1 > 0 else 0.0
    # The interval of the ratio of medians on a log scale, where the two medians' intervals
    # add (a run with a few very slow samples widens it without hiding a 100× change).
    half_log = 0.0
    for samples in (before, after):
        lo, hi = median_interval(samples)
        if lo > 0 and hi > 0:
            half_log = math.hypot(half_log, math.log(hi / lo) / 2)
    interval = math.expm1(half_log) * 100
    if len(before) < MIN_SAMPLES or len(after) < MIN_SAMPLES or m1 <= 0 or m2 <= 0:
        return Verdict(m1, m2, change, interval, None, False, "none", reference)
    _, p = mann_whitney(before, after)
    outside = abs(math.log(m2 / m1)) > half_log
    significant = p < ALPHA and abs(change) >= MIN_EFFECT_PCT and outside
    # A run whose own samples moved (or split) by as much as the change cannot tell it apart
    # from what happened while it was timed; a change well past that still stands. Both are
    # compared as factors: a 100× speed-up (−99%) is far past an 83% drift, though 99 < 2 × 83.
    shape = None
    moved = abs(math.log(m2 / m1))
    for who, samples in (("the reference", before), ("this run", after)):
        found = sample_shape(samples)
        if found is not None and (not significant or moved < 2 * math.log1p(found[1] / 100)):
            shape = f"{who} {found[0]}"
            break
    return Verdict(m1, m2, change, interval, p, significant, "mann-whitney", reference, shape=shape)


def compare_timing(
    before: dict[str, Any], after: dict[str, Any], *, reference: str = "previous"
) -> Verdict:
    """The verdict on two timing objects (``{"median_ms", "samples_ms"?, "q1_ms"?, …}``);
    ``incomparable`` when their ``clocks`` or ``policy`` differ (see the module docstring); a
    timing that did not converge (``policy.stopped``) is named in ``unconverged``."""
    verdict = _compare_timing(before, after, reference=reference)
    late = [_not_converged(before), _not_converged(after)]
    which = (
        "both runs"
        if all(late)
        else "the reference"
        if late[0]
        else "this run"
        if late[1]
        else None
    )
    return dataclasses.replace(verdict, unconverged=which) if which else verdict


#: On a busy machine a change is called only past this factor (×2 either way), and never for
#: unchanged code or against the work done (issue 41: load read as a −91.4% win).
BUSY_FACTOR = 2.0


def _busy_check(
    verdict: Verdict, before: dict[str, Any], after: dict[str, Any], counts: tuple[float, float]
) -> Verdict:
    """``verdict``, or "too noisy to tell" when a run was timed on a busy machine and the
    change could be the load's: the function's text is the same in both runs, or the change
    goes against the work (more kernels or ops, yet faster), or it is under
    :data:`BUSY_FACTOR`."""
    if verdict.kind not in ("faster", "slower"):
        return verdict
    busy = [_busy(before.get("timing") or {}), _busy(after.get("timing") or {})]
    if not any(busy):
        return verdict
    ratio = 1 + verdict.change_pct / 100
    factor = max(ratio, 1 / ratio) if ratio > 0 else math.inf
    same_code = before.get("text") is not None and before.get("text") == after.get("text")
    against = (counts[1] > counts[0] and verdict.kind == "faster") or (
        counts[1] < counts[0] and verdict.kind == "slower"
    )
    # short: it is the lens's verdict, first on a row that must fit 1280 px
    if same_code:
        why = "same code, busy machine"
    elif against:
        more = "more" if counts[1] > counts[0] else "less"
        how = "faster" if verdict.kind == "faster" else "slower"
        why = f"{more} work yet {how}, busy machine"
    elif factor < BUSY_FACTOR:
        why = "busy machine"
    else:
        return verdict
    return dataclasses.replace(verdict, shape=why)


def _busy(timing: dict[str, Any]) -> bool:
    """Whether a timing says the machine was busy while it was taken (the timing stage's
    ``busy machine: load 2.1 on 2 cores`` warning)."""
    said = [timing.get("warning"), *(timing.get("warnings") or [])]
    return any(isinstance(w, str) and w.startswith("busy machine") for w in said)


def _not_converged(timing: dict[str, Any]) -> bool:
    """Whether a timing says it stopped before its median was known within the target (the
    budget ran out, or its interval stopped shrinking); an older run that does not say is not
    held against."""
    policy = timing.get("policy")
    stopped = policy.get("stopped") if isinstance(policy, dict) else None
    return isinstance(stopped, str) and (stopped == "budget" or stopped.startswith("not shrink"))


def _compare_timing(
    before: dict[str, Any], after: dict[str, Any], *, reference: str = "previous"
) -> Verdict:
    differ = incomparable(before, after)
    if differ is not None:
        m1, m2 = float(before.get("median_ms") or 0.0), float(after.get("median_ms") or 0.0)
        change = (m2 / m1 - 1) * 100 if m1 > 0 else 0.0
        return Verdict(m1, m2, change, 0.0, None, False, "incomparable", reference, differ)
    s1, s2 = before.get("samples_ms"), after.get("samples_ms")
    if s1 and s2:
        return compare_samples(s1, s2, reference=reference)
    m1, m2 = float(before.get("median_ms") or 0.0), float(after.get("median_ms") or 0.0)
    change = (m2 / m1 - 1) * 100 if m1 > 0 else 0.0
    sp1, sp2 = float(before.get("spread_pct") or 0.0), float(after.get("spread_pct") or 0.0)
    interval = math.hypot(sp1, sp2)
    q = [before.get("q1_ms"), before.get("q3_ms"), after.get("q1_ms"), after.get("q3_ms")]
    if m1 <= 0 or m2 <= 0 or any(not isinstance(v, int | float) for v in q):
        return Verdict(m1, m2, change, interval, None, False, "none", reference)
    b1, b3, a1, a3 = (float(v) for v in q)  # type: ignore[arg-type]
    apart = a3 < b1 or a1 > b3
    significant = apart and abs(change) >= MIN_EFFECT_PCT
    return Verdict(m1, m2, change, interval, None, significant, "iqr", reference)


def incomparable(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """Why two timings cannot be compared (different GPU clocks, L2 cold against warm), or
    ``None``. A timing without ``clocks`` or ``policy`` (an older run) is not held against."""
    differ = clocks_differ(before.get("clocks"), after.get("clocks"))
    if differ:
        return differ
    l2 = [(t.get("policy") or {}).get("l2") for t in (before, after)]
    if l2[0] in ("cold", "warm") and l2[1] in ("cold", "warm") and l2[0] != l2[1]:
        return f"different timing policy (L2 {l2[0]} → {l2[1]})"
    return None


def equal_within_noise(
    rows: Sequence[tuple[Any, Sequence[float]]],
) -> tuple[Any | None, list[Any]]:
    """Among ``(value, samples_ms)`` rows, the best value if it is significantly faster than
    every other, else ``None`` and the values that tie with the fastest (in the given order).

    Used by the sweep: ``512–1024 equal within noise``.
    """
    usable = [(v, s) for v, s in rows if s]
    if not usable:
        return None, []
    fastest = min(usable, key=lambda r: statistics.median(r[1]))
    ties = [
        v for v, s in usable if v == fastest[0] or not compare_samples(fastest[1], s).significant
    ]
    return (fastest[0], []) if len(ties) == 1 else (None, ties)


def _kernel_count(line: dict[str, Any]) -> float:
    return sum(
        float(k.get("calls") or 1)
        for op in all_ops(line)
        for k in op.get("kernels") or []
        if k.get("kind", "kernel") == "kernel"
    )


def _op_count(line: dict[str, Any]) -> float:
    return sum(float(op.get("calls") or 1) for op in all_ops(line))


def _line_time_us(line: dict[str, Any], cuda: bool) -> float:
    key = "device_us" if cuda else "cpu_us"
    return float(line.get(key) or 0.0) + float((line.get("backward") or {}).get(key) or 0.0)


@dataclass(frozen=True)
class LineDelta:
    """What changed on one line (or a group of replaced lines) between two runs.

    Attributes:
        status: ``same`` (text unchanged), ``changed`` (text edited), ``added``, ``removed``.
        line: the line in the later run (``None`` when removed).
        before_lines: the lines of the earlier run it replaces or equals.
        source: the later run's text of the line (the earlier's when removed).
        kernels_before / kernels_after: kernel launches per call on CUDA; ATen ops per call
            on the CPU (``unit`` says which).
        time_before_us / time_after_us: device time on CUDA, CPU time otherwise, µs per call.
        unit: ``kernels`` or ``ops``.
        alloc_before / alloc_after: bytes allocated per call (every device), where both runs
            were profiled with memory; else ``None``.
    """

    status: LineStatus
    line: int | None
    before_lines: tuple[int, ...]
    source: str
    kernels_before: float
    kernels_after: float
    time_before_us: float
    time_after_us: float
    unit: Literal["kernels", "ops"] = "kernels"
    alloc_before: int | None = None
    alloc_after: int | None = None

    def text(self, *, time_label: str = "device", timed: bool = True) -> str | None:
        """``2 → 1 kernels: fused · device −48%`` (``1 → 3 ops`` on the CPU, where a line's
        time under the profiler is not a measure); ``None`` when nothing changed past noise.
        ``timed=False`` (the function's own time is too noisy to tell): the line's time
        change is not said either."""
        parts: list[str] = []
        kb, ka = self.kernels_before, self.kernels_after
        if kb != ka:
            if ka == 0:
                why = ": removed"
            elif kb == 0:
                why = ": new"
            elif ka < kb and len(self.before_lines) > 1:
                why = ": fused"
            else:
                why = ""
            parts.append(f"{kb:g} → {ka:g} {self.unit}{why}")
        tb, ta = self.time_before_us, self.time_after_us
        # A line's CPU time is measured under the profiler, which inflates it (the lenses show
        # no CPU number per line for that reason): on the CPU only the op counts are compared.
        if timed and tb > 0 and ta > 0 and self.unit == "kernels":
            change = (ta / tb - 1) * 100
            if abs(change) >= LINE_NOISE_PCT:
                parts.append(f"{time_label} {_signed_pct(change, 0)}")
        ab, aa = self.alloc_before, self.alloc_after
        if ab is not None and aa is not None and ab != aa:
            # memory is deterministic on a given input: any change is real
            from kernel_lens.analysis.memory import format_bytes

            parts.append(f"alloc {format_bytes(ab, sign=True)} → {format_bytes(aa, sign=True)}")
        return " · ".join(parts) or None

    def to_json(self, *, time_label: str = "device", timed: bool = True) -> wire.LineDelta:
        """The wire's ``LineDelta``, with ``text`` (``None`` when nothing changed past noise);
        the allocations where both runs were profiled with memory."""
        out: wire.LineDelta = {
            "status": self.status,
            "line": self.line,
            "before_lines": list(self.before_lines),
            "source": self.source,
            "kernels_before": self.kernels_before,
            "kernels_after": self.kernels_after,
            "time_before_us": self.time_before_us,
            "time_after_us": self.time_after_us,
            "unit": self.unit,
            "text": self.text(time_label=time_label, timed=timed),
        }
        if self.alloc_before is not None and self.alloc_after is not None:
            out["alloc_before_bytes"] = self.alloc_before
            out["alloc_after_bytes"] = self.alloc_after
        return out


def _alloc_of(lines: Sequence[dict[str, Any]], known: bool) -> int | None:
    """Bytes the lines allocated per call (every device), or ``None`` unless their run was
    profiled with memory (``known``; a line of such a run that allocated nothing has no
    ``memory`` entry)."""
    if not known or not lines:
        return None
    return sum(
        int(e.get("allocated_bytes") or 0) for line in lines for e in line.get("memory") or []
    )


def diff_lines(
    before: Sequence[dict[str, Any]],
    after: Sequence[dict[str, Any]],
    *,
    cuda: bool,
    memory: tuple[bool, bool] = (False, False),
) -> list[LineDelta]:
    """Line-by-line deltas of two runs' ``lines`` (matched by their text, as ``diff`` does);
    ``memory``: whether each run was profiled with memory (its lines' allocations compared).

    A block of edited lines is matched one to one when both sides have as many lines; otherwise
    the later block's first line carries the whole earlier block (two lines fused into one).
    """
    a_src = [str(x.get("source", "")).strip() for x in before]
    b_src = [str(x.get("source", "")).strip() for x in after]
    out: list[LineDelta] = []
    count = _kernel_count if cuda else _op_count

    def one(status: LineStatus, olds: Sequence[dict[str, Any]], new: dict[str, Any] | None) -> None:
        out.append(
            LineDelta(
                status=status,
                line=None if new is None else int(new["line"]),
                before_lines=tuple(int(o["line"]) for o in olds),
                source=str((new or (olds[0] if olds else {})).get("source", "")),
                kernels_before=sum(count(o) for o in olds),
                kernels_after=0.0 if new is None else count(new),
                time_before_us=sum(_line_time_us(o, cuda) for o in olds),
                time_after_us=0.0 if new is None else _line_time_us(new, cuda),
                unit="kernels" if cuda else "ops",
                alloc_before=_alloc_of(olds, memory[0]),
                alloc_after=None if new is None else _alloc_of([new], memory[1]),
            )
        )

    matcher = difflib.SequenceMatcher(None, a_src, b_src, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        olds, news = list(before[i1:i2]), list(after[j1:j2])
        if tag == "equal":
            for o, n in zip(olds, news, strict=True):
                one("same", [o], n)
        elif tag == "delete":
            for o in olds:
                one("removed", [o], None)
        elif tag == "insert":
            for n in news:
                one("added", [], n)
        elif len(olds) == len(news):
            for o, n in zip(olds, news, strict=True):
                one("changed", [o], n)
        else:
            one("changed", olds, news[0])
            for n in news[1:]:
                one("changed", [], n)
    return out


@dataclass(frozen=True)
class KernelDelta:
    """One kernel (by name) in two runs: launches and device time per call (µs)."""

    name: str
    short_name: str
    calls_before: float
    calls_after: float
    device_us_before: float
    device_us_after: float

    def to_json(self) -> wire.KernelDelta:
        """The wire's ``KernelDelta``, with ``status`` (``added``/``removed``/``same``)."""
        status: Literal["same", "added", "removed"] = (
            "added" if self.calls_before == 0 else "removed" if self.calls_after == 0 else "same"
        )
        return {
            "name": self.name,
            "short_name": self.short_name,
            "status": status,
            "calls_before": self.calls_before,
            "calls_after": self.calls_after,
            "device_us_before": self.device_us_before,
            "device_us_after": self.device_us_after,
        }


def diff_kernels(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]
) -> list[KernelDelta]:
    """Per-kernel deltas of two runs' ``kernels`` totals, the later run's order first."""

    def table(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for k in rows:
            name = str(k.get("name", "?"))
            slot = out.setdefault(
                name, {"short": str(k.get("short_name") or name), "calls": 0.0, "us": 0.0}
            )
            slot["calls"] += float(k.get("calls") or 0)
            slot["us"] += float(k.get("device_us") or 0)
        return out

    a, b = table(before), table(after)
    names = list(b) + [n for n in a if n not in b]
    deltas = []
    for name in names:
        x, y = a.get(name), b.get(name)
        deltas.append(
            KernelDelta(
                name=name,
                short_name=(y or x or {}).get("short", name),
                calls_before=x["calls"] if x else 0.0,
                calls_after=y["calls"] if y else 0.0,
                device_us_before=x["us"] if x else 0.0,
                device_us_after=y["us"] if y else 0.0,
            )
        )
    return deltas


def compare_results(
    before: dict[str, Any],
    after: dict[str, Any],
    *,
    reference: str = "previous",
    reference_id: str | None = None,
) -> dict[str, Any]:
    """The comparison of two profile results (or history entries) of one function.

    Args:
        before: the reference run: a profile result or a history entry (``timing``, ``lines``,
            ``kernels``, ``device_kind``).
        after: the later run, the same shape.
        reference: what ``before`` is to the user (``previous``, ``baseline``, a run id).
        reference_id: the history id of ``before``, when it has one.

    Returns:
        ``{"reference", "reference_id", "verdict", "lines", "kernels", "kernel_count"}``:
        the verdict's JSON, line deltas, kernel deltas, and kernel launches ``[before, after]``.
    """
    cuda = after.get("device_kind") == "cuda"
    verdict = compare_timing(before.get("timing") or {}, after.get("timing") or {},
                             reference=reference)  # fmt: skip
    label = "device" if cuda else "CPU"
    with_memory = (isinstance(before.get("memory"), dict), isinstance(after.get("memory"), dict))
    lines = diff_lines(
        before.get("lines") or [], after.get("lines") or [], cuda=cuda, memory=with_memory
    )
    kernels = diff_kernels(before.get("kernels") or [], after.get("kernels") or [])
    count_before = sum(_kernel_count(x) for x in before.get("lines") or [])
    count_after = sum(_kernel_count(x) for x in after.get("lines") or [])
    verdict = _busy_check(verdict, before, after, (count_before, count_after))
    return {
        "reference": reference,
        "reference_id": reference_id,
        "device_before": before.get("device"),
        "device_after": after.get("device"),
        "verdict": verdict.to_json(),
        # a line's time change is not said where the function's own is too noisy to tell
        "lines": [
            d.to_json(time_label=label, timed=verdict.kind not in ("ambiguous", "untested"))
            for d in lines
        ],
        "kernels": [k.to_json() for k in kernels],
        "kernel_count": [count_before, count_after],
        "memory": compare_memory(before, after),
    }


def compare_memory(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """Each device's peak in two runs profiled with memory, where it changed: memory is
    deterministic on a given input, so the figures are exact and any change is real (no test).

    Returns:
        ``[{"device", "before_bytes", "after_bytes", "change_pct", "text"}]`` with ``text``
        like ``peak −38% (1.9 → 1.2 GiB)``; empty when neither changed or one has no memory.
    """
    from kernel_lens.analysis.memory import device_label, format_bytes

    def peaks(run: dict[str, Any]) -> dict[str, int]:
        memory = run.get("memory")
        if not isinstance(memory, dict):
            return {}
        return {
            str(d.get("device")): int(d["peak_bytes"])
            for d in memory.get("devices") or []
            if isinstance(d.get("peak_bytes"), int)
        }

    was, now = peaks(before), peaks(after)
    out = []
    for device, after_bytes in now.items():
        before_bytes = was.get(device)
        if before_bytes is None or before_bytes == after_bytes:
            continue
        pct = 100.0 * (after_bytes - before_bytes) / before_bytes if before_bytes else 100.0
        b, a = format_bytes(before_bytes), format_bytes(after_bytes)
        unit = a.split(" ")[-1]
        span = f"{b.removesuffix(' ' + unit)} → {a}" if b.endswith(" " + unit) else f"{b} → {a}"
        label = "" if len(now) == 1 else f"{device_label(device)} "
        out.append(
            {
                "device": device,
                "before_bytes": before_bytes,
                "after_bytes": after_bytes,
                "change_pct": round(pct, 1),
                "text": f"{label}peak {_signed_pct(pct, 0)} ({span})",
            }
        )
    return out


def summary_delta(result: dict[str, Any]) -> str | None:
    """The summary lens's delta for a result carrying a ``comparison`` (see
    :func:`compare_results`): ``−49.8% vs 0.383 ms``, ``≈ same (±0.4%)``, and
    ``$(pinned) baseline`` when the result's ``history`` says it is the pinned baseline;
    ``None`` when there is neither."""
    parts: list[str] = []
    comparison = result.get("comparison")
    if isinstance(comparison, dict):
        text = (comparison.get("verdict") or {}).get("text")
        if text:
            parts.append(str(text))
        parts.extend(str(m["text"]) for m in comparison.get("memory") or [] if m.get("text"))
    own = result.get("history")
    if isinstance(own, dict) and own.get("baseline") and own.get("baseline") == own.get("id"):
        parts.append("$(pinned) baseline")
    return " · ".join(parts) or None


def line_delta(result: dict[str, Any], line: int) -> str | None:
    """A per-line lens's delta for the result's ``line`` (1-based, as measured):
    ``2 → 1 kernels: fused · device −48%``; ``None`` when nothing changed past noise."""
    comparison = result.get("comparison")
    if not isinstance(comparison, dict):
        return None
    for d in comparison.get("lines") or []:
        if d.get("line") == line and d.get("text"):
            return str(d["text"])
    return None


def format_comparison(comparison: dict[str, Any], *, before: str, after: str) -> str:
    """The comparison as text for a terminal: the verdict, then line and kernel deltas."""
    v = comparison["verdict"]
    how = (
        f"Mann–Whitney p = {v['p_value']:.2g}"
        if v.get("p_value") is not None
        else (
            "interquartile ranges"
            if v["method"] == "iqr"
            else "timed differently"
            if v["method"] == "incomparable"
            else "too few samples to test"
        )
    )
    out = [
        f"{after} vs {before}: {_ms(v['before_ms'])} → {_ms(v['after_ms'])} · {v['text']}"
        f" ({how}; called at p < {ALPHA:g} and ≥ {MIN_EFFECT_PCT:g}%)",
    ]
    out.extend(f"memory: {m['text']}" for m in comparison.get("memory") or [])
    kb, ka = comparison.get("kernel_count") or [0, 0]
    if kb != ka:
        out.append(f"kernels per call: {kb:g} → {ka:g}")
    changed = [d for d in comparison.get("lines") or [] if d["status"] != "same" or d["text"]]
    if changed:
        out.append("lines:")
    for d in changed:
        where = f"{d['line']}" if d["line"] is not None else "-"
        was = ",".join(str(x) for x in d["before_lines"]) or "-"
        extra = f"  {d['text']}" if d["text"] else ""
        out.append(f"  {was:>7} → {where:<5} {d['status']:<8} {d['source'].strip()}{extra}")
    moved = [k for k in comparison.get("kernels") or [] if k["status"] != "same"]
    for k in moved:
        out.append(f"  kernel {k['status']}: {k['short_name']} ({k['calls_before']:g} → "
                   f"{k['calls_after']:g} calls)")  # fmt: skip
    return "\n".join(out)
