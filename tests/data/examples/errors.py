"""Functions that fail in the ways a user's code fails; used by the CLI and LSP tests."""

import torch


def raises_in_body():
    x = torch.ones(3)
    y = x + 1
    raise ValueError("boom from the body")


# kernel-lens: inputs = (undefined_name,)
def bad_inputs_directive(x):
    return x * 2


def bad_factory(x):
    return x * 2


def bad_factory_inputs():
    return (1 / 0,)


def helper(t):
    return t.sum()


# kernel-lens: inputs = (torch.ones(4),)
def calls_helper(x):
    y = x * 3
    z = helper(y)
    return z


class Model:
    def __init__(self):
        self.w = torch.ones(8, 8)

    # kernel-lens: inputs = (torch.ones(8, 8),)
    def forward(self, x):
        h = x @ self.w
        return torch.relu(h)

    @staticmethod
    # kernel-lens: inputs = (torch.ones(3),)
    def scale(x):
        return x * 0.5


def prints_a_lot():
    print("user output that must not reach stdout in --json mode")
    return torch.zeros(2) + 1


def not_implemented_here():
    raise NotImplementedError("needs CUDA and nvcc: no CUDA device is available")
