"""On a CUDA GPU (issue 28 item 2): the timing of a stable kernel stops once its median is known
within ±1%, far before the 500 ms budget, and agrees with a timing of the whole budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KERNELS, run_cli

pytestmark = pytest.mark.gpu


def _timing(tmp: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run_cli(
        "profile", f"{KERNELS}/square.py::square_mul", "--json", "--trace-dir", str(tmp),
        "--stages", "timing", *extra, env={"KERNEL_LENS_HISTORY": str(tmp / "h")}, timeout=300,
    )  # fmt: skip
    assert code == 0, err
    timing: dict[str, Any] = out["timing"]
    return timing


def test_a_stable_kernel_converges_far_before_the_budget(tmp_path: Path) -> None:
    timing = _timing(tmp_path)
    policy = timing["policy"]
    print("converged:", timing["median_ms"], timing["reps"], policy["stopped"])
    assert policy["stopped"].startswith("converged (CI ±"), policy
    # The device time it took: a fraction of the 500 ms budget.
    assert sum(timing["samples_ms"]) < 100.0, (timing["reps"], timing["median_ms"])


def test_the_converged_number_agrees_with_a_timing_of_the_whole_budget(tmp_path: Path) -> None:
    early = _timing(tmp_path / "a")
    whole = _timing(tmp_path / "b", "--reps", "2000")
    print("early", early["median_ms"], early["reps"], "whole", whole["median_ms"], whole["reps"])
    assert whole["policy"]["stopped"] == "fixed reps"
    assert early["median_ms"] == pytest.approx(whole["median_ms"], rel=0.03)
