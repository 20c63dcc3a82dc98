"""An nn.Module converted at module level and called under __main__."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        h = torch.relu(self.up(x))
        return self.down(h)


model = Block(16, 64).to(torch.float64)

if __name__ == "__main__":
    x = torch.randn(8, 16, dtype=torch.float64)
    y = model(x)
    print(y.shape)
