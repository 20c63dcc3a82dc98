"""A Triton square kernel, launched by a function with a ``BLOCK_SIZE`` parameter.

On a CUDA machine it compiles for the GPU; without one it runs under Triton's interpreter
(``TRITON_INTERPRET=1``, set here before triton is imported), on a small input.
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 10_000 * 10_000 if DEVICE == "cuda" else 1 << 14


@triton.jit
def square_kernel(out_ptr, in_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * x, mask=mask)


# kernel-lens: inputs = (torch.randn(N, device=DEVICE),), {"BLOCK_SIZE": 1024}
def square(x, BLOCK_SIZE=1024):
    out = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    square_kernel[grid](out, x, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


# kernel-lens: inputs = (torch.randn(1 << 15, device=DEVICE),)
def square_small(x):
    # 32 blocks of 1024 on a GPU with 132 SMs: Nsight Compute's launch-configuration hint.
    return square(x, BLOCK_SIZE=1024)


if __name__ == "__main__":
    x = torch.randn(N, device=DEVICE)
    assert torch.allclose(square(x), x * x)
    print("ok", DEVICE)
