"""A Triton launcher called at module level, then a benchmark loop (shaped like a lecture
script): profiling square must not run the loop."""

import os

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def square_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(in_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * x, mask=mask)


def square(x, BLOCK=128):
    out = torch.empty_like(x)
    square_kernel[(triton.cdiv(x.numel(), BLOCK),)](out, x, x.numel(), BLOCK=BLOCK)
    return out


x = torch.randn(1000, device=DEVICE)
y = square(x)

marker = os.environ.get("KL_CAPTURE_MARKER") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "benchmark_ran.txt"
)
for size in (2**i for i in range(10, 14)):
    square(torch.randn(size, device=DEVICE))
with open(marker, "w") as fh:
    fh.write("the benchmark ran")
