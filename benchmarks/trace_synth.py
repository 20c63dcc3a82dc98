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
import re
from collections.abc import Callable
from typing import IO, Any

__all__ = ["replicate_trace", "write_replicated"]

_ID_ARGS = ("External id", "correlation", "Record function id", "Ev Idx", "Python id")
_PAUSE_US = 10.0


def _remapped(
    event: dict[str, Any], ts: Callable[[Any], Any], ident: Callable[[Any], Any]
) -> dict[str, Any]:
    """A copy of ``event`` with its timestamp through ``ts`` and its ids (``id``, the args'
    correlation and parent ids) through ``ident``."""
    e = dict(event)
    if isinstance(e.get("ts"), int | float):
        e["ts"] = ts(e["ts"])
    if isinstance(e.get("id"), int):
        e["id"] = ident(e["id"])
    args = e.get("args")
    if isinstance(args, dict):
        args = dict(args)
        for key in (*_ID_ARGS, "Python parent id"):
            value = args.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                args[key] = ident(value)
        e["args"] = args
    return e


def _one_step(
    trace: dict[str, Any], events: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float, int, int]:
    """What a replication copies: the events written once (metadata), the timed ones, the
    period of one copy (its span and a pause), the stride of its ids and how many copies make
    ``events``."""
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
    return once, timed, period, stride, copies


def replicate_trace(trace: dict[str, Any], events: int) -> dict[str, Any]:
    """The trace with its timed events repeated until there are at least ``events`` of them.

    Args:
        trace: a parsed Chrome trace (``load_trace``).
        events: how many timed (non-metadata) events the result should have, at least.

    Returns:
        A new trace object (the input is not changed).
    """
    once, timed, period, stride, copies = _one_step(trace, events)
    out: list[dict[str, Any]] = []
    for k in range(copies):
        shift, offset = k * period, k * stride
        for event in timed:
            out.append(_remapped(event, lambda ts, k=shift: ts + k, lambda i, k=offset: i + k))
    result = copy.copy(trace)
    result["traceEvents"] = copy.deepcopy(once) + out
    return result


def write_replicated(trace: dict[str, Any], events: int, out: IO[str], block: int = 256) -> None:
    """Write ``json.dumps(replicate_trace(trace, events))`` to ``out``, the same text, without
    building the events: one copy of the step is encoded once as a ``%``-template whose slots
    are its timestamps and ids, and each copy is that template filled with the shifted values
    (``block`` copies at a time, their values computed by numpy), streamed to ``out``.

    About 1 s per million events, and memory of one block, where building and dumping the
    replicated object takes minutes and gigabytes at 10M events.
    """
    import json

    import numpy as np

    once, timed, period, stride, copies = _one_step(trace, events)
    # The template of one copy: each slot a marker string, then "%r".
    values: list[Any] = []  # slot -> its value in copy 0
    kinds: list[bool] = []  # slot -> a timestamp (else an id)

    def mark(value: Any, is_ts: bool) -> str:
        kinds.append(is_ts)
        values.append(value)
        return f"@@KLSLOT{len(kinds) - 1}@@"

    marked = []
    for event in timed:
        marked.append(
            json.dumps(_remapped(event, lambda ts: mark(ts, True), lambda i: mark(i, False)))
        )
    text = ", ".join(marked).replace("%", "%%")
    # The slots in the text's order (an event's args keep their own key order).
    slots = [int(m) for m in re.findall(r'"@@KLSLOT(\d+)@@"', text)]
    template = re.sub(r'"@@KLSLOT\d+@@"', "%r", text)
    order = np.asarray([kinds[s] for s in slots], dtype=bool)
    ts_cols, id_cols = np.flatnonzero(order), np.flatnonzero(~order)
    ts_values = np.asarray([values[s] for s in slots if kinds[s]], dtype=np.float64)
    id_values = np.asarray([values[s] for s in slots if not kinds[s]], dtype=np.int64)

    head, tail = json.dumps({**trace, "traceEvents": "@@KLEVENTS@@"}).split('"@@KLEVENTS@@"')
    out.write(head + "[")
    if once:
        out.write(", ".join(json.dumps(e) for e in once))
    for k0 in range(0, copies, block):
        ks = np.arange(k0, min(copies, k0 + block))
        rows = np.empty((len(ks), len(kinds)), dtype=object)
        # The same float additions as replicate_trace's ``ts + k * period``.
        shifts = ks.astype(np.float64) * period
        rows[:, ts_cols] = (ts_values[None, :] + shifts[:, None]).tolist()
        rows[:, id_cols] = (id_values[None, :] + (ks * stride)[:, None]).tolist()
        filled = [template % tuple(row) for row in rows.tolist()]
        if once or k0:
            out.write(", ")
        out.write(", ".join(filled))
    out.write("]" + tail)
