"""Every derived figure in README.md and docs/benchmarks.md, recomputed from what it derives from.

The measured figures come from the scripts each section names (docs/benchmarks.md); the figures
derived from them — differences, ratios, bandwidths, the best block size — are recomputed here
from the tables themselves, the Nsight Compute figures are read back from the recorded report,
and the README's sample output is the CLI's rendering of the stored H200 run. A table edited
without its prose (or the other way round) fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kernel_lens.analysis.report_text import format_profile

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT / "docs" / "benchmarks.md"
H200 = ROOT / "tests" / "data" / "h200"

#: 10000² fp32 read once and written once (the square examples), in bytes.
SQUARE_BYTES = 2 * 4 * 10_000 * 10_000
#: The H200's device-to-device copy bandwidth measured by the shared fixtures' make_baseline.py
#: (`square_baseline.json`), TB/s.
H200_COPY_TBS = 4.30


def _doc() -> str:
    return BENCH.read_text()


def _flat(doc: str) -> str:
    """The text with every run of whitespace one space: the prose is wrapped anywhere."""
    return " ".join(doc.split())


def _table(doc: str, header_start: str) -> list[list[str]]:
    """The rows (cells stripped of ``**``) of the Markdown table whose header starts so."""
    lines = doc.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[at + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().strip("*").strip() for c in line.strip("|").split("|")])
    return rows


def _num(cell: str) -> float:
    return float(re.match(r"[-+]?[\d.,]+", cell.replace(",", "")).group(0))  # type: ignore[union-attr]


def test_engine_table_differences_and_ratios() -> None:
    doc = _doc()
    rows = _table(doc, "| function | ours median ms (±spread) | do_bench median ms |")
    assert len(rows) == 7
    diffs, ratios = [], []
    for row in rows:
        ours, bench, diff, passed, ratio = (_num(c) for c in row[1:6])
        # The medians are rounded to 0.00005 ms: that bounds the recomputed difference.
        slack = 100 * (0.00005 / ours + 0.00005 / bench) + 0.005
        assert 100 * (ours / bench - 1) == pytest.approx(diff, abs=slack), row[0]
        assert passed / ours == pytest.approx(ratio, abs=0.05 + passed * 0.0005 / ours**2), row[0]
        diffs.append(abs(diff))
        ratios.append(ratio)
    assert f"{max(diffs):.2f}%" == "0.33%"
    assert "every median is within 0.33% of `do_bench`" in _flat(doc)
    assert f"{min(ratios):.1f}–{max(ratios):.1f}×" == "1.2–7.5×"
    assert "costs 1.2–7.5× the function's own time" in _flat(doc)


def test_square_bandwidth_and_share_of_the_copy_bandwidth() -> None:
    doc = _doc()
    rows = _table(doc, "| function | ours median ms (±spread) | do_bench median ms |")
    median = _num(next(r for r in rows if r[0] == "square.py::square_torch")[1])
    tbs = SQUARE_BYTES / (median * 1e-3) / 1e12
    assert f"{median:.4f} ms = {tbs:.2f} TB/s" == "0.1930 ms = 4.15 TB/s"
    assert f"{100 * tbs / H200_COPY_TBS:.1f}%" == "96.4%"
    flat = _flat(doc)
    assert "0.1930 ms = 4.15 TB/s" in flat and "96.4% of the H200's 4.30 TB/s" in flat


def test_sweep_bandwidth_column_and_best() -> None:
    rows = _table(_doc(), "| BLOCK_SIZE | median ms | ± | GB/s |")
    for row in rows:
        median, gbs = _num(row[1]), _num(row[3])
        assert float(f"{SQUARE_BYTES / (median * 1e-3) / 1e9:.3g}") == gbs, row
    best = min(rows, key=lambda r: _num(r[1]))
    assert best[0] == "512" and "(best)" in best[3]
    assert [r for r in rows if "(best)" in r[3]] == [best]


def test_compiled_speed_up() -> None:
    doc = _flat(_doc())
    eager, compiled = 0.383, 0.192
    assert "0.383 ms (±0.2%)" in doc and "1 kernel, 0.192 ms (±0.2%)" in doc
    assert f"{eager / compiled:.2f}×" == "1.99×" and "1.99×" in doc


def test_ncu_figures_are_the_recorded_reports() -> None:
    pytest.importorskip("ncu_report")
    from kernel_lens.agent.stages.ncu import kernel_lines_from_report
    from kernel_lens.traces.ncu_files import read_ncu_file

    path = str(H200 / "triton_square_small.ncu-rep")
    (k,), _ = read_ncu_file(path)
    doc = _doc()
    occupancy = next(h for h in k.hints if h["rule"] == "AchievedOccupancy")
    small_grid = next(h for h in k.hints if h["rule"] == "LaunchConfiguration")
    figures = [
        f"`square_kernel` {k.duration_us:.2f} µs",
        f"grid {k.grid_size:.0f} × block {k.block_size:.0f}",
        f"{k.waves:.3f} waves",
        f"achieved occupancy {k.achieved_occupancy_pct:.1f}%",
        f"{occupancy['title']} (est. {occupancy['speedup_pct']:.1f}%)",
        f"**{small_grid['title']}** ({small_grid['rule']}, est. {small_grid['speedup_pct']:.1f}%",
        f"all placed on line {kernel_lines_from_report(path)[0]}",
    ]
    assert figures == [
        "`square_kernel` 2.30 µs",
        "grid 32 × block 128",
        "0.015 waves",
        "achieved occupancy 6.1%",
        "Achieved Occupancy (est. 93.9%)",
        "**Small Grid** (LaunchConfiguration, est. 75.8%",
        "all placed on line 42",
    ]
    flat = _flat(doc)
    for figure in figures:
        assert figure in flat, figure


def test_readme_sample_is_the_stored_h200_run() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```\n$ kernel-lens profile kernels/square.py::square_three_ways", 1)[1]
    shown = block.split("```", 1)[0].splitlines()[1:]
    assert shown[-1] == "…"
    stored = json.loads((H200 / "square_three_ways_profile.json").read_text())
    rendered = format_profile(stored).splitlines()
    assert shown[:-1] == rendered[: len(shown) - 1]
    assert "0.577 ms median  ±0.1%  (min 0.573 ms, 104 reps, CUDA events, L2 flushed)" in shown[1]


def test_training_step_table_is_the_recorded_results() -> None:
    """The issue-22 table: each row's figures are its recorded result's (ours), the before
    column the recording's log, and every row's fwd + bwd is its share of the trace's time."""
    doc = _doc()
    rows = _table(doc, "| run | trace kernels ms/call |")
    assert len(rows) == 5
    training = H200 / "training"
    files = {
        "`train_step.py::train_step`": "train_step-train_step",
        "`train_step.py::train_step_bf16`": "train_step-train_step_bf16",
        "`train_compiled.py::train_step`": "train_compiled-train_step",
        "`train_step.py::MLP.forward --backward`": "mlp-backward",
    }
    log = (training / "record.log").read_text()
    for row in rows:
        total, fwd, bwd, pct = (_num(c) for c in row[1:5])
        assert fwd + bwd == pytest.approx(total * pct / 100, abs=0.002), row[0]
        name = next((v for k, v in files.items() if row[0].startswith(k)), None)
        if name is None:
            assert row[0].startswith("nanoGPT")  # public code: its result is not committed
            continue
        result = json.loads((training / "after" / f"{name}.json").read_text())
        acc = result["accounting"]
        lines = result["lines"]
        assert acc["device_us"] / 1e3 == pytest.approx(total, abs=5e-4), row[0]
        assert sum(x["device_us"] for x in lines) / 1e3 == pytest.approx(fwd, abs=5e-4), row[0]
        bwd_us = sum((x.get("backward") or {}).get("device_us", 0.0) for x in lines)
        assert bwd_us / 1e3 == pytest.approx(bwd, abs=5e-4), row[0]
        assert acc["on_lines_pct"] == pytest.approx(pct, abs=0.005), row[0]
        before = re.search(rf"{name} exit 0\n.*\((?P<pct>[\d.]+)%\)", log)
        if before is not None:
            assert row[5] == f"{before.group('pct')}%", row[0]
    seed = json.loads((training / "after" / "mlp-backward.json").read_text())["accounting"]
    assert [(r["reason"], round(r["device_us"], 1)) for r in seed["remainder"]] == [
        ("backward-seed", 30.0)
    ]
    assert "gradient accumulation, 30.0 µs" in _flat(doc)


def test_deep_tracer_overhead_ratios_are_the_tables() -> None:
    doc = _doc()
    rows = _table(doc, "| run | CPU s | per step ms | × plain | × profiler |")
    assert [r[0] for r in rows] == [
        "plain (no profiler)",
        "torch.profiler only (record_shapes)",
        "deep (Kernel Lens whole-script stage)",
        "deep tracer with record_function ranges",
    ]
    plain, profiler = _num(rows[0][1]), _num(rows[1][1])
    for row in rows:
        cpu, per_step, x_plain, x_profiler = (_num(c) for c in row[1:5])
        assert cpu / 10 * 1e3 == pytest.approx(per_step, abs=0.06), row[0]  # 10 steps
        assert cpu / plain == pytest.approx(x_plain, abs=0.006), row[0]
        assert cpu / profiler == pytest.approx(x_profiler, abs=0.006), row[0]
    deep = _num(rows[2][1]) / profiler
    assert f"{deep:.2f}×" == "1.25×"
    assert "costs 1.25× a run under the plain profiler (the target is ≤ 1.5×)" in _flat(doc)
