"""The result's per-kernel totals (what the summary lens counts on CUDA), re-made from the lines
of the engine's results recorded on the H200: they must come out as the engine wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel_lens.agent.results import kernel_totals

H200 = Path(__file__).resolve().parent.parent / "data" / "h200"


@pytest.mark.parametrize("name", ["square_three_ways_profile.json", "triton_square_profile.json"])
def test_totals_from_the_recorded_lines(name: str) -> None:
    result = json.loads((H200 / name).read_text())
    assert kernel_totals(result["lines"]) == result["kernels"]


def test_a_kernel_on_several_lines_is_summed_once_per_line() -> None:
    result = json.loads((H200 / "square_three_ways_profile.json").read_text())
    (pow_kernel, mul_kernel) = kernel_totals(result["lines"])
    assert pow_kernel["lines"] == [35, 37] and pow_kernel["calls"] == 2
    assert pow_kernel["device_us"] == round(189.44 + 189.525, 3)
    assert mul_kernel["lines"] == [36] and mul_kernel["calls"] == 1


def test_fractional_calls_and_rounding() -> None:
    kernel = {
        "name": "k",
        "short_name": "k",
        "kind": "kernel",
        "device_us": 1.00049,
        "calls": 1 / 3,
    }
    lines = [
        {"line": 4, "ops": [{"kernels": [kernel]}, {"kernels": [kernel]}]},
        {"line": 5, "ops": [{"kernels": []}]},
    ]
    (row,) = kernel_totals(lines)
    assert row == {
        "name": "k",
        "short_name": "k",
        "kind": "kernel",
        "device_us": 2.001,
        "calls": 0.667,
        "lines": [4],
    }
    assert kernel_totals([]) == []
