# ruff: noqa: E501
"""A driver for Liger-Kernel's Triton ops (``kernel-lens asm FILE::KERNEL --from`` this): each
op's forward and backward once on small tensors, as a training step would call them. Runs on
the CPU under Triton's interpreter; an op that fails is reported and the next one runs.

Usage (from a Liger-Kernel checkout; not vendored here):
``PYTHONPATH=src python benchmarks/drivers/liger_ops.py``."""

import sys
import traceback

import torch

torch.manual_seed(0)
DT = torch.float32


def _t(*shape, grad=True, dtype=DT):
    return torch.randn(*shape, dtype=dtype).requires_grad_(grad)


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
        traceback.print_exc(limit=2)


def main():
    from liger_kernel.ops import (
        cross_entropy,
        dyt,
        fused_add_rms_norm,
        geglu,
        group_norm,
        jsd,
        kl_div,
        layer_norm,
        poly_norm,
        relu_squared,
        rms_norm,
        rope,
        softmax,
        sparsemax,
        swiglu,
        tvd,
    )

    h = 64
    _run(
        "rms_norm",
        lambda: rms_norm.LigerRMSNormFunction.apply(_t(4, h), _t(h), 1e-6, 0.0, "llama", False),
    )
    # rows >= 32768 of <= 256 columns, row_mode None: the block-of-rows kernels.
    _run(
        "rms_norm (row blocks)",
        lambda: rms_norm.LigerRMSNormFunction.apply(_t(32768, h), _t(h), 1e-6, 0.0, "llama", False),
    )
    _run("fused gate-up swiglu", lambda: swiglu.LigerFusedGateUpSiLUMulFunction.apply(_t(4, 2 * h)))
    _run(
        "layer_norm", lambda: layer_norm.LigerLayerNormFunction.apply(_t(4, h), _t(h), _t(h), 1e-5)
    )
    _run("swiglu", lambda: swiglu.LigerSiLUMulFunction.apply(_t(4, h), _t(4, h)))
    _run("geglu", lambda: geglu.LigerGELUMulFunction.apply(_t(4, h), _t(4, h)))
    _run("softmax", lambda: softmax.LigerSoftmaxFunction.apply(_t(4, h)))
    _run(
        "cross_entropy",
        lambda: cross_entropy.LigerCrossEntropyFunction.apply(
            _t(4, h), torch.randint(0, h, (4,)), None
        ),
    )
    _run("dyt", lambda: dyt.LigerDyTFunction.apply(_t(4, h), _t(1), _t(h), _t(h)))
    q, k = _t(1, 2, 8, 16), _t(1, 2, 8, 16)
    _run(
        "rope",
        lambda: rope.LigerRopeFunction.apply(q, k, torch.randn(1, 8, 16), torch.randn(1, 8, 16)),
    )
    _run(
        "fused_add_rms_norm",
        lambda: fused_add_rms_norm.LigerFusedAddRMSNormFunction.apply(
            _t(4, h), _t(4, h), _t(h), 1e-6
        ),
    )
    logp = torch.log_softmax(torch.randn(4, h), -1)
    _run("jsd", lambda: jsd.LigerJSDFunction.apply(logp.clone().requires_grad_(), logp.flip(0)))
    _run(
        "kl_div",
        lambda: kl_div.LigerKLDivLossFunction.apply(logp.clone().requires_grad_(), logp.flip(0)),
    )
    p = torch.softmax(torch.randn(4, h), -1)
    _run("tvd", lambda: tvd.LigerTVDLossFunction.apply(p.clone().requires_grad_(), p.flip(0)))
    _run(
        "group_norm",
        lambda: group_norm.LigerGroupNormFunction.apply(_t(2, 4, 16), _t(4), _t(4), 4, 2, 1e-5),
    )
    _run(
        "poly_norm",
        lambda: poly_norm.LigerPolyNormFunction.apply(_t(4, h), _t(3), _t(1), 1e-6, False),
    )
    _run("relu_squared", lambda: relu_squared.LigerReLUSquaredFunction.apply(_t(4, h)))
    _run("sparsemax", lambda: sparsemax.LigerSparsemaxFunction.apply(_t(4, h), -1))


main()
