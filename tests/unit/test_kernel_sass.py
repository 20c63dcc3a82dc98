"""The blame's SASS from the binary that ran (issue 43 wired into Profile Kernel Lines): the
candidates are disassembled with ``cuobjdump -sass`` (here the copy in Triton's wheel) and the one
whose instructions equal the report's at its sampled offsets is taken — on the H200 recordings of
``tests/data/inside/h200`` and their cubins; another kernel's binary is never taken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernel_lens.analysis.kernel_lines import KernelPcs, kernel_pcs_from_report
from kernel_lens.kernel_sass import find_cuobjdump, matching_sass, sass_for
from kernel_lens.traces.ncu_files import read_kernel_lines
from tests.conftest import ROOT

INSIDE = ROOT / "tests" / "data" / "inside"
H200 = INSIDE / "h200"


def _pcs(name: str) -> KernelPcs:
    ncu_report = pytest.importorskip("ncu_report")
    (kernel,) = kernel_pcs_from_report(ncu_report.load_report(str(H200 / f"{name}.ncu-rep")))
    return kernel


def _report_sass(k: KernelPcs) -> dict[int, str]:
    return {p.offset: p.sass for p in k.pcs if p.sass}


def test_the_cubin_that_ran_is_found_among_triton_cubins() -> None:
    if find_cuobjdump() is None:
        pytest.skip("no cuobjdump (CUDA toolkit or Triton's wheel)")
    k = _pcs("tl_strided")
    names = [k.mangled, k.name]
    cubins = sorted((H200 / "triton").glob("*.cubin"))
    found = sass_for(_report_sass(k), names, binaries=[str(p) for p in cubins])
    assert found is not None and "strided_sum_kernel" in found
    # the other kernels' cubins are not it
    others = [str(p) for p in cubins if p.stem != "strided_sum_kernel"]
    assert sass_for(_report_sass(k), names, binaries=others) is None


def test_the_blame_moves_the_strided_kernels_samples_onto_the_strided_load() -> None:
    """With the listing found, the line of ``y[(long)i * 32]`` causes most of the stalls while
    the raw samples sit on the sum's line; without one, the raw figure alone."""
    k = _pcs("cuda_strided_sum")
    listing = (H200 / "cuda_strided.sass").read_text()
    assert matching_sass(_report_sass(k), [k.mangled, k.name], [listing]) == listing
    doc = INSIDE / "cuda_strided.py"
    text = doc.read_text()
    report = str(H200 / "cuda_strided_sum.ncu-rep")
    (row,) = read_kernel_lines(report, str(doc), text, find_sass=lambda _k: listing)
    assert row["blamed"] is True
    by = {r["line"]: r for r in row["lines"]}
    strided = next(n for n, t in enumerate(text.splitlines(), 1) if "y[(long)i * 32]" in t)
    summed = next(n for n, t in enumerate(text.splitlines(), 1) if "out[i] = a + b" in t)
    assert by[strided]["blamed_pct"] >= 80 > by[strided]["share_pct"]
    assert by[summed]["share_pct"] > 80 > by[summed]["blamed_pct"]
    # the hot-line order, the lens and the remedy follow the cause (issue 43 items 1 and 3)
    assert row["lines"][0]["line"] == strided
    assert re.search(
        r"^causes [89]\d% of stalls · global load, 32 sectors per request .* of samples",
        by[strided]["text"],
    )
    assert "uncoalesced" in by[strided]["text"]
    assert row["remedy"]["reason"] == "blame" and "coalesc" in row["remedy"]["text"]
    # the assembly view's links (item 4): the FADD names the loads it waited on, the strided
    # LDG carries what it caused and says what it is
    sass = {e["offset"]: e for r in row["lines"] for e in r["sass"]}
    fadd = next(e for e in sass.values() if e["text"].strip().startswith("FADD"))
    assert fadd["waits_on"] and all(
        sass[o]["text"].strip().startswith("LDG") for o in fadd["waits_on"]
    )
    culprit = max(sass.values(), key=lambda e: e["blamed"])
    assert culprit["offset"] in fadd["waits_on"] and "32 sectors" in culprit["cause"]
    assert culprit["blamed"] > 0.8 * row["samples"] > culprit["samples"]
    (raw,) = read_kernel_lines(report, str(doc), text, find_sass=lambda _k: None)
    assert raw["blamed"] is False
    assert raw["lines"][0]["line"] == summed and "causes" not in raw["lines"][0]["text"]
    assert raw["remedy"] is None or raw["remedy"]["reason"] != "blame"


def test_no_binary_no_blame(tmp_path: Path) -> None:
    k = _pcs("cuda_strided_sum")
    assert sass_for(_report_sass(k), [k.mangled], binaries=[str(tmp_path / "gone.so")]) is None
