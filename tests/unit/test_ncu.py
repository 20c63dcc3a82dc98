"""Nsight Compute readers on reports recorded on the H200: metrics, hints, their ranking."""

from pathlib import Path

import pytest

from kernel_lens.analysis.ncu import NcuError, read_ncu_csv, strip_markup
from kernel_lens.traces.ncu_files import read_ncu_file

DATA = Path(__file__).parent.parent / "data" / "h200"


def test_csv_details_page() -> None:
    (k,) = read_ncu_csv((DATA / "triton_fused_details.csv").read_text())
    assert k.name == "triton_poi_fused_add_mul_relu_0"
    assert k.duration_us == pytest.approx(4.16)
    assert (k.compute_throughput_pct, k.memory_throughput_pct, k.dram_throughput_pct) == (
        4.09,
        24.86,
        21.26,
    )
    assert (k.achieved_occupancy_pct, k.theoretical_occupancy_pct) == (32.16, 100.0)
    assert (k.registers, k.grid_size, k.block_size, k.waves) == (18, 1024, 128, 0.48)
    assert (k.grid, k.block) == ("(1024, 1, 1)", "(128, 1, 1)")
    assert [(h["rule"], h["speedup_pct"], h["speedup_type"]) for h in k.hints[:2]] == [
        ("AchievedOccupancy", 67.84, "local"),
        ("WorkloadImbalance", 10.35, "global"),
    ]
    # The launch-configuration hint: the grid fills only half a wave.
    sol = next(h for h in k.hints if h["rule"] == "SOLBottleneck")
    assert sol["kind"] == "OPT" and "0.5 full waves" in sol["message"]


def test_ncu_rep_through_ncu_report() -> None:
    pytest.importorskip("ncu_report")
    kernels, reader = read_ncu_file(str(DATA / "triton_fused_full.ncu-rep"))
    assert reader == "ncu_report"
    (k,) = kernels
    assert k.device == "NVIDIA H200"
    assert k.duration_us == pytest.approx(4.16)
    assert k.dram_bandwidth_gbs == pytest.approx(1008.923, abs=1e-3)
    assert k.achieved_occupancy_pct == pytest.approx(66.880, abs=1e-3)
    assert (k.registers, k.grid_size, k.block_size) == (16, 2048, 256)
    assert k.waves == pytest.approx(1.9394, abs=1e-4)
    assert len(k.hints) == 12  # 11 OPT + 1 WRN (the OK results are dropped)
    assert [h["kind"] for h in k.hints].count("WRN") == 1
    first = k.hints[0]
    assert (first["rule"], first["title"]) == ("HighPipeUtilization", "Low Utilization")
    assert first["speedup_pct"] == pytest.approx(95.718, abs=1e-3)
    tail = next(h for h in k.hints if h["title"] == "Tail Effect")
    assert tail["rule"] == "LaunchConfiguration" and tail["speedup_pct"] == pytest.approx(50.0)
    assert all("@section:" not in h["message"] for h in k.hints)


def test_errors_and_markup() -> None:
    with pytest.raises(NcuError, match="no such file"):
        read_ncu_file("/nonexistent.ncu-rep")
    with pytest.raises(NcuError, match="no CSV table"):
        read_ncu_csv("==PROF== nothing here\n")
    assert strip_markup("Look at @section:SchedulerStats:Scheduler Statistics@ now") == (
        "Look at Scheduler Statistics now"
    )


def test_recorded_ncu_run_keeps_the_launching_line_from_nvtx() -> None:
    pytest.importorskip("ncu_report")
    from kernel_lens.agent.stages.ncu import kernel_lines_from_report

    path = str(DATA / "triton_square_small.ncu-rep")
    assert kernel_lines_from_report(path) == [42]
    (k,), _ = read_ncu_file(path)
    assert (k.name, k.grid_size, k.block_size) == ("square_kernel", 32, 128)
    small = next(h for h in k.hints if h["rule"] == "LaunchConfiguration")
    assert small["title"] == "Small Grid" and small["speedup_pct"] == pytest.approx(
        75.758, abs=1e-3
    )
    assert "only 32 blocks" in small["message"]
