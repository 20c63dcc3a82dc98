"""How a time was made, said on the number: pure rules of the timing stage (issue 25).

- **Launch-bound** (:func:`launch_bound`): a CUDA function whose eager median is under
  :data:`LAUNCH_BOUND_US`, or whose kernels keep the device busy for less than
  :data:`IDLE_SHARE` of its median (the device idles between its kernels, waiting for the CPU to
  launch them). Such a function is also timed captured in a CUDA graph.
- **The graph's arithmetic** (:func:`graph_per_call_ms`): a replay's time over its calls. The
  graph shown to users is L2 warm with no flush in the timed window, as ``do_bench_cudagraph``;
  with a flush (tritonbench's ``do_bench_cudagraph_with_cache_clear``: inside the graph before
  each call, a flush-only graph subtracted) the flush's tail stays in each call, so it is not
  what the number uses (issue 34).
- **Stability** (:func:`is_stable`): the relative standard deviation of the samples under
  :data:`STABLE_REL_PCT` (Nsight Python's rule for a stable measurement).
- **GPU clocks** (:func:`clock_warnings`): NVML readings before and after timing; an SM or
  memory clock down more than :data:`CLOCK_DROP_PCT`, or a thermal / power throttle reason seen,
  is a warning on the number; two runs on different clocks are not compared
  (:func:`clocks_differ`).
- **Thermal wait** (:func:`needs_cooldown`): Nsight Python's throttle guard: under
  :data:`THERMAL_WAIT_HEADROOM_C` of headroom to the slowdown temperature, wait until
  :data:`THERMAL_CONTINUE_HEADROOM_C` (bounded by the caller).

Standard library only: the agent, the language server and the CLI use it.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CLOCK_DROP_PCT",
    "IDLE_SHARE",
    "LAUNCH_BOUND_US",
    "STABLE_REL_PCT",
    "THERMAL_CONTINUE_HEADROOM_C",
    "THERMAL_WAIT_HEADROOM_C",
    "THROTTLE_WARN",
    "capture_reason",
    "clock_warning",
    "clock_warnings",
    "clocks_differ",
    "graph_calls",
    "graph_parts",
    "graph_per_call_ms",
    "graph_text",
    "is_stable",
    "kernels_us_per_call",
    "launch_bound",
    "make_policy",
    "needs_cooldown",
    "policy_text",
    "relative_stdev_pct",
    "stability_words",
    "stopped_words",
    "throttle_names",
]

#: An eager median under this (µs) is launch-bound: launch overhead and event resolution are of
#: the order of the work.
LAUNCH_BOUND_US = 20.0
#: Kernels busy for less than this share of the eager median: the device idles between them.
IDLE_SHARE = 0.5
#: Relative standard deviation (percent of the mean) under which a measurement is stable.
STABLE_REL_PCT = 2.0
#: An SM or memory clock lower by this much (percent) after timing than before: a warning.
CLOCK_DROP_PCT = 10.0
#: Two runs whose SM (or memory) clocks differ by more than this (percent) are not compared.
CLOCK_COMPARE_PCT = 10.0
#: Nsight Python's throttle guard: wait under this headroom (°C below the slowdown
#: temperature) …
THERMAL_WAIT_HEADROOM_C = 10.0
#: … until the headroom is back to this.
THERMAL_CONTINUE_HEADROOM_C = 40.0
#: Without a readable slowdown threshold, a GPU at or above this temperature (°C) is hot.
HOT_TEMPERATURE_C = 80.0
#: Calls captured into one graph: enough that the replay's launch and the events' resolution
#: vanish per call, few enough that capture and instantiation stay quick.
GRAPH_CALLS = 100
#: At most this many kernels in one graph (calls × kernels per call).
GRAPH_MAX_NODES = 4000

#: NVML's clocks-event (throttle) reasons that slow the clocks down: bit → what to say.
THROTTLE_WARN: dict[int, str] = {
    0x4: "power cap",
    0x8: "hardware slowdown",
    0x20: "thermal (software)",
    0x40: "thermal (hardware)",
    0x80: "power brake",
}


def kernels_us_per_call(result: Mapping[str, Any]) -> float | None:
    """Summed kernel device time per call (µs) from a profile's ops stage, or ``None``."""
    acc = result.get("accounting")
    if isinstance(acc, Mapping) and isinstance(acc.get("device_us"), int | float):
        return float(acc["device_us"]) if acc["device_us"] > 0 else None
    kernels = result.get("kernels")
    if not kernels:
        return None
    total = sum(
        float(k.get("device_us") or 0.0)
        for k in kernels
        if isinstance(k, Mapping) and k.get("kind", "kernel") == "kernel"
    )
    return total if total > 0 else None


