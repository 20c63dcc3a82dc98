"""Shaped like Triton's vector-add tutorial: the script makes CUDA tensors, then calls the
function (no directive, no *_inputs())."""

import torch


def add(x, y):
    return x + y


x = torch.rand(1000, device="cuda")
y = torch.rand(1000, device="cuda")
print(add(x, y))
