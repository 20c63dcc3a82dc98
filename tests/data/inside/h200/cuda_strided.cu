#include <torch/types.h>
#include <cuda.h>
#include <cuda_runtime.h>

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
