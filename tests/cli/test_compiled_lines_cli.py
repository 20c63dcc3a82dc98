"""A torch.compile'd model in a training step, through the real agent and CLI (CPU, real torch).

``kernels/compiled_step.py`` run as a whole script (one compile, ~10 s on a CPU, shared by the
tests): Inductor's C++ kernels on the lines of ``Block.forward`` they fused, not its ``def`` line
nor the call line; a fused kernel on each of its lines, counted once; the compiled backward on
the forward lines; ``loss.backward()`` keeping the pass; the compilation its own figure on the
call line; the graph break a note on its line.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import HAS_CUDA, KERNELS, run_cli

STEP = KERNELS / "compiled_step.py"

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="the CPU's C++ kernels (GPU: tests/gpu)")


def _lineno(text: str) -> int:
    lines = STEP.read_text().splitlines()
    return next(i for i, x in enumerate(lines, 1) if x.strip().startswith(text))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    traces = tmp_path_factory.mktemp("traces")
    code, out, err = run_cli(
        "profile", str(STEP), "--json", "--no-history", "--trace-dir", str(traces), timeout=600
    )
    assert code == 0, err
    assert isinstance(out, dict)
    return out


def _rows(run: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {r["line"]: r for r in run["lines"]}


def _compiled_ops(row: dict[str, Any]) -> list[dict[str, Any]]:
    ops = [*row.get("ops", []), *(row.get("backward") or {}).get("ops", [])]
    return [op for op in ops if isinstance(op.get("compiled"), dict)]


def test_kernels_on_the_lines_inside_forward(run: dict[str, Any]) -> None:
    rows = _rows(run)
    fc1, gelu, affine, fc2 = (
        _lineno("h = self.fc1(x)"),
        _lineno("h = F.gelu(h)"),
        _lineno("h = h * 2.0 + 1.0"),
        _lineno("out = x + self.fc2(h)"),
    )
    assert _lineno("def forward") not in rows or not _compiled_ops(rows[_lineno("def forward")])
    call = rows[_lineno("out = model(x)")]
    assert not _compiled_ops(call)
    names = {op["name"] for op in call["ops"]}
    assert not any(n.startswith("cpp_") or n == "aten::addmm" for n in names), names
    assert [o["name"] for o in rows[fc1]["ops"]] == ["aten::addmm"]  # the extern mm, its line
    fused = next(o for o in rows[gelu]["ops"] if o["name"].startswith("cpp_fused"))
    assert fused["compiled"]["lines"] == [gelu, affine]
    assert "aten.gelu" in fused["compiled"]["aten"] and fused["compiled"]["nodes"]
    # on the other line, shown but counted on the first
    shared = [o for o in rows[affine]["shared"] if not o["backward"]]
    assert [o["name"] for o in shared] == [fused["name"]]
    assert shared[0]["compiled"]["counted_on"] == {"line": gelu}
    counted = [o for r in run["lines"] for o in r.get("ops", []) if o["name"] == fused["name"]]
    assert len(counted) == 1
    assert any(o["name"] == "aten::addmm" for o in rows[fc2]["ops"])


def test_compiled_backward_on_the_forward_lines(run: dict[str, Any]) -> None:
    rows = _rows(run)
    fc1, fc2 = _lineno("h = self.fc1(x)"), _lineno("out = x + self.fc2(h)")
    bwd_fc1 = {o["name"] for o in rows[fc1]["backward"]["ops"]}
    bwd_fc2 = {o["name"] for o in rows[fc2]["backward"]["ops"]}
    assert "aten::mm" in bwd_fc1 and "aten::mm" in bwd_fc2
    gelu = _lineno("h = F.gelu(h)")
    assert any(o["name"].startswith("cpp_fused_gelu") for o in rows[gelu]["backward"]["ops"])
    bpass = rows[_lineno("loss.backward()")]["backward_pass"]
    assert {fc1, gelu, fc2} <= set(bpass["lines"])


def test_compile_time_apart_and_the_graph_break(run: dict[str, Any]) -> None:
    rows = _rows(run)
    call = rows[_lineno("out = model(x)")]
    compiled = call["compile"]
    assert compiled["graphs"] == 2 and compiled["seconds"] > 0.5  # forward and backward
    # never op time: the line's ops are the compiled region's own overhead
    assert sum(o["cpu_us"] for o in call["ops"]) < compiled["seconds"] * 1e6 / 10
    assert "dynamo" not in {o["name"] for o in call["ops"]}
    assert run["compile"]["seconds"] >= compiled["seconds"]
    brk = _lineno("if out.abs().max() > 1e6")
    breaks = run["compile"]["graph_breaks"]
    assert [b["line"] for b in breaks] == [brk] and breaks[0]["reason"]
    assert any(n.get("kind") == "graph-break" and n["line"] == brk for n in run["notes"])


def test_text_output(run: dict[str, Any]) -> None:
    from kernel_lens.analysis.lens_text import hover_markdown, line_lens_title
    from kernel_lens.analysis.report_text import format_profile

    rows = _rows(run)
    gelu, affine = _lineno("h = F.gelu(h)"), _lineno("h = h * 2.0 + 1.0")
    assert f"fused with line {affine} · cpp_fused_add_gelu_mul" in str(
        line_lens_title(rows[gelu], cuda=False)
    )
    assert f"fused with line {gelu} · cpp_fused_add_gelu_mul" in str(
        line_lens_title(rows[affine], cuda=False)
    )
    assert "compiled in " in str(line_lens_title(rows[_lineno("out = model(x)")], cuda=False))
    hover = str(hover_markdown(run, gelu))
    assert "ATen `aten.gelu`" in hover or "`aten.gelu`" in hover
    text = format_profile(run)
    assert "(not op time)" in text and "counted" in text, text
