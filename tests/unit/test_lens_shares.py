"""Per-line figures as a share of the measured median; profiler CPU times only in the detail."""

from kernel_lens.analysis.lens_text import (
    hover_markdown,
    line_lens_title,
    line_shares,
    share_text,
    short_op_name,
)


def _op(name: str, cpu_us: float) -> dict[str, object]:
    return {"name": name, "dispatch": [], "calls": 1, "cpu_us": cpu_us, "kernels": []}


RESULT = {
    "device": "CPU",
    "device_kind": "cpu",
    "profiled_runs": 3,
    "timing": {"median_ms": 0.0444, "spread_pct": 3.0, "reps": 40},
    "lines": [
        {"line": 2, "source": "a = torch.square(x)", "ops": [_op("aten::square", 2930.0)]},
        {"line": 3, "source": "b = x * x", "ops": [_op("aten::mul", 1000.0), _op("aten::add", 70)]},
        {"line": 4, "source": "return a, b", "ops": []},
    ],
}


def test_shares_add_up_to_the_whole() -> None:
    shares = line_shares(RESULT)
    assert set(shares) == {2, 3}
    assert abs(sum(shares.values()) - 1.0) < 1e-9
    assert shares[2] == 2930 / 4000  # of the 4000 µs attributed
    assert line_shares({**RESULT, "device_kind": "cuda"}) == {}


def test_share_text() -> None:
    assert share_text(0.38, 0.0444) == "38% of 44.4 µs"
    assert share_text(0.004, 1.5) == "<1% of 1.5 ms"
    assert share_text(1.0, 0.192) == "100% of 192 µs"


def test_line_lens_starts_with_the_share() -> None:
    line = RESULT["lines"][1]  # type: ignore[index]
    title = line_lens_title(line, cuda=False, share=share_text(0.268, 0.0444))
    assert title == "27% of 44.4 µs · aten::mul · CPU  |  aten::add · CPU"


def test_autograd_nodes_get_short_names() -> None:
    name = "autograd::engine::evaluate_function: MeanBackward0"
    assert short_op_name(name) == "MeanBackward0 (autograd)"
    assert short_op_name("aten::mul") == "aten::mul"
    line = {"line": 9, "source": "loss.backward()", "ops": [_op(name, 5.0)]}
    assert line_lens_title(line, cuda=False) == "MeanBackward0 (autograd) · CPU"


def test_hover_leads_with_shares_and_labels_profiler_times_as_detail() -> None:
    text = hover_markdown(RESULT, 2)
    assert text is not None
    lines = text.splitlines()
    assert lines[2] == "- `aten::square` · 1 call · **73% of 44.4 µs**"
    # The profiler's 2.93 ms is not on the op's line: only in the labelled detail.
    assert "2.93 ms" not in lines[2]
    detail = next(x for x in lines if x.startswith("Detail:"))
    assert "under the profiler" in detail and "`aten::square` 2.93 ms" in detail
    assert "not comparable with the median" in detail
