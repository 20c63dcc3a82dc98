"""A torch.compile'd training step: Inductor's Triton kernels for the forward and the backward.

Profile ``train_step``: each kernel Inductor generated lands on the lines of ``MLP.forward``
whose operations it fused (from Inductor's provenance), the backward graph's kernels on the same
forward lines as their backward part, and ``out = model(x)`` keeps the compilation (its own
figure) and the compiled region's overhead. On a CPU Inductor generates C++ (the first call
compiles for a while).
"""

import torch
import torch.nn.functional as F  # noqa: N812 (the ecosystem's name)
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SCALE = 1 if DEVICE == "cuda" else 16


class MLP(nn.Module):
    def __init__(self, dim: int = 1024, hidden: int = 4096) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        h = F.gelu(self.fc1(x))
        return self.fc2(h)


def train_step(model, opt, x, y):
    out = model(x)
    loss = F.mse_loss(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.compile(MLP(1024 // SCALE, 4096 // SCALE).to(DEVICE))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(4096 // SCALE, 1024 // SCALE, device=DEVICE)
    y = torch.randn(4096 // SCALE, 1024 // SCALE, device=DEVICE)
    for _ in range(3):
        loss = train_step(model, opt, x, y)
    print(f"loss {loss.item():.4f}")
