"""A training step: forward, loss, backward, optimizer — what people profile most.

Profile ``train_step``: each forward line carries the backward kernels its ops caused
(``fwd … · bwd …``), ``loss.backward()`` keeps the pass's total, ``opt.step()`` the optimizer's
foreach kernels, and the summary says how much of the step's kernel time is on lines. The script
at the bottom calls every function, so their inputs (model, optimizer, batch) are captured from
its run, with the calling context: ``forward_bf16`` is called under ``torch.autocast``, and its
profile runs under the same autocast.

On a GPU the sizes are those of the issue's H200 measurement (batch 4096, 1024 → 4096 → 1024, fp32);
on a CPU they are 16× smaller so a step takes milliseconds.
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
        h = self.fc1(x)
        h = F.gelu(h)
        return self.fc2(h)


def make(batch: int = 4096 // SCALE, dim: int = 1024 // SCALE, hidden: int = 4096 // SCALE):
    torch.manual_seed(0)
    model = MLP(dim, hidden).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(batch, dim, device=DEVICE)
    y = torch.randn(batch, dim, device=DEVICE)
    return model, opt, x, y


def train_step(model, opt, x, y):
    out = model(x)
    loss = F.mse_loss(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def train_step_bf16(model, opt, x, y):
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        out = model(x)
        loss = F.mse_loss(out.float(), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def forward_bf16(model, x):
    h = model.fc1(x)
    return model.fc2(F.gelu(h))


if __name__ == "__main__":
    model, opt, x, y = make()
    for _ in range(2):
        train_step(model, opt, x, y)
        train_step_bf16(model, opt, x, y)
    with torch.autocast(DEVICE, dtype=torch.bfloat16), torch.no_grad():
        out = forward_bf16(model, x)
    print(f"loss {float(train_step(model, opt, x, y)):.4f} · forward_bf16 {out.dtype}")
