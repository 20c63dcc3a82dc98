import torch
from tinymodel import TinyNet

torch.manual_seed(0)
model = TinyNet()
x = torch.randn(128, 64)
for _ in range(3):
    out = model(x)
    out.backward()
