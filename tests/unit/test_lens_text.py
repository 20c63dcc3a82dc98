"""Lens and hover text, from the engine's result recorded on an H200 and from CPU-shaped data."""

import json
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.lens_text import (
    code_span,
    error_lens_title,
    hover_markdown,
    line_lens_title,
    summary_lens_title,
)

DATA = Path(__file__).parent.parent / "data" / "h200"


@pytest.fixture(scope="module")
def h200() -> dict[str, Any]:
    return json.loads((DATA / "square_three_ways_profile.json").read_text())


def test_summary_lens_on_the_h200(h200: dict[str, Any]) -> None:
    assert summary_lens_title(h200) == "$(watch) 0.577 ms ±0.1% · 3 kernels · NVIDIA H200"


def test_line_lenses_on_the_h200(h200: dict[str, Any]) -> None:
    titles = [line_lens_title(line, cuda=True) for line in h200["lines"]][:3]
    assert titles == [
        "aten::square → aten::pow → vectorized_elementwise_kernel 189 µs",
        "aten::mul → vectorized_elementwise_kernel 190 µs",
        "aten::pow → vectorized_elementwise_kernel 190 µs",
    ]


def test_hover_has_full_kernel_names_in_code_spans(h200: dict[str, Any]) -> None:
    text = hover_markdown(h200, 37, word="x")
    assert text is not None
    assert text.splitlines()[0] == "**Kernel Lens** · line 37 · `c = x**2`"
    assert "- `aten::pow` · **190 µs** device · 1 call" in text
    full = h200["lines"][2]["ops"][0]["kernels"][0]["name"]
    assert f"  - `{full}` · 190 µs · ×1" in text
    assert "0.577 ms median ±0.1% of 104 reps (CUDA events)" in text
    assert hover_markdown(h200, 38) is None  # `return a, b, c`: no ops


def test_hovered_word_puts_its_op_first() -> None:
    line = {
        "line": 5,
        "source": "y = torch.square(x) + x * x",
        "ops": [
            {
                "name": "aten::mul",
                "dispatch": [],
                "calls": 1,
                "cpu_us": 10.0,
                "device_us": 0.0,
                "kernels": [],
            },
            {
                "name": "aten::square",
                "dispatch": ["aten::pow"],
                "calls": 1,
                "cpu_us": 20.0,
                "device_us": 0.0,
                "kernels": [],
            },
        ],
    }
    result = {"device": "CPU", "device_kind": "cpu", "lines": [line], "profiled_runs": 3}
    text = hover_markdown(result, 5, word="square")
    assert text is not None
    body = [x for x in text.splitlines() if x.startswith("- ")]
    assert body[0] == "- `aten::square` → `aten::pow` · 1 call · 20 µs CPU under the profiler"
    assert line_lens_title(line, cuda=False) == "aten::mul · CPU  |  aten::square → aten::pow · CPU"


def test_many_ops_are_clipped_and_calls_shown() -> None:
    ops = [
        {
            "name": f"aten::op{i}",
            "dispatch": [],
            "calls": 2,
            "cpu_us": 1.5,
            "device_us": 0.0,
            "kernels": [],
        }
        for i in range(5)
    ]
    title = line_lens_title({"line": 1, "source": "", "ops": ops}, cuda=False)
    assert title is not None and title.endswith("|  +2 more")
    assert title.startswith("aten::op0 ×2 · CPU  |  aten::op1 ×2 · CPU")
    assert line_lens_title({"line": 1, "source": "", "ops": []}, cuda=True) is None


def test_code_span_survives_backticks_and_html() -> None:
    assert code_span("a<b>&c") == "`a<b>&c`"
    assert code_span("x`y") == "``x`y``"
    assert code_span("`x") == "`` `x ``"


def test_error_lens_is_one_clipped_line() -> None:
    title = error_lens_title({"kind": "runtime", "message": "ValueError: " + "z" * 200 + "\nmore"})
    assert title.startswith("$(warning) Profile failed: runtime — ValueError: zzz")
    assert title.endswith("…") and "\n" not in title


def test_the_ops_figure_is_op_calls_forward_and_backward() -> None:
    """One definition of "ops" (the summary lens; the Report's box uses the same, see
    tests/ts/summaryBackward.test.ts on the same file): op calls per call, forward + backward."""
    from kernel_lens.analysis.lens_text import op_calls, ops_count_text

    path = Path(__file__).resolve().parent.parent / "data" / "cpu" / "train_step_cpu_profile.json"
    result = json.loads(path.read_text())
    fwd = sum(op["calls"] for line in result["lines"] for op in line["ops"])
    bwd = sum(
        op["calls"] for x in result["lines"] for op in (x.get("backward") or {}).get("ops", [])
    )
    assert (fwd, bwd) == (22, 6)
    assert op_calls(result) == 28
    assert " · 28 ops · " in summary_lens_title(result)
    assert [ops_count_text(x) for x in (1, 2.0, 2.25, 0.04)] == ["1", "2", "2.3", "0.0"]


def test_an_interpreted_launch_reads_as_the_kernel() -> None:
    from kernel_lens.analysis.lens_text import short_op_name

    assert short_op_name("triton::add_kernel (interpreted)") == "add_kernel · interpreted"
    assert short_op_name("aten::add") == "aten::add"


def test_a_noisy_timing_says_what_would_help() -> None:
    from kernel_lens.analysis.lens_text import noise_hint

    quiet = {"timing": {"median_ms": 1.0, "spread_pct": 1.0}}
    assert noise_hint(quiet, 500) is None
    unstable = {"timing": {"median_ms": 1.0, "spread_pct": 82.0}}
    hint = noise_hint(unstable, 500)
    assert hint is not None and hint.startswith("This timing is unstable (±82%).")
    assert "4× the timing budget, 2 s" in hint and "kernelLens.agentCommand" in hint
    compared = {
        "timing": {"median_ms": 1.0, "spread_pct": 3.0},
        "comparison": {"verdict": {"text": "too noisy to tell (±197%)"}},
    }
    assert (noise_hint(compared, 100) or "").startswith("Too noisy to tell a change (±197%).")
