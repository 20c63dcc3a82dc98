import sys

import torch

z = torch.ones(4) + 1
sys.exit(0)
