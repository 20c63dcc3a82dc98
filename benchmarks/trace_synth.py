"""Synthetic large traces made from a recorded one: its profiled step repeated end to end.

Copy ``k`` of every timed event (``ph`` "X", "s", "f", "i", …) is shifted by ``k`` periods (the
recorded span plus a 10 µs pause) and its ids are offset, so that the copies stay consistent:
``External id``, ``correlation``, ``Record function id``, ``Ev Idx``, ``Python id``, ``Python
parent id`` and the flow events' ``id`` of copy ``k`` never meet those of another copy. Metadata
events (``ph`` "M") and the profiler's own ``Trace`` span are kept once. Used by
``benchmarks/bench_traces.py`` and by the trace tests (equal summaries on replicated traces).
"""

from __future__ import annotations

import copy
import math
from typing import Any

__all__ = ["replicate_trace"]

_ID_ARGS = ("External id", "correlation", "Record function id", "Ev Idx", "Python id")
_PAUSE_US = 10.0


def replicate_trace(trace: dict[str, Any], events: int) -> dict[str, Any]:
    """The trace with its timed events repeated until there are at least ``events`` of them.

    Args:
        trace: a parsed Chrome trace (``load_trace``).
        events: how many timed (non-metadata) events the result should have, at least.

    Returns:
        A new trace object (the input is not changed).
    """
    base = trace["traceEvents"]
    once = [e for e in base if e.get("ph") == "M" or e.get("cat") == "Trace"]
    timed = [e for e in base if not (e.get("ph") == "M" or e.get("cat") == "Trace")]
    stamps = [e for e in timed if isinstance(e.get("ts"), int | float)]
    t0 = min(e["ts"] for e in stamps)
    t1 = max(e["ts"] + (e.get("dur") or 0) for e in stamps)
    period = (t1 - t0) + _PAUSE_US
    stride = 1 + max(
        [
            int(v)
            for e in timed
            for k, v in [*(e.get("args") or {}).items(), ("id", e.get("id"))]
            if (k in _ID_ARGS or k in ("Python parent id", "id"))
            and isinstance(v, int)
            and not isinstance(v, bool)
        ],
        default=0,
    )
    copies = max(1, math.ceil(events / max(len(timed), 1)))
    out: list[dict[str, Any]] = []
    for k in range(copies):
        shift, offset = k * period, k * stride
        for event in timed:
            e = dict(event)
            if isinstance(e.get("ts"), int | float):
                e["ts"] = e["ts"] + shift
            if isinstance(e.get("id"), int):
                e["id"] = e["id"] + offset
            args = e.get("args")
            if isinstance(args, dict):
                args = dict(args)
                for key in (*_ID_ARGS, "Python parent id"):
                    value = args.get(key)
                    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                        args[key] = value + offset
                e["args"] = args
            out.append(e)
    result = copy.copy(trace)
    result["traceEvents"] = copy.deepcopy(once) + out
    return result
