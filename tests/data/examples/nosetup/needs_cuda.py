"""Code written for a GPU machine: it asks for CUDA by name."""

import torch


def on_gpu():
    x = torch.randn(64, device="cuda")
    return x * x


def plain():
    return torch.ones(4) * 2
