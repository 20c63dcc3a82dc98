"""Benchmark: the line attribution of a training step (backward links and accounting included)
against trace size.

The trace is the H200 recording of ``kernels/train_step.py::train_step`` (3 profiled calls,
692 events; tests/data/h200/training/) replicated end to end with fresh timestamps, correlation
ids, sequence numbers and flow ids until it holds N events — the shape of a long training run
profiled as a whole. Prints a table; no assertion (the target, ≤ 2 s at 1M events on the 2-core
development machine, is read from it).

    python benchmarks/bench_attribution.py [--sizes 100000,1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import time
from pathlib import Path
from typing import Any

from kernel_lens.analysis.line_attribution import attribute_trace

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "h200" / "training"


def replicated(base: dict[str, Any], size: int) -> dict[str, Any]:
    """``base``'s events repeated until there are ``size`` of them, each copy shifted."""
    events = [e for e in base["traceEvents"] if e.get("ph") != "M"]
    meta = [e for e in base["traceEvents"] if e.get("ph") == "M"]
    ts = [float(e["ts"]) for e in events if "ts" in e]
    span = max(ts) - min(ts) + 1000.0
    ids = [
        int(e.get("args", {}).get(key, 0))
        for e in events
        for key in ("correlation", "External id", "Sequence number")
        if isinstance(e.get("args", {}).get(key), int)
    ] + [int(e["id"]) for e in events if isinstance(e.get("id"), int)]
    stride = max(ids) + 1
    out: list[dict[str, Any]] = list(meta)
    copies = 0
    while len(out) < size:
        for ev in events:
            e = copy.copy(ev)
            if "ts" in e:
                e["ts"] = float(e["ts"]) + copies * span
            if isinstance(e.get("id"), int):
                e["id"] = e["id"] + copies * stride
            args = e.get("args")
            if args:
                args = dict(args)
                for key in ("correlation", "External id", "Sequence number"):
                    if isinstance(args.get(key), int):
                        args[key] = args[key] + copies * stride
                e["args"] = args
            out.append(e)
            if len(out) >= size:
                break
        copies += 1
    return {"traceEvents": out}, copies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = json.loads((DATA / "train_step-train_step-trace.json").read_text())
    print(f"{'events':>10} {'calls':>7} {'best s':>8} {'median s':>9} {'on lines':>9}")
    for size in [int(s) for s in args.sizes.split(",")]:
        trace, copies = replicated(base, size)
        times: list[float] = []
        pct = 0.0
        for _ in range(args.repeat):
            gc.collect()
            t0 = time.perf_counter()
            found = attribute_trace(trace, runs=3 * copies, first_line=43, last_line=49)
            times.append(time.perf_counter() - t0)
            pct = found.accounting.to_json()["on_lines_pct"]
        times.sort()
        print(
            f"{size:>10} {3 * copies:>7} {times[0]:>8.2f} {times[len(times) // 2]:>9.2f} "
            f"{pct:>8.1f}%"
        )


if __name__ == "__main__":
    main()
