"""Stage *timing*: the function's own time, measured the way GPU people measure it.

On CUDA: warm-up, then one CUDA event pair per repetition around the call, the L2 cache flushed
(a 256 MiB buffer zeroed) before each repetition, one synchronisation at the end — the method of
``triton.testing.do_bench``. On CPU: ``time.perf_counter`` around each call. The number of
repetitions adapts to the function's cost: repetitions run in batches and stop once the median's
confidence interval is within ±1% (:func:`kernel_lens.analysis.stopping.should_stop`, after
nvbench's stopping criteria), or once it stops shrinking, capped by the time budget — a stable
kernel stops in milliseconds, a noisy one says it hit the budget (``policy.stopped``). A busy
machine is said: when other processes took CPU time during the measurement (``/proc/stat``), the
load average is over the core count, or the samples are bimodal or drift, the result carries a
``warning``. Never run under the profiler.

Every result says how it was made (``policy``: L2 cold or warm, eager, CPU launch overhead
included, reps, stable or not) and, on CUDA, the GPU's clocks and temperature read through NVML
before and after (``clocks``); a clock drop or a throttle reason is a warning on the number.

A launch-bound CUDA function (:func:`kernel_lens.analysis.timing_policy.launch_bound`) is also
timed captured in a CUDA graph (:func:`time_in_graph`): ``calls`` calls captured into one graph,
the graph replayed between CUDA events, L2 warm and no flush inside the timed window — as
``triton.testing.do_bench_cudagraph``, which it agrees with (a flush inside the graph, even with
a flush-only graph subtracted as tritonbench does, leaves its tail and the dependency on it in
every call: +38% on a 1 µs kernel; issue 34). ``flush_l2=True`` still does that, for a test. A
function that cannot be captured (a host sync, ``.item()``, CPU tensors) gets the reason.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from kernel_lens.agent.phases import mark
from kernel_lens.analysis.stopping import Decision, should_stop
from kernel_lens.analysis.timing_policy import (
    capture_reason,
    clock_warnings,
    graph_per_call_ms,
    make_policy,
)
from kernel_lens.wire import results as wire
from kernel_lens.wire.lsp import DEFAULT_BUDGET_MS, DEFAULT_WARMUP_MS

__all__ = [
    "BatchFn",
    "CpuUsage",
    "GraphTiming",
    "TimingConfig",
    "TimingResult",
    "interference_warning",
    "partial_timing",
    "sample_shape",
    "time_function",
    "time_in_graph",
]

#: IQR/median above this ratio earns a warning (torch.utils.benchmark uses the same idea).
IQR_WARN_RATIO = 0.1
L2_FLUSH_BYTES = 256 * 1024 * 1024
#: Other processes using this share of the cores (at least half a core) while timing: busy.
BUSY_SHARE = 0.25
#: Two neighbouring sorted samples this far apart (ratio), each side holding ≥ 10% of them: bimodal.
BIMODAL_GAP = 1.3
#: First and last third of the samples whose medians differ by this ratio: drifting.
DRIFT_RATIO = 0.2
#: /proc/stat's measurement window must span this many clock ticks per core to be read.
MIN_TICKS = 10
#: Between two looks at the stopping rule (CPU), at least this much time (ms) …
CHECK_EVERY_MS = 5.0
#: … or this growth of the sample count.
CHECK_GROWTH = 1.25

#: ``on_batch(samples_ms, decision)``: called after each batch of repetitions (the timing so
#: far and the stopping rule's verdict on it), e.g. to stream the converging number.
BatchFn = Callable[[Sequence[float], Decision], None]


@dataclass(frozen=True)
class TimingConfig:
    """How to time.

    Attributes:
        warmup_ms: minimum warm-up time in milliseconds (at least 2 calls are always made).
        budget_ms: time budget for the timed repetitions, in milliseconds.
        reps: a fixed number of repetitions; 0 = adaptive within the budget.
        min_reps: lower bound of adaptive repetitions.
        max_reps: upper bound of adaptive repetitions.
        max_total_ms: hard cap on the whole measurement (warm-up excluded), in milliseconds: a
            slow function still gets ``min_reps`` repetitions up to this cap.
        flush_l2: zero a 256 MiB buffer before each CUDA repetition.
        target_ci_pct: stop once the median's ~95% interval is within ± this percent
            (0: never, time the whole budget).
        min_time_ms: measured time before a stop on convergence.
    """

    warmup_ms: float = DEFAULT_WARMUP_MS
    budget_ms: float = DEFAULT_BUDGET_MS
    reps: int = 0
    min_reps: int = 10
    max_reps: int = 10_000
    max_total_ms: float = 4_000.0
    flush_l2: bool = True
    target_ci_pct: float = 1.0
    min_time_ms: float = 10.0

    def decide(self, samples: Sequence[float], spent_ms: float) -> Decision:
        """The stopping rule on the samples so far (a fixed ``reps`` stops at that count)."""
        if self.reps > 0:
            done = len(samples) >= self.reps
            return Decision(done, "fixed reps" if done else "continue", None)
        if len(samples) >= self.max_reps:
            return Decision(True, "budget", None)
        return should_stop(
            samples,
            spent_ms=spent_ms,
            budget_ms=self.budget_ms,
            max_total_ms=self.max_total_ms,
            target_pct=self.target_ci_pct if self.target_ci_pct > 0 else -1.0,
            min_time_ms=self.min_time_ms,
            budget_min_reps=self.min_reps,
        )


@dataclass(frozen=True)
class TimingResult:
    """Repetition times of one function, in milliseconds, with their summary.

    Attributes:
        method: ``cuda-events`` or ``perf-counter``.
        device: ``cuda`` or ``cpu``.
        samples_ms: every timed repetition, in order.
        warmup_calls: calls made before timing.
        l2_flushed: whether L2 was flushed before each repetition.
        warnings: notes on the number's quality (noisy, few repetitions, under 10 µs, busy).
        warning: the interference warning (``busy machine: …``), also in ``warnings``.
    """

    method: str
    device: str
    samples_ms: tuple[float, ...]
    warmup_calls: int
    l2_flushed: bool
    warnings: tuple[str, ...] = field(default=())
    warning: str | None = None
    clocks: dict[str, Any] | None = None
    nvml_note: str | None = None
    #: Why the repetitions stopped (``converged (CI ±0.8%)``, ``not shrinking (…)``,
    #: ``budget``, ``fixed reps``), and the median's interval then (percent).
    stopped: str | None = None
    ci_pct: float | None = None

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

    def to_json(self, *, with_samples: bool = True) -> wire.ProfileTiming:
        """Plain JSON: ``median_ms``, ``spread_pct``, ``reps`` and the details."""
        q1, q3 = self.quartiles_ms
        out: wire.ProfileTiming = {
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
            "warning": self.warning,
            "policy": cast(
                wire.TimingPolicy,
                make_policy(
                    method=self.method,
                    l2_flushed=self.l2_flushed,
                    reps=self.reps,
                    samples_ms=self.samples_ms,
                    nvml=self.nvml_note,
                    stopped=self.stopped,
                    ci_pct=self.ci_pct,
                ),
            ),
        }
        if self.clocks is not None:
            out["clocks"] = cast(wire.GpuClocks, self.clocks)
        if with_samples:
            out["samples_ms"] = list(self.samples_ms)
        return out


@dataclass(frozen=True)
class CpuUsage:
    """What the machine did while timing: who used the cores.

    Attributes:
        cpus: cores of the machine.
        load1: the 1-minute load average at the end (this process included).
        others_cores: cores' worth of CPU time that *other* processes (and a hypervisor's steal)
            used during the measurement; ``None`` where ``/proc/stat`` cannot say.
    """

    cpus: int
    load1: float
    others_cores: float | None


def _ticks() -> tuple[int, int, int] | None:
    """(busy ticks of all cores, all ticks of all cores, this process's ticks), Linux only."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return None
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    total = sum(values[:8])
    mine = int(fields[11]) + int(fields[12])  # utime + stime, all threads
    return total - idle, total, mine


class _Usage:
    """Reads the cores' use around a measurement."""

    def __init__(self) -> None:
        self.cpus = os.cpu_count() or 1
        self.start = _ticks()

    def stop(self) -> CpuUsage:
        end = _ticks()
        try:
            load1 = os.getloadavg()[0]
        except OSError:
            load1 = 0.0
        others: float | None = None
        if self.start is not None and end is not None:
            busy = end[0] - self.start[0]
            total = end[1] - self.start[1]
            mine = end[2] - self.start[2]
            per_core = total / self.cpus
            if per_core >= MIN_TICKS:
                others = max(0.0, (busy - mine) / per_core)
        return CpuUsage(self.cpus, load1, others)


def sample_shape(samples_ms: tuple[float, ...] | list[float]) -> list[str]:
    """What the samples' shape says of interference: ``bimodal …`` and/or ``drifting …``.

    Pure: a bimodal set has two sorted neighbours :data:`BIMODAL_GAP` apart with at least a tenth
    of the samples on each side (20 samples at least); a drifting set has first- and last-third
    medians :data:`DRIFT_RATIO` apart (15 samples at least).
    """
    out: list[str] = []
    n = len(samples_ms)
    if n >= 20:
        ordered = sorted(samples_ms)
        edge = max(2, n // 10)
        best, at = 1.0, 0
        for i in range(edge, n - edge + 1):
            low = ordered[i - 1]
            # From a zero sample, any positive one is infinitely far; another zero is no gap.
            ratio = ordered[i] / low if low > 0 else (math.inf if ordered[i] > 0 else 1.0)
            if ratio > best:
                best, at = ratio, i
        if best >= BIMODAL_GAP:
            lo, hi = statistics.median(ordered[:at]), statistics.median(ordered[at:])
            out.append(f"samples bimodal ({_ms(lo)} and {_ms(hi)}, {n - at} of {n} slow)")
    if n >= 15:
        third = n // 3
        first, last = statistics.median(samples_ms[:third]), statistics.median(samples_ms[-third:])
        if min(first, last) > 0 and abs(last - first) / min(first, last) >= DRIFT_RATIO:
            out.append(f"samples drifting ({_ms(first)} → {_ms(last)})")
    return out


def _ms(value: float) -> str:
    return f"{value:.3g} ms"


def interference_warning(
    samples_ms: tuple[float, ...] | list[float], usage: CpuUsage
) -> str | None:
    """``busy machine: load 2.1 on 2 cores, …; samples bimodal (…)``, or ``None``. Pure.

    The machine is busy when other processes used :data:`BUSY_SHARE` of the cores (half a core
    at least) during the measurement, or, where that is unknown, when the load average is over
    the core count. The samples' shape (:func:`sample_shape`) is added; alone it gives an
    ``interference?`` warning.
    """
    shape = sample_shape(samples_ms)
    if usage.others_cores is not None:
        busy = usage.others_cores >= max(0.5, BUSY_SHARE * usage.cpus)
    else:
        busy = usage.load1 > usage.cpus
    if busy:
        what = f"busy machine: load {usage.load1:.1f} on {usage.cpus} cores"
        if usage.others_cores is not None:
            what += f", other processes used {usage.others_cores:.1f} cores while timing"
        return "; ".join([what, *shape])
    if shape:
        return "interference? " + "; ".join(shape)
    return None


def _plan_reps(config: TimingConfig, estimate_ms: float) -> int:
    """The repetitions the budget allows (the most a timing takes: it stops earlier once the
    median is known), from the per-call estimate, within ``min_reps``…``max_reps``."""
    if config.reps > 0:
        return config.reps
    wanted = int(config.budget_ms / max(estimate_ms, 1e-6))
    return max(config.min_reps, min(config.max_reps, wanted))


def _converging(config: TimingConfig) -> bool:
    return config.reps <= 0 and config.target_ci_pct > 0


def _next_batch(config: TimingConfig, done: int, target: int, estimate_ms: float) -> int:
    """The size of the next CUDA batch towards ``target`` repetitions: the first holds what the
    stopping rule needs to speak (its minimum count and time), each next one half again as many
    as so far; one batch when the rule is off (fixed reps, or no target interval)."""
    if not _converging(config):
        return target - done
    if done == 0:
        return min(target, max(20, math.ceil(config.min_time_ms / max(estimate_ms, 1e-6))))
    return min(max(done // 2, 10), target - done)


def _cuda_target(config: TimingConfig, estimate_ms: float) -> int:
    """The repetitions the budget (and the hard cap) allow at ``estimate_ms`` a call."""
    n = _plan_reps(config, estimate_ms)
    if config.reps == 0:
        n = min(n, max(config.min_reps, int(config.max_total_ms / estimate_ms)))
    return n


def partial_timing(samples_ms: Sequence[float], decision: Decision, method: str) -> dict[str, Any]:
    """The timing so far, as a streamed partial result shows it while it converges:
    ``median_ms``, ``spread_pct``, ``reps``, ``ci_pct``, ``method`` and ``converging: true``."""
    ordered = sorted(samples_ms)
    med = statistics.median(ordered)
    spread = 0.0
    if len(ordered) >= 2 and med > 0:
        q = statistics.quantiles(ordered, n=4, method="inclusive")
        spread = 50.0 * (q[2] - q[0]) / med
    return {
        "median_ms": med,
        "spread_pct": round(spread, 3),
        "reps": len(ordered),
        "ci_pct": None if decision.ci_pct is None else round(decision.ci_pct, 3),
        "method": method,
        "warnings": [],
        "converging": True,
    }


def _finish(result: TimingResult, usage: CpuUsage) -> TimingResult:
    warnings = list(_warnings(result))
    clocks = result.clocks or {}
    warnings.extend(clock_warnings(clocks.get("before"), clocks.get("after")))
    warning = interference_warning(result.samples_ms, usage)
    if warning:
        warnings.append(warning)
    return TimingResult(**{**result.__dict__, "warnings": tuple(warnings), "warning": warning})


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


def _time_cpu(
    fn: Callable[[], Any], config: TimingConfig, on_batch: BatchFn | None = None
) -> TimingResult:
    warm = 0
    start = time.perf_counter()
    while warm < 2 or (time.perf_counter() - start) * 1e3 < config.warmup_ms:
        fn()
        warm += 1
        if warm >= 1000:
            break
    estimate = (time.perf_counter() - start) * 1e3 / warm
    samples: list[float] = []
    # A fixed count is exact; an adaptive one runs until the budget's measured time is spent
    # (or the rule stops it): a count planned from the warm-up, whose first calls are cold and
    # few, would stop a fast function far short of its budget and call that the budget.
    target = config.reps if config.reps > 0 else config.max_reps
    mark(f"timing: warmed up ({warm} calls, {estimate:.3g} ms each)")
    usage = _Usage()
    began = time.perf_counter()
    converging = _converging(config)
    # The stopping rule is asked every CHECK_EVERY_MS or CHECK_GROWTH× more samples.
    next_check, checked = 20, began
    decision = Decision(False, "continue", None)
    while len(samples) < target:
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        samples.append((t1 - t0) * 1e3)
        if config.reps == 0:
            spent = (t1 - began) * 1e3
            # The budget ends it (once min_reps are in); the hard cap ends even those.
            if (spent > config.budget_ms and len(samples) >= config.min_reps) or (
                spent > config.max_total_ms
            ):
                break
            n = len(samples)
            if converging and (n >= next_check or (t1 - checked) * 1e3 >= CHECK_EVERY_MS):
                decision = config.decide(samples, spent)
                next_check, checked = max(n + 1, int(n * CHECK_GROWTH)), time.perf_counter()
                if decision.stop and decision.reason != "budget":
                    break
                if on_batch is not None:
                    on_batch(samples, decision)
    if not decision.stop or decision.reason == "budget":
        decision = _at_the_end(config, samples)
    result = TimingResult(
        "perf-counter", "cpu", tuple(samples), warm, False,
        stopped=decision.text, ci_pct=decision.ci_pct,
    )  # fmt: skip
    return _finish(result, usage.stop())


def _at_the_end(config: TimingConfig, samples: Sequence[float]) -> Decision:
    """Why repetitions that ran to their planned count stopped: fixed, or the budget."""
    from kernel_lens.analysis.stopping import median_ci_pct

    reason = "fixed reps" if config.reps > 0 else "budget"
    return Decision(True, reason, median_ci_pct(samples))


def _time_cuda(
    fn: Callable[[], Any], config: TimingConfig, on_batch: BatchFn | None = None
) -> TimingResult:
    import torch

    from kernel_lens.agent.gpu_clocks import nvml_note, read_gpu

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
    mark(f"timing: warmed up ({warm} calls, {estimate:.3g} ms each)")

    # Batches of event pairs sized to the budget, each read after one synchronisation; the
    # stopping rule between batches (the budget counts the planned cost of each repetition).
    # While the rule runs, the count is planned again from the batches' measured cost: the
    # estimate batch's 5 calls can be slow (clocks still rising) and would stop a converging
    # kernel short of its budget, saying "budget".
    n = _cuda_target(config, estimate)
    first_estimate, batch_ms = estimate, 0.0
    usage = _Usage()
    before = read_gpu()
    mark("timing: clocks read")
    samples: list[float] = []
    decision = Decision(False, "continue", None)
    while len(samples) < n:
        size = _next_batch(config, len(samples), n, first_estimate)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(size)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(size)]
        for i in range(size):
            if cache is not None:
                cache.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        samples.extend(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))
        mark(f"timing: batch of {size} done")
        if not _converging(config):
            break
        # A repetition's cost, flush included: the batch's first start to its last end.
        batch_ms += starts[0].elapsed_time(ends[-1])
        estimate = max(batch_ms / len(samples), 1e-4)
        n = _cuda_target(config, estimate)
        if len(samples) >= n:
            break
        decision = config.decide(samples, len(samples) * estimate)
        if decision.stop and decision.reason != "budget":
            break
        if on_batch is not None:
            on_batch(samples, decision)
    if not decision.stop or decision.reason == "budget":
        decision = _at_the_end(config, samples)
    after = read_gpu()
    mark("timing: clocks read again")
    del cache
    clocks = {"before": before, "after": after} if before is not None else None
    result = TimingResult(
        "cuda-events",
        "cuda",
        tuple(samples),
        warm,
        config.flush_l2,
        clocks=clocks,
        nvml_note=nvml_note() if before is None else None,
        stopped=decision.text,
        ci_pct=decision.ci_pct,
    )
    return _finish(result, usage.stop())


def time_function(
    fn: Callable[[], Any],
    *,
    device: str,
    config: TimingConfig | None = None,
    on_batch: BatchFn | None = None,
) -> TimingResult:
    """Time ``fn()`` (no arguments: bind inputs first) on ``device`` (``cuda`` or ``cpu``).

    Args:
        fn: the call to time.
        device: ``cuda`` uses CUDA events and an L2 flush; anything else uses ``perf_counter``.
        config: repetition policy; defaults to :class:`TimingConfig`.
        on_batch: called after each batch with the samples so far and the stopping rule's
            decision (the timing as it converges).

    Returns:
        The repetition times in milliseconds and their summary.
    """
    config = config or TimingConfig()
    if device == "cuda":
        return _time_cuda(fn, config, on_batch)
    return _time_cpu(fn, config, on_batch)


@dataclass(frozen=True)
class GraphTiming:
    """A function timed captured in a CUDA graph, or why it could not be.

    Attributes:
        per_call_ms: each retry's time per call (flush subtracted), milliseconds; empty when
            the function could not be captured.
        calls: calls captured into the graph.
        l2_flushed: whether each call was preceded by an L2 flush inside the graph (and a
            flush-only graph subtracted).
        flush_ms: the flush-only graph's time per flush (median of the retries), ms.
        reason: why it could not be captured (``None`` when it was).
    """

    per_call_ms: tuple[float, ...]
    calls: int
    l2_flushed: bool
    flush_ms: float | None = None
    reason: str | None = None

    @property
    def median_ms(self) -> float | None:
        """Median time per call in the graph, or ``None`` when not captured."""
        return statistics.median(self.per_call_ms) if self.per_call_ms else None

    def to_json(
        self, *, why: str | None = None, kernels_us: float | None = None
    ) -> wire.GraphTimingInfo:
        """Plain JSON: ``median_ms`` (absent when not captured), ``reason``, the policy."""
        out: wire.GraphTimingInfo = {"calls": self.calls, "why": why}
        if self.reason is not None:
            out["reason"] = self.reason
        else:
            out["median_ms"] = self.median_ms
            out["min_ms"] = min(self.per_call_ms)
            out["max_ms"] = max(self.per_call_ms)
            out["retries"] = len(self.per_call_ms)
            out["flush_ms"] = self.flush_ms
            out["policy"] = {
                "l2": "cold" if self.l2_flushed else "warm",
                "mode": "graph",
                "cpu_overhead": "excluded",
                "reps": len(self.per_call_ms) * self.calls,
                "text": (
                    f"CUDA graph of {self.calls} calls · "
                    + (
                        "L2 cold (flush in the graph, flush-only graph subtracted)"
                        if self.l2_flushed
                        else "L2 warm, no flush in the timed window (as do_bench_cudagraph)"
                    )
                    + f" · CPU launch overhead excluded · {len(self.per_call_ms)} replays"
                ),
            }
        if kernels_us is not None:
            out["kernels_us"] = kernels_us
        return out


def time_in_graph(
    fn: Callable[[], Any], *, calls: int = 100, retries: int = 10, flush_l2: bool = False
) -> GraphTiming:
    """Time ``fn()`` captured in a CUDA graph: ``calls`` calls per graph, ``retries`` replays.

    The function is warmed up on a side stream (as ``torch.cuda.graph`` requires), then
    ``calls`` pairs (L2 flush, call) are captured into one graph on that side stream and, when
    ``flush_l2``, ``calls`` flushes alone into another; each retry replays both between CUDA
    events and keeps ``(total − flushes) / calls``. A capture that fails (a host sync such as
    ``.item()``, a CPU tensor, an unsupported call) is ended and its graph dropped, and the
    device synchronised, so later stages run on a sane CUDA context; its reason is returned.

    Args:
        fn: the call to time (inputs bound).
        calls: calls captured into the graph.
        retries: replays of the graph timed.
        flush_l2: flush L2 before each call inside the graph, subtracting a flush-only graph.
    """
    import torch

    stream = torch.cuda.Stream()
    cache = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda") if flush_l2 else None
    graph: Any = None
    flush_graph: Any = None
    try:
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        reason = _capture(graph, stream, lambda: _flushed_calls(fn, cache, calls))
        if reason is not None:
            graph = None
            return GraphTiming((), calls, flush_l2, reason=reason)
        if cache is not None:
            flush_graph = torch.cuda.CUDAGraph()
            flush_reason = _capture(flush_graph, stream, lambda: _flushes(cache, calls))
            if flush_reason is not None:  # pragma: no cover - a memset always captures
                return GraphTiming((), calls, flush_l2, reason=f"flush graph: {flush_reason}")
        totals: list[float] = []
        flushes: list[float] = []
        with torch.cuda.stream(stream):
            graph.replay()  # the first replay uploads the graph
            if flush_graph is not None:
                flush_graph.replay()
            torch.cuda.synchronize()
            for _ in range(retries):
                if flush_graph is not None:
                    flushes.append(_replay_ms(torch, flush_graph))
                totals.append(_replay_ms(torch, graph))
        per_call = graph_per_call_ms(totals, flushes, calls)
        flush_ms = statistics.median(flushes) / calls if flushes else None
        return GraphTiming(tuple(per_call), calls, flush_l2, flush_ms=flush_ms)
    except Exception as exc:
        return GraphTiming((), calls, flush_l2, reason=capture_reason(exc))
    finally:
        graph = flush_graph = cache = None
        _settle(torch)


def _flushed_calls(fn: Callable[[], Any], cache: Any, calls: int) -> None:
    for _ in range(calls):
        if cache is not None:
            cache.zero_()
        fn()


def _flushes(cache: Any, calls: int) -> None:
    for _ in range(calls):
        cache.zero_()


def _replay_ms(torch: Any, graph: Any) -> float:
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end))


