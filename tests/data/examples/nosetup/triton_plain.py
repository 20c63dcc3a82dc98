"""A Triton launch written for a GPU, with nothing for a CPU: no TRITON_INTERPRET anywhere."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def add_one_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(in_ptr + offsets, mask=mask) + 1.0, mask=mask)


def add_one(x, BLOCK=256):
    out = torch.empty_like(x)
    add_one_kernel[(triton.cdiv(x.numel(), BLOCK),)](out, x, x.numel(), BLOCK=BLOCK)
    return out


def add_one_inputs():
    return (torch.randn(1000, device=DEVICE),)
