"""Shaped like Triton's matmul tutorial: the ``@triton.autotune`` configs are picked by asking
Triton's driver which backend is active (``is_cuda()``) as the decorator runs, and the module
asks the driver for its device. On a machine without a GPU, Triton has no driver: Kernel Lens
stands in for it (the interpreter's CPU, CUDA's configs), so the script runs to its launch."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def get_autotune_config():
    if is_cuda():
        return [triton.Config({"BLOCK": 512}, num_warps=8, num_stages=3)]
    return [triton.Config({"BLOCK": 64, "waves_per_eu": 2}, num_warps=4, num_stages=2)]


@triton.autotune(configs=get_autotune_config(), key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


x = torch.rand(4096, device=DEVICE, dtype=torch.float16)
scale(x)
