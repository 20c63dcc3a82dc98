"""Shaped like Liger-Kernel's ``ops/rms_norm.py``: ``rsqrt`` comes from a module-level
conditional import whose test calls helpers of the package (which cannot be imported on a
machine without a GPU, see ``platform_probe.py``), and the float scalars ``eps`` and ``offset``
are passed through from callers (``offset=0.0``). The launcher runs only on a GPU."""

import operator

import torch
import triton
import triton.language as tl

from normlib.ops.platform_probe import compare_version, is_npu_available

if compare_version("triton", operator.ge, "3.0.0") and not is_npu_available():
    try:
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, n_cols, eps, offset, BLOCK_SIZE: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W_ptr + cols, mask=mask, other=0)
    rstd = rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(Y_ptr + row * Y_row_stride + cols, x * rstd * (offset + w), mask=mask)


def rms_norm_forward(X, W, eps, offset):
    n_rows, n_cols = X.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    Y = torch.empty_like(X)
    _rms_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X, X.stride(0), W, n_cols, eps, offset, BLOCK_SIZE=BLOCK_SIZE
    )
    return Y


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, W, eps, offset=0.0):
        return rms_norm_forward(X, W, eps, offset)
