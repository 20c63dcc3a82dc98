"""A kernel with a planted bug: its load reads one element further on, without a mask, so the
last program's last lane reads past the end of ``in_ptr``. On a GPU it may read garbage
silently; Show Values (Triton's interpreter) reports it on its line, with the program, the lane
and the offset.
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def shift_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(in_ptr + offs + 1)
    tl.store(out_ptr + offs, x, mask=mask)


# kernel-lens: inputs = (torch.randn(4096, device=DEVICE),)
def shift(x, BLOCK=1024):
    out = torch.empty_like(x)
    n = x.numel()
    shift_kernel[(triton.cdiv(n, BLOCK),)](out, x, n, BLOCK=BLOCK)
    return out
