"""When to stop timing: once the number is known (issue 28), capped by the budget. Pure.

The anchors are nvbench's stopping criteria: ``stdrel`` stops once the relative standard
deviation of the samples is under ``max-noise`` and at least ``min-time`` was measured, or once
that noise has itself stopped moving (a noisy benchmark that will never get under the bar);
``entropy`` stops once the entropy of the samples' distribution has flattened out. Nsight
Python calls a measurement stable under 2% relative standard deviation.

Kernel Lens shows a *median*, so the rule is on the median's confidence interval:

- **converged**: the distribution-free ~95% interval of the median
  (:func:`kernel_lens.analysis.compare.median_interval`) is within ±:data:`TARGET_CI_PCT` of the
  median, after at least :data:`MIN_REPS` repetitions and :data:`MIN_TIME_MS` of measurement;
- **not shrinking**: the interval of all samples is no narrower than that of their first half,
  which was no narrower than that of their first quarter (independent samples shrink it by
  √2 per doubling): drifting or bimodal samples that more repetitions do not settle
  (at least :data:`PLATEAU_MIN_REPS` repetitions);
- **budget**: the time budget is spent (with at least the minimum repetitions), or the hard
  cap is reached whatever the count — a noisy measurement says it hit the cap.

:func:`should_stop` takes the samples and the time spent and returns a :class:`Decision`
(stop or continue, and why); the timing stage calls it between batches, the sweep through the
timing stage, and the history's comparison reads the ``stopped`` it leaves in the policy.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernel_lens.analysis.compare import median_interval

__all__ = [
    "MIN_REPS",
    "MIN_TIME_MS",
    "PLATEAU_MIN_REPS",
    "PLATEAU_RATIO",
    "TARGET_CI_PCT",
    "Decision",
    "converged",
    "median_ci_pct",
    "should_stop",
    "stopped_text",
]

#: The median's ~95% interval within ± this percent of the median: the number is known.
TARGET_CI_PCT = 1.0
#: Never stop on convergence before this many repetitions (the interval needs a few).
MIN_REPS = 20
#: … nor before this much measured time (ms): nvbench's ``min-time``, scaled to a click.
MIN_TIME_MS = 10.0
#: The "not shrinking" rule needs this many repetitions (its quarter holds 256: fewer give
#: intervals too rough to compare, and a busy CPU machine would stop a stable function).
PLATEAU_MIN_REPS = 1024
#: An interval at least this share of the one of half the samples is not shrinking
#: (independent samples give about 0.71).
PLATEAU_RATIO = 0.95


@dataclass(frozen=True)
class Decision:
    """Whether to stop timing, and why.

    Attributes:
        stop: stop now.
        reason: ``converged``, ``not shrinking``, ``budget`` or ``continue``.
        ci_pct: the median's interval half-width in percent of the median (``None`` under 2
            samples or a zero median).
    """

    stop: bool
    reason: str
    ci_pct: float | None

    @property
    def text(self) -> str:
        """``converged (CI ±0.8%)``, ``not shrinking (CI ±3.1%)``, ``budget``, ``continue``."""
        if self.reason in ("converged", "not shrinking") and self.ci_pct is not None:
            return f"{self.reason} (CI ±{_pct(self.ci_pct)})"
        return self.reason


def _pct(value: float) -> str:
    return f"{value:.1f}%" if value < 10 else f"{value:.0f}%"


def median_ci_pct(samples: Sequence[float]) -> float | None:
    """Half-width of the median's ~95% interval, in percent of the median (the wider side)."""
    if len(samples) < 2:
        return None
    med = statistics.median(samples)
    if med <= 0:
        return None
    lo, hi = median_interval(samples)
    return 100 * max(med - lo, hi - med) / med


def should_stop(
    samples: Sequence[float],
    *,
    spent_ms: float,
    budget_ms: float,
    max_total_ms: float | None = None,
    target_pct: float = TARGET_CI_PCT,
    min_reps: int = MIN_REPS,
    min_time_ms: float = MIN_TIME_MS,
    budget_min_reps: int = 10,
) -> Decision:
    """Stop or continue after ``samples`` (ms, in the order taken) and ``spent_ms`` of timing.

    Args:
        samples: the repetitions so far.
        spent_ms: wall time spent timing them (what the budget counts).
        budget_ms: the time budget: spent, with ``budget_min_reps`` in, it stops (``budget``).
        max_total_ms: a hard cap that stops even before ``budget_min_reps``.
        target_pct: the interval's half-width that counts as converged.
        min_reps: repetitions before a stop on convergence.
        min_time_ms: measured time before a stop on convergence.
        budget_min_reps: repetitions before the budget stops (a slow function gets these,
            up to the hard cap).
    """
    n = len(samples)
    ci = median_ci_pct(samples)
    if max_total_ms is not None and spent_ms >= max_total_ms:
        return Decision(True, "budget", ci)
    if n >= min_reps and ci is not None:
        if ci <= target_pct and spent_ms >= min_time_ms:
            return Decision(True, "converged", ci)
        if n >= PLATEAU_MIN_REPS:
            half = median_ci_pct(samples[: n // 2])
            quarter = median_ci_pct(samples[: n // 4])
            if (
                half is not None
                and quarter is not None
                and ci >= PLATEAU_RATIO * half
                and half >= PLATEAU_RATIO * quarter
            ):
                return Decision(True, "not shrinking", ci)
    if spent_ms >= budget_ms and n >= budget_min_reps:
        return Decision(True, "budget", ci)
    return Decision(False, "continue", ci)


def stopped_text(timing: Mapping[str, Any] | None) -> str | None:
    """A timing's ``policy.stopped`` (``converged (CI ±0.8%)``, ``budget``…), if recorded."""
    policy = (timing or {}).get("policy")
    if not isinstance(policy, Mapping):
        return None
    stopped = policy.get("stopped")
    return str(stopped) if stopped else None


def converged(timing: Mapping[str, Any] | None) -> bool | None:
    """Whether a timing converged: ``None`` when it does not say (an older run, fixed reps)."""
    stopped = stopped_text(timing)
    if stopped is None or stopped.startswith("fixed"):
        return None
    return stopped.startswith("converged")
