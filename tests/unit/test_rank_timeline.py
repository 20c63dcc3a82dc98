"""A distributed step's timeline: one lane group per rank, aligned on the ranks' first collective
(`analysis/rank_timeline.py`), on the committed 2-rank gloo traces of tests/data/distributed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.distributed import merge_ranks, rank_collectives
from kernel_lens.analysis.rank_timeline import (
    collective_events,
    first_collectives,
    merge_rank_timelines,
    rank_shifts,
)
from kernel_lens.analysis.trace_columns import columns_from_trace
from kernel_lens.analysis.trace_store import TraceStore, build_store

DATA = Path(__file__).resolve().parent.parent / "data" / "distributed"


def _traces() -> list[dict[str, Any]]:
    return [
        json.loads((DATA / f"allreduce_step-straggler-rank{r}.json").read_text()) for r in (0, 1)
    ]


@pytest.fixture(scope="module")
def step() -> tuple[list[dict[str, Any]], list[TraceStore], dict[str, Any]]:
    traces = _traces()
    stores = [build_store(columns_from_trace(t)) for t in traces]
    merged = merge_ranks([{"lines": []}, {"lines": []}], [t["traceEvents"] for t in traces])
    return traces, stores, merged["distributed"]


def test_the_collectives_in_a_store_are_the_analysis_collectives(step: Any) -> None:
    traces, stores, _ = step
    for trace, store in zip(traces, stores, strict=True):
        found = collective_events(store)
        analysed = rank_collectives(trace["traceEvents"])["collectives"]
        assert [round(f[0] + store.origin_us, 3) for f in found] == [
            round(c["ts"], 3) for c in analysed
        ]
        assert [f[1] for f in found] == [c["dur"] for c in analysed]
        assert {f[2] for f in found} == {"gloo:all_reduce"}
    # each rank's two all_reduces run on gloo's two threads
    assert [[f[3] for f in collective_events(s)] for s in stores] == [
        ["cpu-7532-7576", "cpu-7532-7577"],
        ["cpu-7533-7578", "cpu-7533-7579"],
    ]


def test_ranks_are_shifted_so_the_first_collectives_start_together(step: Any) -> None:
    _, stores, dist = step
    found = [collective_events(s) for s in stores]
    firsts = first_collectives(dist["aligned_on_us"], [s.origin_us for s in stores], found)
    # rank 1 (the straggler, asleep 20 ms) reaches its first all_reduce 24.4 ms later after its
    # trace's start than rank 0: rank 0 is drawn that much later, rank 1 where it is
    assert firsts == [593.795, 24972.403]
    assert rank_shifts(firsts) == [24378.608, 0.0]
    # without the result's alignment data, the store's own first collective gives the same
    assert first_collectives(None, [s.origin_us for s in stores], found) == firsts
    assert first_collectives([None, None], [None, None], [[], []]) == [None, None]
    assert rank_shifts([None, 10.0, 4.0]) == [0.0, 0.0, 6.0]


def test_merged_timeline_has_one_lane_group_per_rank(step: Any) -> None:
    _, stores, dist = step
    found = [collective_events(s) for s in stores]
    firsts = first_collectives(dist["aligned_on_us"], [s.origin_us for s in stores], found)
    shifts = rank_shifts(firsts)
    singles = [s.timeline() for s in stores]
    merged = merge_rank_timelines(
        singles, shifts=shifts, paths=["r0.json", "r1.json"], firsts=firsts,
        distributed=dist, found=found,
    )  # fmt: skip
    assert [(lane["id"], lane["title"], lane["rank"]) for lane in merged["lanes"]] == [
        ("rank0/cpu-7532-7532", "CPU thread 7532", 0),
        ("rank0/cpu-7532-7576", "CPU thread 7576 · gloo collectives", 0),
        ("rank0/cpu-7532-7577", "CPU thread 7577 · gloo collectives", 0),
        ("rank1/cpu-7533-7533", "CPU thread 7533", 1),
        ("rank1/cpu-7533-7578", "CPU thread 7578 · gloo collectives", 1),
        ("rank1/cpu-7533-7579", "CPU thread 7579 · gloo collectives", 1),
    ]
    # every event moved by its rank's shift, nothing else changed
    for r, single in enumerate(singles):
        mine = [lane for lane in merged["lanes"] if lane["rank"] == r]
        for lane, before in zip(mine, single["lanes"], strict=True):
            assert [e["start"] - shifts[r] for e in lane["events"]] == pytest.approx(
                [e["start"] for e in before["events"]]
            )
            assert [(e["name"], e["dur"]) for e in lane["events"]] == [
                (e["name"], e["dur"]) for e in before["events"]
            ]
    # the first gloo:all_reduce of each rank starts at the same time on the merged axis
    starts = [
        next(e["start"] for e in lane["events"] if e["name"] == "gloo:all_reduce")
        for lane in merged["lanes"]
        if lane["id"] in ("rank0/cpu-7532-7576", "rank1/cpu-7533-7578")
    ]
    assert starts[0] == pytest.approx(starts[1]) == pytest.approx(24972.403, abs=1e-3)
    assert merged["span_us"] == round(
        max(s.span_us + d for s, d in zip(stores, shifts, strict=True)), 3
    )
    assert merged["event_count"] == sum(s.event_count for s in stores)
    assert [
        (g["rank"], g["path"], g["shift_us"], g["straggler"], g["wait_us"], len(g["lanes"]))
        for g in merged["ranks"]
    ] == [
        (0, "r0.json", 24378.608, False, 44811.575, 3),
        (1, "r1.json", 0.0, True, 0.0, 3),
    ]
    # the skew at each collective, with each rank's start of it on the merged axis
    assert merged["collectives"] == [
        {
            "index": 0, "name": "all_reduce", "line": 24, "skew_us": 23512.613,
            "first_rank": 0, "last_rank": 1, "starts": [24972.403, 24972.403],
            "durs": [23902.08, 1268.432],
        },
        {
            "index": 1, "name": "all_reduce", "line": 24, "skew_us": 21298.962,
            "first_rank": 0, "last_rank": 1, "starts": [49645.642, 47431.991],
            "durs": [21700.346, 4944.295],
        },
    ]  # fmt: skip


def test_a_window_of_the_merged_timeline_reads_each_rank_at_its_shift(step: Any) -> None:
    _, stores, _ = step
    shifts = [24378.608, 0.0]
    window = (24000.0, 26500.0)
    timelines = [
        s.timeline(window=(window[0] - d, window[1] - d))
        for s, d in zip(stores, shifts, strict=True)
    ]
    merged = merge_rank_timelines(
        timelines,
        shifts=shifts, paths=["r0.json", "r1.json"], firsts=[None, None],
        found=[collective_events(s) for s in stores], window=window,
    )  # fmt: skip
    assert merged["window"] == [24000.0, 26500.0]
    events = [e for lane in merged["lanes"] for e in lane["events"]]
    assert events and all(e["start"] <= window[1] and e["start"] + e["dur"] >= window[0]
                          for e in events)  # fmt: skip
    gloo = sorted(
        (lane["rank"], e["start"])
        for lane in merged["lanes"]
        for e in lane["events"]
        if e["name"] == "gloo:all_reduce"
    )
    assert gloo == [
        (0, pytest.approx(24972.403, abs=1e-3)),
        (1, pytest.approx(24972.403, abs=1e-3)),
    ]
    assert merged["ranks"][0]["first_collective_us"] is None
    assert merged["collectives"] == []  # the markers come with the overview


def test_a_rank_without_a_collective_stays_on_its_trace_start() -> None:
    trace = {
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 100.0, "dur": 5.0,
             "pid": 1, "tid": 1},
        ]
    }  # fmt: skip
    store = build_store(columns_from_trace(trace))
    assert collective_events(store) == []
    merged = merge_rank_timelines(
        [store.timeline()], shifts=rank_shifts([None]), paths=[None], firsts=[None]
    )
    assert merged["ranks"][0]["shift_us"] == 0.0
    assert merged["ranks"][0]["straggler"] is False
    assert merged["lanes"][0]["id"] == "rank0/cpu-1-1"
    assert merged["lanes"][0]["events"][0]["start"] == 0.0


def _gpu_rank(offset: float, nccl_at: float) -> dict[str, Any]:
    """A rank's trace on a GPU: a compute kernel, then an NCCL all_reduce on its own stream."""

    def kernel(name: str, ts: float, dur: float, stream: int) -> dict[str, Any]:
        return {"ph": "X", "cat": "kernel", "name": name, "ts": offset + ts, "dur": dur,
                "pid": 0, "tid": stream, "args": {"device": 0, "stream": stream}}  # fmt: skip

    return {
        "traceEvents": [
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mm",
                "ts": offset,
                "dur": 10.0,
                "pid": 1,
                "tid": 1,
            },  # fmt: skip
            kernel("ampere_sgemm_128x64_nn", 5.0, 20.0, 7),
            kernel(
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long)",
                nccl_at,
                50.0,
                13,
            ),  # fmt: skip
        ]
    }


