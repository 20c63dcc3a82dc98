import torch
import triton
import triton.language as tl

from .utils import scale


@triton.jit
def scale_kernel(out_ptr, in_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, scale(tl.load(in_ptr + offs, mask=mask), factor), mask=mask)


@triton.jit
def shift_kernel(out_ptr, in_ptr, n, delta, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, mask=mask) + delta, mask=mask)


def _twice(x):
    # made by assignment, not a decorator
    offs = x
    return offs


def twice_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, mask=mask) * 2, mask=mask)


twice_kernel = triton.jit(twice_kernel)


def apply(x, factor=3.0, shift=False):
    out = torch.empty_like(x)
    n = x.numel()
    fn = shift_kernel if shift else scale_kernel  # launched through a local alias
    fn[(triton.cdiv(n, 128),)](out, x, n, factor, BLOCK=128)
    return out


def apply_inputs():
    return (torch.randn(1000, dtype=torch.float16),)


def twice(x):
    out = torch.empty_like(x)
    twice_kernel[(triton.cdiv(x.numel(), 64),)](out, x, x.numel(), BLOCK=64)
    return out


def twice_inputs():
    return (torch.arange(256, dtype=torch.int32),)
