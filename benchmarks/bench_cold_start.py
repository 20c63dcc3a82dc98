"""Where a cold agent's seconds go: each phase of a fresh agent's start, timed in a fresh process.

    python benchmarks/bench_cold_start.py [--repeat 3]

Phases, in the order a cold agent meets them (each row: median over ``--repeat`` fresh
processes, seconds since the process's own start as the interpreter reports it):

- interpreter: ``python -c pass`` wall time (the process's start and exit);
- ``import torch``; ``import triton``; ``import pandas``; our job modules (the agent's warm list);
- CUDA: ``torch.cuda.init()`` and a first kernel (context creation and module load);
- the profiler's first start (CPU + CUDA activities: CUPTI's initialisation, ``torch._inductor``);
- columns: torch as it is; with :mod:`kernel_lens.agent.profiler_start` (the profiler's first
  start imports no Inductor); and that plus the CUDA driver initialised in a thread while the
  imports run.

On a machine without CUDA the CUDA rows say so. The table is printed last.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time, threading, os
t0 = time.perf_counter()
marks = {}
def mark(name):
    marks[name] = time.perf_counter() - t0
parallel = sys.argv[1] == "parallel"
guarded = sys.argv[1] != "serial"
cuda_thread = None
if parallel:
    # CUDA's driver initialisation in a thread while Python imports torch's Python side
    def init():
        import ctypes
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            lib.cuInit(0)
        except OSError:
            pass
        mark("cuInit (thread)")
    cuda_thread = threading.Thread(target=init, daemon=True)
    cuda_thread.start()
import torch
mark("import torch")
import triton
mark("import triton")
import pandas
mark("import pandas")
for name in ("kernel_lens.agent.engine", "kernel_lens.agent.runner",
             "kernel_lens.agent.stages.target", "kernel_lens.agent.stages.timing",
             "kernel_lens.agent.stages.ops", "kernel_lens.analysis.line_attribution",
             "kernel_lens.analysis.trace_summary"):
    __import__(name)
mark("our job modules")
cuda = torch.cuda.is_available()
if cuda_thread is not None:
    cuda_thread.join()
if cuda:
    torch.cuda.init()
    mark("torch.cuda.init")
    torch.ones(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    mark("first kernel")
if guarded:
    from kernel_lens.agent import profiler_start
    profiler_start.install()
from torch.profiler import ProfilerActivity, profile
acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
with profile(activities=acts, record_shapes=True):
    (torch.ones(2, device="cuda" if cuda else "cpu") + 1)
mark("profiler first start")
print(json.dumps({"cuda": cuda, "marks": marks}))
"""


def _run(mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("{")][-1]
    data = json.loads(line)
    marks: dict[str, float] = data["marks"]
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    bare: list[float] = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - start)
    rows: dict[str, dict[str, list[float]]] = {"serial": {}, "guarded": {}, "parallel": {}}
    for _ in range(args.repeat):
        for mode in rows:
            for name, t in _run(mode).items():
                rows[mode].setdefault(name, []).append(t)
    print(f"python {sys.version.split()[0]} · {args.repeat} fresh processes per column")
    print(
        f"{'phase (s since start)':<28}{'torch as is':>12}{'no Inductor':>13}"
        f"{'+ cuInit thread':>17}"
    )
    print(f"{'interpreter (python -c pass)':<28}{statistics.median(bare):>12.3f}")
    names = list(rows["serial"]) + [n for n in rows["parallel"] if n not in rows["serial"]]
    for name in names:
        cells = []
        for mode in rows:
            got = rows[mode].get(name)
            cells.append(f"{statistics.median(got):.3f}" if got else "—")
        print(f"{name:<28}{cells[0]:>12}{cells[1]:>13}{cells[2]:>17}")


if __name__ == "__main__":
    main()
