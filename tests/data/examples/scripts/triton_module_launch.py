"""A Triton kernel launched by the script itself at module level (no launcher function), then
more work and a side effect that Show Assembly must not reach."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def scale_kernel(out_ptr, in_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(in_ptr + offsets, mask=mask) * factor, mask=mask)


if __name__ == "__main__":
    x = torch.randn(2048, device=DEVICE)
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 512),)](out, x, x.numel(), 3.0, BLOCK=512)
    with open("after_launch.txt", "w") as fh:
        fh.write("the rest of the script ran")
