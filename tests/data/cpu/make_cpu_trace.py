"""Record tests/data/cpu/square_cpu_trace.json: a CPU-only torch.profiler Chrome trace.

Run from the repository root with the project's venv: `.venv/bin/python
tests/data/cpu/make_cpu_trace.py`. The function below mirrors a tiny user function: a
`record_function("src:LINE")` range around each statement (what the ops stage does; the labels
are fixed line numbers of a pretend user file, not of this script), and a dtype conversion
(`.to()`) so that the trace holds an `aten::to` > `aten::_to_copy` > `aten::copy_` chain.
Re-recording changes every time in the trace: update tests/unit/test_trace_summary.py after.
"""

import os

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
    print(f"torch {torch.__version__}: wrote {OUT} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
