"""The totals of each trace here, counted from the JSON alone: ``python totals.py [--hta]``.

Written apart from Kernel Lens's reader (nothing of ``kernel_lens`` is imported): the standard
``json`` parser with every fractional number a ``Decimal``, so every sum is exact, and plain
loops. It writes ``totals.json`` beside it; ``tests/unit/test_real_traces.py`` checks that
``kernel-lens trace summarize --json`` and the language server's trace view give these numbers.

The categories are those of HolisticTraceAnalysis's kernel breakdown (``kernel``, ``Kernel``,
``gpu_memcpy``, ``Memcpy``, ``gpu_memset``, ``Memset``, ``mtia_ccp_events``); with ``--hta``
the kernel count and time are also read with HolisticTraceAnalysis's own parser and written
beside ours (``hta``), as a cross-check of this script.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
KERNEL = {"kernel", "Kernel", "mtia_ccp_events"}
MEMCPY = {"gpu_memcpy", "Memcpy"}
MEMSET = {"gpu_memset", "Memset"}
DEVICE = KERNEL | MEMCPY | MEMSET
OP = {"cpu_op", "Operator"}
RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime", "xpu_runtime", "xpu_driver",
           "privateuse1_runtime", "privateuse1_driver"}  # fmt: skip


def _load(path: Path) -> Any:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    data = json.loads(raw, parse_float=Decimal)
    return {"traceEvents": data} if isinstance(data, list) else data


def _num(v: Any) -> Decimal | None:
    if isinstance(v, bool) or not isinstance(v, int | Decimal):
        return None
    return Decimal(v)


def _union(intervals: list[tuple[Decimal, Decimal]]) -> Decimal:
    total, reach, start = Decimal(0), None, None
    for s, e in sorted(intervals):
        if reach is None or s > reach:
            if reach is not None:
                total += reach - start
            start, reach = s, e
        else:
            reach = max(reach, e)
    if reach is not None:
        total += reach - start
    return total


def _ext(args: dict[str, Any]) -> Any:
    return args.get("External id", args.get("external id"))


def totals(path: Path) -> dict[str, Any]:
    trace = _load(path)
    events = []
    for e in trace["traceEvents"]:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        ts, dur = _num(e.get("ts")), _num(e.get("dur"))
        if ts is None or dur is None or dur < 0:
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        events.append((e.get("cat", ""), str(e.get("name", "")), ts, dur, e, args))
    kernels = [x for x in events if x[0] in KERNEL]
    device = [x for x in events if x[0] in DEVICE]

    per_kernel: dict[str, list[Any]] = defaultdict(lambda: [0, Decimal(0)])
    for _, name, _, dur, _, _ in kernels:
        per_kernel[name][0] += 1
        per_kernel[name][1] += dur
    memcpy: dict[str, list[Any]] = defaultdict(lambda: [0, 0, Decimal(0)])
    for cat, name, _, dur, _, args in device:
        if cat in MEMCPY:
            memcpy[name][0] += 1
            memcpy[name][1] += int(_num(args.get("bytes")) or 0)
            memcpy[name][2] += dur
    memset = [0, 0, Decimal(0)]
    for cat, _, _, dur, _, args in device:
        if cat in MEMSET:
            memset[0] += 1
            memset[1] += int(_num(args.get("bytes")) or 0)
            memset[2] += dur
    streams: dict[str, list[Any]] = defaultdict(lambda: [0, []])
    for cat, _, ts, dur, e, args in device:
        key = f"{args.get('device', e.get('pid'))}/{args.get('stream', e.get('tid'))}"
        streams[key][0] += cat in KERNEL
        streams[key][1].append((ts, ts + dur))
    launches = [x for x in events
                if x[0] in RUNTIME and ("Launch" in x[1] or x[1].startswith("runFunction"))]  # fmt: skip

    # Each kernel's op: the runtime call of its correlation, the innermost op open on that
    # call's thread when it started; with no call on record, the op of its External id (not
    # when that id is its correlation).
    op_of_call: dict[int, Any] = {}
    by_thread: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for x in events:
        if x[0] in OP or x[0] in RUNTIME:
            by_thread[(str(x[4].get("pid")), str(x[4].get("tid")))].append(x)
    for rows in by_thread.values():
        rows.sort(key=lambda x: (x[2], -(x[2] + x[3])))
        stack: list[Any] = []
        for x in rows:
            while stack and stack[-1][2] + stack[-1][3] <= x[2]:
                stack.pop()
            if x[0] in OP:
                stack.append(x)
            else:
                op_of_call[id(x)] = stack[-1] if stack else None
    call_by_corr: dict[Any, Any] = {}
    for x in events:
        if x[0] in RUNTIME and x[5].get("correlation") is not None:
            call_by_corr[x[5]["correlation"]] = x
    op_by_ext: dict[Any, Any] = {}
    for x in events:
        if x[0] in OP and _ext(x[5]) is not None:
            op_by_ext.setdefault(_ext(x[5]), x)
    credited = Decimal(0)
    for _, _, _, dur, _, args in kernels:
        call = call_by_corr.get(args.get("correlation"))
        if call is not None:
            op = op_of_call.get(id(call))
        elif _ext(args) is not None and _ext(args) != args.get("correlation"):
            op = op_by_ext.get(_ext(args))
        else:
            op = None
        if op is not None:
            credited += dur

    props = trace.get("deviceProperties") or trace.get("computeProperties") or []
    names = {str(p.get("id", i)): p.get("name") for i, p in enumerate(props)}
    kernel_time: dict[str, Decimal] = defaultdict(Decimal)
    for _, _, _, dur, e, args in kernels:
        kernel_time[str(args.get("device", e.get("pid")))] += dur
    busiest = max(kernel_time, key=lambda k: kernel_time[k]) if kernel_time else None
    device_name = names.get(busiest) if busiest in names else next(iter(names.values()), None)
    cats = {x[0] for x in events}
    kind = ("MTIA" if any(c.startswith("mtia_") for c in cats)
            else "XPU" if any(c.startswith("xpu_") for c in cats)
            else "PrivateUse1" if any(c.startswith("privateuse1_") for c in cats)
            else "GPU")  # fmt: skip
    busy = _union([(ts, ts + dur) for _, _, ts, dur, _, _ in device])
    span = (max(ts + dur for _, _, ts, dur, _, _ in device) - min(x[2] for x in device)
            if device else Decimal(0))  # fmt: skip
    return {
        "device": device_name,
        "device_kind": kind,
        "event_count": len(events),
        "kernel_calls": len(kernels),
        "kernel_total_us": str(sum((x[3] for x in kernels), Decimal(0))),
        "kernels": {k: [v[0], str(v[1])] for k, v in sorted(per_kernel.items())},
        "memcpy": {k: [v[0], v[1], str(v[2])] for k, v in sorted(memcpy.items())},
        "memset": [memset[0], memset[1], str(memset[2])],
        "streams": {k: [v[0], str(_union(v[1]))] for k, v in sorted(streams.items())},
        "gpu_busy_us": str(busy),
        "gpu_span_us": str(span),
        "launches": [len(launches), str(sum((x[3] for x in launches), Decimal(0)))],
        "op_device_us": str(credited),
    }


def hta_kernels(path: Path) -> dict[str, Any] | None:
    """Kernel count and time as HolisticTraceAnalysis's parser reads the file (None: it did
    not read it)."""
    import tempfile

    try:
        from hta.common.trace import Trace
    except ImportError:
        return None
    try:
        with tempfile.TemporaryDirectory() as folder:
            t = Trace(trace_files={0: str(path)}, trace_dir=folder)
            t.parse_traces()
            df = t.get_trace(0)
            ids = t.symbol_table.get_sym_id_map()
            cats = [ids[c] for c in ("kernel", "Kernel", "mtia_ccp_events") if c in ids]
            k = df[df["cat"].isin(cats)]
            # HTA 0.5.0 keeps whole µs (so on a trace with fractions its time differs)
            return {"kernel_calls": len(k), "kernel_total_us": str(k["dur"].sum())}
    except Exception as exc:  # noqa: BLE001 - a cross-check: say why it did not run
        return {"error": f"{type(exc).__name__}: {exc}"[:200]}


def main(argv: list[str]) -> None:
    out: dict[str, Any] = {}
    for path in sorted(HERE.glob("*.json*")):
        if path.name == "totals.json":
            continue
        out[path.name] = totals(path)
        if "--hta" in argv:
            out[path.name]["hta"] = hta_kernels(path)
    (HERE / "totals.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
