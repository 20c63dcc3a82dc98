"""The distributed analysis on recorded traces: two real CPU ranks (gloo, a deliberate
straggler; tests/data/distributed/README.md); the per-rank numbers checked against
HolisticTraceAnalysis (HTA), the test-only dependency, on the same traces (the GPU check, NCCL
kernels on two H200s, is tests/gpu/test_gpu_distributed.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.distributed import (
    comm_name,
    is_comm_kernel,
    merge_ranks,
    rank_collectives,
    rank_metrics,
    rank_skew,
)
from kernel_lens.analysis.distributed_text import comm_text, line_ranks_text, ranks_hover
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "distributed"
AR_LINE = 24  # kernels/allreduce_step.py: dist.all_reduce(y)


def _trace(rank: int) -> dict[str, Any]:
    return json.loads((DATA / f"allreduce_step-straggler-rank{rank}.json").read_text())


def _events(rank: int) -> list[dict[str, Any]]:
    return _trace(rank)["traceEvents"]


def test_names_match_every_spelling() -> None:
    assert is_comm_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)")
    assert is_comm_kernel("NCCLKERNEL_x") and not is_comm_kernel("vectorized_elementwise")
    assert comm_name("c10d::allreduce_") == "all_reduce" == comm_name("gloo:all_reduce")
    assert comm_name("ncclDevKernel_ReduceScatter_Sum") == "reduce_scatter"
    assert comm_name("c10d::_reduce_scatter_base_") == "reduce_scatter"


def test_gloo_collectives_land_on_the_line_that_called_all_reduce() -> None:
    for rank in (0, 1):
        got = rank_collectives(_events(rank))
        assert got["source"] == "cpu"
        assert [c["name"] for c in got["collectives"]] == ["all_reduce", "all_reduce"]
        assert {c["line"] for c in got["collectives"]} == {AR_LINE}
        assert all(c["op"] == "c10d::allreduce_" for c in got["collectives"])


def test_the_straggler_is_the_rank_that_waits_least_with_its_skew() -> None:
    skew = rank_skew([rank_collectives(_events(r))["collectives"] for r in (0, 1)])
    assert skew["straggler"] == 1
    assert skew["wait_us"][1] == 0.0 and skew["wait_us"][0] > 30_000
    # rank 1 slept 20 ms before each all_reduce: it is last at each, by about that much
    assert [c["last_rank"] for c in skew["collectives"]] == [1, 1]
    assert all(15_000 < c["skew_us"] < 40_000 for c in skew["collectives"])


def test_merged_result_has_each_rank_the_slowest_and_the_spread() -> None:
    lines = [
        {"line": 21, "source": "y = x @ w", "ops": [{"cpu_us": 50.0}]},
        {"line": AR_LINE, "source": "dist.all_reduce(y)", "ops": [{"cpu_us": 9.0}]},
    ]
    base = {"function": "step", "device": "CPU", "device_kind": "cpu",
            "timing": {"median_ms": 1}, "lines": lines}  # fmt: skip
    other = json.loads(json.dumps(base))
    other["lines"][0]["ops"][0]["cpu_us"] = 80.0
    other["timing"]["median_ms"] = 2
    merged = merge_ranks([base, other], [_events(0), _events(1)], calls=2)
    first = merged["lines"][0]["ranks"]
    assert first["us"] == [50.0, 80.0] and first["slowest_rank"] == 1
    assert first["spread_pct"] == pytest.approx(37.5)
    comm = merged["lines"][1]["comm"][0]
    assert comm["name"] == "all_reduce" and comm["slowest_rank"] == 0  # rank 0 waited in it
    assert comm["calls"] == 1.0 and comm["us"] > 10_000
    assert merged["distributed"]["straggler"] == 1 and merged["distributed"]["slowest_rank"] == 1
    assert len(merged["ranks"]) == 2
    assert comm_text(comm).startswith("all_reduce ") and "overlapped 0% with compute" in comm_text(
        comm
    )
    assert line_ranks_text(merged["lines"][0]) == "rank 0 · slowest rank 1 (+60%)"
    assert "skew" in (line_ranks_text(merged["lines"][1]) or "")
    hover = ranks_hover(merged, AR_LINE) or ""
    assert "| 0 (slowest) |" in hover and "| 1 |" in hover


def _kernel(name: str, ts: float, dur: float, n: int) -> dict[str, Any]:
    args = {"stream": 7, "device": 0, "correlation": n}
    return {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": 7,
            "args": args}  # fmt: skip


def _as_kernels(trace: dict[str, Any]) -> dict[str, Any]:
    """The CPU trace's intervals handed to HTA as what it reads, GPU kernels on one stream:
    each gloo collective as an ``nccl`` kernel, each computation interval as a kernel."""
    got = rank_collectives(trace["traceEvents"])
    events: list[dict[str, Any]] = []
    for c in got["collectives"]:
        events.append(_kernel("ncclDevKernel_AllReduce (gloo)", c["ts"], c["dur"], len(events)))
    for ts, end in got["compute"]:
        events.append(_kernel("cpu_compute", ts, end - ts, len(events)))
    return {"distributedInfo": trace["distributedInfo"], "traceEvents": events,
            "displayTimeUnit": "ms", "baseTimeNanoseconds": 0}  # fmt: skip


def _hta(trace_dir: Path) -> tuple[Any, Any]:
    hta = pytest.importorskip("hta.trace_analysis")
    analysis = hta.TraceAnalysis(trace_dir=str(trace_dir))
    return (
        analysis.get_comm_comp_overlap(visualize=False).set_index("rank"),
        analysis.get_temporal_breakdown(visualize=False).set_index("rank"),
    )


def test_overlap_and_idle_agree_with_hta_on_the_two_rank_traces(tmp_path: Path) -> None:
    """HTA reads GPU kernels only: the CPU ranks' communication and computation intervals
    (ours) are given to it as kernels, and its overlap and idle definitions must give ours."""
    for rank in (0, 1):
        (tmp_path / f"rank{rank}.json").write_text(json.dumps(_as_kernels(_trace(rank))))
    overlap, temporal = _hta(tmp_path)
    for rank in (0, 1):
        ours = rank_metrics(rank_collectives(_events(rank)))
        theirs_overlap = float(overlap.loc[rank, "comp_comm_overlap_pctg"])
        assert ours["overlap_pct"] == pytest.approx(theirs_overlap, abs=5.0)
        theirs_idle = float(temporal.loc[rank, "idle_time_pctg"])
        assert ours["idle_pct"] == pytest.approx(theirs_idle, abs=5.0)
        assert ours["idle_us"] == pytest.approx(
            float(temporal.loc[rank, "idle_time(us)"]), rel=0.05
        )


def test_a_file_that_calls_init_process_group_is_distributed() -> None:
    from kernel_lens.analysis.lens_targets import uses_process_group

    assert uses_process_group("import torch.distributed as dist\ndist.init_process_group('gloo')\n")
    assert uses_process_group("from torch.distributed import init_process_group\n"
                              "def main():\n    init_process_group(backend='nccl')\n")  # fmt: skip
    assert not uses_process_group("import torch\n# init_process_group in a comment\n")
    assert not uses_process_group("def broken(:\n")


def test_every_rank_makes_the_same_calls() -> None:
    """A rank's request: a fixed count (two warm-up calls, then reps), only the stages whose
    call counts do not depend on the rank's own times."""
    from kernel_lens.agent.rank import DEFAULT_RANK_REPS, rank_request

    stages = ["timing", "ops", "trace", "sweep"]
    params = {"path": "/x.py", "function": "step", "nproc_per_node": 2, "reps": 0,
              "warmup_ms": 25.0, "stages": stages}  # fmt: skip
    req = rank_request(params)
    assert req.nproc_per_node == 0 and req.warmup_ms == 0.0 and req.reps == DEFAULT_RANK_REPS
    assert req.stages == ("timing", "ops", "trace")
    assert rank_request({"path": "/x.py", "reps": 7}).reps == 7
