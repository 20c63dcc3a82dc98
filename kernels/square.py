"""The lecture's square experiment: three ways to square a tensor, and all three together.

On a CUDA machine the input is 10000×10000 fp32 (400 MB: a memory-bound kernel of ~0.19 ms on an
H200); on a CPU-only machine 1000×1000, so a profile takes a moment.
"""

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 10_000 if DEVICE == "cuda" else 1_000


def make_input(n: int = N) -> torch.Tensor:
    """A random n×n fp32 matrix on the example's device."""
    return torch.randn(n, n, device=DEVICE)


# kernel-lens: inputs = (make_input(),)
def square_torch(x):
    return torch.square(x)


# kernel-lens: inputs = (make_input(),)
def square_mul(x):
    return x * x


# kernel-lens: inputs = (make_input(),)
def square_pow(x):
    return x**2


# kernel-lens: inputs = (make_input(),)
def square_three_ways(x):
    a = torch.square(x)
    b = x * x
    c = x**2
    return a, b, c


def square_all_inputs():
    """Inputs for ``square_all`` (a ``<name>_inputs()`` factory, the second way to give inputs)."""
    return (make_input(),)


def _pow2(t):
    return t**2


def square_all(x):
    # A call into a helper of this file counts on the calling line.
    return torch.square(x) + x * x + _pow2(x)


if __name__ == "__main__":
    x = make_input()
    for fn in (square_torch, square_mul, square_pow):
        assert torch.allclose(fn(x), x * x)
    print("ok", DEVICE)
