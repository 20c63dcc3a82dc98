"""Server-side timeline reduction for the report panel: time and size at 20k–200k events.

    python benchmarks/bench_timeline.py

A synthetic trace like a launch-bound loop (one CPU op, one runtime launch and one kernel per
step) is reduced with the report panel's default resolution; the table gives the reduction's time,
the events kept (what the webview draws) and the JSON size sent to it.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from kernel_lens.analysis.timeline import build_timeline  # noqa: E402


def trace(steps: int) -> dict:
    events = []
    for i in range(steps):
        t = i * 12.0
        events.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mul",
                "pid": 1,
                "tid": 1,
                "ts": t,
                "dur": 6.0,
                "args": {"External id": i},
            }
        )
        events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": t + 1,
                "dur": 4.0,
                "args": {"correlation": i},
            }
        )
        events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": "void k<float>(float*)",
                "pid": 0,
                "tid": 7,
                "ts": t + 6,
                "dur": 3.0,
                "args": {"correlation": i, "stream": 7, "device": 0},
            }
        )
    return {"traceEvents": events}


def main() -> int:
    print(
        "| events | overview: reduce s (median of 3) | kept | JSON | 1% window: reduce s | kept |"
    )
    print("|---|---|---|---|---|---|")
    for steps in (6_667, 33_334, 66_667):
        t = trace(steps)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            out = build_timeline(t)
            times.append(time.perf_counter() - t0)
        size = len(json.dumps(out))
        span = out["span_us"]
        t0 = time.perf_counter()
        zoom = build_timeline(t, window=(span * 0.5, span * 0.51))
        zoom_s = time.perf_counter() - t0
        print(
            f"| {3 * steps:,} | {statistics.median(times):.2f} | {out['kept']:,} | "
            f"{size / 1e3:.1f} kB | {zoom_s:.2f} | {zoom['kept']:,} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
