"""Normalised, summarised assembly of two kernels, on recorded PTX and SASS (tests/data/asm:
triton 3.7.1 and nvcc 13.0 output for sm_90; tests/data/h200: PTX from the H200)."""

import json
import re
from pathlib import Path

import pytest

from kernel_lens.analysis.asm_diff import (
    Summary,
    block_size_in_source,
    compare,
    entry_names,
    extract_entry,
    inline_side,
    kernels_launched_by,
    matches_kernel,
    normalise,
    summarise,
    target_kind,
    triton_side,
    verdict,
)

DATA = Path(__file__).parent.parent / "data"
ASM = DATA / "asm"
KERNELS = Path(__file__).parent.parent.parent / "kernels"


def _text(name: str) -> str:
    return (ASM / name).read_text()


def _meta(name: str) -> dict:
    return json.loads((ASM / name).read_text())


def _renumber(text: str, pattern: str, shift: int) -> str:
    """Every register number matched by ``pattern`` (one group: the number) moved by ``shift``,
    as another compile of the same code might number them."""
    return re.sub(pattern, lambda m: m.group(0).replace(m.group(1), str(int(m.group(1)) + shift)),
                  text)  # fmt: skip


def test_ptx_that_differs_only_in_register_numbers_and_names_compares_equal() -> None:
    ptx = _text("triton_square_1024.ptx")
    other = _renumber(ptx, r"%r(\d+)\b", 40)
    other = _renumber(other, r"%rd(\d+)\b", 9)
    other = _renumber(other, r"%p(\d+)\b", 3)
    other = other.replace("square_kernel", "square_kernel_v2")  # entry and parameter names
    other = re.sub(r"\.loc\t1 (\d+)", lambda m: f".loc\t1 {int(m.group(1)) + 12}", other)
    other = other.replace("$L__tmp", "$L__tmp_x").replace("triton_square.py", "elsewhere.py")
    assert other != ptx
    a, b = normalise("ptx", ptx), normalise("ptx", other)
    assert a.text == b.text
    # Every instruction is kept, in order (the recorded kernel has 38).
    assert summarise("ptx", a.text).instructions == summarise("ptx", ptx).instructions == 38
    assert "%r0," in a.text and "%r40" not in b.text and "KERNEL" in a.text
    assert ".loc" not in a.text and ".debug" not in a.text and "//" not in a.text


def test_sass_that_differs_only_in_register_numbers_compares_equal() -> None:
    sass = _text("triton_square_1024.sass")
    other = _renumber(sass, r"\bR(\d+)\b", 20)
    other = _renumber(other, r"\bUR(\d+)\b", 2)
    other = other.replace("square_kernel", "renamed_kernel")
    assert normalise("sass", sass).text == normalise("sass", other).text
    assert "NOP" not in normalise("sass", sass).text
    assert "/*0" not in normalise("sass", sass).text


def test_two_block_sizes_do_not_compare_equal() -> None:
    for stage in ("ptx", "sass"):
        a = normalise(stage, _text(f"triton_square_1024.{stage}")).text
        b = normalise(stage, _text(f"triton_square_64.{stage}")).text
        assert a != b


@pytest.mark.parametrize("stage", ["ptx", "sass"])
def test_vectorised_and_scalar_loads_differ_in_the_summary(stage: str) -> None:
    wide = summarise(stage, _text(f"triton_square_1024.{stage}"), registers=18)
    narrow = summarise(stage, _text(f"triton_square_64.{stage}"), registers=10)
    # BLOCK_SIZE 1024 over 128 threads: 8 floats per thread, two 128-bit loads and stores;
    # BLOCK_SIZE 64: one 32-bit load and store per thread (half the threads idle).
    assert wide.load_widths == {128: 2} and wide.store_widths == {128: 2}
    assert narrow.load_widths == {32: 1} and narrow.store_widths == {32: 1}
    assert verdict(wide, narrow) == (
        "A loads 128 bits per thread per instruction, B 32: B issues 4× the load instructions "
        "for the same bytes"
    )
    assert verdict(narrow, wide).startswith("B loads 128 bits per thread per instruction, A 32")


def test_ptx_classes_of_the_triton_and_cuda_squares() -> None:
    triton = summarise("ptx", _text("triton_square_1024.ptx"))
    assert triton.classes["global_load"] == 2 and triton.classes["global_store"] == 2
    assert triton.classes["alu"] == 20  # shl/and/or/setp/address adds and the 8 mul.f32
    assert triton.classes["control"] == 1  # ret
    assert triton.block_size == 128 and triton.block_from == ".reqntid"
    cuda_ptx, _ = extract_entry("ptx", _text("inline_square.ptx"), "_Z13square_kernelPKfPfl")
    cuda = summarise("ptx", cuda_ptx)
    assert cuda.load_widths == {32: 1}  # ld.global.nc.f32
    assert cuda.classes["control"] == 2  # the bounds check's bra, ret
    assert cuda.instructions == 20


