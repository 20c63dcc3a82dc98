"""load_inline CUDA kernels for the inside-the-kernel views, compiled with -lineinfo:

- strided_sum: x[i] (coalesced) on one line, y[i * 32] (strided) on the next, their sum
  stored on a third — the FADD waits on both loads; the strided one is the cause;
- late_consumer: a strided load whose value is used several lines below, after independent
  arithmetic;
- chase: a loop-carried dependency (each step's index is the value the last step loaded).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
__global__ void strided_sum(const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i];
    float b = y[(long)i * 32];
    out[i] = a + b;
}

__global__ void late_consumer(const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float b = y[(long)i * 32];
    float s = i * 0.5f;
    s = s * s + 1.0f;
    s = sqrtf(s) + s;
    out[i] = s * b;
}

__global__ void chase(const int* next, int* out, int n, int steps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int j = i;
    for (int k = 0; k < steps; ++k) {
        j = next[j];
    }
    out[i] = j;
}

torch::Tensor run_strided_sum(torch::Tensor x, torch::Tensor y) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    strided_sum<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(),
                                          out.data_ptr<float>(), n);
    return out;
}

torch::Tensor run_late_consumer(torch::Tensor y, int n) {
    auto out = torch::empty({n}, y.options());
    late_consumer<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}

torch::Tensor run_chase(torch::Tensor next, int steps) {
    auto out = torch::empty_like(next);
    int n = next.numel();
    chase<<<(n + 255) / 256, 256>>>(next.data_ptr<int>(), out.data_ptr<int>(), n, steps);
    return out;
}
"""

CPP_SRC = """
torch::Tensor run_strided_sum(torch::Tensor x, torch::Tensor y);
torch::Tensor run_late_consumer(torch::Tensor y, int n);
torch::Tensor run_chase(torch::Tensor next, int steps);
"""


def build():
    return load_inline(
        name="kl_inside_strided",
        cpp_sources=CPP_SRC,
        cuda_sources=CUDA_SRC,
        functions=["run_strided_sum", "run_late_consumer", "run_chase"],
        extra_cuda_cflags=["-lineinfo", "-O3"],
    )


def main() -> None:
    ext = build()
    n = 1 << 22
    x = torch.rand(n, device="cuda")
    y = torch.rand(n * 32, device="cuda")
    nxt = torch.randperm(n, device="cuda", dtype=torch.int64).to(torch.int32)
    for _ in range(2):
        out = ext.run_strided_sum(x, y)
        late = ext.run_late_consumer(y, n)
        chased = ext.run_chase(nxt, 16)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y[::32])
    assert late.shape == (n,) and chased.shape == (n,)


if __name__ == "__main__":
    main()
