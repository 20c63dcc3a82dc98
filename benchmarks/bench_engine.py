"""Benchmark the engine: timing agreement with triton.testing.do_bench, and stage costs.

    python benchmarks/bench_engine.py [--markdown]

For each example function: our median (± spread) from the timing stage, do_bench's median on the
same call, their difference; and the wall time of the ops+trace profiled pass per profiled call
relative to the function's own time (what a user waits for, beyond the timing itself).
Prints a table; run on the device and paste it into docs/benchmarks.md with the date and GPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

CASES = [
    ("square.py", "square_torch"),
    ("square.py", "square_mul"),
    ("square.py", "square_pow"),
    ("square.py", "square_three_ways"),
    ("fusion.py", "square_twice"),
    ("fusion.py", "matmul_relu"),
    ("triton_square.py", "square"),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3, help="independent timings per method")
    args = parser.parse_args()

    import torch

    from kernel_lens.agent.runner import ProfileRequest, run_profile
    from kernel_lens.agent.stages.target import load_target
    from kernel_lens.agent.stages.timing import time_function

    cuda = torch.cuda.is_available()
    if cuda:
        from triton.testing import do_bench
    device = torch.cuda.get_device_name() if cuda else "CPU"
    print(
        f"# engine benchmark · {device} · torch {torch.__version__} · {time.strftime('%Y-%m-%d')}\n"
    )
    print(
        "| function | ours median ms (±spread) | do_bench median ms | diff | "
        "ops+trace pass, wall per call ms | pass / function time | whole profile s |"
    )
    print("|---|---|---|---|---|---|---|")
    trace_dir = tempfile.mkdtemp(prefix="kl-bench-")
    for file, func in CASES:
        path = str(ROOT / "kernels" / file)
        target = load_target(path, name=func)
        target.call()
        dev = "cuda" if cuda else "cpu"
        ours = [time_function(target.call, device=dev) for _ in range(args.repeat)]
        med = statistics.median(t.median_ms for t in ours)
        spread = statistics.median(t.spread_pct for t in ours)
        if cuda:
            ref = statistics.median(
                do_bench(target.call, warmup=25, rep=100, return_mode="median")
                for _ in range(args.repeat)
            )
            diff = f"{100 * (med - ref) / ref:+.2f}%"
            ref_txt = f"{ref:.4f}"
        else:
            ref_txt, diff = "n/a (CPU)", ""
        t0 = time.perf_counter()
        result = run_profile(
            ProfileRequest(path=path, function=func, trace_dir=trace_dir, keep_samples=False)
        )
        whole = time.perf_counter() - t0
        runs = result["profiled_runs"]
        # The profiled pass's wall time is not in the result; measure a pass directly.
        from kernel_lens.agent.stages.ops import profile_pass

        passed = profile_pass(target.call, target.code, device=dev, runs=runs, trace_dir=trace_dir)
        per_call = passed.wall_ms / runs
        print(
            f"| {file}::{func} | {med:.4f} (±{spread:.2f}%) | {ref_txt} | {diff} | "
            f"{per_call:.3f} | {per_call / med:.1f}× | {whole:.2f} |"
        )
        os.remove(passed.trace_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