def launch_bound(median_ms: float, kernels_us: float | None = None) -> str | None:
    """Why a CUDA function is launch-bound, or ``None`` when it is not.

    Args:
        median_ms: the eager median per call (CUDA events), milliseconds.
        kernels_us: the summed device time of its kernels per call, µs, when known.

    Returns:
        ``median 3.6 µs < 20 µs`` or ``device idle 77% of the call (kernels 0.83 µs of
        3.6 µs)``; ``None`` for a function whose kernels keep the device busy.
    """
    if not (median_ms > 0 and math.isfinite(median_ms)):
        return None
    median_us = median_ms * 1000
    if median_us < LAUNCH_BOUND_US:
        return f"median {median_us:.3g} µs < {LAUNCH_BOUND_US:g} µs"
    if kernels_us is not None and kernels_us >= 0 and kernels_us < IDLE_SHARE * median_us:
        idle = 100 * (1 - kernels_us / median_us)
        return (
            f"device idle {idle:.0f}% of the call (kernels {kernels_us:.3g} µs of "
            f"{median_us:.3g} µs)"
        )
    return None


def graph_calls(launches_per_call: float | None) -> int:
    """Calls of the function to capture into one graph (:data:`GRAPH_CALLS`, fewer for a
    function that launches many kernels: at most :data:`GRAPH_MAX_NODES` kernels)."""
    if not launches_per_call or launches_per_call <= 0:
        return GRAPH_CALLS
    return max(10, min(GRAPH_CALLS, int(GRAPH_MAX_NODES // launches_per_call)))


def graph_per_call_ms(
    totals_ms: Sequence[float], flushes_ms: Sequence[float], calls: int
) -> list[float]:
    """Per-call times of a graph of ``calls`` (flush, call) pairs, the flush-only graph's time
    of the same retry subtracted: ``(total − flush) / calls`` for each retry, never negative.

    Args:
        totals_ms: each retry's replay of the graph with flushes and calls, milliseconds.
        flushes_ms: each retry's replay of the flush-only graph (``calls`` flushes), ms; empty
            when L2 is not flushed (nothing to subtract).
        calls: calls (and flushes) in each graph.
    """
    if calls <= 0:
        raise ValueError("calls must be positive")
    if flushes_ms and len(flushes_ms) != len(totals_ms):
        raise ValueError("one flush-only replay per retry")
    flushes = list(flushes_ms) or [0.0] * len(totals_ms)
    return [max(0.0, (t - f) / calls) for t, f in zip(totals_ms, flushes, strict=True)]


def relative_stdev_pct(samples: Sequence[float]) -> float | None:
    """The samples' standard deviation in percent of their mean (``None`` under 2 samples)."""
    if len(samples) < 2:
        return None
    mean = statistics.fmean(samples)
    if mean <= 0:
        return None
    return 100 * statistics.stdev(samples) / mean


def is_stable(samples: Sequence[float]) -> bool:
    """Whether a measurement is stable: relative standard deviation under
    :data:`STABLE_REL_PCT` (Nsight Python's rule). A single sample is not."""
    rel = relative_stdev_pct(samples)
    return rel is not None and rel < STABLE_REL_PCT


def capture_reason(exc: BaseException) -> str:
    """A short reason why a function could not be captured into a CUDA graph, from the
    exception's class and message: ``host sync (.item(), .cpu(), print of a tensor)``,
    ``CPU tensors`` …, else ``ValueError: first line of the message``."""
    message = str(exc)
    low = message.lower()
    first = (message.splitlines() or [""])[0].strip()
    if len(first) > 120:
        first = first[:119] + "…"
    if "not permitted when stream is capturing" in low or "synchroniz" in low:
        return "host sync during capture (.item(), .cpu(), .tolist(), a synchronize)"
    if "cannot copy between cpu and cuda" in low or "pinned" in low:
        return "a copy between CPU and CUDA memory during capture"
    if "invalidated" in low or "previous error during capture" in low:
        return "capture invalidated (a host sync or an unsupported call)"
    if "no kernel" in low or "empty graph" in low or "captured nothing" in low:
        return "nothing on the GPU to capture"
    if "expected all tensors to be on the same device" in low or "cpu tensor" in low:
        return "CPU tensors"
    if "dynamic" in low or "data-dependent" in low or "nonzero" in low:
        return "dynamic shapes (a data-dependent size)"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def throttle_names(reasons: int | None) -> list[str]:
    """The clock-slowing throttle reasons of NVML's bit mask (:data:`THROTTLE_WARN`)."""
    if not reasons:
        return []
    return [name for bit, name in THROTTLE_WARN.items() if reasons & bit]


def _drop_pct(before: Any, after: Any) -> float | None:
    if not isinstance(before, int | float) or not isinstance(after, int | float) or before <= 0:
        return None
    return 100 * (before - after) / before


def clock_warnings(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """Warnings on a number timed between two NVML readings (:func:`read_gpu` of the agent):
    a clock down by more than :data:`CLOCK_DROP_PCT`, a throttle reason seen before or after.

    Each reading has ``sm_mhz``, ``mem_mhz``, ``temperature_c`` and ``throttle`` (NVML's bit
    mask), any of them possibly missing."""
    if not before or not after:
        return []
    out: list[str] = []
    for key, label in (("sm_mhz", "SM"), ("mem_mhz", "memory")):
        drop = _drop_pct(before.get(key), after.get(key))
        if drop is not None and drop > CLOCK_DROP_PCT:
            out.append(
                f"{label} clock dropped {drop:.0f}% while timing "
                f"({before[key]:g} → {after[key]:g} MHz)"
            )
    seen: list[str] = []
    for reading in (before, after):
        for name in throttle_names(reading.get("throttle")):
            if name not in seen:
                seen.append(name)
    if seen:
        temp = after.get("temperature_c")
        at = f" at {temp:g} °C" if isinstance(temp, int | float) else ""
        out.append(f"GPU throttled while timing ({', '.join(seen)}){at}")
    return out


def clocks_differ(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str | None:
    """Why two runs' clocks make their times incomparable (``SM clock 1980 → 1410 MHz``), or
    ``None``. Each is a timing's ``clocks`` (``{"before": reading, "after": reading}``); a run
    without readings is compared as before (nothing says it differs)."""
    ra = (a or {}).get("after") or (a or {}).get("before")
    rb = (b or {}).get("after") or (b or {}).get("before")
    if not isinstance(ra, Mapping) or not isinstance(rb, Mapping):
        return None
    for key, label in (("sm_mhz", "SM"), ("mem_mhz", "memory")):
        x, y = ra.get(key), rb.get(key)
        if isinstance(x, int | float) and isinstance(y, int | float) and min(x, y) > 0:
            if abs(x - y) / min(x, y) * 100 > CLOCK_COMPARE_PCT:
                return f"different GPU clocks ({label} {x:g} → {y:g} MHz)"
    return None


def needs_cooldown(reading: Mapping[str, Any] | None, *, cooling: bool = False) -> bool:
    """Whether to wait for the GPU to cool before timing (Nsight Python's throttle guard).

    Under :data:`THERMAL_WAIT_HEADROOM_C` of headroom to the slowdown temperature it is hot;
    once waiting (``cooling``) it waits until the headroom is back to
    :data:`THERMAL_CONTINUE_HEADROOM_C`. Without a slowdown threshold,
    :data:`HOT_TEMPERATURE_C` (and 10 °C under it to continue) stand in."""
    if not reading:
        return False
    temp = reading.get("temperature_c")
    if not isinstance(temp, int | float):
        return False
    slowdown = reading.get("slowdown_c")
    if isinstance(slowdown, int | float) and slowdown > 0:
        headroom = slowdown - temp
        limit = THERMAL_CONTINUE_HEADROOM_C if cooling else THERMAL_WAIT_HEADROOM_C
        return headroom < limit
    return temp >= (HOT_TEMPERATURE_C - 10 if cooling else HOT_TEMPERATURE_C)


def make_policy(
    *,
    method: str,
    l2_flushed: bool,
    reps: int,
    samples_ms: Sequence[float],
    nvml: str | None = None,
    stopped: str | None = None,
    ci_pct: float | None = None,
) -> dict[str, Any]:
    """The policy of an eager timing: ``l2`` (``cold``/``warm``; ``n/a`` on the CPU), ``mode``
    (``eager``), ``cpu_overhead`` (``included``: each call's launch cost is inside the CUDA
    events; ``n/a`` on the CPU, where the clock times the CPU's work itself), ``reps``,
    ``rel_stdev_pct``, ``stable`` and ``text``; ``nvml`` notes why no GPU clocks were read;
    ``stopped`` why the repetitions stopped (``converged (CI ±0.8%)``, ``budget``: see
    :mod:`kernel_lens.analysis.stopping`) with ``ci_pct``, the median's interval then."""
    cuda = method == "cuda-events"
    rel = relative_stdev_pct(samples_ms)
    policy: dict[str, Any] = {
        "l2": ("cold" if l2_flushed else "warm") if cuda else "n/a",
        "mode": "eager",
        "cpu_overhead": "included" if cuda else "n/a",
        "reps": reps,
        "rel_stdev_pct": None if rel is None else round(rel, 3),
        "stable": is_stable(samples_ms),
    }
    if nvml:
        policy["nvml"] = nvml
    if stopped:
        policy["stopped"] = stopped
        policy["ci_pct"] = None if ci_pct is None else round(ci_pct, 3)
    policy["text"] = policy_text(policy)
    return policy


def policy_text(policy: Mapping[str, Any]) -> str:
    """``eager · L2 cold · CPU launch overhead included · 812 reps · stable (σ 0.4%)``."""
    parts = [str(policy.get("mode", "eager"))]
    l2 = policy.get("l2")
    if l2 in ("cold", "warm"):
        parts.append(f"L2 {l2}")
    if policy.get("cpu_overhead") == "included":
        parts.append("CPU launch overhead included")
    elif policy.get("cpu_overhead") == "excluded":
        parts.append("CPU launch overhead excluded")
    if policy.get("reps"):
        parts.append(f"{policy['reps']} reps")
    parts.append(stability_words(policy))
    stopped = policy.get("stopped")
    if stopped:
        parts.append(stopped_words(str(stopped)))
    return " · ".join(parts)


def stability_words(policy: Mapping[str, Any]) -> str:
    """How much the calls varied: ``stable (σ 0.4%)``, or ``calls vary (σ 176%)`` past
    :data:`STABLE_REL_PCT`. Said of the *samples*, so that it never reads as a verdict on the
    median, whose own precision is :func:`stopped_words`' (a noisy function's median can be
    known to ±1%)."""
    rel = policy.get("rel_stdev_pct")
    sigma = f" (σ {rel:.1f}%)" if isinstance(rel, int | float) else ""
    return ("stable" if policy.get("stable") else "calls vary") + sigma


def stopped_words(stopped: str) -> str:
    """Why the repetitions stopped, said of the median: ``converged (CI ±0.8%)`` (as stored in
    ``policy.stopped``) reads ``median converged (95% CI ±0.8%)``; ``not shrinking (CI ±3.1%)``
    reads ``median's CI stopped shrinking at ±3.1%``; ``budget`` reads ``hit the time
    budget``; anything else (``fixed reps``) as it is."""
    if stopped == "budget":
        return "hit the time budget"
    match = re.fullmatch(r"(converged|not shrinking) \(CI (±[^)]*)\)", stopped)
    if match is None:
        return stopped
    if match.group(1) == "converged":
        return f"median converged (95% CI {match.group(2)})"
    return f"median's CI stopped shrinking at {match.group(2)}"


def _us(ms: float) -> str:
    us = ms * 1000
    return f"{us:.3g} µs" if us < 1000 else f"{ms:.3g} ms"


def graph_parts(timing: Mapping[str, Any] | None, *, short: bool = False) -> list[str]:
    """``["1.1 µs in a CUDA graph", "kernels 0.83 µs"]`` for a launch-bound timing measured in
    a graph; ``["not capturable in a CUDA graph: host sync …"]`` (``short``: ``no CUDA graph:
    host sync``) for one that could not be; ``[]`` when no graph was tried (or on the CPU)."""
    graph = (timing or {}).get("graph")
    if not isinstance(graph, Mapping) or "calls" not in graph:
        return []
    parts: list[str] = []
    if isinstance(graph.get("median_ms"), int | float):
        parts.append(f"{_us(graph['median_ms'])} in a CUDA graph")
    elif graph.get("reason"):
        reason = str(graph["reason"])
        if short:
            reason = reason.split(" (")[0].split(":")[0]
            parts.append(f"no CUDA graph: {reason}")
        else:
            parts.append(f"not capturable in a CUDA graph: {reason}")
    else:
        return []
    kernels = graph.get("kernels_us")
    if isinstance(kernels, int | float) and kernels > 0:
        parts.append(f"kernels {_us(kernels / 1000)}")
    return parts


def graph_text(timing: Mapping[str, Any] | None) -> str | None:
    """``3.6 µs per call · 1.1 µs in a CUDA graph · kernels 0.83 µs`` for a launch-bound
    timing measured in a graph, ``3.6 µs per call · not capturable in a CUDA graph: host sync
    …`` for one that could not be captured; ``None`` when no graph was tried."""
    parts = graph_parts(timing)
    median = (timing or {}).get("median_ms")
    if not parts or not isinstance(median, int | float):
        return None
    return " · ".join([f"{_us(median)} per call", *parts])


#: Warnings of :func:`clock_warnings`, recognised in a timing's ``warnings`` by their start.
CLOCK_WARNING_PREFIXES = ("SM clock dropped", "memory clock dropped", "GPU throttled")


def clock_warning(timing: Mapping[str, Any] | None) -> str | None:
    """The first clock or throttling warning of a timing (see :func:`clock_warnings`)."""
    for warning in (timing or {}).get("warnings") or []:
        if str(warning).startswith(CLOCK_WARNING_PREFIXES):
            return str(warning)
    return None
