"""Fusion examples: two squares in a row, and matmul → relu → add.

Eagerly, ``square_twice`` launches two elementwise kernels and reads the tensor from memory twice;
torch.compile fuses them into one Triton kernel. ``matmul_relu`` shows a GEMM line next to two
elementwise lines.
"""

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 10_000 if DEVICE == "cuda" else 1_000
M = 4_096 if DEVICE == "cuda" else 256


# kernel-lens: inputs = (torch.randn(N, N, device=DEVICE),)
def square_twice(x):
    return torch.square(torch.square(x))


# kernel-lens: inputs = (torch.randn(M, M, device=DEVICE), torch.randn(M, M, device=DEVICE))
def matmul_relu(x, y):
    z = x @ y
    z = torch.relu(z)
    return z + 1.0
