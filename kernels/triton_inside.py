"""Kernels to look inside: Show Values puts each line's blocks after it, for a chosen program,
and Debug Kernel stops on the kernel's first line (both under Triton's interpreter).

``scale`` launches a masked vector kernel whose last program has 24 lanes past the end;
``matmul`` a 2-D tiled kernel on a 3 × 2 grid whose K loop runs three times.
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def scale_kernel(out_ptr, in_ptr, n, factor, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(in_ptr + offs, mask=mask)
    y = x * factor
    tl.store(out_ptr + offs, y, mask=mask)


# kernel-lens: inputs = (torch.randn(4072, device=DEVICE),)
def scale(x, factor=2.0, BLOCK=1024):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, BLOCK),)](out, x, n, factor, BLOCK=BLOCK)
    return out


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a_mask = (rm[:, None] < M) & (rk[None, :] < K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=a_mask, other=0.0)
        b_mask = (rk[:, None] < K) & (rn[None, :] < N)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=b_mask, other=0.0)
        acc += tl.dot(a, b)
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=c_mask)


# kernel-lens: inputs = (torch.randn(40, 40, device=DEVICE), torch.randn(40, 24, device=DEVICE))
def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    matmul_kernel[grid](a, b, c, M, N, K, BM=16, BN=16, BK=16)
    return c


if __name__ == "__main__":
    x = torch.randn(4072, device=DEVICE)
    assert torch.allclose(scale(x), x * 2.0)
    a, b = torch.randn(40, 40, device=DEVICE), torch.randn(40, 24, device=DEVICE)
    assert torch.allclose(matmul(a, b), a @ b, atol=1e-3)
    print("ok", DEVICE)
