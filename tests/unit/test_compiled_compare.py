"""Eager against compiled per line (issue 33 item 4): pure functions, on recorded and made data.

The agreement of the Generated Code view and the lenses: the kernels an output module calls are
placed by :func:`called_kernels`, the match the attribution makes of the trace's events — on the
recorded CPU training step (``tests/data/compiled``) every kernel of the code is on the same
lines in both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.results import line_results
from kernel_lens.agent.stages.compiled import _kernels_in_code, user_lines
from kernel_lens.analysis.compiled_compare import (
    compare_hover_lines,
    compare_lens_text,
    compare_lines,
    compare_summary_text,
    compare_text_rows,
    line_work,
    speedup,
)
from kernel_lens.analysis.compiled_lines import called_kernels, compiled_graphs
from kernel_lens.analysis.line_attribution import FILE_STRIDE

CPU = Path(__file__).resolve().parents[1] / "data" / "compiled"
RUNS = 3


def _line_key(file: str, line: int) -> int | None:
    return line if os.path.basename(file) == "compiled_step.py" else None


@pytest.fixture(scope="module")
def graphs() -> dict[str, Any]:
    raw = json.loads((CPU / "cpu_block-graphs.json").read_text())
    return compiled_graphs(raw, _line_key)


def test_called_kernels_in_call_order(graphs: dict[str, Any]) -> None:
    forward = next(g for g in graphs.values() if g.kind == "forward")
    raw = json.loads((CPU / "cpu_block-graphs.json").read_text())[forward.key]
    calls = [k["name"] for k in _kernels_in_code(raw["source_code"])]
    found = called_kernels(forward, calls)
    lines = {name: k.lines for name, k in zip(calls, found, strict=True) if k is not None}
    assert lines["cpp_fused_add_gelu_mul_0"] == [24, 25]
    # the two addmm calls, each on its own line (fc1, fc2), in the order the code makes them
    externs = [k.lines for n, k in zip(calls, found, strict=True) if n == "extern_kernels.addmm"]
    assert externs == [[23], [26]]


def test_generated_code_and_lenses_agree_on_recorded_step(graphs: dict[str, Any]) -> None:
    """Each kernel of each graph's code is on the lines the attribution put it on."""
    trace = json.loads((CPU / "cpu_block-trace.json").read_text())
    out = line_results(trace, runs=RUNS, source_of=lambda n: "", within=(32, 38), compiled=graphs)
    placed: dict[tuple[str, str], set[int]] = {}
    for row in out["lines"]:
        ops = [*row.get("ops", []), *(row.get("backward") or {}).get("ops", [])]
        for op in [*ops, *row.get("shared", [])]:
            info = op.get("compiled")
            if isinstance(info, dict):
                name = op["name"] if op["name"].startswith("cpp_") else f"ext:{op['name']}"
                placed.setdefault((info["graph_key"], name), set()).add(row["line"])
    raws = json.loads((CPU / "cpu_block-graphs.json").read_text())
    seen = 0
    for key, graph in graphs.items():
        calls = [k["name"] for k in _kernels_in_code(raws[key]["source_code"])]
        view: dict[tuple[str, str], set[int]] = {}
        for name, kernel in zip(calls, called_kernels(graph, calls), strict=True):
            assert kernel is not None, name
            label = (
                name
                if not name.startswith("extern_kernels.")
                else ("ext:aten::" + name.split(".", 1)[1])
            )
            view.setdefault((key, label), set()).update(kernel.lines)
        for k, lines in view.items():
            if k in placed:  # (a kernel that ran: the profiled pass saw it)
                assert placed[k] == lines, k
                seen += 1
    assert seen >= 5


def test_user_lines_keep_the_profiled_file() -> None:
    assert user_lines([24, 1 * FILE_STRIDE + 7, 23, 24]) == [23, 24]


def _op(name: str, calls: float, cpu_us: float, **extra: Any) -> dict[str, Any]:
    return {"name": name, "calls": calls, "cpu_us": cpu_us, "device_us": 0.0, "dispatch": [],
            "kernels": [], **extra}  # fmt: skip


EAGER = [
    {"line": 5, "source": "y = x * 0.5", "ops": [_op("aten::mul", 1, 100)]},
    {
        "line": 6,
        "source": "z = y.sin() + 1",
        "ops": [_op("aten::sin", 1, 200), _op("aten::add", 1, 100)],
    },  # noqa: E501
    {"line": 7, "source": "return z.view(-1)", "ops": [_op("aten::view", 1, 0)]},
]
FUSED = {"kernel": "cpp_fused_add_mul_sin_0", "graph": "inference", "lines": [5, 6],
         "aten": ["aten.mul", "aten.sin", "aten.add"]}  # fmt: skip
