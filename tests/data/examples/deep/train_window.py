"""A training loop that would run long: each step writes step<N>.txt (the marker line)."""

import torch

model = torch.nn.Linear(8, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(50):
    loss = model(torch.randn(4, 8)).pow(2).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
    open(f"step{step}.txt", "w").close()
