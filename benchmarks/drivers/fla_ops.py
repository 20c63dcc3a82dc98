"""A driver for flash-linear-attention's Triton utility and recurrent ops
(``kernel-lens asm FILE::KERNEL --from`` this): each op's forward (and backward where it has
one) once on small tensors. Runs on the CPU under Triton's interpreter; an op that fails is
reported and the next one runs.

Usage (from a flash-linear-attention checkout, with its dependencies importable; not vendored
here): ``python benchmarks/drivers/fla_ops.py``."""

import sys

import torch

torch.manual_seed(0)


def _run(name, fn):
    try:
        out = fn()
        if isinstance(out, tuple):
            out = out[0]
        if isinstance(out, torch.Tensor) and out.requires_grad:
            out.float().sum().backward()
        print("ok", name)
    except Exception as exc:  # noqa: BLE001 - a driver: say it and go on
        print("FAILED", name, type(exc).__name__, str(exc)[:200], file=sys.stderr)


def main():
    from fla.ops.common.fused_recurrent import fused_recurrent
    from fla.ops.utils.cumsum import chunk_global_cumsum, chunk_local_cumsum
    from fla.ops.utils.logsumexp import logsumexp_fwd
    from fla.ops.utils.pooling import mean_pooling
    from fla.ops.utils.softmax import softmax_bwd, softmax_fwd
    from fla.ops.utils.solve_tril import solve_tril

    b, t, h, d = 1, 64, 2, 16
    _run("chunk_local_cumsum scalar", lambda: chunk_local_cumsum(torch.randn(b, t, h), 16))
    _run("chunk_local_cumsum vector", lambda: chunk_local_cumsum(torch.randn(b, t, h, d), 16))
    _run("chunk_global_cumsum scalar", lambda: chunk_global_cumsum(torch.randn(b, t, h)))
    _run("chunk_global_cumsum vector", lambda: chunk_global_cumsum(torch.randn(b, t, h, d)))
    _run("softmax", lambda: softmax_bwd(softmax_fwd(torch.randn(8, 32)), torch.randn(8, 32)))
    _run("logsumexp", lambda: logsumexp_fwd(torch.randn(8, 32)))
    _run("mean_pooling", lambda: mean_pooling(torch.randn(b, t, h, d, requires_grad=True), 16))
    for bt in (16, 32, 64):
        _run(f"solve_tril {bt}", lambda bt=bt: solve_tril(torch.randn(b, t, h, bt).tril(-1) * 0.1))
    q, k, v = (torch.randn(b, t, h, d, requires_grad=True) for _ in range(3))
    _run("fused_recurrent", lambda: fused_recurrent(q, k, v))


main()
