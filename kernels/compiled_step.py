"""A torch.compile'd model in a training step, small enough for a CPU (C++ kernels from Inductor).

Profile the script (or ``train_step``): each kernel Inductor generated is on the lines of
``Block.forward`` whose operations it fused — a fused kernel on each of its lines, counted once —
the compiled backward on the same forward lines (``bwd``), ``loss.backward()`` keeps the pass's
total, and the compilation is its own figure on the line that called the compiled model. The
data-dependent ``if`` in ``Block.forward`` breaks the graph: a note on that line with Dynamo's
reason.
"""

import torch
import torch.nn.functional as F  # noqa: N812 (the ecosystem's name)
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int = 64, hidden: int = 256) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        h = self.fc1(x)
        h = F.gelu(h)
        h = h * 2.0 + 1.0
        out = x + self.fc2(h)
        if out.abs().max() > 1e6:  # data-dependent: Dynamo breaks the graph here
            out = out.clamp(-1e6, 1e6)
        return out


def train_step(model, opt, x, y):
    out = model(x)
    loss = F.mse_loss(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.compile(Block())
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(64, 64)
    y = torch.randn(64, 64)
    for _ in range(3):
        loss = train_step(model, opt, x, y)
    print(f"loss {loss.item():.4f}")
