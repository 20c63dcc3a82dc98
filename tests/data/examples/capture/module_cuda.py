"""An nn.Module moved to the GPU at module level (GPU test)."""

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


model = Mlp(256).to("cuda")

if __name__ == "__main__":
    x = torch.randn(64, 256, device="cuda")
    for _ in range(1000):
        model(x)
