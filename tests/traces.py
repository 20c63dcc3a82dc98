"""Recorded traces the unit, CLI and language-server tests share: the traces of ``tests/data``
whose row-by-row summaries are recorded in ``trace_summaries.json``, a hand-made trace with every
odd kind of event, and the real Kineto traces of ``tests/data/real_traces`` with their independent
totals and the check that a summary equals them."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
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


def odd_trace() -> dict[str, Any]:
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


#: Real Kineto traces nobody here wrote (issue 49), and ``totals.py``'s independent count of each.
REAL_TRACES = DATA / "real_traces"
TOTALS: dict[str, dict[str, Any]] = json.loads((REAL_TRACES / "totals.json").read_text())


def _us(value: Any) -> Decimal:
    """A time as the summary's JSON rounds it (3 decimals)."""
    return Decimal(str(value)).quantize(Decimal("0.001"))


def check_totals(got: dict[str, Any], want: dict[str, Any], *, all_kernels: bool) -> None:
    """Every total of the summary ``got`` (its JSON) equals the independent count ``want``.

    ``all_kernels``: ``got`` lists every kernel (else its top rows are checked against the
    count's, in the summary's order: time, then name).
    """
    assert got["device"] == want["device"]
    assert got["device_kind"] == want["device_kind"]
    assert got["event_count"] == want["event_count"]
    assert got["kernel_calls"] == want["kernel_calls"]
    assert _us(got["kernel_total_us"]) == _us(want["kernel_total_us"])
    kernels = {k["name"]: [k["calls"], _us(k["total_us"])] for k in got["kernels"]}
    expected = {n: [c, _us(t)] for n, (c, t) in want["kernels"].items()}
    if all_kernels:
        assert kernels == expected
    else:
        order = sorted(expected, key=lambda n: (-expected[n][1], n))[: len(got["kernels"])]
        assert [k["name"] for k in got["kernels"]] == order
        assert all(kernels[n] == expected[n] for n in order)
    memcpy = {m["kind"]: [m["calls"], m["bytes"], _us(m["total_us"])] for m in got["memcpy"]}
    assert memcpy == {k: [c, b, _us(t)] for k, (c, b, t) in want["memcpy"].items()}
    memset = got["memset"]
    assert [memset["calls"], memset["bytes"], _us(memset["total_us"])] == [
        want["memset"][0], want["memset"][1], _us(want["memset"][2])
    ]  # fmt: skip
    streams = {f"{s['device']}/{s['stream']}": [s["kernels"], _us(s["busy_us"])]
               for s in got["streams"]}  # fmt: skip
    assert streams == {k: [n, _us(b)] for k, (n, b) in want["streams"].items()}
    assert _us(got["gpu_busy_us"]) == _us(want["gpu_busy_us"])
    assert _us(got["gpu_span_us"]) == _us(want["gpu_span_us"])
    assert got["launches"]["count"] == want["launches"][0]
    assert _us(got["launches"]["total_us"]) == _us(want["launches"][1])
    assert _us(got["op_device_us"]) == _us(want["op_device_us"])
