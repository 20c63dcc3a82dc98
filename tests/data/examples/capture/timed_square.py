"""Shaped like a lecture script: a timing helper, then expensive work and a side effect."""

import os
import sys

import torch


def time_fn(func, tensor):
    start = torch.cuda.Event(enable_timing=True) if torch.cuda.is_available() else None
    out = func(tensor)
    if start is not None:
        torch.cuda.synchronize()
    return out


def square_2(a):
    return a * a


def square_3(a):
    return a**2


b = torch.randn(64, 32)

if __name__ == "__main__":
    time_fn(square_2, b)
    time_fn(square_3, b)
    # The expensive rest of the script: never reached when square_2 is profiled.
    marker = os.environ.get("KL_CAPTURE_MARKER") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "reached_the_end.txt"
    )
    for _ in range(3):
        torch.randn(256, 256) @ torch.randn(256, 256)
    with open(marker, "w") as fh:
        fh.write(" ".join(sys.argv))
