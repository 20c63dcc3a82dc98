"""Inside the kernel on the recorded H200 reports of ``tests/data/inside/`` (``record.sh``; the
reports and ncu's own Source page are in ``tests/data/inside/h200/``, see its README): each
kernel's source counters on the lines of the committed kernel files — mapped by the text the
report embedded, never by the device's checkout path — and our per-instruction figures against
Nsight Compute's own Source page (``*.source.csv``). Skipped until the recordings are there."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.kernel_lines import (
    KernelPcs,
    fold_lines,
    kernel_lines_json,
    kernel_pcs_from_report,
    kernel_span,
)
from tests.conftest import ROOT

INSIDE = ROOT / "tests" / "data" / "inside"
H200 = INSIDE / "h200"


def _pcs(name: str) -> KernelPcs:
    report = H200 / f"{name}.ncu-rep"
    if not report.exists():
        pytest.skip(f"{report.name} is not recorded yet (tests/data/inside/record.sh)")
    ncu_report = pytest.importorskip("ncu_report")
    kernels = kernel_pcs_from_report(ncu_report.load_report(str(report)))
    assert len(kernels) == 1, [k.name for k in kernels]
    return kernels[0]


def _lines(name: str, doc: Path, kernel: str) -> dict[str, Any]:
    k = _pcs(name)
    text = doc.read_text()
    row = kernel_lines_json(fold_lines(k, text, doc_path=str(doc), span=kernel_span(text, kernel)))
    assert sum(r["samples"] for r in row["lines"]) + row["unplaced_samples"] == k.samples
    placed = sum(r["share_pct"] for r in row["lines"])
    assert placed == pytest.approx(100.0 * (1 - row["unplaced_samples"] / k.samples), abs=0.01)
    return row


def _by_line(row: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {r["line"]: r for r in row["lines"]}


def test_matmul_its_loop_and_its_inlined_helper() -> None:
    row = _lines("tl_matmul", INSIDE / "tl_matmul.py", "matmul_kernel")
    by = _by_line(row)
    assert set(by) <= set(range(11, 40)), sorted(by)  # all inside the kernel
    assert row["unplaced_samples"] == 0, row["unplaced_why"]
    # leaky_relu lives in tl_helpers.py: its instructions fold onto line 37, named
    assert 37 in by and any("leaky_relu" in h for h in by[37]["helpers"])
    assert by[34]["executed"] > 0  # tl.dot
    # the k-loop (its two tl.load lines, tl.dot and the pointer increments) holds the samples
    assert sum(by[n]["share_pct"] for n in range(31, 37) if n in by) > 90


def test_vector_add_its_helper_on_its_call() -> None:
    row = _lines("tl_vector_add", INSIDE / "tl_vector_add.py", "add_kernel")
    by = _by_line(row)
    assert row["unplaced_samples"] == 0, row["unplaced_why"]
    assert 12 in by and any("tile_offsets" in h for h in by[12]["helpers"])
    assert {14, 15, 16} <= set(by)
    # the store's line, where the sum waits for both loads
    assert row["lines"][0]["line"] == 16 and row["lines"][0]["stall"] == "long_scoreboard"


def test_a_store_lines_drain_and_its_wait_are_both_said() -> None:
    """The strided Triton kernel's store line holds the sum waiting on the loads (long
    scoreboard) and, on the ``BRA`` after ``EXIT``, the stores draining: both said, and the
    remedy is the wait's (the drain cannot be changed)."""
    row = _lines("tl_strided", INSIDE / "tl_strided.py", "strided_sum_kernel")
    top = row["lines"][0]
    assert top["line"] == 15 and top["stall"] == "drain"
    assert "drain (stores draining at exit), long scoreboard (waiting on memory)" in top["text"]
    assert row["remedy"]["reason"] == "long_scoreboard"


def test_load_inline_cuda_on_the_python_lines() -> None:
    row = _lines("cuda_strided_sum", INSIDE / "cuda_strided.py", "strided_sum")
    assert set(row["files"].values()) == {"load_inline"}
    assert set(_by_line(row)) <= set(range(14, 21))
    top = row["lines"][0]  # the FADD of `out[i] = a + b;` waits on both loads
    assert top["line"] == 19 and top["stall"] == "long_scoreboard" and top["share_pct"] > 80


def _source_page(name: str) -> list[dict[str, str]]:
    """ncu's Source page rows (``--page source --csv --print-source sass``): after a
    ``"Kernel Name"`` line, the header row starting with ``"Address"``."""
    path = H200 / f"{name}.source.csv"
    if not path.exists():
        pytest.skip(f"{path.name} is not recorded yet")
    lines = path.read_text(errors="replace").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))


def _number(text: str) -> float:
    return float(text.replace(",", "")) if text not in ("", "-") else 0.0


@pytest.mark.parametrize(
    "name",
    ["tl_matmul", "tl_vector_add", "tl_strided", "cuda_strided_sum", "cuda_strided_sum_run2",
     "cuda_late_consumer", "cuda_chase"],
)  # fmt: skip
def test_each_instruction_matches_nsight_computes_own_source_page(name: str) -> None:
    """Per instruction (by its offset from the function's start): the same SASS, the same
    warp-stall samples and the same instructions executed as Nsight Compute's Source page."""
    k = _pcs(name)
    rows = _source_page(name)
    base = min(int(r["Address"], 16) for r in rows)
    theirs = {int(r["Address"], 16) - base: r for r in rows}
    ours = {p.offset: p for p in k.pcs}
    assert set(ours) <= set(theirs)
    for offset, row in theirs.items():
        p = ours.get(offset)
        samples = _number(row["Warp Stall Sampling (All Samples)"])
        executed = _number(row["Instructions Executed"])
        if p is None:  # an instruction the counters did not see: nothing to show
            assert samples == 0 and executed == 0, (offset, row["Source"])
            continue
        # the opcode (ncu_report and the Source page order some operands differently)
        assert p.sass.split()[:1] == row["Source"].split()[:1], offset
        assert (p.samples, p.executed) == (samples, executed), (offset, row["Source"])
    assert k.samples == sum(_number(r["Warp Stall Sampling (All Samples)"]) for r in rows)
