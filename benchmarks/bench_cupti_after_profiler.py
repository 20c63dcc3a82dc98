"""Does a torch.profiler session leave CUPTI attached, slowing what is timed after it in the
same process? (GPU; issue 34 item 4 found our graph time of a launch-bound function 37–43%
above ``do_bench_cudagraph`` when taken in the agent after its profiler pass, and equal when
taken in a fresh process.)

    python benchmarks/bench_cupti_after_profiler.py            # one child per setting

Each setting runs in a fresh child: the graph time (``time_in_graph``), the eager per-call time
(CUDA events around 200 calls) and ``do_bench_cudagraph`` of 100 small adds, before and after a
``torch.profiler`` session (CUDA activities) in that process. Settings: Kineto's default, and
``TEARDOWN_CUPTI=1`` (Kineto releases CUPTI when the session ends). Prints a Markdown table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, statistics, sys
import torch, triton.testing
sys.path.insert(0, sys.argv[1])
from kernel_lens.agent.stages.timing import time_in_graph

x = torch.rand(1024, device="cuda")
def small_ops():
    y = x
    for _ in range(100):
        y = y + 1.0
    return y

def eager_us():
    for _ in range(20):
        small_ops()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(5):
        s.record()
        for _ in range(200):
            small_ops()
        e.record(); e.synchronize()
        out.append(s.elapsed_time(e) * 1000 / 200)
    return statistics.median(out)

def measure():
    with torch.cuda.stream(torch.cuda.Stream()):
        ref = triton.testing.do_bench_cudagraph(small_ops, return_mode="median") * 1000
    graph = time_in_graph(small_ops, calls=40).median_ms * 1000
    return {"graph_us": graph, "do_bench_cudagraph_us": ref, "eager_us": eager_us()}

before = measure()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(3):
        small_ops()
    torch.cuda.synchronize()
kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
after = measure()
# a second session: does it still record kernels (re-init after teardown)?
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof2:
    small_ops(); torch.cuda.synchronize()
kernels2 = sum(1 for e in prof2.events() if e.device_type == torch.autograd.DeviceType.CUDA)
# a graph captured and replayed after a second session (the crash torch warns of)
again = measure()
print(json.dumps({"before": before, "after": after, "again": again,
                  "kernels": kernels, "kernels_second_session": kernels2}))
"""


def main() -> None:
    rows = []
    for label, extra in (("default", {}), ("TEARDOWN_CUPTI=1", {"TEARDOWN_CUPTI": "1"})):
        env = dict(os.environ, **extra)
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(ROOT / "server")],
            capture_output=True, text=True, timeout=240, env=env,
        )  # fmt: skip
        if proc.returncode != 0:
            rows.append(f"| {label} | failed rc {proc.returncode}: {proc.stderr[-300:]!r} |")
            continue
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        for phase in ("before", "after", "again"):
            m = data[phase]
            rows.append(
                f"| {label} | {phase} | {m['graph_us']:.1f} | {m['do_bench_cudagraph_us']:.1f} "
                f"| {m['eager_us']:.1f} | {data['kernels']} / {data['kernels_second_session']} |"
            )
    print(
        "| setting | when | our graph µs/call | do_bench_cudagraph µs | eager µs/call "
        "| kernels recorded (1st / 2nd session) |"
    )
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
