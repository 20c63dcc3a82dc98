"""Which functions get lenses (tests/lsp/test_lenses_lsp.py): one of each kind.

Not run: lenses are decided from the text (numba need not be installed).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl
from numba import cuda


class MLP(nn.Module):
    def __init__(self, dim=32, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

    def __repr__(self):
        return "MLP()"


def mlp_inputs():
    return (torch.randn(8, 32),)


def make_input(n=16):
    return torch.randn(n)


def describe(t):
    return f"{t.shape}"


def _pow2(t):
    return t**2


def cdiv(a, b):
    return (a + b - 1) // b


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs), mask=offs < n)


def add(x, y, BLOCK=1024, repeat=3):
    out = torch.empty_like(x)
    n = out.numel()
    grid = (cdiv(n, BLOCK),)
    add_kernel[grid](x, y, out, n, BLOCK=BLOCK)
    return out


@cuda.jit
def numba_square(a):
    i = cuda.grid(1)
    a[i] = a[i] * a[i]


def numba_launch(a, threads=128):
    numba_square[(a.size + threads - 1) // threads, threads](a)


if __name__ == "__main__":
    model = MLP()
    x = make_input()
    print(describe(model(torch.randn(8, 32))))
