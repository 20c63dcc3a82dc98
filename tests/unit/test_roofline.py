"""Each kernel against the limit: the peaks table and the roofline arithmetic, checked against
hand-computed values from runs recorded on the H200 (tests/data/h200)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel_lens.analysis.lens_text import roofline_hover_lines, summary_lens_title
from kernel_lens.analysis.roofline import (
    KernelWork,
    achieved,
    flops_from_ncu,
    kernel_rooflines,
    lookup_peaks,
    ncu_rooflines,
    roofline_text,
    with_ncu_roofline,
    work_from_trace,
)

H200 = Path(__file__).resolve().parent.parent / "data" / "h200"


def test_peaks_are_matched_by_device_name() -> None:
    h200 = lookup_peaks("NVIDIA H200")
    assert h200 is not None and h200.name == "NVIDIA H200 SXM"
    assert (h200.bandwidth_tbs, h200.measured_bandwidth_tbs) == (4.8, 4.30)
    assert h200.bandwidth_peak_tbs == 4.30  # the measured copy, not the datasheet
    assert h200.flop_peak("bfloat16") == (989.5, "BF16 tensor")
    assert h200.flop_peak("bf16 tensor") == (989.5, "BF16 tensor")
    assert h200.flop_peak(None) == (67.0, "FP32")
    assert h200.flop_peak("float8_e4m3fn") == (1979.0, "FP8 tensor")
    assert h200.flop_peak("fp64") == (34.0, "FP64")
    assert h200.flop_peak("fp64 tensor") == (67.0, "FP64 tensor")
    assert lookup_peaks("NVIDIA H100 80GB HBM3").name == "NVIDIA H100 SXM"  # type: ignore[union-attr]
    assert lookup_peaks("NVIDIA A100-SXM4-80GB").bandwidth_tbs == 2.039  # type: ignore[union-attr]
    # the PCIe and NVL boards (the names nvidia-smi gives) have lower peaks than the SXM's
    h100_pcie = lookup_peaks("NVIDIA H100 PCIe")
    assert h100_pcie is not None and (h100_pcie.bandwidth_tbs, h100_pcie.bf16) == (2.0, 756.0)
    h100_nvl = lookup_peaks("NVIDIA H100 NVL")
    assert h100_nvl is not None and (h100_nvl.bandwidth_tbs, h100_nvl.fp32) == (3.9, 60.0)
    h200_nvl = lookup_peaks("NVIDIA H200 NVL")
    assert h200_nvl is not None and h200_nvl.flop_peak("bf16") == (835.5, "BF16 tensor")
    # a Grace Hopper superchip is not an H200 SXM because its name holds "h200"
    assert lookup_peaks("NVIDIA GH200 480GB") is None
    assert lookup_peaks("NVIDIA A100 80GB PCIe").bandwidth_tbs == 1.935  # type: ignore[union-attr]
    a100_40 = lookup_peaks("NVIDIA A100-SXM4-40GB")
    assert a100_40 is not None and a100_40.fp8 is None
    # No FP8 tensor cores on an A100: no peak, rather than FP32's taken for it.
    assert a100_40.flop_peak("fp8 tensor") == (None, "FP8 tensor")
    assert lookup_peaks("CPU") is None and lookup_peaks("NVIDIA GeForce RTX 4090") is None
    assert lookup_peaks(None) is None


def test_the_triton_square_kernel_recorded_on_the_h200() -> None:
    # kernel-lens profile kernels/triton_square.py::square on the H200: square_kernel 187.017 µs
    # per call on a 10000 x 10000 fp32 tensor: 4e8 bytes read + 4e8 bytes written.
    result = json.loads((H200 / "triton_square_profile.json").read_text())
    (kernel,) = result["kernels"]
    assert kernel["device_us"] == 187.017
    (roof,) = kernel_rooflines(result["kernels"], result["device"], function_bytes=8e8)
    # by hand: 8e8 B / 187.017e-6 s = 4.27769 TB/s; / 4.30 TB/s = 99.48 %
    assert roof["tb_per_s"] == pytest.approx(4.27769, abs=1e-5)
    assert roof["bandwidth_pct"] == pytest.approx(99.481, abs=1e-3)
    assert roof["tflop_per_s"] is None and roof["flop_pct"] is None
    assert roof["bound"] == "memory" and roof["source"] == "tensors"
    assert roof["text"] == "square_kernel 0.187 ms · 4.28 TB/s · 99% of peak bandwidth"
    assert "measured copy bandwidth 4.3 TB/s" in roof["peak_note"]
    # The example: the same bytes in the function's 0.192 ms median.
    assert roofline_text("square_kernel", 0.192, achieved(192.0, KernelWork(8e8, None, "x"),
                         lookup_peaks("NVIDIA H200"))) == (
        "square_kernel 0.192 ms · 4.17 TB/s · 97% of peak bandwidth"
    )  # fmt: skip
    # The lens and the hover read it.
    result["roofline"] = [roof]
    assert "· 4.28 TB/s · 99% of peak bandwidth ·" in summary_lens_title(result)
    line = next(x for x in result["lines"] if x["line"] == 35)
    hover = roofline_hover_lines(result, line)
    assert hover[2] == (
        "- square_kernel 0.187 ms · 4.28 TB/s · 99% of peak bandwidth · bytes from the tensors' "
        "sizes"
    )


def test_nothing_is_invented_without_bytes_or_flops() -> None:
    # matmul_relu_trace.json (H200): three kernels, no Inductor metadata in their args.
    trace = json.loads((H200 / "matmul_relu_trace.json").read_text())
    assert work_from_trace(trace["traceEvents"]) == {}
    kernels = [
        {"name": "gemm", "kind": "kernel", "device_us": 56.513, "calls": 1},
        {"name": "clamp", "kind": "kernel", "device_us": 2.272, "calls": 1},
    ]
    # several kernels: the function's tensor sizes are not split among them
    assert kernel_rooflines(kernels, "NVIDIA H200", function_bytes=12e6) == []
    assert achieved(10.0, KernelWork(None, None, "x"), lookup_peaks("NVIDIA H200")) is None
    assert achieved(0.0, KernelWork(1e6, None, "x"), None) is None
    # a GPU not in the table: TB/s, but no fraction of a peak
    roof = achieved(1.0, KernelWork(1e6, None, "tensors"), lookup_peaks("Some GPU"))
    assert roof is not None and roof["tb_per_s"] == pytest.approx(1.0)
    assert roof["bandwidth_pct"] is None
    assert roofline_text("k", 0.001, roof) == "k 0.001 ms · 1 TB/s"


def test_inductor_launch_metadata_gives_bytes_and_flops_per_kernel() -> None:
    # The matmul_relu trace's cuBLAS kernel, with Inductor's args as a compiled run adds them.
    trace = json.loads((H200 / "matmul_relu_trace.json").read_text())
    gemm = next(e for e in trace["traceEvents"] if e.get("cat") == "kernel")
    gemm["args"].update({"kernel_num_gb": 0.012582912, "kernel_flop": 2 * 1024**3})
    work = work_from_trace(trace["traceEvents"])
    assert work == {gemm["name"]: KernelWork(12582912.0, 2147483648.0, "inductor")}
    kernels = [{"name": gemm["name"], "kind": "kernel", "device_us": gemm["dur"], "calls": 1}]
    (roof,) = kernel_rooflines(kernels, "NVIDIA H200", inductor=work)
    # by hand: 2^31 FLOP / 56.513 µs = 38.0 TFLOP/s = 56.7 % of 67 (FP32);
    # 12582912 B / 56.513 µs = 0.2227 TB/s = 5.18 % of 4.30; 170.7 FLOP/B > ridge 15.6: compute
    assert roof["tflop_per_s"] == pytest.approx(38.0, abs=0.01)
    assert roof["flop_pct"] == pytest.approx(56.72, abs=0.01)
    assert roof["tb_per_s"] == pytest.approx(0.22266, abs=1e-4)
    assert roof["bandwidth_pct"] == pytest.approx(5.178, abs=1e-3)
    assert roof["intensity"] == pytest.approx(170.67, abs=0.01)
    assert roof["bound"] == "compute"
    assert roof["text"].endswith("· 0.223 TB/s · 5% of peak bandwidth · 38 TFLOP/s · "
                                 "57% of peak compute")  # fmt: skip


def test_flops_from_nsight_compute_counters() -> None:
    metrics = {
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 1000,
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": 10,
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": 5,
    }
    assert flops_from_ncu(metrics) == 2015.0
    assert flops_from_ncu({"dram__bytes.sum": 1}) is None


def test_ncu_metric_names_are_ncu_counters() -> None:
    """Every metric the ncu stage adds to its set is a counter Nsight Compute knows: the
    recorded H200 ``full`` report holds it (or, for the FLOP counters, which that set collects
    only as rates, the same counter's ``.peak_sustained`` / ``smsp__… .per_cycle_elapsed``)."""
    ncu_report = pytest.importorskip("ncu_report")
    from kernel_lens.analysis.ncu import FLOP_OPS, ROOFLINE_METRICS

    ctx = ncu_report.load_report(str(H200 / "triton_fused_full.ncu-rep"))
    names = set(ctx.range_by_idx(0).action_by_idx(0).metric_names())
    assert {"dram__bytes_read.sum", "dram__bytes_write.sum"} <= names
    flop_metrics = [m for m in ROOFLINE_METRICS if m.startswith("sm__sass")]
    assert len(flop_metrics) == len(FLOP_OPS) == 9
    for metric in flop_metrics:
        smsp_rate = "smsp" + metric[2:] + ".per_cycle_elapsed"
        assert metric + ".peak_sustained" in names or smsp_rate in names, metric


def test_ncu_bytes_and_flops_of_the_recorded_fused_kernel() -> None:
    """``relu(x * y + z)`` on 2^20 float32 elements, Nsight Compute ``full`` set on the H200:
    2^20 FFMA thread instructions (FLOPs 2^21, read back from the rates × elapsed cycles),
    4 197 120 DRAM bytes read, none written (the result stays in L2), 4.16 µs."""
    ncu_report = pytest.importorskip("ncu_report")
    from kernel_lens.analysis.ncu import kernels_from_report
    from kernel_lens.analysis.roofline import ncu_rooflines

    ctx = ncu_report.load_report(str(H200 / "triton_fused_full.ncu-rep"))
    (kernel,) = kernels_from_report(ncu_report, ctx)
    assert kernel.dram_bytes_read == 4197120.0 and kernel.dram_bytes_write == 0.0
    assert kernel.flops == 2.0**21
    (roof,) = ncu_rooflines([kernel.to_json()])
    assert roof["source"] == "ncu" and roof["calls"] == 1.0
    assert roof["bytes"] == 4197120.0 and roof["flops"] == 2.0**21
    # by hand: 4 197 120 B / 4.16 µs = 1.00892 TB/s, 23.46% of the 4.30 TB/s measured copy;
    # 2 097 152 FLOP / 4.16 µs = 0.504123 TFLOP/s; intensity 2 097 152 / 4 197 120 = 0.49966
    assert roof["tb_per_s"] == pytest.approx(1.008923, rel=1e-5)
    assert roof["bandwidth_pct"] == pytest.approx(23.4633, rel=1e-4)
    assert roof["tflop_per_s"] == pytest.approx(0.504123, rel=1e-5)
    assert roof["intensity"] == pytest.approx(0.499665, rel=1e-5)
    assert roof["bound"] == "memory" and roof["peak_tbs"] == 4.30
    assert roof["text"].startswith("triton_poi_fused_add_mul_relu_0 0.00416 ms · 1.01 TB/s · 23%")


def test_ncu_counters_absent_nothing_is_invented() -> None:
    """The recorded ``basic``-set report of the Triton square kernel predates the added
    metrics: no bytes, no FLOPs, no roofline entry."""
    ncu_report = pytest.importorskip("ncu_report")
    from kernel_lens.analysis.ncu import kernels_from_report
    from kernel_lens.analysis.roofline import ncu_rooflines, work_from_ncu

    ctx = ncu_report.load_report(str(H200 / "triton_square_small.ncu-rep"))
    (kernel,) = kernels_from_report(ncu_report, ctx)
    assert (kernel.dram_bytes_read, kernel.flops) == (None, None)
    assert work_from_ncu(kernel.to_json()) is None
    assert ncu_rooflines([kernel.to_json()]) == []


def test_ncu_launches_of_one_kernel_are_averaged_per_launch() -> None:
    rows = [
        {"name": "k", "demangled": "void k<4>(float*)", "device": "NVIDIA H200",
         "duration_us": d, "dram_bytes_read": r, "dram_bytes_write": 1e6, "flops": None}
        for d, r in ((2.0, 3e6), (4.0, 5e6))
    ]  # fmt: skip
    (roof,) = ncu_rooflines(rows)
    # per launch: 3 µs, (4e6 + 1e6) B -> 5e6 / 3e-6 / 1e12 = 1.6667 TB/s; no FLOPs
    assert roof["calls"] == 2.0 and roof["duration_us"] == 3.0
    assert roof["tb_per_s"] == pytest.approx(5e6 / 3e-6 / 1e12)
    assert roof["tflop_per_s"] is None and roof["intensity"] is None
    assert roof["name"] == "void k<4>(float*)" and roof["short_name"] == "k"


def test_ncu_roofline_replaces_the_profile_entry_of_the_same_kernel() -> None:
    profile = {
        "kernels": [
            {"name": "void k<4>(float *)", "short_name": "k<4>", "device_us": 10.0, "calls": 1},
            {"name": "other_kernel", "short_name": "other_kernel", "device_us": 5.0, "calls": 1},
        ],
        "roofline": [
            {"name": "void k<4>(float *)", "short_name": "k<4>", "source": "inductor"},
            {"name": "other_kernel", "short_name": "other_kernel", "source": "inductor"},
        ],
    }
    ncu = {
        "roofline": ncu_rooflines(
            [{"name": "k", "demangled": "void k<4>(float*)", "device": "NVIDIA H200",
              "duration_us": 2.0, "dram_bytes_read": 8.6e6, "dram_bytes_write": 0.0}]
        )
    }  # fmt: skip
    merged = with_ncu_roofline(profile, ncu)
    assert merged is not None and merged is not profile
    by_name = {r["name"]: r for r in merged["roofline"]}
    # matched by full name (whitespace aside), kept under the profile's name and short name
    assert by_name["void k<4>(float *)"]["source"] == "ncu"
    assert by_name["void k<4>(float *)"]["text"] == (
        "k<4> 0.002 ms · 4.3 TB/s · 100% of peak bandwidth"
    )
    assert by_name["other_kernel"]["source"] == "inductor"  # ncu did not measure it
    assert profile["roofline"][0]["source"] == "inductor"  # the stored profile is untouched
    assert with_ncu_roofline(profile, None) is profile
    assert with_ncu_roofline(None, ncu) is None


def test_tensor_core_flops_and_the_roof_of_their_math() -> None:
    """Issue 34 item 3: a bf16 GEMM's FLOPs come from the tensor-path counters and are taken
    against the BF16 tensor peak, not FP32's; integer and sparsity-split paths are not FLOPs."""
    from kernel_lens.analysis.ncu import (
        kernel_math,
        tensor_flops,
        tensor_metric_names,
        tensor_path,
    )

    listed = [
        "sm__ops_path_tensor_src_bf16_dst_fp32",
        "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off",
        "sm__ops_path_tensor_src_fp16_dst_fp16",
        "sm__ops_path_tensor_src_fp8_dst_fp32",
        "sm__ops_path_tensor_src_fp64",
        "sm__ops_path_tensor_src_int8",
        "sm__ops_path_tensor_src_tf32_dst_fp32",
        "sm__inst_executed_pipe_tensor_op_hmma",
        "dram__bytes_read",
    ]
    assert tensor_metric_names(listed) == (
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
        "sm__ops_path_tensor_src_fp64.sum",
        "sm__ops_path_tensor_src_fp8_dst_fp32.sum",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    )
    assert tensor_path("sm__ops_path_tensor_src_int8.sum") is None
    # 4096³ bf16 GEMM: 2·M·N·K FLOPs on the bf16 path.
    m = n = k = 4096
    values = {
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": 2.0 * m * n * k,
        "sm__ops_path_tensor_src_fp16_dst_fp16.sum": 0,
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum.per_second": 1e15,  # a rate: not a count
    }
    total, dtype = tensor_flops(values)
    assert (total, dtype) == (2.0 * m * n * k, "bf16")
    assert tensor_flops({"dram__bytes_read.sum": 5}) == (None, None)  # not collected: unknown
    assert tensor_flops({"sm__ops_path_tensor_src_bf16_dst_fp32.sum": 0}) == (0.0, None)
    # The epilogue's few FP32 FLOPs do not decide the roof; the tensor work does.
    assert kernel_math({"f": 1e6}, total, dtype) == "bf16 tensor"
    assert kernel_math({"f": 1e6, "d": 5e6}, None, None) == "fp64"
    assert kernel_math({}, None, None) is None

    # Against the H200's BF16 tensor peak: 137.4 GFLOP in 180 µs = 763.6 TFLOP/s = 77% of 989.5.
    row = {"demangled": "nvjet_tst_128x256_64x4_bf16", "name": "nvjet_tst", "duration_us": 180.0,
           "dram_bytes_read": 3 * 2 * m * n, "dram_bytes_write": 2 * m * n,
           "flops": total + 1e6, "tensor_flops": total, "math": "bf16 tensor",
           "device": "NVIDIA H200"}  # fmt: skip
    (roof,) = ncu_rooflines([row])
    assert roof["math"] == "BF16 tensor"
    assert roof["flop_pct"] == pytest.approx(100 * (total + 1e6) / 180e-6 / 1e12 / 989.5, rel=1e-9)
    assert 76 < roof["flop_pct"] < 78 and roof["impossible"] is None
    assert roof["bound"] == "compute"
    assert "% of BF16 tensor peak" in roof["text"] and "989.5" in roof["peak_note"]
    # The same counts read as FP32 math would claim 1140% of peak: flagged, never a win.
    fp32 = ncu_rooflines([{**row, "math": None}])[0]
    assert fp32["impossible"] and "FP32 peak" in fp32["impossible"]
    assert "% of peak compute" not in fp32["text"] and "⚠ above peak" in fp32["text"]


def test_above_the_memory_peak_is_flagged_not_shown_as_a_win() -> None:
    """A copy kernel whose bytes came from L2 (no flush between calls): more TB/s than HBM."""
    h200 = lookup_peaks("NVIDIA H200")
    work = KernelWork(bytes=8e6, flops=None, source="tensors")
    roof = achieved(1.0, work, h200)  # 8 MB in 1 µs = 8 TB/s > 4.8 datasheet
    assert roof is not None and roof["bandwidth_pct"] > 100
    assert "served from L2" in roof["impossible"]
    text = roofline_text("copy", 0.001, roof)
    assert "% of peak bandwidth" not in text and "⚠ above peak" in text
    # Between the measured copy (4.30) and the datasheet (4.8): said, more softly.
    near = achieved(1.0, KernelWork(bytes=4.5e6, flops=None, source="tensors"), h200)
    assert near is not None and "measured copy bandwidth" in near["impossible"]
    fine = achieved(1.0, KernelWork(bytes=4.0e6, flops=None, source="tensors"), h200)
    assert fine is not None and fine["impossible"] is None
