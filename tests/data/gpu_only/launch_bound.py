"""Launch-bound functions (issue 25): a Triton vector add of 1024 elements (the public
tutorial's kernel on a tiny input), a loop of 100 small torch ops, and a function that reads a
value back with ``.item()`` (a host sync: it cannot be captured in a CUDA graph). GPU only."""

import torch
import triton
import triton.language as tl

N = 1024
X = torch.rand(N, device="cuda")
Y = torch.rand(N, device="cuda")


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


# kernel-lens: inputs = (X, Y)
def add(x, y):
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


# kernel-lens: inputs = (X,)
def small_ops(x):
    for _ in range(100):
        x = x + 1.0
    return x


# kernel-lens: inputs = (X,)
def with_item(x):
    return (x * 2).sum().item()
