"""Which CPU op launched each kernel of a trace in columns: through the launch.

A kernel is linked to the runtime call that launched it (``cudaLaunchKernel``,
``cuLaunchKernelEx``, …) by ``args.correlation``, and that call to the innermost ``cpu_op``
enclosing it on its thread (time containment per ``(pid, tid)``): the rule
:mod:`kernel_lens.analysis.line_attribution` follows for a profile's lines (its ``_Index``:
``runtime_by_corr`` first, then the op of the same ``External id``), done here on
`TraceColumns` with numpy for traces of millions of events. A kernel with no launch on record
falls back to the op of its own ``External id`` — unless that id is its correlation (traces of
some PyTorch versions write the correlation there), which names no op.

Pure: numpy only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from kernel_lens.analysis.trace_columns import TraceColumns

__all__ = ["RUNTIME_CATS", "id_lookup", "kernel_ops"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

#: Host-side runtime and driver calls (other devices' are read as these: `normalize_columns`).
RUNTIME_CATS = frozenset({"cuda_runtime", "cuda_driver"})


def id_lookup(keys: F64, values: I64, *, last: bool) -> Callable[[F64], I64]:
    """A vectorised ``dict.get`` from float ids (NaN: none) to ``values``; -1 when missing.

    Args:
        keys: the ids, one per value.
        values: what each id maps to.
        last: when an id repeats, the last one wins (else the first).
    """
    ok = ~np.isnan(keys)
    k, v = keys[ok], values[ok]
    if not last:
        k, v = k[::-1], v[::-1]  # the last write of the reversed order is the first of the order
    order = np.argsort(k, kind="stable")
    k, v = k[order], v[order]
    if len(k):
        keep = np.ones(len(k), dtype=bool)
        keep[:-1] = k[1:] != k[:-1]  # the last of each equal run
        k, v = k[keep], v[keep]

    def get(query: F64) -> I64:
        if not len(k):
            return np.full(len(query), -1, dtype=np.int64)
        at = np.clip(np.searchsorted(k, query), 0, len(k) - 1)
        return np.where(k[at] == query, v[at], -1)

    return get


def _thread_rank(columns: TraceColumns) -> I64:
    """Each key code's rank among the keys compared as strings (1 and "1" are one thread)."""
    text = [str(k) for k in columns.keys]
    dense = {t: r for r, t in enumerate(sorted(set(text)))}
    return np.array([dense[t] for t in text] + [0], dtype=np.int64)


def _innermost_ops(columns: TraceColumns, ts: F64, end: F64, ops: I64, calls: I64) -> I64:
    """For each row of ``calls``, the row of the innermost op of ``ops`` open when it started
    on its thread (-1: none)."""
    found = np.full(len(calls), -1, dtype=np.int64)
    if not len(ops) or not len(calls):
        return found
    rank = _thread_rank(columns)
    width = len(rank) + 1
    op_thread = rank[columns.pid[ops]] * width + rank[columns.tid[ops]]
    order = np.lexsort((-end[ops], ts[ops], op_thread))
    rows = ops[order]
    thread, start, stop = op_thread[order], ts[rows], end[rows]
    # Each op's parent (position in ``rows``): the innermost op still open when it starts.
    parent = np.full(len(rows), -1, dtype=np.int64)
    stack: list[int] = []
    previous = None
    for i, (t, s) in enumerate(zip(thread.tolist(), start.tolist(), strict=True)):
        if t != previous:
            stack, previous = [], t
        while stack and stop[stack[-1]] <= s:
            stack.pop()
        if stack:
            parent[i] = stack[-1]
        stack.append(i)
    call_thread = rank[columns.pid[calls]] * width + rank[columns.tid[calls]]
    call_start = ts[calls]
    # The last op of the call's thread that started at or before it, then up its parents
    # until one is still open when the call starts.
    first = np.searchsorted(thread, call_thread, side="left")
    last = np.searchsorted(thread, call_thread, side="right")
    cand = np.full(len(calls), -1, dtype=np.int64)
    for t in np.unique(call_thread).tolist():
        here = np.flatnonzero(call_thread == t)
        lo, hi = int(first[here[0]]), int(last[here[0]])
        if lo == hi:
            continue
        cand[here] = lo + np.searchsorted(start[lo:hi], call_start[here], side="right") - 1
        cand[here] = np.where(cand[here] >= lo, cand[here], -1)
    open_ = np.zeros(len(calls), dtype=bool)
    while True:
        live = cand >= 0
        open_[live] = call_start[live] < stop[cand[live]]
        climb = live & ~open_
        if not climb.any():
            break
        cand[climb] = parent[cand[climb]]
    found[cand >= 0] = rows[cand[cand >= 0]]
    return found


def kernel_ops(columns: TraceColumns, ts: F64, end: F64, kernels: I64) -> I64:
    """For each row of ``kernels``, the row of the ``cpu_op`` that launched it (-1: none).

    Args:
        columns: the trace.
        ts: every row's start (µs, rebased as the caller likes).
        end: every row's end, on the same clock.
        kernels: the device rows to link.
    """
    ops = np.flatnonzero(columns.cat == columns.cat_code("cpu_op"))
    calls = np.flatnonzero(columns.cat_in(RUNTIME_CATS))
    owner = _innermost_ops(columns, ts, end, ops, calls)
    by_corr = id_lookup(columns.corr[calls], owner, last=True)
    has_call = id_lookup(columns.corr[calls], calls, last=True)
    corr = columns.corr[kernels]
    found = by_corr(corr)
    # No launch on record: the op of the kernel's own External id (not when that id is the
    # kernel's correlation: it names no op then).
    ext = columns.ext_id[kernels]
    no_call = (has_call(corr) < 0) & ~(ext == corr)
    if no_call.any():
        by_ext = id_lookup(columns.ext_id[ops], ops, last=False)
        found = np.where(no_call, by_ext(ext), found)
    return found
