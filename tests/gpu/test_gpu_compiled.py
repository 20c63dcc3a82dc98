"""On a CUDA GPU: torch.compile's Triton for the fusion example, its PTX, eager vs compiled."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import KERNELS, run_cli

pytestmark = pytest.mark.gpu


def test_square_twice_fuses_into_one_triton_kernel_with_ptx(tmp_path: Any) -> None:
    code, out, err = run_cli(
        "profile", f"{KERNELS}/fusion.py::square_twice", "--stages", "compiled", "--json",
        "--trace-dir", str(tmp_path), timeout=600,
    )  # fmt: skip
    assert code == 0, err
    c = out["compiled"]
    assert c["language"] == "triton"
    (kernel,) = [k for k in c["kernels"] if k["kind"] == "triton"]
    assert kernel["name"].startswith("triton_poi_fused")
    assert kernel["lines"] == [17]
    asm = kernel["asm"]
    assert ".target sm_90" in asm["ptx"] and "ld.global" in asm["ptx"]
    assert asm["ptx_line_map"], asm.get("source_path")
    assert c["eager"]["kernels"] == 2 and c["compiled"]["kernels"] == 1
    # Two passes over 400 MB eagerly, one compiled: about twice as fast.
    assert 1.5 < c["speedup"] < 2.5, c
