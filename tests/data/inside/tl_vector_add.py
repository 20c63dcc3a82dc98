"""Triton's vector add (the first tutorial), on 2**24 floats."""

import torch
import triton
import triton.language as tl

from tl_helpers import tile_offsets


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tile_offsets(tl.program_id(0), BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


def main() -> None:
    x = torch.rand(1 << 24, device="cuda")
    y = torch.rand(1 << 24, device="cuda")
    for _ in range(3):
        out = add(x, y)
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


if __name__ == "__main__":
    main()
