"""@triton.jit helpers that the kernels in this folder inline (their samples fold to the
caller's line, with the helper named)."""

import triton
import triton.language as tl


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def tile_offsets(pid, BLOCK: tl.constexpr):
    return pid * BLOCK + tl.arange(0, BLOCK)
