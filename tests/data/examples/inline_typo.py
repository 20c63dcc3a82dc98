"""A load_inline module whose CUDA source has a mistake on one line."""

from torch.utils.cpp_extension import load_inline

CUDA = r"""
__global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + undefined_name;
}
"""


def build():
    return load_inline(name="typo_ext", cpp_sources="", cuda_sources=[CUDA], verbose=False)
