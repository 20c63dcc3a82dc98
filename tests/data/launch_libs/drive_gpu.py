"""A driver on a GPU: the library's ops on CUDA tensors (tests/gpu/test_gpu_asm_library.py)."""

import torch

from gluepkg.interface import attention
from normlib.ops.absolute import rms_norm
from normlib.ops.relative import apply, twice
from normlib.ops.tuned import add

dev = "cuda"
n = 1 << 20
rms_norm(
    torch.randn(64, 1024, dtype=torch.bfloat16, device=dev),
    torch.ones(1024, dtype=torch.bfloat16, device=dev),
)
apply(torch.randn(n, dtype=torch.float16, device=dev))
twice(torch.arange(n, dtype=torch.int32, device=dev))
attention(torch.randn(n, dtype=torch.float16, device=dev))
add(torch.randn(n, device=dev), torch.randn(n, device=dev))
torch.cuda.synchronize()
