"""Inside the kernel (issue 35): Nsight Compute's source counters folded onto the kernel's lines,
from recorded reports read on this CPU machine with NVIDIA's ``ncu_report``.

``tests/data/h200/triton_fused_full.ncu-rep`` is a ``--set full`` run (which includes the
SourceCounters section) of Inductor's ``triton_poi_fused_add_mul_relu_0`` on the H200 (see
tests/data/h200/README.md): 21 SASS instructions and a trailing ``BRA`` (never executed, 13
samples: the stores draining), 341 samples, the kernel's file and Inductor's
``triton_helpers.py`` embedded (``--import-source yes``). Its ``triton_helpers.maximum`` is
inlined: the line table credits its instructions to ``triton_helpers.py`` lines 116 and 119,
and they fold onto the kernel's line 26 (``tmp2 = triton_helpers.maximum(tmp1, tmp0)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.kernel_lines import (
    KernelPcs,
    PcRecord,
    blamed_samples,
    fold_lines,
    kernel_lines_json,
    kernel_pcs_from_report,
    kernel_span,
    lens_text,
    line_map,
    remedy,
)
from tests.conftest import ROOT

REPORT = ROOT / "tests" / "data" / "h200" / "triton_fused_full.ncu-rep"
KERNEL = "triton_poi_fused_add_mul_relu_0"
INSIDE = ROOT / "tests" / "data" / "inside"


@pytest.fixture(scope="module")
def kernel() -> KernelPcs:
    ncu_report = pytest.importorskip("ncu_report")
    (k,) = kernel_pcs_from_report(ncu_report.load_report(str(REPORT)))
    return k


def by_offset(kernel: KernelPcs, offset: int) -> PcRecord:
    return next(p for p in kernel.pcs if p.offset == offset)


def _doc(kernel: KernelPcs) -> str:
    """The kernel's file as the report embedded it (the device's path is not ours)."""
    (text,) = [t for path, t in kernel.files.items() if "triton_helpers" not in path]
    return text


def test_the_report_is_read_per_pc_from_the_function_start(kernel: KernelPcs) -> None:
    assert kernel.name == KERNEL and kernel.launches == 1
    offsets = [p.offset for p in kernel.pcs]
    # 21 instructions of 16 bytes from 0, and the BRA after EXIT, sampled though not executed
    assert offsets == list(range(0, 22 * 16, 16))
    assert kernel.samples == 341 and kernel.executed == 21 * 16384
    assert by_offset(kernel, 0x150).stalls == {"drain": 12.0, "branch_resolving": 1.0}
    assert kernel.interval_cycles == 2048
    by = {p.offset: p for p in kernel.pcs}
    assert by[0xA0].sass.startswith("LDG.E.64")
    assert by[0xD0].stalls["long_scoreboard"] == 239
    assert by[0xD0].file is not None and by[0xD0].file.endswith("triton_helpers.py")
    # the loads' and the store's memory metrics: the costs the blame weighs
    assert by[0xA0].costs["memory_l2_theoretical_sectors_global"] == 131072


def test_shares_sum_to_100_and_the_helper_folds_to_its_call(
    kernel: KernelPcs, tmp_path: Path
) -> None:
    doc = _doc(kernel)
    path = tmp_path / "ours" / "kernel.py"  # another checkout: mapped by text, not by path
    lines = fold_lines(kernel, doc, doc_path=str(path), span=kernel_span(doc, KERNEL))
    row = kernel_lines_json(lines)
    assert row["unplaced_samples"] == 0 and row["unplaced_executed"] == 0
    assert sum(r["samples"] for r in row["lines"]) == kernel.samples  # every sample on a line
    assert sum(r["share_pct"] for r in row["lines"]) == pytest.approx(100.0, abs=0.01)
    assert sum(r["inst_share_pct"] for r in row["lines"]) == pytest.approx(100.0, abs=0.01)
    hottest = row["lines"][0]
    call = doc.splitlines().index("    tmp2 = triton_helpers.maximum(tmp1, tmp0)") + 1
    assert hottest["line"] == call == 26
    assert hottest["helpers"] == ["maximum"] and not hottest["by_address"]
    assert hottest["stall"] == "long_scoreboard"
    assert round(hottest["share_pct"]) == 71  # 241 of 341 samples
    assert [s["offset"] for s in hottest["sass"]] == [0xD0, 0xE0, 0xF0, 0x100]
    assert hottest["text"] == (
        "71% of samples · long scoreboard (waiting on memory) · 19% of instructions · via maximum"
    )
    # the load's own line: the LDG and its address arithmetic
    load = next(r for r in row["lines"] if r["line"] == 24)
    assert any(s["text"].startswith("LDG") for s in load["sass"])
    assert row["sampling"] == "341 samples · 1 every 2,048 cycles per SM sub-partition · 1 launch"


def test_the_hover_lists_the_lines_sass_with_samples(kernel: KernelPcs) -> None:
    doc = _doc(kernel)
    row = kernel_lines_json(fold_lines(kernel, doc, span=kernel_span(doc, KERNEL)))
    hover = row["lines"][0]["hover"]
    assert "| 0x00d0 | `FSETP.GEU.AND P0, PT, R2, RZ, PT` | 239 | long scoreboard |" in hover
    assert "Folded here from `maximum`." in hover


def test_the_hottest_lines_remedy_carries_ncus_own_rule(kernel: KernelPcs) -> None:
    doc = _doc(kernel)
    fix = remedy(fold_lines(kernel, doc, span=kernel_span(doc, KERNEL)))
    assert fix is not None and fix["reason"] == "long_scoreboard"
    assert "coalesced" in fix["text"] and "num_stages" in fix["text"]
    assert fix["rule"] == "CPIStall" and "@" not in fix["rule_message"]
    assert fix["rule_url"].startswith("https://docs.nvidia.com/nsight-compute/")


def test_a_helper_with_no_call_in_the_kernel_goes_by_address(kernel: KernelPcs) -> None:
    doc = _doc(kernel).replace("triton_helpers.maximum(", "triton_helpers.maximum_of(")
    lines = fold_lines(kernel, doc, span=kernel_span(doc, KERNEL))
    row = kernel_lines_json(lines)
    moved = [r for r in row["lines"] if r["by_address"]]
    # the nearest instruction of the kernel's own file before them (0xc0, the store's
    # address IMAD): line 31 — which the hover says is a placement by address
    assert [r["line"] for r in moved] == [31] and moved[0]["helpers"] == ["maximum"]
    assert "placed by address" in moved[0]["hover"]
    assert sum(r["share_pct"] for r in row["lines"]) == pytest.approx(100.0, abs=0.01)


def test_an_edited_buffer_still_maps_by_text(kernel: KernelPcs) -> None:
    doc = "# a comment above\n# another\n" + _doc(kernel)
    row = kernel_lines_json(fold_lines(kernel, doc, span=kernel_span(doc, KERNEL)))
    assert row["lines"][0]["line"] == 28


def test_lines_outside_the_document_are_a_named_remainder(kernel: KernelPcs) -> None:
    doc = "import triton\n\n\ndef unrelated():\n    return 1\n"
    row = kernel_lines_json(fold_lines(kernel, doc))
    assert row["lines"] == [] and row["unplaced_samples"] == 341
    assert any("no line of this file" in n for n in row["notes"])


def test_the_blame_plugs_in_as_a_second_figure(kernel: KernelPcs) -> None:
    doc = _doc(kernel)
    assert blamed_samples(kernel, None) is None  # no SASS: the raw figure only
    # A blame that moves the FSETP's long-scoreboard samples onto the LDG it waits for.
    blamed: dict[int, dict[str, float]] = {p.offset: dict(p.stalls) for p in kernel.pcs if p.stalls}
    moved = blamed[0xD0].pop("long_scoreboard")
    blamed[0xA0] = {"long_scoreboard": moved}
    lines = fold_lines(kernel, doc, span=kernel_span(doc, KERNEL), blamed=blamed)
    row = kernel_lines_json(lines)
    assert row["blamed"] is True
    assert sum(r["blamed_pct"] for r in row["lines"]) == pytest.approx(100.0, abs=0.01)
    by_line = {r["line"]: r for r in row["lines"]}
    assert by_line[24]["blamed_pct"] > 70 and by_line[26]["blamed_pct"] < 5
    assert "causes 7" in lens_text(lines, lines.lines[24])


def _cuda_cu(py: str) -> str:
    """``cuda.cu`` as torch's ``load_inline`` writes it: its includes, then the string."""
    start = py.index('CUDA_SRC = r"""') + len('CUDA_SRC = r"""')
    source = py[start : py.index('"""', start)]
    return "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n" + source


