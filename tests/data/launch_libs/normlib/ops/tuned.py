import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 256}, num_warps=8),
    ],
    key=["n"],
)
@triton.heuristics({"EVEN_N": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def add_kernel(out_ptr, a_ptr, b_ptr, n, alpha, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        tl.store(out_ptr + offs, tl.load(a_ptr + offs) + alpha * tl.load(b_ptr + offs))
    else:
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, a + alpha * tl.load(b_ptr + offs, mask=mask), mask=mask)


def add(a, b, alpha=0.5):
    out = torch.empty_like(a)
    n = a.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](out, a, b, n, alpha)
    return out


def add_inputs():
    return torch.randn(1000), torch.randn(1000)
