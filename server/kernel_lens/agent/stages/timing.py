"""Stage *timing*: the function's own time, measured the way GPU people measure it.

On CUDA: warm-up, then one CUDA event pair per repetition around the call, the L2 cache flushed
(a 256 MiB buffer zeroed) before each repetition, one synchronisation at the end — the method of
``triton.testing.do_bench``. On CPU: ``time.perf_counter`` around each call. The number of
repetitions adapts to the function's cost within a time budget, and grows (within a hard cap)
while the median is not yet stable. Never run under the profiler.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TimingConfig", "TimingResult", "time_function"]

#: IQR/median above this ratio earns a warning (torch.utils.benchmark uses the same idea).
IQR_WARN_RATIO = 0.1
#: Two halves of the samples whose medians differ by more than this ratio are "not stable yet".
STABLE_RATIO = 0.01
L2_FLUSH_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class TimingConfig:
    """How to time.

    Attributes:
        warmup_ms: minimum warm-up time in milliseconds (at least 2 calls are always made).
        budget_ms: time budget for the timed repetitions, in milliseconds.
        reps: a fixed number of repetitions; 0 = adaptive within the budget.
        min_reps: lower bound of adaptive repetitions.
        max_reps: upper bound of adaptive repetitions.
        max_total_ms: hard cap on the whole measurement (warm-up excluded), in milliseconds.
        flush_l2: zero a 256 MiB buffer before each CUDA repetition.
    """

    warmup_ms: float = 25.0
    budget_ms: float = 500.0
    reps: int = 0
    min_reps: int = 10
    max_reps: int = 10_000
    max_total_ms: float = 4_000.0
    flush_l2: bool = True


@dataclass(frozen=True)
class TimingResult:
    """Repetition times of one function, in milliseconds, with their summary.

    Attributes:
        method: ``cuda-events`` or ``perf-counter``.
        device: ``cuda`` or ``cpu``.
        samples_ms: every timed repetition, in order.
        warmup_calls: calls made before timing.
        l2_flushed: whether L2 was flushed before each repetition.
    """

    method: str
    device: str
    samples_ms: tuple[float, ...]
    warmup_calls: int
    l2_flushed: bool
    warnings: tuple[str, ...] = field(default=())

    @property
    def reps(self) -> int:
        """Number of timed repetitions."""
        return len(self.samples_ms)

    @property
    def median_ms(self) -> float:
        """Median repetition time in milliseconds."""
        return statistics.median(self.samples_ms)

    @property
    def quartiles_ms(self) -> tuple[float, float]:
        """First and third quartiles in milliseconds."""
        if len(self.samples_ms) < 2:
            return self.samples_ms[0], self.samples_ms[0]
        q = statistics.quantiles(self.samples_ms, n=4, method="inclusive")
        return q[0], q[2]

    @property
    def iqr_ms(self) -> float:
        """Interquartile range in milliseconds."""
        q1, q3 = self.quartiles_ms
        return q3 - q1

    @property
    def spread_pct(self) -> float:
        """Half the interquartile range as a percentage of the median: the ``±`` shown to users."""
        med = self.median_ms
        return 0.0 if med <= 0 else 50.0 * self.iqr_ms / med

    def to_json(self, *, with_samples: bool = True) -> dict[str, Any]:
        """Plain JSON: ``median_ms``, ``spread_pct``, ``reps`` and the details."""
        q1, q3 = self.quartiles_ms
        out: dict[str, Any] = {
            "median_ms": self.median_ms,
            "spread_pct": round(self.spread_pct, 3),
            "reps": self.reps,
            "method": self.method,
            "device": self.device,
            "mean_ms": statistics.fmean(self.samples_ms),
            "min_ms": min(self.samples_ms),
            "max_ms": max(self.samples_ms),
            "q1_ms": q1,
            "q3_ms": q3,
            "warmup_calls": self.warmup_calls,
            "l2_flushed": self.l2_flushed,
            "warnings": list(self.warnings),
        }
        if with_samples:
            out["samples_ms"] = list(self.samples_ms)
        return out


def _stable(samples: list[float]) -> bool:
    half = len(samples) // 2
    if half < 3:
        return False
    a, b = statistics.median(samples[:half]), statistics.median(samples[half:])
    return abs(a - b) <= STABLE_RATIO * max(a, b, 1e-12)


def _plan_reps(config: TimingConfig, estimate_ms: float) -> int:
    if config.reps > 0:
        return config.reps
    wanted = int(config.budget_ms / max(estimate_ms, 1e-6))
    return max(config.min_reps, min(config.max_reps, wanted))


def _warnings(result: TimingResult) -> tuple[str, ...]:
    out: list[str] = []
    med = result.median_ms
    if med > 0 and result.iqr_ms / med > IQR_WARN_RATIO:
        out.append(
            f"noisy: the interquartile range is {100 * result.iqr_ms / med:.0f}% of the median"
        )
    if result.reps < 5:
        out.append(f"only {result.reps} repetitions fit in the time budget")
    if result.device == "cuda" and med < 0.01:
        out.append("under 10 µs: launch overhead and event resolution dominate this number")
    return tuple(out)


def _time_cpu(fn: Callable[[], Any], config: TimingConfig) -> TimingResult:
    warm = 0
    start = time.perf_counter()
    while warm < 2 or (time.perf_counter() - start) * 1e3 < config.warmup_ms:
        fn()
        warm += 1
        if warm >= 1000:
            break
    estimate = (time.perf_counter() - start) * 1e3 / warm
    samples: list[float] = []
    target = _plan_reps(config, estimate)
    began = time.perf_counter()
    while True:
        while len(samples) < target:
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1e3)
            if config.reps == 0 and (time.perf_counter() - began) * 1e3 > config.max_total_ms:
                break
        spent = (time.perf_counter() - began) * 1e3
        if config.reps > 0 or _stable(samples) or spent * 2 > config.max_total_ms:
            break
        if len(samples) < target or target >= config.max_reps:
            break
        target = min(config.max_reps, target * 2)
    result = TimingResult("perf-counter", "cpu", tuple(samples), warm, False)
    return TimingResult(**{**result.__dict__, "warnings": _warnings(result)})


def _time_cuda(fn: Callable[[], Any], config: TimingConfig) -> TimingResult:
    import torch

    cache = (
        torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        if config.flush_l2
        else None
    )
    fn()
    torch.cuda.synchronize()
    # Estimate from a batch of 5, as do_bench does, then warm up for warmup_ms.
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(5):
        if cache is not None:
            cache.zero_()
        fn()
    t1.record()
    torch.cuda.synchronize()
    estimate = max(t0.elapsed_time(t1) / 5, 1e-4)
    warm = 6 + max(1, int(config.warmup_ms / estimate))
    for _ in range(warm - 6):
        fn()
    torch.cuda.synchronize()

    samples: list[float] = []
    target = _plan_reps(config, estimate)
    began = time.perf_counter()
    while True:
        n = target - len(samples)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            if cache is not None:
                cache.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        samples.extend(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))
        spent = (time.perf_counter() - began) * 1e3
        if config.reps > 0 or _stable(samples) or target >= config.max_reps:
            break
        if spent * 3 > config.max_total_ms:
            break
        target = min(config.max_reps, target * 2)
    del cache
    result = TimingResult("cuda-events", "cuda", tuple(samples), warm, config.flush_l2)
    return TimingResult(**{**result.__dict__, "warnings": _warnings(result)})


def time_function(
    fn: Callable[[], Any], *, device: str, config: TimingConfig | None = None
) -> TimingResult:
    """Time ``fn()`` (no arguments: bind inputs first) on ``device`` (``cuda`` or ``cpu``).

    Args:
        fn: the call to time.
        device: ``cuda`` uses CUDA events and an L2 flush; anything else uses ``perf_counter``.
        config: repetition policy; defaults to :class:`TimingConfig`.

    Returns:
        The repetition times in milliseconds and their summary.
    """
    config = config or TimingConfig()
    if device == "cuda":
        return _time_cuda(fn, config)
    return _time_cpu(fn, config)
