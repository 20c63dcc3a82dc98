"""The CUDA branch of the lens and hover text, on every CI run: from the H200 recordings.

Lines come from the recorded H200 trace (tests/data/h200/matmul_relu_trace.json) through the same
attribution the engine runs, and from the engine's recorded H200 results; hand-made lines only
where a recording has no such case (an op launching two kernels, one op with none).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.lens_text import (
    MAX_LENS_OPS,
    UNSTABLE_SPREAD_PCT,
    hover_markdown,
    line_lens_title,
    summary_lens_title,
    timing_warning_short,
    timing_warning_text,
)
from kernel_lens.analysis.line_attribution import attribute_lines

H200 = Path(__file__).resolve().parent.parent / "data" / "h200"


@pytest.fixture(scope="module")
def relu_line() -> dict[str, Any]:
    """Line 11 of the recorded matmul → relu → add trace: two top-level ops on one line."""
    lines, _ = attribute_lines(json.loads((H200 / "matmul_relu_trace.json").read_text()))
    return lines[11].to_json("return torch.relu(z) + 1.0")


@pytest.fixture(scope="module")
def three_ways() -> dict[str, Any]:
    return json.loads((H200 / "square_three_ways_profile.json").read_text())


@pytest.fixture(scope="module")
def triton() -> dict[str, Any]:
    return json.loads((H200 / "triton_square_profile.json").read_text())


def _op(name: str, device_us: float, kernels: list[tuple[str, float]], calls: float = 1) -> dict:
    return {
        "name": name,
        "calls": calls,
        "cpu_us": 5.0,
        "device_us": device_us,
        "dispatch": [],
        "kernels": [
            {"name": f"void ns::{k}<4>(int)", "short_name": k, "device_us": us, "calls": calls}
            for k, us in kernels
        ],
    }


def test_a_line_with_two_ops_leads_with_its_total(relu_line: dict[str, Any]) -> None:
    assert relu_line["device_us"] == pytest.approx(4.288, abs=1e-3)
    assert line_lens_title(relu_line, cuda=True) == (
        "4.29 µs · aten::relu → aten::clamp_min → vectorized_elementwise_kernel 2.27 µs"
        "  |  aten::add → vectorized_elementwise_kernel 2.02 µs"
    )


def test_ops_are_ordered_by_device_time_on_cuda_only(relu_line: dict[str, Any]) -> None:
    reversed_line = {**relu_line, "ops": list(reversed(relu_line["ops"]))}
    # CUDA: the costlier op first whatever the order the ops ran in.
    assert line_lens_title(reversed_line, cuda=True) == line_lens_title(relu_line, cuda=True)
    # CPU: the order they ran in, no device number, no total.
    assert line_lens_title(reversed_line, cuda=False) == (
        "aten::add · CPU  |  aten::relu → aten::clamp_min · CPU"
    )


def test_one_op_lines_have_no_total(three_ways: dict[str, Any], triton: dict[str, Any]) -> None:
    titles = {line["line"]: line_lens_title(line, cuda=True) for line in three_ways["lines"]}
    assert titles == {
        35: "aten::square → aten::pow → vectorized_elementwise_kernel 189 µs",
        36: "aten::mul → vectorized_elementwise_kernel 190 µs",
        37: "aten::pow → vectorized_elementwise_kernel 190 µs",
        38: None,
    }
    by_line = {line["line"]: line for line in triton["lines"]}
    # A Triton launch: the driver call stands for the op.
    assert line_lens_title(by_line[35], cuda=True) == "cuLaunchKernelEx → square_kernel 187 µs"
    # An op that launched nothing says so on CUDA.
    assert line_lens_title(by_line[32], cuda=True) == "aten::empty_like (no kernel)"
    assert line_lens_title(by_line[33], cuda=True) is None


def test_an_op_with_several_kernels_names_the_first_and_counts_the_rest() -> None:
    op = _op("aten::mm", 60.0, [("gemm_kernel", 50.0), ("splitk_reduce", 6.0), ("fill", 4.0)])
    line = {"line": 3, "source": "z = x @ y", "device_us": 60.0, "ops": [op]}
    assert line_lens_title(line, cuda=True) == "aten::mm → gemm_kernel +2 60 µs"
    op2 = _op("aten::bmm", 30.0, [("gemm_kernel", 20.0), ("splitk_reduce", 10.0)], calls=2)
    assert line_lens_title({**line, "ops": [op2]}, cuda=True) == (
        "aten::bmm → gemm_kernel +1 ×2 30 µs"
    )


def test_more_than_three_ops_are_clipped_after_the_costliest() -> None:
    ops = [_op(f"aten::op{i}", float(i), [(f"k{i}", float(i))]) for i in range(1, 6)]
    line = {"line": 1, "source": "", "device_us": 15.0, "ops": ops}
    title = line_lens_title(line, cuda=True)
    assert MAX_LENS_OPS == 3
    assert title == (
        "15 µs · aten::op5 → k5 5 µs  |  aten::op4 → k4 4 µs  |  aten::op3 → k3 3 µs  |  +2 more"
    )
    # Exactly three: no "more" note.
    three = line_lens_title({**line, "ops": ops[:3]}, cuda=True)
    assert three is not None and "more" not in three
    # Several ops but no device time: no total in front.
    idle = [_op("aten::a", 0.0, []), _op("aten::b", 0.0, [])]
    assert line_lens_title({"line": 1, "device_us": 0.0, "ops": idle}, cuda=True) == (
        "aten::a (no kernel)  |  aten::b (no kernel)"
    )


def test_summary_counts_kernel_launches_on_cuda(three_ways: dict[str, Any]) -> None:
    assert summary_lens_title(three_ways).endswith(" · 3 kernels · NVIDIA H200")
    one = {**three_ways, "kernels": [{"calls": 1}]}
    assert summary_lens_title(one).endswith(" · 1 kernel · NVIDIA H200")
    none = {**three_ways, "kernels": []}
    assert summary_lens_title(none).endswith(" · 0 kernels · NVIDIA H200")
    # The same lines on CPU count ops, not kernels.
    cpu = {**three_ways, "device_kind": "cpu", "device": "CPU"}
    assert summary_lens_title(cpu).endswith(" · 3 ops · CPU")
    fractional = {**three_ways, "kernels": [{"calls": 1.5}]}
    assert " · 1.5 kernels · " in summary_lens_title(fractional)


def test_cuda_hover_lists_each_kernel_and_the_ops_without_one(
    three_ways: dict[str, Any], relu_line: dict[str, Any]
) -> None:
    result = copy.deepcopy(three_ways)
    idle = _op("aten::empty_like", 0.0, [], calls=2)
    result["lines"] = [{**relu_line, "line": 11, "ops": [*relu_line["ops"], idle]}]
    text = hover_markdown(result, 11, word="add")
    assert text is not None
    body = text.splitlines()
    assert body[0] == "**Kernel Lens** · line 11 · `return torch.relu(z) + 1.0`"
    bullets = [x for x in body if x.startswith("- ")]
    assert bullets == [
        "- `aten::add` · **2.02 µs** device · 1 call",
        "- `aten::relu` → `aten::clamp_min` · **2.27 µs** device · 1 call",
        "- `aten::empty_like` · **0 µs** device · 2 calls",
    ]
    assert "  - no kernel launched" in body
    assert (
        "_Per call, from 3 profiled calls on NVIDIA H200. Function: 0.577 ms median ±0.1% of "
        "104 reps (CUDA events)._"
    ) in body
    full = relu_line["ops"][0]["kernels"][0]["name"]
    assert f"  - `{full}` · 2.27 µs · ×1" in body


def test_spread_above_the_threshold_is_called_unstable() -> None:
    assert UNSTABLE_SPREAD_PCT == 25.0
    assert timing_warning_text({"spread_pct": 25.0}) is None
    assert timing_warning_text({"spread_pct": 25.5}) == (
        "unstable: the samples spread ±26% around the median; re-profile on a quieter machine "
        "before comparing"
    )
    assert timing_warning_short({"spread_pct": 30}) == "unstable"
    assert timing_warning_short({"warning": "busy machine: load 3.0 on 2 cores"}) == "busy machine"
    assert timing_warning_short({"warning": "interference? samples bimodal"}) == "interference?"
    # The interference warning wins over the spread.
    busy = {"warning": "busy machine: x", "spread_pct": 90}
    assert timing_warning_text(busy) == "busy machine: x"
    assert timing_warning_short(None) is None


def test_summary_lens_carries_the_short_warning(three_ways: dict[str, Any]) -> None:
    noisy = {**three_ways, "timing": {**three_ways["timing"], "spread_pct": 40.0}}
    assert summary_lens_title(noisy).startswith("$(watch) 0.577 ms ±40.0% $(warning) unstable · ")
    text = hover_markdown(noisy, 36)
    assert text is not None and text.splitlines()[-1].startswith("⚠ Timing: unstable: ")
