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

DATA = Path(__file__).parents[1] / "data"
GOLDEN = DATA / "trace_summaries.json"
# The traces that were there when the row-by-row implementation recorded its summaries: a trace
# added since (the training steps of tests/data/h200/training/) has no older reading to equal.
RECORDED = sorted(
    p
    for p in DATA.rglob("*.json")
    if p != GOLDEN
    and '"traceEvents"' in p.read_text()[:4096]
    and f"{p.relative_to(DATA)} top=20" in GOLDEN.read_text()
)


def _odd_trace() -> dict[str, Any]:
    """Mixed int/str ids, odd args, nested ops on two threads, launches, copies, bad events."""

    def ev(cat: str, name: str, ts: Any, dur: Any, pid: Any = 1, tid: Any = 1, **a: Any) -> Any:
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid,
                "tid": tid, "args": a}  # fmt: skip

    return {
        "deviceProperties": [{"name": "Fake GPU"}],
        "traceEvents": [
            ev("cpu_op", "aten::a", 100, 50, **{"External id": 1}),
            ev("cpu_op", "aten::b", 110, 20, **{"External id": 2}),
            ev("cpu_op", "aten::b", 112, 5, **{"External id": 3}),
            ev("cpu_op", "aten::a", 100, 50, tid="1", **{"External id": 4}),
            ev("cpu_op", "aten::c", 101.5, 70, tid="main"),
            ev("cpu_op", "aten::c", 101.5, 70, pid="1", tid="main", **{"External id": True}),
            ev("cuda_runtime", "cudaLaunchKernel", 115, 3.25, correlation=9),
            ev("cuda_driver", "cuLaunchKernelEx", 120, 1.5),
            ev("cuda_runtime", "cudaDeviceSynchronize", 140, 8),
            ev(
                "kernel",
                "void k<float>(float*)",
                130,
                10.125,
                pid=0,
                tid=7,
                stream=7,
                device=0,
                **{"External id": 2},
            ),  # fmt: skip
            ev(
                "kernel",
                "void k<float>(float*)",
                135,
                10,
                pid=0,
                tid=7,
                stream=7,
                device=0,
                **{"External id": 2},
            ),  # fmt: skip
            ev("kernel", "other", 160, 0.001, pid=0, tid="stream 8", device="0"),
            ev("kernel", "other", 161, 0, pid=0, tid=9, stream=None),
            ev(
                "gpu_memcpy",
                "Memcpy HtoD (Pinned -> Device)",
                150,
                2,
                pid=0,
                tid=7,
                stream=7,
                device=0,
                bytes=1000.0,
            ),  # fmt: skip
            ev("gpu_memset", "Memset (Device)", 152, 1, pid=0, tid=7, bytes=True),
            ev("user_annotation", "src:12", 99, 80),
            ev("python_function", "<module>", 0, 1000),
            ev("Trace", "PyTorch Profiler (0)", -50, 2000),
            {"ph": "X", "cat": "kernel", "name": "noargs", "ts": 170, "dur": 1, "args": "x"},
            {"ph": "X", "cat": 3, "name": 4, "ts": 171, "dur": 1},
            {"ph": "X", "cat": "kernel", "name": "inf", "ts": 1.0, "dur": float("inf")},
            {"ph": "X", "cat": "kernel", "name": "bool", "ts": True, "dur": 1.0},
            {"ph": "X", "cat": "kernel", "name": "neg", "ts": 1.0, "dur": -1},
            {"ph": "i", "cat": "kernel", "name": "instant", "ts": 1.0, "dur": 5},
            ["not", "an", "event"],
            None,
        ],
    }


def _cases() -> dict[str, dict[str, Any]]:
    cases = {str(p.relative_to(DATA)): load_trace(p) for p in RECORDED}
    for name in list(cases):
        cases[f"{name} x5000"] = replicate_trace(cases[name], 5000)
    cases["odd"] = _odd_trace()
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
