"""Module-level work written for a GPU machine."""

import torch

WEIGHTS = torch.randn(16, 16).cuda()


def apply(x):
    return x @ WEIGHTS


def apply_inputs():
    return (torch.randn(4, 16),)