COMPILED = [
    {"line": 4, "source": "def f(x):", "ops": [_op("Torch-Compiled Region: 0/0", 1, 100)]},
    {
        "line": 5,
        "source": "y = x * 0.5",
        "ops": [_op("cpp_fused_add_mul_sin_0", 1, 300, compiled={**FUSED, "shared_with": [6]})],
    },  # fmt: skip
    {
        "line": 6,
        "source": "z = y.sin() + 1",
        "ops": [],
        "shared": [
            _op(
                "cpp_fused_add_mul_sin_0",
                1,
                300,
                compiled={**FUSED, "counted_on": {"line": 5}},
                backward=False,
            )
        ],
    },  # fmt: skip
]


def test_compare_lines_cpu_shares_of_the_medians() -> None:
    rows = compare_lines(EAGER, COMPILED, cuda=False, eager_ms=2.0, compiled_ms=0.5, call_line=4)
    by = {r["line"]: r for r in rows}
    assert set(by) == {5, 6, 7}  # the def line's overhead is no line's
    assert by[5]["eager_us"] == pytest.approx(500.0)  # 100 of 400 µs attributed, of 2 ms
    assert by[5]["compiled_us"] == pytest.approx(375.0)  # 300 of 400, of 0.5 ms
    assert by[5]["eager_kernels"] == 1 and by[5]["compiled_kernels"] == 1
    assert by[5]["fused_with"] == [6] and by[5]["fused_eager_kernels"] == 3
    assert by[6]["compiled_us"] is None and by[6]["counted_on"] == 5
    assert compare_lens_text(by[5], cuda=False) == (
        "compiled: 375 µs (was 2 ms on lines 5, 6) · 3 ops fused into 1"
    )
    assert compare_lens_text(by[6], cuda=False) == "compiled: fused with line 5 (was 1.5 ms)"
    assert compare_lens_text(by[7], cuda=False) == "compiled: no kernel (was 0 µs)"
    hover = "\n".join(compare_hover_lines(by[6], cuda=False))
    assert "`aten::sin`" in hover and "`cpp_fused_add_mul_sin_0`" in hover
    assert "counted on line 5" in hover and "fused from lines 5, 6" in hover


TRITON = "triton_poi_fused_add_mul_0"


def test_compare_lines_cuda_device_times_and_kernel_counts() -> None:
    def k(name: str, us: float) -> dict[str, Any]:
        return {"name": name, "device_us": us, "calls": 1}

    eager = [{"line": 3, "source": "a", "device_us": 30.0, "ops": [
        {**_op("aten::mul", 1, 5), "kernels": [k("mul_kernel", 10)]},
        {**_op("aten::add", 1, 5), "kernels": [k("add_kernel", 20)]}]}]  # fmt: skip
    compiled = [{"line": 3, "source": "a", "device_us": 12.0, "ops": [
        {**_op(TRITON, 1, 5), "kernels": [k(TRITON, 12)],
         "compiled": {"lines": [3], "shared_with": []}}]}]  # fmt: skip
    (row,) = compare_lines(eager, compiled, cuda=True, eager_ms=0.1, compiled_ms=0.05)
    assert (row["eager_us"], row["compiled_us"]) == (30.0, 12.0)
    assert line_work(eager[0], cuda=True) == 2
    assert compare_lens_text(row, cuda=True) == (
        "compiled: 12 µs (was 30 µs) · 2 kernels fused into 1"
    )


def test_speedup_and_summary() -> None:
    assert speedup(2.0, 0.5) == 4.0 and speedup(2.0, 0.0) is None and speedup(None, 1) is None
    cmp = {
        "eager": {"median_ms": 1.2, "spread_pct": 2.14, "kernels": 11},
        "compiled": {"median_ms": 0.41, "spread_pct": 3.0, "kernels": 1, "compile_s": 2.71},
        "speedup": speedup(1.2, 0.41),
        "lines": compare_lines(
            EAGER, COMPILED, cuda=False, eager_ms=1.2, compiled_ms=0.41, call_line=4
        ),  # fmt: skip
    }
    assert compare_summary_text(cmp) == "eager 1.200 ms ±2.1% → compiled 0.410 ms ±3.0% · ×2.93"
    assert compare_summary_text(cmp, short=True) == "compiled 0.410 ms ±3.0% · ×2.93"
    text = "\n".join(compare_text_rows(cmp, cuda=False))
    assert "11 → 1 ops → kernels per call · compiled in 2.7 s (not timed)" in text
    assert "compiled: fused with line 5" in text
    assert compare_summary_text({"eager": {}, "compiled": {}}) is None
