"""``kernel-lens profile FILE::FUNC --compare-compiled`` on CPU, real torch (issue 33 item 4).

``kernels/eager_vs_compiled.py::gelu_chain``: five elementwise lines that Inductor fuses into
one C++ kernel. One job runs the *compiled* stage (the Generated Code view's) and the
*compare_compiled* stage, so the view's kernel lines and the lenses' placement are checked on
the same function; a second run prints the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HAS_CUDA, KERNELS, run_cli

FILE = KERNELS / "eager_vs_compiled.py"

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="the CPU's C++ kernels (GPU: tests/gpu)")


def _lineno(text: str) -> int:
    return next(i for i, x in enumerate(FILE.read_text().splitlines(), 1) if text in x)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    traces = tmp_path_factory.mktemp("traces")
    code, out, err = run_cli(
        "profile", f"{FILE}::gelu_chain", "--compare-compiled", "--stages", "compiled",
        "--json", "--no-history", "--budget-ms", "150", "--trace-dir", str(traces),
        timeout=600,
    )  # fmt: skip
    assert code == 0, err
    assert isinstance(out, dict)
    return out


def test_fewer_kernels_on_the_fused_lines(run: dict[str, Any]) -> None:
    cmp = run["compare_compiled"]
    rows = {r["line"]: r for r in cmp["lines"]}
    first, tanh, last = _lineno("y = x * 0.5"), _lineno("torch.tanh"), _lineno("return z + 1.0")
    assert set(range(first, last + 1)) <= set(rows)
    head = rows[first]
    assert head["compiled_kernels"] == 1 and head["compiled_us"] > 0
    assert head["fused_with"] == list(range(first + 1, last + 1))
    # eagerly every op of the five lines; compiled one kernel, counted once
    assert head["fused_eager_kernels"] == sum(
        rows[n]["eager_kernels"] for n in range(first, last + 1)
    )
    assert head["fused_eager_kernels"] >= 8 and rows[tanh]["eager_kernels"] >= 4
    for n in range(first + 1, last + 1):
        assert rows[n]["compiled_us"] is None and rows[n]["counted_on"] == first
        assert rows[n]["compiled_kernels"] == 0
    assert cmp["eager"]["kernels"] > cmp["compiled"]["kernels"] == 1
    assert cmp["provenance"] is True


def test_both_timings_with_spreads_and_the_speedup(run: dict[str, Any]) -> None:
    cmp = run["compare_compiled"]
    e, c = cmp["eager"], cmp["compiled"]
    # Both sides timed interleaved in the compare's own pass (issue 34): as many samples each,
    # and the four-way verdict of their samples (eager as the reference).
    assert cmp["interleaved"] is True and e["reps"] == c["reps"] > 1
    assert e["median_ms"] > 0 and c["median_ms"] > 0
    verdict = cmp["verdict"]
    assert verdict["reference"] == "eager" and verdict["method"] == "mann-whitney"
    assert verdict["kind"] in ("faster", "slower", "same", "ambiguous")
    assert verdict["after_ms"] == c["median_ms"] and verdict["before_ms"] == e["median_ms"]
    assert e["spread_pct"] >= 0 and c["spread_pct"] >= 0
    assert cmp["speedup"] == pytest.approx(e["median_ms"] / c["median_ms"])
    assert c["compile_s"] > 0  # said, never timed
    assert cmp["summary"].startswith("eager ") and f"×{cmp['speedup']:.2f}" in cmp["summary"]
    assert Path(cmp["trace_path"]).is_file()


def test_generated_code_view_and_lenses_agree(run: dict[str, Any]) -> None:
    """The *compiled* stage's kernel → lines (Generated Code) is the compare's placement."""
    view = {k["name"]: k["lines"] for k in run["compiled"]["kernels"] if k["kind"] != "extern"}
    assert view, run["compiled"]["kernels"]
    placed: dict[str, list[int]] = {}
    for row in run["compare_compiled"]["lines"]:
        for op in row["compiled"]:
            if op["name"].startswith("cpp_"):
                placed.setdefault(op["name"], []).append(row["line"])
    assert {n: sorted(v) for n, v in placed.items()} == view
    for row in run["compare_compiled"]["lines"]:  # each kernel's own lines, as the view says
        for op in row["compiled"]:
            if op["name"] in view:
                assert op["fused_lines"] == view[op["name"]]


def test_text_output(tmp_path: Path) -> None:
    code, out, err = run_cli(
        "profile", f"{FILE}::gelu_chain", "--compare-compiled", "--no-history",
        "--budget-ms", "100", "--trace-dir", str(tmp_path), timeout=600,
    )  # fmt: skip
    assert code == 0, err
    first = _lineno("y = x * 0.5")
    assert "eager vs compiled (torch.compile, Inductor)" in out
    assert "time   eager " in out and " → compiled " in out and " · ×" in out
    assert "ops → kernels per call · compiled in " in out
    assert f"compiled: fused with line {first} (was " in out
    assert "(was " in out and f" on lines {first}–{_lineno('return z + 1.0')}) · " in out
    assert "ops fused into 1" in out


def test_script_is_refused() -> None:
    code, _, err = run_cli("profile", str(FILE), "--compare-compiled")
    assert code != 0 and "--compare-compiled" in err
