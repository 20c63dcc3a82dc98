"""A layer with an integer parameter (what a sweep varies) that this file never calls: its
inputs and ``self`` come only from its driver (drive_mlp.py)."""

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def forward(self, x, chunks: int = 2):
        parts = [self.out(torch.relu(self.fc(p))) for p in x.chunk(chunks, dim=0)]
        return torch.cat(parts)
