"""A driver script (``--from``): calls the library as a user's training script would."""

import sys

import torch

from gluepkg.interface import attention
from normlib.ops.relative import apply, twice

dtype = torch.bfloat16 if "--bf16" in sys.argv[1:] else torch.float32
attention(torch.randn(4096, dtype=dtype))
apply(torch.randn(512, dtype=dtype), 0.5, shift=True)
apply(torch.randn(512, dtype=dtype))
twice(torch.arange(64, dtype=torch.int32))
