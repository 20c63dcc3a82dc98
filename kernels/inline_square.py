"""The lecture's ``load_inline`` CUDA square: a hand-written kernel compiled from a Python string.

Needs CUDA and nvcc. Without them the function raises ``NotImplementedError`` with the reason,
which Kernel Lens reports as "unsupported on this machine" rather than as a crash.
The first call compiles the extension (about a minute; cached in torch's extension folder).
"""

import functools
import shutil

import torch

CUDA_SOURCE = r"""
#include <torch/extension.h>

__global__ void square_kernel(const float* __restrict__ in, float* __restrict__ out, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i];
        out[i] = v * v;
    }
}

torch::Tensor square(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a CUDA float32 tensor");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    long n = xc.numel();
    int threads = 1024;
    long blocks = (n + threads - 1) / threads;
    square_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

CPP_SOURCE = "torch::Tensor square(torch::Tensor x);"


def _missing() -> str | None:
    if not torch.cuda.is_available():
        return "needs CUDA and nvcc: no CUDA device is available"
    if shutil.which("nvcc") is None:
        return "needs CUDA and nvcc: nvcc is not on PATH (install the CUDA toolkit)"
    return None


@functools.cache
def _extension():
    from torch.utils.cpp_extension import load_inline

    return load_inline(
        name="kernel_lens_inline_square",
        cpp_sources=[CPP_SOURCE],
        cuda_sources=[CUDA_SOURCE],
        functions=["square"],
        extra_cuda_cflags=["-O3", "-lineinfo"],
    )


def square_inputs():
    if torch.cuda.is_available():
        return (torch.randn(10_000, 10_000, device="cuda"),)
    return (torch.randn(100, 100),)


def square(x):
    reason = _missing()
    if reason:
        raise NotImplementedError(reason)
    return _extension().square(x)
