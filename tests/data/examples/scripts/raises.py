import torch

x = torch.randn(8)
y = x @ torch.randn(3, 3)
print("never")