def _capture(graph: Any, stream: Any, body: Callable[[], None]) -> str | None:
    """Capture ``body`` into ``graph`` on ``stream``: ``None``, or why it failed (the capture
    ended either way, so the stream is not left capturing)."""
    import torch

    failure: BaseException | None = None
    # as torch.cuda.graph does: nothing pending, no garbage freed into the capture
    torch.cuda.synchronize()
    gc.collect()
    with torch.cuda.stream(stream):
        # thread_local: another thread's CUDA call (the agent's) does not invalidate it
        graph.capture_begin(capture_error_mode="thread_local")
        try:
            body()
        except Exception as exc:
            failure = exc
        finally:
            try:
                graph.capture_end()
            except Exception as exc:
                failure = failure or exc
    return None if failure is None else capture_reason(failure)


def _settle(torch: Any) -> None:
    """After a capture (failed or not): no error left pending, memory given back."""
    for step in (torch.cuda.synchronize, torch.cuda.empty_cache):
        try:
            step()
        except Exception:  # a pending capture error surfaces here once, then it is gone
            pass


def time_interleaved(
    a: Callable[[], Any],
    b: Callable[[], Any],
    *,
    device: str,
    config: TimingConfig | None = None,
) -> tuple[TimingResult, TimingResult]:
    """Time two calls that do the same work, **interleaved** (A B, B A, A B…), so that a clock
    or temperature that moves while they are timed moves both alike and cannot read as a
    difference between them; the order alternates in pairs so neither always runs second
    (after the other warmed a cache). Each side gets ``config``'s budget; repetitions stop at
    that budget (or ``max_reps`` pairs) once ``min_reps`` pairs are in. CUDA: an event pair
    around each call, L2 flushed before each (outside its events), read once per batch.

    Returns:
        ``(a's timing, b's timing)``, each with its samples in the order taken.
    """
    config = config or TimingConfig()
    cuda = device == "cuda"
    calls = (a, b)
    if cuda:
        import torch

        cache = (
            torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
            if config.flush_l2
            else None
        )
        sync: Callable[[], None] = torch.cuda.synchronize
    else:
        cache, sync = None, lambda: None
    warm, estimate = _warm_both(calls, sync, config.warmup_ms)
    pairs = _planned_pairs(config, estimate)
    samples: tuple[list[float], list[float]] = ([], [])
    usage = _Usage()
    began = time.perf_counter()
    batch = max(1, min(pairs, int(CHECK_EVERY_MS / estimate) or 1))
    done = 0
    while done < pairs:
        size = min(batch, pairs - done)
        order = [(0, 1) if (done + i) % 2 == 0 else (1, 0) for i in range(size)]
        if cuda:
            _pairs_cuda(calls, order, cache, samples)
        else:
            _pairs_cpu(calls, order, samples)
        done += size
        spent = (time.perf_counter() - began) * 1e3
        if config.reps == 0 and done >= config.min_reps and spent > config.max_total_ms:
            break
    del cache
    used = usage.stop()
    out = []
    for side in (0, 1):
        decision = _at_the_end(config, samples[side])
        result = TimingResult(
            "cuda-events" if cuda else "perf-counter",
            "cuda" if cuda else "cpu",
            tuple(samples[side]),
            warm,
            bool(cuda and config.flush_l2),
            stopped=decision.text,
            ci_pct=decision.ci_pct,
        )
        out.append(_finish(result, used))
    return out[0], out[1]


