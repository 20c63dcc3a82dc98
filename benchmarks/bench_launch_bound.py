"""Launch-bound functions timed four ways (issue 25), on a CUDA GPU:

    python benchmarks/bench_launch_bound.py [--calls 100] [--retries 10]

For each function of ``tests/data/gpu_only/launch_bound.py`` (a Triton vector add of 1024
elements, a loop of 100 small torch ops) the table gives, per call:

- **eager**: the timing stage's median (CUDA events around each call, L2 flushed before each);
- **graph**: the timing stage's CUDA graph (``calls`` calls per graph, L2 flushed inside the
  graph before each call, a flush-only graph subtracted; median of ``retries`` replays);
- **graph warm**: the same graph without the flush (hot L2);
- **do_bench_cudagraph**: ``triton.testing.do_bench_cudagraph`` (hot L2, no flush), median;
- **kernels**: the summed kernel device time per call, from the profiler (``torch.profiler``
  over 20 calls, ``device_time_total`` of the CUDA kernels).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))
FILE = ROOT / "tests" / "data" / "gpu_only" / "launch_bound.py"


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("launch_bound", FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _kernels_us(fn: Any, calls: int = 20) -> float:
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total = 0.0
    for event in prof.key_averages():
        total += float(getattr(event, "device_time_total", 0.0) or 0.0)
    return total / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--retries", type=int, default=10)
    args = parser.parse_args()

    import torch
    import triton.testing

    from kernel_lens.agent.stages.timing import TimingConfig, time_function, time_in_graph

    module = _module()
    cases = {
        "add (Triton, 1024 elements)": lambda: module.add(module.X, module.Y),
        "small_ops (100 torch adds)": lambda: module.small_ops(module.X),
    }
    print(f"{torch.cuda.get_device_name()} · torch {torch.__version__} · µs per call")
    header = ("function", "eager", "graph", "graph warm", "do_bench_cudagraph", "kernels")
    print(f"{header[0]:<30}" + "".join(f"{h:>20}" for h in header[1:]))
    for name, fn in cases.items():
        eager = time_function(fn, device="cuda", config=TimingConfig(budget_ms=300)).median_ms
        graph = time_in_graph(fn, calls=args.calls, retries=args.retries).median_ms
        warm = time_in_graph(fn, calls=args.calls, retries=args.retries, flush_l2=False)
        with torch.cuda.stream(torch.cuda.Stream()):
            reference = float(triton.testing.do_bench_cudagraph(fn, return_mode="median"))
        kernels = _kernels_us(fn)
        cells = [eager * 1e3, (graph or float("nan")) * 1e3,
                 (warm.median_ms or float("nan")) * 1e3, reference * 1e3, kernels]  # fmt: skip
        print(f"{name:<30}" + "".join(f"{c:>20.3f}" for c in cells))


if __name__ == "__main__":
    main()
