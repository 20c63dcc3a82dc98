import torch

SETUP = torch.ones(2)
raise RuntimeError("module-level failure")


def f():
    return SETUP
