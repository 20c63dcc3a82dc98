"""Lens and hover text at its edges: missing keys, clipping limits, paths, inputs and ``self``.

Found by mutation testing (docs/testing.md): each case here once let a changed line of
analysis/lens_text.py pass the suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.lens_text import (
    code_span,
    error_lens_title,
    hover_markdown,
    inputs_args_text,
    inputs_text,
    line_lens_title,
    line_shares,
    share_text,
    summary_lens_title,
)


@pytest.mark.parametrize(
    "inputs, path, text",
    [
        (
            {"source": "captured", "line": 31, "call": "time_fn → square_2", "setup_s": 0.42},
            "C:\\work\\kernels\\square.py",
            "captured at square.py:31 (time_fn → square_2) after 0.42 s of the script",
        ),
        ({"source": "captured", "line": 31}, "square.py", "captured at square.py:31"),
        ({"source": "captured", "line": 31}, "/w/a/b/square.py", "captured at square.py:31"),
        ({"source": "captured", "line": 31}, None, "captured at line 31"),
        ({"source": "captured", "line": 31}, "", "captured at line 31"),
        ({"source": "captured"}, "/w/square.py", "captured at the script"),
        (
            {"source": "captured", "setup_s": 2},
            None,
            "captured at the script after 2.00 s of the script",
        ),
        ({"source": "captured", "setup_s": "soon"}, None, "captured at the script"),
        ({"source": "directive", "line": 11}, None, "directive, line 11"),
        ({"source": "directive"}, None, "directive"),
        ({"source": "factory", "label": "square_inputs()"}, None, "square_inputs()"),
        ({"source": "factory"}, None, "factory"),
        ({"source": "none"}, None, "none (no parameters)"),
        ({}, None, "none (no parameters)"),
    ],
)
def test_where_the_inputs_came_from(inputs: dict[str, Any], path: str | None, text: str) -> None:
    assert inputs_text(inputs, path) == text


def test_no_inputs_object_is_no_text() -> None:
    assert inputs_text(None) is None
    assert inputs_text([1, 2]) is None
    assert inputs_args_text(None) == []


@pytest.mark.parametrize(
    "own, tail",
    [
        (
            {"how": "captured", "class": "Block", "name": "model", "made_at": 40},
            "; self = the script's Block model, line 40",
        ),
        (
            {"how": "captured", "class": "Block", "name": "model"},
            "; self = the script's Block model",
        ),
        ({"how": "captured"}, "; self = the script's ?"),
        ({"how": "module instance m", "name": "m", "made_at": 3}, "; self = m, line 3"),
        (
            {"how": "Block() with no arguments", "class": "Block"},
            "; self = Block() with no arguments",
        ),
        ({}, "; self = "),
    ],
)
def test_self_of_a_method(own: dict[str, Any], tail: str) -> None:
    assert (
        inputs_text({"source": "directive", "line": 2, "self": own}) == "directive, line 2" + tail
    )


def test_each_argument_in_one_line() -> None:
    args = [
        {
            "name": "x",
            "type": "Tensor",
            "dtype": "float32",
            "shape": [10, 2],
            "device": "cuda:0",
        },
        {"name": "y", "type": "Tensor", "dtype": "float16", "shape": [3]},
        {"name": "z", "shape": []},
        {"name": "n", "type": "int", "repr": "3"},
        {"name": "flag", "type": "bool"},
        {"type": "str", "repr": "'a'"},
        {"name": "odd", "type": "", "repr": "3"},
        "not an argument",
    ]
    assert inputs_args_text({"args": args}) == [
        "x: Tensor float32[10, 2] cuda:0",
        "y: Tensor float16[3]",
        "z: ? ?[]",
        "n: int 3",
        "flag: bool",
        "?: str 'a'",
        "odd:  3",
    ]
    assert inputs_args_text({"source": "none"}) == []


def test_error_lens_is_clipped_at_90_characters() -> None:
    exact = "e" * 90
    assert error_lens_title({"kind": "runtime", "message": exact}).endswith("— " + exact)
    longer = "f" * 91
    title = error_lens_title({"kind": "runtime", "message": longer})
    assert title.endswith("— " + "f" * 89 + "…")
    assert error_lens_title({"message": "first\nsecond"}) == (
        "$(warning) Profile failed: error — first"
    )
    assert error_lens_title({"kind": "crash"}) == "$(warning) Profile failed: crash — "
    assert error_lens_title({"kind": "crash", "message": ""}) == (
        "$(warning) Profile failed: crash — "
    )


def test_code_span_pads_a_trailing_backtick() -> None:
    assert code_span("x`") == "`` x` ``"
    assert code_span("a``b") == "```a``b```"
    assert code_span("") == "``"


H200 = Path(__file__).resolve().parent.parent / "data" / "h200"


def _cpu_op(name: str, cpu_us: float, calls: float = 1) -> dict[str, Any]:
    return {
        "name": name,
        "dispatch": [],
        "calls": calls,
        "cpu_us": cpu_us,
        "device_us": 0.0,
        "kernels": [],
    }


def test_whole_cuda_hover_of_a_recorded_line() -> None:
    result = json.loads((H200 / "square_three_ways_profile.json").read_text())
    kernel = result["lines"][2]["ops"][0]["kernels"][0]["name"]
    assert hover_markdown(result, 37, word="x") == "\n".join(
        [
            "**Kernel Lens** · line 37 · `c = x**2`",
            "",
            "- `aten::pow` · **190 µs** device · 1 call",
            f"  - `{kernel}` · 190 µs · ×1",
            "",
            "_Per call, from 3 profiled calls on NVIDIA H200. Function: 0.577 ms median ±0.1% of "
            "104 reps (CUDA events)._",
        ]
    )
    assert hover_markdown(result, 99) is None
    triton = json.loads((H200 / "triton_square_profile.json").read_text())
    text = hover_markdown(triton, 35, word="square_kernel")
    assert text is not None and text.splitlines()[2] == (
        "- `cuLaunchKernelEx` · **187 µs** device · 1 call"
    )


def test_whole_cpu_hover_with_shares() -> None:
    result = {
        "device_kind": "cpu",
        "timing": {"median_ms": 0.05, "spread_pct": 40.0, "reps": 12, "method": "perf-counter"},
        "lines": [
            {
                "line": 2,
                "source": "y = x.sum()",
                "ops": [_cpu_op("aten::sum", 300.0, calls=2), _cpu_op("aten::copy_", 0.0)],
            },
            {"line": 3, "source": "z = y", "ops": [_cpu_op("aten::add", 100.0)]},
        ],
    }
    assert hover_markdown(result, 2, word="copy_") == "\n".join(
        [
            "**Kernel Lens** · line 2 · `y = x.sum()`",
            "",
            "- `aten::copy_` · 1 call · **0% of 50 µs**",
            "- `aten::sum` · 2 calls · **75% of 50 µs**",
            "",
            "_Shares of the function's measured median, split as the profiler attributed CPU time "
            "over ? profiled calls on ?. Function: 0.050 ms median ±40.0% of 12 reps "
            "(perf_counter)._",
            "",
            "Detail: CPU time per call under the profiler (inflated by the profiler itself, not "
            "comparable with the median): `aten::copy_` 0 µs, `aten::sum` 300 µs.",
            "",
            "⚠ Timing: unstable: the samples spread ±40% around the median; re-profile on a "
            "quieter machine before comparing",
        ]
    )
    # Without a timing: the profiler's CPU times, labelled.
    untimed = {"device_kind": "cpu", "device": "CPU", "profiled_runs": 3, "lines": result["lines"]}
    assert hover_markdown(untimed, 3) == "\n".join(
        [
            "**Kernel Lens** · line 3 · `z = y`",
            "",
            "- `aten::add` · 1 call · 100 µs CPU under the profiler",
            "",
            "_Per call, from 3 profiled calls on CPU (CPU times under the profiler: for "
            "attribution only)._",
        ]
    )


def test_an_argument_without_a_type() -> None:
    assert inputs_args_text({"args": [{"name": "v", "repr": "3"}]}) == ["v: ? 3"]


def test_summary_lens_carries_the_comparison_after_the_time() -> None:
    result = json.loads((H200 / "square_three_ways_profile.json").read_text())
    result["comparison"] = {"verdict": {"text": "−49.8% vs 0.383 ms"}}
    assert summary_lens_title(result) == (
        "$(watch) 0.577 ms ±0.1% · −49.8% vs 0.383 ms · 3 kernels · NVIDIA H200"
    )


def test_line_shares_at_their_edges() -> None:
    def line(no: int, *cpu: float | None) -> dict[str, Any]:
        ops = [{"name": "aten::x", "cpu_us": c} for c in cpu]
        return {"line": no, "ops": ops}

    # Sub-microsecond totals still count; an op without a CPU time counts as none.
    shares = line_shares({"lines": [line(1, 0.25), line(2, 0.25, None), line(3)]})
    assert shares == {1: 0.5, 2: 0.5}
    assert line_shares({"lines": [line(1, 0.5)]}) == {1: 1.0}
    assert line_shares({"lines": [line(1, None, 0.0)]}) == {}


def test_share_text_rounds_from_one_percent() -> None:
    assert share_text(0.01, 0.0444) == "1% of 44.4 µs"
    assert share_text(0.015, 0.0444) == "2% of 44.4 µs"
    assert share_text(0.0099, 0.0444) == "<1% of 44.4 µs"
    assert share_text(0.0, 0.0444) == "0% of 44.4 µs"


def _timing(median_ms: float) -> dict[str, Any]:
    return {"median_ms": median_ms, "spread_pct": 1.0, "reps": 10, "method": "perf-counter"}


def test_cpu_hover_branches_name_the_device_or_a_question_mark() -> None:
    lines = [
        {
            "line": 3,
            "source": "z = y",
            "ops": [_cpu_op("aten::add", 100.0, calls=2), _cpu_op("aten::mul", 0.5)],
        }
    ]
    untimed = hover_markdown({"device_kind": "cpu", "lines": lines}, 3)
    assert untimed is not None
    assert untimed.splitlines()[2:4] == [
        "- `aten::add` · 2 calls · 100 µs CPU under the profiler",
        "- `aten::mul` · 1 call · 0.5 µs CPU under the profiler",
    ]
    assert untimed.splitlines()[-1] == (
        "_Per call, from ? profiled calls on ? (CPU times under the profiler: for attribution "
        "only)._"
    )
    # A zero median is no timing to share out: the per-call figures.
    zero = hover_markdown({"device_kind": "cpu", "lines": lines, "timing": _timing(0.0)}, 3)
    assert zero is not None and "CPU under the profiler" in zero.splitlines()[2]
    shared = hover_markdown(
        {"device_kind": "cpu", "device": "CPU", "lines": lines, "timing": _timing(0.1)}, 3
    )
    assert shared is not None
    assert shared.splitlines()[2:4] == [
        "- `aten::add` · 2 calls · **100% of 100 µs**",
        "- `aten::mul` · 1 call · **<1% of 100 µs**",
    ]
    assert "over ? profiled calls on CPU." in shared


def test_cpu_shares_when_the_profiler_attributed_no_time() -> None:
    nothing = [
        {"line": 1, "source": "x", "ops": [_cpu_op("aten::a", 0.0), _cpu_op("aten::b", 0.0)]}
    ]
    text = hover_markdown({"device_kind": "cpu", "lines": nothing, "timing": _timing(0.1)}, 1)
    assert text is not None
    assert text.splitlines()[2:4] == [
        "- `aten::a` · 1 call · **0% of 100 µs**",
        "- `aten::b` · 1 call · **0% of 100 µs**",
    ]
    half = [{"line": 1, "source": "x", "ops": [_cpu_op("aten::a", 0.25), _cpu_op("aten::b", 0.25)]}]
    text = hover_markdown({"device_kind": "cpu", "lines": half, "timing": _timing(0.1)}, 1)
    assert text is not None and text.splitlines()[2] == "- `aten::a` · 1 call · **50% of 100 µs**"


def test_a_script_hover_says_it_was_one_run() -> None:
    lines = [{"line": 7, "source": "y = x * 2", "ops": [_cpu_op("aten::mul", 12.0)]}]
    inputs = {"source": "captured", "line": 7}
    cpu = hover_markdown(
        {"device_kind": "cpu", "device": "CPU", "script": True, "lines": lines, "inputs": inputs},
        7,
    )
    assert cpu is not None
    assert cpu.splitlines()[-1] == (
        "_Totals of the script's one run as `__main__` on CPU, under the profiler (CPU times for "
        "attribution only)._"
    )
    assert "Inputs:" not in cpu
    cuda = hover_markdown({"device_kind": "cuda", "script": True, "lines": lines}, 7)
    assert cuda is not None and cuda.splitlines()[-1] == (
        "_Totals of the script's one run as `__main__` on ?, under the profiler._"
    )
    # Not a script: the inputs are said.
    function = hover_markdown({"device_kind": "cpu", "lines": lines, "inputs": inputs}, 7)
    assert function is not None and "Inputs: captured at line 7" in function


def test_summary_without_a_device_and_a_cuda_op_without_kernels() -> None:
    assert summary_lens_title({"timing": _timing(1.0)}) == "$(watch) 1.000 ms ±1.0% · "
    op = {"name": "aten::square", "dispatch": ["aten::pow"], "calls": 1, "kernels": []}
    op["device_us"] = 0.0
    assert line_lens_title({"line": 1, "ops": [op]}, cuda=True) == (
        "aten::square → aten::pow (no kernel)"
    )


def test_remaining_edges() -> None:
    assert inputs_text({"source": "script"}) == "the script's own run (as __main__)"
    ops = [_cpu_op(f"aten::op{i}", 1.0) for i in range(4)]
    assert line_lens_title({"line": 1, "ops": ops}, cuda=False) == (
        "aten::op0 · CPU  |  aten::op1 · CPU  |  aten::op2 · CPU  |  +1 more"
    )
    # A zero among the attributed CPU times takes nothing from the others' shares.
    lines = [{"line": 1, "source": "x", "ops": [_cpu_op("aten::a", 1.0), _cpu_op("aten::b", 0.0)]}]
    text = hover_markdown({"device_kind": "cpu", "lines": lines, "timing": _timing(0.1)}, 1)
    assert text is not None and text.splitlines()[2] == "- `aten::a` · 1 call · **100% of 100 µs**"
    # The inputs come after a blank line.
    with_inputs = {"device_kind": "cpu", "lines": lines, "inputs": {"source": "directive"}}
    text = hover_markdown(with_inputs, 1)
    assert text is not None and text.splitlines()[-2:] == ["", "Inputs: directive"]