def test_load_inline_cuda_lines_map_back_to_the_python_string() -> None:
    py = (INSIDE / "cuda_strided.py").read_text()
    cu = _cuda_cu(py)
    mapping = line_map(cu, py)
    cu_lines = cu.splitlines()
    strided = cu_lines.index("    float b = y[(long)i * 32];") + 1
    assert py.splitlines()[mapping[strided] - 1].strip() == "float b = y[(long)i * 32];"
    assert mapping[strided] == 18
    assert kernel_span(py, "strided_sum") == (14, 20)
    assert kernel_span(py, "chase") == (32, 40)


def test_load_inline_pcs_fold_onto_the_python_file() -> None:
    """A CUDA kernel's PCs, credited to the device's ``cuda.cu`` lines, on the Python lines."""
    py = (INSIDE / "cuda_strided.py").read_text()
    cu = _cuda_cu(py)
    cu_lines = cu.splitlines()

    def at(text: str) -> int:
        return next(i + 1 for i, t in enumerate(cu_lines) if t.strip() == text)

    device_file = "/root/.cache/torch_extensions/py312_cu128/kl_inside_strided/cuda.cu"
    pcs = [
        PcRecord(0x00, "S2R R0, SR_CTAID.X", device_file, at("int i = blockIdx.x * blockDim.x + threadIdx.x;"), 100, 2, {"imc_miss": 2.0}),  # noqa: E501
        PcRecord(0x10, "LDG.E R2, desc[UR4][R2.64]", device_file, at("float a = x[i];"), 100, 10, {"long_scoreboard": 10.0}),  # noqa: E501
        PcRecord(0x20, "LDG.E R4, desc[UR4][R4.64]", device_file, at("float b = y[(long)i * 32];"), 100, 1, {"lg_throttle": 1.0}),  # noqa: E501
        PcRecord(0x30, "FADD R7, R2, R4", device_file, at("out[i] = a + b;"), 100, 87, {"long_scoreboard": 85.0, "selected": 2.0}),  # noqa: E501
    ]  # fmt: skip
    k = KernelPcs(
        name="_Z11strided_sumPKfS0_Pfi",
        demangled="strided_sum(const float *, const float *, float *, int)",
        pcs=pcs,
        files={device_file: cu},
    )
    lines = fold_lines(
        k, py, doc_path="/work/x/cuda_strided.py", span=kernel_span(py, "strided_sum")
    )
    row: dict[str, Any] = kernel_lines_json(lines)
    assert row["files"] == {device_file: "load_inline"}
    assert [(r["line"], round(r["share_pct"])) for r in row["lines"]] == [
        (19, 87),
        (17, 10),
        (15, 2),
        (18, 1),
    ]
    assert row["notes"] == ["only 100 samples: the shares are rough (a longer run or more "
                            "launches give more)"]  # fmt: skip


