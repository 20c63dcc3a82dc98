"""Memory on the line: what each line allocates, the peak and what is alive at it.

Run *Profile memory* on ``grow`` (or ``kernel-lens profile kernels/memory.py::grow --memory``):
each line shows what it allocated and freed and the live total after it — ``a`` is 16 MiB,
``b`` 8 MiB, the ``cat`` 24 MiB — and the summary the peak (48 MiB on the ``cat`` line) with
what was alive at it, by line (``grow`` on the CPU: the CPU allocator's figures). ``step`` is a small training step: its forward lines carry the
memory their backward allocated, and what autograd saved for the backward is named so.
"""

import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
MIB = 1 << 20


def grow(n: int = 4):
    a = torch.ones(n * MIB, device=DEVICE)  # n Mi float32: 16 MiB
    b = torch.ones(n * MIB // 2, device=DEVICE)  # 8 MiB
    c = torch.cat([a, b])  # 24 MiB
    del a
    total = c.sum() + b.sum()
    return total


def step(model, x):
    out = model(x)
    loss = out.square().mean()
    loss.backward()
    return loss


def step_inputs():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256)).to(DEVICE)
    return model, torch.randn(512, 256, device=DEVICE)