def _planned_pairs(config: TimingConfig, estimate: float) -> int:
    """Pairs to time: ``reps``, else each side's budget (between ``min_reps`` and
    ``max_reps``); never past ``max_total_ms`` once ``min_reps`` are in. ``estimate``: one A
    and one B (ms)."""
    pairs = (
        config.reps
        if config.reps > 0
        else max(config.min_reps, min(config.max_reps, int(2 * config.budget_ms / estimate)))
    )
    return min(pairs, max(config.min_reps, int(config.max_total_ms / estimate)))


def _warm_both(
    calls: tuple[Callable[[], Any], Callable[[], Any]], sync: Callable[[], None], warmup_ms: float
) -> tuple[int, float]:
    """Warm-up: both, alternately, for ``warmup_ms`` each (at least 2 calls each, at most
    1000). Returns the calls each made and the estimate of one A and one B (ms)."""
    warm = 0
    started = time.perf_counter()
    while warm < 2 or (time.perf_counter() - started) * 1e3 < 2 * warmup_ms:
        for fn in calls:
            fn()
        sync()
        warm += 1
        if warm >= 1000:
            break
    return warm, max((time.perf_counter() - started) * 1e3 / warm, 1e-4)


def _pairs_cuda(
    calls: tuple[Callable[[], Any], Callable[[], Any]],
    order: list[tuple[int, int]],
    cache: Any,
    samples: tuple[list[float], list[float]],
) -> None:
    """One batch of pairs in ``order``: an event pair around each call, L2 flushed before each
    (outside its events), read after one synchronisation."""
    import torch

    events = [
        [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
         for _ in range(2)]
        for _ in range(len(order))
    ]  # fmt: skip
    for i, pair in enumerate(order):
        for side in pair:
            if cache is not None:
                cache.zero_()
            start, end = events[i][side]
            start.record()
            calls[side]()
            end.record()
    torch.cuda.synchronize()
    for i in range(len(order)):
        for side in (0, 1):
            start, end = events[i][side]
            samples[side].append(start.elapsed_time(end))


def _pairs_cpu(
    calls: tuple[Callable[[], Any], Callable[[], Any]],
    order: list[tuple[int, int]],
    samples: tuple[list[float], list[float]],
) -> None:
    """One batch of pairs in ``order``, each call timed by ``perf_counter``."""
    for pair in order:
        for side in pair:
            t0 = time.perf_counter()
            calls[side]()
            samples[side].append((time.perf_counter() - t0) * 1e3)
