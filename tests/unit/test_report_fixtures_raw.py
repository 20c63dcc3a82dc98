"""The report panel's TypeScript fixtures (tests/data/report) against the raw recordings.

test_report_fixtures.py checks that the fixtures are what the server's code produces today; that
alone would pass with a bug in the code and a fixture regenerated from it. Here their numbers
are re-derived from the raw H200 recordings without Kernel Lens's code: the Chrome trace read
as plain JSON, the Nsight Compute report read with NVIDIA's ``ncu_report`` module directly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture(scope="module")
def raw_events() -> list[dict[str, Any]]:
    trace = json.loads((DATA / "h200" / "matmul_relu_trace.json").read_text())
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


@pytest.fixture(scope="module")
def timeline() -> dict[str, Any]:
    return json.loads((DATA / "report" / "matmul_relu_timeline.json").read_text())


def _lane(timeline: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    (lane,) = [lane for lane in timeline["lanes"] if lane["kind"] == kind]
    return list(lane["events"])


def test_timeline_fixture_gpu_lane_is_the_traces_kernels(
    raw_events: list[dict[str, Any]], timeline: dict[str, Any]
) -> None:
    t0 = min(e["ts"] for e in raw_events)
    assert timeline["event_count"] == len(raw_events) == 341
    end = max(e["ts"] + e["dur"] for e in raw_events)
    assert timeline["span_us"] == pytest.approx(end - t0, abs=1e-2)
    kernels = sorted((e for e in raw_events if e["cat"] == "kernel"), key=lambda e: e["ts"])
    gpu = _lane(timeline, "gpu")
    assert [(k["name"], k["dur"]) for k in kernels] == [(g["name"], g["dur"]) for g in gpu]
    assert [g["start"] for g in gpu] == pytest.approx([k["ts"] - t0 for k in kernels], abs=1e-2)
    # Each kernel's line: the src:N range around the runtime call with its correlation id.
    ranges = [
        (int(e["name"].split(":")[1]), e["ts"], e["ts"] + e["dur"])
        for e in raw_events
        if e["cat"] == "user_annotation" and re.fullmatch(r"src:\d+", e["name"])
    ]
    runtime = {
        e["args"]["correlation"]: e
        for e in raw_events
        if e["cat"] == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    lines = []
    for k in kernels:
        call = runtime[k["args"]["correlation"]]
        lines.append(next(n for n, s, e in ranges if s <= call["ts"] and call["ts"] < e))
    assert [g["line"] for g in gpu] == lines == [10, 11, 11]


def test_timeline_fixture_runtime_lane_is_the_traces_runtime_calls(
    raw_events: list[dict[str, Any]], timeline: dict[str, Any]
) -> None:
    t0 = min(e["ts"] for e in raw_events)
    calls = sorted((e for e in raw_events if e["cat"] == "cuda_runtime"), key=lambda e: e["ts"])
    lane = _lane(timeline, "runtime")
    assert [(c["name"], c["dur"]) for c in calls] == [(e["name"], e["dur"]) for e in lane]
    assert [e["start"] for e in lane] == pytest.approx([c["ts"] - t0 for c in calls], abs=1e-2)


def test_ncu_fixture_is_what_ncu_report_reads() -> None:
    ncu_report = pytest.importorskip("ncu_report")
    fixture = json.loads((DATA / "report" / "triton_fused_ncu.json").read_text())
    ctx = ncu_report.load_report(str(DATA / "h200" / "triton_fused_full.ncu-rep"))
    assert ctx.num_ranges() == 1 and ctx.range_by_idx(0).num_actions() == 1
    action = ctx.range_by_idx(0).action_by_idx(0)
    (kernel,) = fixture["kernels"]

    def metric(name: str) -> Any:
        return action.metric_by_name(name).value()

    assert kernel["name"] == action.name() == "triton_poi_fused_add_mul_relu_0"
    assert kernel["duration_us"] == pytest.approx(metric("gpu__time_duration.sum") / 1000)
    assert kernel["registers"] == metric("launch__registers_per_thread") == 16
    assert kernel["grid_size"] == metric("launch__grid_size") == 2048
    assert kernel["block_size"] == metric("launch__block_size") == 256
    assert kernel["dram_bandwidth_gbs"] == pytest.approx(metric("dram__bytes.sum.per_second") / 1e9)
    assert kernel["achieved_occupancy_pct"] == pytest.approx(
        metric("sm__warps_active.avg.pct_of_peak_sustained_active")
    )
    # The hints: every OPT and WRN rule message, none of the others.
    wanted = {ncu_report.MsgType_OPTIMIZATION: "OPT", ncu_report.MsgType_WARNING: "WRN"}
    shown = sorted(
        (wanted[r["rule_message"]["type"]], r["rule_identifier"])
        for r in action.rule_results_as_dicts()
        if (r.get("rule_message") or {}).get("type") in wanted
    )
    assert sorted((h["kind"], h["rule"]) for h in kernel["hints"]) == shown
    assert len(shown) == 12
