"""On a CUDA GPU: the optimisation loop's verdicts (issue 11). An edit that fuses two elementwise
passes into one (``x * w + b`` → ``torch.addcmul``) shows a significant drop with the kernel
count going 2 → 1 on its line; re-profiling unchanged code says "same" run after run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.gpu

TWO_PASSES = """import torch

N = 1 << 26


def axpb_inputs():
    return tuple(torch.randn(N, device="cuda") for _ in range(3))


def axpb(x, w, b):
    y = x * w
    return y + b
"""
FUSED = TWO_PASSES.replace(
    "    y = x * w\n    return y + b\n", "    return torch.addcmul(b, x, w)\n"
)


def _profile(path: Path, env: dict[str, str], tmp: Path) -> dict[str, Any]:
    code, out, err = run_cli(
        "profile", f"{path}::axpb", "--json", "--compare", "previous", "--trace-dir", str(tmp),
        env=env, timeout=600,
    )  # fmt: skip
    assert code == 0, err
    assert isinstance(out, dict)
    return out


def test_fusing_two_passes_is_a_significant_drop_and_unchanged_code_is_same(
    tmp_path: Path,
) -> None:
    env = {"KERNEL_LENS_HISTORY": str(tmp_path / "history")}
    src = tmp_path / "axpb.py"
    src.write_text(TWO_PASSES)
    first = _profile(src, env, tmp_path)
    assert first["device_kind"] == "cuda" and "comparison" not in first

    # Unchanged code, profiled again and again: "same" every time.
    for _ in range(3):
        again = _profile(src, env, tmp_path)["comparison"]
        verdict = again["verdict"]
        assert verdict["method"] == "mann-whitney"
        assert not verdict["significant"], verdict
        assert verdict["text"].startswith("≈ same (±"), verdict
        assert again["kernel_count"] == [2, 2]

    src.write_text(FUSED)
    fused = _profile(src, env, tmp_path)["comparison"]
    verdict = fused["verdict"]
    # Six tensor passes (two reads and a write, twice) become four: about a third less.
    assert verdict["significant"] and -45 < verdict["change_pct"] < -20, verdict
    assert verdict["text"].startswith("\u2212") and " vs " in verdict["text"]
    assert fused["kernel_count"] == [2, 1]
    (line,) = [d for d in fused["lines"] if d["source"].strip().startswith("return torch.addcmul")]
    assert line["status"] == "changed" and len(line["before_lines"]) == 2
    assert line["text"].startswith("2 → 1 kernels: fused · device \u2212"), line
    removed = {k["status"] for k in fused["kernels"]}
    assert {"added", "removed"} <= removed
