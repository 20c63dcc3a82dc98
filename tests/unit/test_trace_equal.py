"""The summary gives the same numbers as before the columnar trace store (issue 12), to well under
a microsecond, on every recorded trace in ``tests/data/``, on traces replicated from them, and on a
hand-made trace with every odd kind of event the reader must skip or key.

The expected summaries in ``tests/data/trace_summaries.json`` were recorded with the row-by-row
implementation (pandas frame built from per-event dicts, Python loops) before it was replaced:
``KERNEL_LENS_RECORD=1 .venv/bin/pytest tests/unit/test_trace_equal.py`` records them again.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest
from benchmarks.trace_synth import replicate_trace

from kernel_lens.analysis.trace_summary import load_trace, summarize_trace
from tests.traces import DATA, GOLDEN, RECORDED, odd_trace


def _cases() -> dict[str, dict[str, Any]]:
    cases = {str(p.relative_to(DATA)): load_trace(p) for p in RECORDED}
    for name in list(cases):
        cases[f"{name} x5000"] = replicate_trace(cases[name], 5000)
    cases["odd"] = odd_trace()
    return cases


def _plain(trace: dict[str, Any], top: int) -> dict[str, Any]:
    return dataclasses.asdict(summarize_trace(trace, top=top))


def test_there_are_recorded_traces() -> None:
    assert {p.name for p in RECORDED} >= {"matmul_relu_trace.json", "square_cpu_trace.json"}


def _close(got: Any, want: Any, where: str) -> None:
    if isinstance(want, float) and isinstance(got, float):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-6), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for key in want:
            _close(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list | tuple):
        assert isinstance(got, list | tuple) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _close(g, w, f"{where}[{i}]")
    else:
        assert got == want and type(got) is type(want), where


@pytest.mark.parametrize("top", [20, 2])
def test_summaries_equal_the_recorded_ones(top: int) -> None:
    cases = _cases()
    if os.environ.get("KERNEL_LENS_RECORD"):
        golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
        golden.update({f"{name} top={top}": _plain(t, top) for name, t in cases.items()})
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    for name, trace in cases.items():
        # tuples and int/str keys survive a JSON round trip as lists and the same scalars.
        got = json.loads(json.dumps(_plain(trace, top)))
        _close(got, golden[f"{name} top={top}"], f"{name} top={top}")


def test_gzipped_file_summary_equals_plain(tmp_path: Path) -> None:
    for path in RECORDED:
        packed = tmp_path / (path.name + ".gz")
        packed.write_bytes(gzip.compress(path.read_bytes()))
        assert summarize_trace(load_trace(packed)) == summarize_trace(load_trace(path))
