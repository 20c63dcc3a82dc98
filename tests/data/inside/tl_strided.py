"""A planted uncoalesced read in Triton: x is read with unit stride, y with a stride of 32
floats (one 128-byte line per element), and the sum is stored on a third line."""

import torch
import triton
import triton.language as tl


@triton.jit
def strided_sum_kernel(x_ptr, y_ptr, out_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs * STRIDE, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def strided_sum(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    strided_sum_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, STRIDE=32, BLOCK=1024)
    return out


def main() -> None:
    n = 1 << 22
    x = torch.rand(n, device="cuda")
    y = torch.rand(n * 32, device="cuda")
    for _ in range(3):
        out = strided_sum(x, y)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y[::32])


if __name__ == "__main__":
    main()
