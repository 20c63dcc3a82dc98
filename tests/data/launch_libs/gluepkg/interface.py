import torch
import triton

from .kernels.forward import fwd_kernel as _fwd


def attention(q, scale=0.125):
    o = torch.empty_like(q)
    n = q.numel()
    _fwd[(triton.cdiv(n, 256),)](o, q, n, scale, BLOCK=256)
    return o


def attention_inputs():
    return (torch.randn(2048, dtype=torch.float16),)
