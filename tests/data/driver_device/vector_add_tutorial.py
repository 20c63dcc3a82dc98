"""Shaped like Triton's vector-add tutorial: the device comes from Triton's driver at module
level, the tensors are made on it, the launcher asserts it, and the script benchmarks through
the driver after its first launch. On a machine without a GPU, Triton has no driver; under the
interpreter Kernel Lens stands in for it with the CPU, so Profile, Show Values and Debug Kernel
run the script's own launch."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    output = torch.empty_like(x)
    assert x.device == DEVICE and y.device == DEVICE and output.device == DEVICE
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


torch.manual_seed(0)
size = 3000
x = torch.rand(size, device=DEVICE)
y = torch.rand(size, device=DEVICE)
print(torch.max(torch.abs(x + y - add(x, y))))
print(triton.testing.do_bench(lambda: add(x, y)))  # the driver's benchmarker: a GPU's
