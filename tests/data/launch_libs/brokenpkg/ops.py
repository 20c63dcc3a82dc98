import torch
import triton
import triton.language as tl


@triton.jit
def neg_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, -tl.load(in_ptr + offs, mask=mask), mask=mask)


def neg(x):
    out = torch.empty_like(x)
    neg_kernel[(triton.cdiv(x.numel(), 128),)](out, x, x.numel(), BLOCK=128)
    return out


def neg_inputs():
    return (torch.randn(512),)