def test_on_gpus_the_ranks_are_aligned_on_their_first_nccl_kernel() -> None:
    traces = [_gpu_rank(1000.0, 40.0), _gpu_rank(5000.0, 100.0)]
    stores = [build_store(columns_from_trace(t)) for t in traces]
    found = [collective_events(s) for s in stores]
    assert [[(f[0], f[3]) for f in fs] for fs in found] == [
        [(40.0, "gpu-0-13")],
        [(100.0, "gpu-0-13")],
    ]
    merged_result = merge_ranks([{"lines": []}, {"lines": []}], [t["traceEvents"] for t in traces])
    dist = merged_result["distributed"]
    assert dist["source"] == "gpu" and dist["aligned_on_us"] == [1040.0, 5100.0]
    firsts = first_collectives(dist["aligned_on_us"], [s.origin_us for s in stores], found)
    assert firsts == [40.0, 100.0] and rank_shifts(firsts) == [60.0, 0.0]
    merged = merge_rank_timelines(
        [s.timeline() for s in stores], shifts=rank_shifts(firsts), paths=["a", "b"],
        firsts=firsts, distributed=dist, found=found,
    )  # fmt: skip
    assert [(lane["id"], lane["title"]) for lane in merged["lanes"]] == [
        ("rank0/cpu-1-1", "CPU thread 1"),
        ("rank0/gpu-0-13", "GPU 0 · stream 13 · NCCL collectives"),
        ("rank0/gpu-0-7", "GPU 0 · stream 7"),
        ("rank1/cpu-1-1", "CPU thread 1"),
        ("rank1/gpu-0-13", "GPU 0 · stream 13 · NCCL collectives"),
        ("rank1/gpu-0-7", "GPU 0 · stream 7"),
    ]
    assert merged["collectives"][0]["starts"] == [100.0, 100.0]
