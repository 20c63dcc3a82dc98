"""kernels/triton_square.py's kernel under another name, a few lines further down, in another
file: its PTX differs in names, line numbers and paths only (``kernel-lens asm-diff`` calls the
two identical once normalised)."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def copied_square_kernel(dst_ptr, src_ptr, count, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < count
    x = tl.load(src_ptr + offsets, mask=mask)
    tl.store(dst_ptr + offsets, x * x, mask=mask)


# kernel-lens: inputs = (torch.randn(1 << 14, device=DEVICE),)
def copied_square(x, BLOCK=1024):
    out = torch.empty_like(x)
    n = x.numel()
    copied_square_kernel[(triton.cdiv(n, BLOCK),)](out, x, n, BLOCK=BLOCK)
    return out
