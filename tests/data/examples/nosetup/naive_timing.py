"""Timing written the naive way: the clock is read while the GPU may still be working."""

import time

import torch


def square(x):
    return x * x


def measure():
    x = torch.randn(1 << 20, device="cuda")
    square(x)
    start = time.time()
    square(x)
    end = time.time()
    return end - start


def measure_well():
    x = torch.randn(1 << 20, device="cuda")
    for _ in range(3):
        square(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(100):
        square(x)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / 100