def test_sass_classes_and_widths() -> None:
    cuda = summarise("sass", _text("inline_square.sass"))
    assert cuda.load_widths == {32: 1} and cuda.store_widths == {32: 1}  # LDG.E.CONSTANT, STG.E
    assert cuda.fma == 0 and cuda.classes["tensor"] == 0
    # EXIT (bounds check), EXIT, and the trailing BRA to itself; NOP padding is not counted.
    assert cuda.classes["control"] == 3


def test_h200_inductor_ptx_summary() -> None:
    poi = summarise("ptx", (DATA / "h200" / "inductor_poi_kernel.ptx").read_text())
    assert poi.store_widths == {128: 2}
    assert sum(poi.load_widths.values()) >= 1


def test_load_inline_kernel_cut_out_of_its_module_by_kernel_or_host_function() -> None:
    meta = _meta("inline_square.json")
    module = {**meta, "ptx": _text("inline_square.ptx"), "sass": _text("inline_square.sass")}
    result = {"path": str(KERNELS / "inline_square.py"), "modules": [module]}
    path = str(KERNELS / "inline_square.py")
    by_kernel = inline_side(result, path, "square_kernel", "ptx")
    by_host = inline_side(result, path, "square", "ptx")  # the host function that launches it
    assert by_kernel == by_host
    assert by_kernel.kernel == "_Z13square_kernelPKfPfl"
    assert by_kernel.registers == 10 and by_kernel.spills == 0 and by_kernel.shared_bytes == 0
    assert by_kernel.block_size == 1024 and by_kernel.block_from == "the launch: threads = 1024"
    assert by_kernel.text.startswith(".visible .entry _Z13square_kernelPKfPfl(")
    # The line map moved with the cut: the CUDA line `float v = in[i];` is the ld.global.
    source = (KERNELS / "inline_square.py").read_text().splitlines()
    load = next(i for i, x in enumerate(source, 1) if "float v = in[i];" in x)
    lines = by_kernel.text.splitlines()
    mapped = next(e["asm_lines"] for e in by_kernel.line_map if e["source_line"] == load)
    assert any("ld.global.nc.f32" in lines[i - 1] for i in mapped)
    sass = inline_side(result, path, "square", "sass")
    sass_lines = sass.text.splitlines()
    mapped = next(e["asm_lines"] for e in sass.line_map if e["source_line"] == load)
    assert any("LDG.E.CONSTANT" in sass_lines[i - 1] for i in mapped)
    with pytest.raises(ValueError, match="no CUDA kernel nothing_here .* square_kernel"):
        inline_side(result, path, "nothing_here", "ptx")


def test_compare_documents_carry_the_line_maps_under_the_header() -> None:
    meta = _meta("triton_square_1024.ptx.json")
    path = str(KERNELS / "triton_square.py")
    a = triton_side({**meta, "asm": _text("triton_square_1024.ptx")}, path, "ptx")
    meta64 = _meta("triton_square_64.ptx.json")
    b = triton_side({**meta64, "asm": _text("triton_square_64.ptx")}, path, "ptx")
    assert a.title == "square_kernel · Triton · triton_square.py · BLOCK_SIZE=1024 · PTX sm_90"
    assert a.block_size == 128 and a.block_from == "4 warps"
    diff = compare(a, b, "ptx")
    assert diff["identical"] is False
    assert diff["verdict"].startswith("A loads 128 bits per thread per instruction, B 32")
    header = diff["a"]["header"]
    assert len(header) == len(diff["b"]["header"])
    assert header[0] == f"// A: {a.title}"
    assert header[1] == "// 18 registers · 0 B spilled · 0 B shared · block 128 threads (4 warps)"
    assert header[2] == (
        "// 38 instructions · global loads 2 × 128-bit · global stores 2 × 128-bit"
    )
    assert diff["b"]["header"][2].endswith("global loads 1 × 32-bit · global stores 1 × 32-bit")
    load = 26  # x = tl.load(in_ptr + offsets, mask=mask)
    for mode, op in (("normalised", "ld.global.v4.b32"), ("original", "ld.global.v4.b32")):
        doc = diff["a"][mode]
        lines = doc["text"].splitlines()
        assert lines[: len(header)] == header
        mapped = next(e["asm_lines"] for e in doc["line_map"] if e["source_line"] == load)
        assert all(i > len(header) for i in mapped)
        assert any(op in lines[i - 1] for i in mapped), mode
    same = compare(a, a, "ptx")
    assert same["identical"] is True
    assert same["verdict"] == "nothing: the normalised texts are identical"


