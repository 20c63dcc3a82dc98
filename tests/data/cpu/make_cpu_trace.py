"""Record tests/data/cpu/square_cpu_trace.json: a CPU-only torch.profiler Chrome trace.

Run from the repository root with the project's venv: `.venv/bin/python
tests/data/cpu/make_cpu_trace.py`. The function below mirrors a tiny user function: a
`record_function("src:LINE")` range around each statement (what the ops stage does), and a dtype
conversion (`.to()`) so the trace holds an `aten::to` / `aten::copy_` pair.
"""

import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "square_cpu_trace.json")


def square(x: torch.Tensor) -> torch.Tensor:
    with record_function("src:12"):
        y = x * x
    with record_function("src:13"):
        z = y.to(torch.float64)
    with record_function("src:14"):
        return z.sum()


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(256, 256)
    for _ in range(3):
        square(x)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        square(x)
    prof.export_chrome_trace(OUT)
    print("torch", torch.__version__, "python", sys.version.split()[0], "->", OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
