"""Stage *sweep*: time the function across values of one integer parameter (``BLOCK_SIZE``).

Each value gets its own warm-up (a Triton kernel compiles per ``constexpr`` value) and a full
timing (the timing stage's method, which stops each value's repetitions once its median is known
within ±1% — ``stopped`` on the row — or at the budget), and an effective bandwidth: bytes of
the tensor inputs read once plus the tensor outputs written once, over the median time. A value
that fails (too many resources, a shape assertion) is recorded with its error and the sweep goes
on.

The fastest value is called the best only when it is significantly faster than the runner-up
(the statistics of :mod:`kernel_lens.analysis.compare`); otherwise the values that are equal
within noise are named (``ties``, ``verdict``).
"""

from __future__ import annotations

import inspect
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.wire.results import SweepRow, SweepStageResult

__all__ = ["default_values", "honest_best", "run_sweep", "tensor_bytes"]


def tensor_bytes(value: Any) -> int:
    """Bytes of the tensors in ``value`` (nested tuples, lists and dicts)."""
    if hasattr(value, "element_size") and hasattr(value, "numel"):
        return int(value.element_size() * value.numel())
    if isinstance(value, tuple | list):
        return sum(tensor_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(tensor_bytes(v) for v in value.values())
    return 0


def default_values(current: int | None) -> list[int]:
    """Powers of two around ``current`` (16× below to 8× above), else 32…8192."""
    if current and current > 0 and current & (current - 1) == 0:
        low, high = max(1, current // 16), min(1 << 16, current * 8)
    else:
        low, high = 32, 8192
    out, v = [], low
    while v <= high:
        out.append(v)
        v *= 2
    return out


def run_sweep(
    target: Any,
    *,
    param: str,
    values: list[int] | None,
    device: str,
    timing_config: Any,
) -> SweepStageResult:
    """Time ``target`` for each value of ``param``; see the module docstring."""
    from kernel_lens.agent.gpu_clocks import thermal_wait
    from kernel_lens.agent.stages.timing import time_function
    from kernel_lens.analysis.timing_policy import CLOCK_WARNING_PREFIXES

    signature = inspect.signature(target.fn)
    if param not in signature.parameters:
        raise ProfileError(
            "inputs",
            f"{target.info.qualname} has no parameter {param!r} "
            f"(parameters: {', '.join(signature.parameters)})",
            target.info.def_line,
        )
    names = list(signature.parameters)
    index = names.index(param)
    current = target.kwargs.get(param)
    if current is None and index < len(target.args):
        current = target.args[index]
    if current is None:
        default = signature.parameters[param].default
        current = default if isinstance(default, int) else None
    values = list(values) if values else default_values(current)

    rows: list[SweepRow] = []
    samples: dict[int, tuple[float, ...]] = {}
    for value in values:
        args = list(target.args)
        kwargs = dict(target.kwargs)
        if index < len(args):
            args[index] = value
        else:
            kwargs[param] = value

        def call(args: list[Any] = args, kwargs: dict[str, Any] = kwargs) -> Any:
            return target.fn(*args, **kwargs)

        # A hot GPU cools down first (Nsight Python's thermal wait, bounded): each value is
        # timed on the same clocks, not the last ones on a throttled device.
        cooled = thermal_wait() if device == "cuda" else None
        try:
            out = call()
            moved = tensor_bytes(args) + tensor_bytes(kwargs) + tensor_bytes(out)
            timing = time_function(call, device=device, config=timing_config)
        except Exception as exc:
            rows.append({"value": value, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
            continue
        median = timing.median_ms
        samples[value] = timing.samples_ms
        row: SweepRow = {
            "value": value,
            "median_ms": median,
            "spread_pct": round(timing.spread_pct, 3),
            "reps": timing.reps,
            "bytes": moved,
            "gb_per_s": moved / (median * 1e-3) / 1e9 if median > 0 else None,
            "error": None,
        }
        if timing.stopped:  # the timing stage's stopping rule, per value
            row["stopped"] = timing.stopped
        if cooled:
            row["cooldown_s"] = cooled["waited_s"]
        clocks = [w for w in timing.warnings if w.startswith(CLOCK_WARNING_PREFIXES)]
        if clocks:  # a clock drop or throttling while this value was timed
            row["warnings"] = clocks
        rows.append(row)
    timed = [(r, r.get("median_ms")) for r in rows if r["error"] is None]
    ok = [(r, median) for r, median in timed if median is not None]
    if not ok:
        raise ProfileError(
            "runtime", f"every value of {param} failed; first error: {rows[0]['error']}",
            target.info.def_line,
        )  # fmt: skip
    best, best_ms = min(ok, key=lambda pair: pair[1])
    ties, verdict = honest_best([(r["value"], samples.get(r["value"], ())) for r, _ in ok], param)
    return {
        "param": param,
        "current": current,
        "rows": rows,
        "best": {"value": best["value"], "median_ms": best_ms},
        "method": "cuda-events" if device == "cuda" else "perf-counter",
        "ties": list(ties),
        "verdict": verdict,
    }


def honest_best(rows: list[tuple[int, tuple[float, ...]]], param: str) -> tuple[list[int], str]:
    """The values tied with the fastest within noise (empty when the fastest is significantly
    better than every other), and the sentence for the user: ``BLOCK_SIZE 512–1024 equal within
    noise`` or ``BLOCK_SIZE 512 fastest (significantly)``. Uses the comparison's statistics
    (:mod:`kernel_lens.analysis.compare`: Mann–Whitney, an interval, a 1% floor)."""
    from kernel_lens.analysis.compare import equal_within_noise

    best, ties = equal_within_noise(rows)
    if best is not None or not ties:
        fastest = best if best is not None else min(rows, key=lambda r: sum(r[1]))[0]
        alone = len(rows) == 1
        return [], f"{param} {fastest} fastest" + ("" if alone else " (significantly)")
    values = [v for v, _ in rows]
    at = sorted(values.index(v) for v in ties)
    contiguous = at == list(range(at[0], at[-1] + 1))
    shown = f"{values[at[0]]}–{values[at[-1]]}" if contiguous else ", ".join(str(v) for v in ties)
    return list(ties), f"{param} {shown} equal within noise"