def test_entries_and_names() -> None:
    ptx = _text("inline_square.ptx")
    assert entry_names("ptx", ptx) == ["_Z13square_kernelPKfPfl"]
    assert entry_names("sass", _text("inline_square.sass")) == ["_Z13square_kernelPKfPfl"]
    assert matches_kernel("_Z13square_kernelPKfPfl", "square_kernel")
    assert not matches_kernel("_Z13square_kernelPKfPfl", "square")
    assert matches_kernel("add_kernel", "add_kernel")
    with pytest.raises(ValueError):
        extract_entry("ptx", ptx, "missing")


def test_launches_and_block_sizes_read_from_cuda_source() -> None:
    src = """
__global__ void k1(float* x) {}
template <int N> __global__ void k2(float* x) {}
void host(torch::Tensor x) {
    dim3 block(16, 16);
    k1<<<grid, block>>>(x.data_ptr<float>());
    k2<128><<<n / 128, 128, 0, stream>>>(x.data_ptr<float>());
}
"""
    assert kernels_launched_by(src, "host") == ["k1", "k2"]
    assert kernels_launched_by(src, "nothing") == []
    assert block_size_in_source(src, "k1") == (256, "dim3 block(16, 16)")
    assert block_size_in_source(src, "k2") == (128, "<<<…, 128>>>")
    assert block_size_in_source(src, "k3") == (None, None)


def test_target_kind() -> None:
    assert target_kind((KERNELS / "triton_square.py").read_text(), "square_kernel") == "triton"
    assert target_kind((KERNELS / "inline_square.py").read_text(), "square") == "inline"
    assert target_kind((KERNELS / "square.py").read_text(), "square") is None
    assert target_kind("def (", "x") is None


def test_other_stages_are_refused() -> None:
    with pytest.raises(ValueError, match="PTX or SASS"):
        normalise("ttir", "")


# Hand-written SASS and PTX for the classes the recorded squares do not use (tensor cores,
# shared memory, spills, atomics): the shapes nvdisasm and nvcc print.
HAND_SASS = """
        /*0000*/                   LDS.128 R4, [R2] ;
        /*0010*/                   HMMA.16816.F32 R8, R4, R12, R8 ;
        /*0020*/                   STL [R1], R9 ;
        /*0030*/                   LDL R9, [R1] ;
        /*0040*/                   FFMA R0, R1, R2, R3 ;
        /*0050*/                   RED.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R0 ;
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0070*/              @!P0 BRA `(.L_x_1) ;
        /*0080*/                   LDG.E.U8 R3, desc[UR4][R6.64] ;
        /*0090*/                   NOP ;
"""

HAND_PTX = """
\tld.shared.v4.f32 \t{%f1, %f2, %f3, %f4}, [%r1];
\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f5, %f6}, {%r2}, {%r4}, {%f5, %f6};
\tst.local.f32 \t[%rd1], %f1;
\tfma.rn.f32 \t%f9, %f1, %f2, %f3;
\tatom.global.add.f32 \t%f10, [%rd2], %f9;
\tbar.sync \t0;
\t@%p1 bra \t$L__BB0_2;
\tld.global.nc.v2.u16 \t{%rs1, %rs2}, [%rd3];
"""


@pytest.mark.parametrize(("stage", "text"), [("sass", HAND_SASS), ("ptx", HAND_PTX)])
def test_the_other_classes(stage: str, text: str) -> None:
    s = summarise(stage, text)
    assert s.classes["shared"] == 1
    assert s.classes["tensor"] == 1
    assert s.classes["local"] == (2 if stage == "sass" else 1)
    assert s.classes["atomic"] == 1
    assert s.classes["control"] == 2  # the barrier and the branch
    assert s.fma == 1
    assert s.load_widths == ({8: 1} if stage == "sass" else {32: 1})  # U8; v2 × u16
    assert s.classes["global_store"] == 0


def test_verdicts_for_spills_tensor_cores_and_registers() -> None:
    plain = summarise("sass", _text("triton_square_64.sass"), registers=10, spills=0)
    hand = summarise("sass", HAND_SASS, registers=10, spills=8)
    assert verdict(hand, plain) == "A spills 8 bytes to local memory, B none"
    tensor = Summary(classes={**plain.classes, "tensor": 3}, registers=10)
    assert verdict(plain, tensor) == "B uses the tensor cores (3 instructions), A does not"
    a = Summary(registers=40)
    b = Summary(registers=18)
    assert verdict(a, b) == "A uses 40 registers per thread, B 18: fewer A warps fit an SM"
    assert verdict(Summary(), Summary()) == "the same instruction mix and resources"