def test_a_triton_helper_of_another_file_folds_to_the_kernel_line_that_calls_it() -> None:
    """``tl_vector_add.py``'s ``tile_offsets`` (in ``tl_helpers.py``) on line 12."""
    doc = (INSIDE / "tl_vector_add.py").read_text()
    helpers = (INSIDE / "tl_helpers.py").read_text()
    device = "/device/checkout/tests/data/inside/"
    pcs = [
        PcRecord(0x00, "S2R R0, SR_TID.X", device + "tl_helpers.py", 15, 10, 3, {"wait": 3.0}),
        PcRecord(0x10, "LDG.E.128 R4", device + "tl_vector_add.py", 14, 10, 40, {"long_scoreboard": 40.0}),  # noqa: E501
        PcRecord(0x20, "FADD R8, R4, R12", device + "tl_vector_add.py", 16, 10, 57, {"long_scoreboard": 57.0}),  # noqa: E501
    ]  # fmt: skip
    k = KernelPcs(
        name="add_kernel",
        demangled="add_kernel",
        pcs=pcs,
        files={device + "tl_helpers.py": helpers, device + "tl_vector_add.py": doc},
    )
    row = kernel_lines_json(fold_lines(k, doc, span=kernel_span(doc, "add_kernel")))
    by = {r["line"]: r for r in row["lines"]}
    assert set(by) == {12, 14, 16}
    assert by[12]["helpers"] == ["tile_offsets"] and by[12]["share_pct"] == 3.0
    assert "via tile_offsets" in by[12]["text"]


def test_the_ncu_command_profiles_only_the_kernels_launches() -> None:
    from kernel_lens.agent.stages.kernel_lines import ncu_command

    cmd = ncu_command("ncu", "/r.ncu-rep", ["python", "-m", "child"], kernel="add_kernel",
                      launches=3)  # fmt: skip
    assert cmd[:9] == [
        "ncu", "--section", "SourceCounters", "--section", "SpeedOfLight",
        "--import-source", "yes", "--clock-control", "none",
    ]  # fmt: skip
    assert cmd[cmd.index("-k") + 1] == "regex:^add_kernel" and cmd[cmd.index("-c") + 1] == "3"
    assert "--profile-from-start" in cmd and cmd[-3:] == ["python", "-m", "child"]


def test_a_second_run_says_each_lines_share_before() -> None:
    from kernel_lens.lsp.kernel_lines import with_before

    now = {"kernels": [{"kernel": "k", "duration_us": 2.0, "lines": [
        {"line": 3, "share_pct": 60.0, "text": "60% of samples"},
        {"line": 5, "share_pct": 40.0, "text": "40% of samples"},
    ]}]}  # fmt: skip
    before = {"kernels": [{"kernel": "k", "duration_us": 3.0, "lines": [
        {"line": 3, "share_pct": 20.0},
    ]}]}  # fmt: skip
    rows = with_before(now, before)["kernels"][0]
    assert rows["before_duration_us"] == 3.0
    assert [(r["before_pct"], r["text"]) for r in rows["lines"]] == [
        (20.0, "60% of samples · was 20%"),
        (None, "40% of samples · was -"),
    ]


def test_the_cursor_in_a_load_inline_string_names_its_cuda_kernel() -> None:
    from kernel_lens.lsp.kernel_lines import _kernel_name
    from kernel_lens.wire.lsp import KernelLinesParams, Position

    text = (INSIDE / "cuda_strided.py").read_text()

    def at(line0: int) -> str | None:
        return _kernel_name(text, KernelLinesParams(uri="u", position=Position(line0, 4)))

    assert (at(17), at(35), at(2)) == ("strided_sum", "chase", None)
