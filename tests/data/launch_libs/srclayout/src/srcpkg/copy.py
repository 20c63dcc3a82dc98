import torch
import triton
import triton.language as tl

from srcpkg.helpers import BLOCK


@triton.jit
def copy_kernel(dst_ptr, src_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def copy(x):
    y = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), BLOCK),)](y, x, x.numel(), BLOCK=BLOCK)
    return y


def copy_inputs():
    return (torch.randn(4096, dtype=torch.float64),)
