"""A loop with no optimizer: a marker line ends each step."""

import torch

x = torch.randn(16, 16)
for i in range(40):
    x = torch.tanh(x @ x)
    open(f"mark{i}.txt", "w").close()  # kernel-lens: step
