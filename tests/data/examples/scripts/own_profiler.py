"""A script that runs torch.profiler itself, as pt_profiler.py in the GPU MODE lecture does."""

import os

import torch
from torch.profiler import ProfilerActivity, profile


def trace_handler(prof):
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))
    prof.export_chrome_trace(os.path.join(os.getcwd(), "own_trace.json"))


with profile(
    activities=[ProfilerActivity.CPU],
    schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
    on_trace_ready=trace_handler,
) as p:
    for _ in range(5):
        torch.square(torch.randn(200, 200))
        p.step()
