"""SASS parsing and control-word decoding (``analysis/sass_control.py``) on real listings.

The listings in ``tests/data/inside/sass/`` were compiled here for sm_90 from the kernels in
``tests/data/inside/`` (see the README there); the H200 encodings are the ones noted in
``notes/gpu-device.md`` ("Source counters on the H200").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_lens.analysis.sass_control import (
    Instruction,
    build_cfg,
    decode_control,
    parse_cuobjdump,
    parse_instruction,
)

SASS = Path(__file__).resolve().parents[1] / "data" / "inside" / "sass"


def _fn(file: str, name: str) -> list[Instruction]:
    return parse_cuobjdump((SASS / file).read_text())[name]


def _at(ins: list[Instruction], pc: int) -> Instruction:
    return next(x for x in ins if x.pc == pc)


def test_decode_the_encodings_of_the_strided_sum() -> None:
    # The binary recorded on the H200 (tests/data/inside/h200/cuda_strided.sass): the FADD
    # reads 0x008fca… (waits on barrier 3), both LDGs 0x000ee2… (set it).
    recorded = decode_control(0x008FCA0000000000)
    assert recorded.waits == (3,) and recorded.write_barrier is None
    assert decode_control(0x000EE2000C1E1900).write_barrier == 3
    # notes/gpu-device.md quotes 0x004fca… (waits on barrier 2) and 0x000ea2… (sets it)
    fadd = decode_control(0x004FCA0000000000)
    assert fadd.waits == (2,)
    assert fadd.write_barrier is None and fadd.read_barrier is None
    assert fadd.stall == 5
    ldg = decode_control(0x000EA2000C1E1900)
    assert ldg.write_barrier == 2 and ldg.read_barrier is None
    assert ldg.waits == () and ldg.stall == 1


def test_decode_read_barrier_reuse_and_yield() -> None:
    # tl_strided's second 128-bit LDG: sets write barrier 5 and read barrier 1 (its address
    # registers R14/R15, which the LDC after it overwrites, waiting on 1).
    c = decode_control(0x000368000C1E1D00)
    assert (c.write_barrier, c.read_barrier, c.waits, c.stall) == (5, 1, (), 4)
    assert c.sets == (5, 1)
    ldc = decode_control(0x002E660000000A00)
    assert ldc.waits == (1,) and ldc.write_barrier == 1
    # ``IADD3 R3, R2.reuse, -0x1, RZ`` in chase: the reuse flag of the first source slot
    assert decode_control(0x040FE40007FFE0FF).reuse == 0b0001
    assert decode_control(0x000FE40007FFE0FF).reuse == 0
    assert decode_control(0x000EA2000C1E1900).yield_ is True


def test_parse_the_cuda_listing_into_its_three_functions() -> None:
    fns = parse_cuobjdump((SASS / "cuda_strided.sass").read_text())
    assert set(fns) == {"_Z11strided_sumPKfS0_Pfi", "_Z13late_consumerPKfPfi", "_Z5chasePKiPiii"}
    ins = fns["_Z11strided_sumPKfS0_Pfi"]
    assert [x.pc for x in ins[:3]] == [0x0, 0x10, 0x20]
    assert all(x.control is not None and x.known for x in ins)
    ldg_x, ldg_y, fadd = _at(ins, 0xD0), _at(ins, 0xF0), _at(ins, 0x110)
    assert ldg_x.opcode == "LDG.E" and ldg_x.base == "LDG" and ldg_x.modifiers == ("E",)
    assert ldg_x.operands == ("R3", "desc[UR4][R2.64]")
    assert ldg_x.writes == {"R3"} and ldg_x.reads == {"R2", "R3", "UR4", "UR5"}
    assert ldg_x.control is not None and ldg_x.control.write_barrier == 3
    assert ldg_y.control is not None and ldg_y.control.write_barrier == 3
    assert fadd.text == "FADD R9, R4, R3" and fadd.reads == {"R3", "R4"}
    assert fadd.control is not None and fadd.control.waits == (3,)
    # the store line's address: IMAD.WIDE writes a pair and reads one
    imad = _at(ins, 0x100)
    assert imad.writes == {"R6", "R7"} and imad.reads == {"R9", "R6", "R7"}
    assert imad.control is not None and imad.control.waits == (2,)


@pytest.mark.parametrize(
    ("text", "writes", "reads", "predicate"),
    [
        ("ISETP.GE.AND P0, PT, R9, UR4, PT", {"P0"}, {"R9", "UR4"}, None),
        (
            "@!P0 LDG.E.128 R8, desc[UR4][R14.64]",
            {"R8", "R9", "R10", "R11"},
            {"R14", "R15", "UR4", "UR5", "P0"},
            "!P0",
        ),
        (
            "STG.E.128 desc[UR4][R14.64+0x800], R4",
            set(),
            {"R14", "R15", "UR4", "UR5", "R4", "R5", "R6", "R7"},
            None,
        ),
        ("IADD3 R154, P3, R154, 0x40, RZ", {"R154", "P3"}, {"R154"}, None),
        ("LDC.64 R2, c[0x0][0x210]", {"R2", "R3"}, set(), None),
        ("CS2R R8, SRZ", {"R8", "R9"}, set(), None),
        (
            "LDGSTS.E.BYPASS.128 [R17+0x800], desc[UR20][R20.64], P0",
            set(),
            {"R17", "R20", "R21", "UR20", "UR21", "P0"},
            None,
        ),
        ("SHFL.BFLY PT, R3, R2, 0x1, 0x1f", {"R3"}, {"R2"}, None),
        ("PLOP3.LUT P0, PT, PT, PT, UP1, 0x80, 0x0", {"P0"}, {"UP1"}, None),
        (
            "ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R2, desc[UR4][R2.64], R5",
            {"R2"},
            {"R2", "R3", "UR4", "UR5", "R5"},
            None,
        ),
        ("VOTE.ANY R3, PT, P0", {"R3"}, {"P0"}, None),
        ("DADD R2, R4, R6", {"R2", "R3"}, {"R4", "R5", "R6", "R7"}, None),
        (
            "HMMA.16816.F32 R4, R8, R12, R4",
            {"R4", "R5", "R6", "R7"},
            {"R8", "R9", "R10", "R11", "R12", "R13", "R4", "R5", "R6", "R7"},
            None,
        ),
    ],
)
def test_registers_written_and_read(
    text: str, writes: set[str], reads: set[str], predicate: str | None
) -> None:
    ins = parse_instruction(0, text)
    assert ins.writes == writes
    assert ins.reads == reads
    assert ins.predicate == predicate


def test_hgmma_writes_its_accumulator_tile() -> None:
    ins = _fn("tl_matmul.sass", "matmul_kernel")
    mma = _at(ins, 0x16C0)
    assert mma.opcode == "HGMMA.64x128x16.F32" and "gsb0" in mma.operands
    assert mma.writes == {f"R{24 + k}" for k in range(64)}
    assert {f"R{24 + k}" for k in range(64)} <= mma.reads and "UR12" in mma.reads
    depbar = _at(ins, 0x13B0)
    assert depbar.opcode == "DEPBAR.LE" and depbar.operands == ("SB0", "0x2")
    commit = _at(ins, 0x17C0)
    assert commit.base == "LDGDEPBAR" and commit.control is not None
    assert commit.control.write_barrier == 0  # the cp.async groups count on SB0


def test_branches_and_the_loops_back_edges() -> None:
    ins = _fn("cuda_strided.sass", "_Z5chasePKiPiii")
    back = _at(ins, 0x3D0)
    assert back.text == "@P1 BRA 0x1a0" and back.flow == "cond" and back.targets == (0x1A0,)
    assert _at(ins, 0x70).flow == "cond_exit"
    assert _at(ins, 0x6C0).flow == "exit"
    cfg = build_cfg(ins)
    loop_head = cfg.block_of[cfg.index_of(0x1A0) or 0]
    latch = cfg.block_of[cfg.index_of(0x3D0) or 0]
    assert (latch, loop_head) in cfg.back_edges
    # the entry path and the back edge both lead into the unrolled loop
    assert set(cfg.preds[loop_head]) == {loop_head - 1, latch}
    # the padding ``BRA 0x6d0`` after EXIT branches to itself but is unreachable: no loop
    pad = cfg.block_of[cfg.index_of(0x6D0) or 0]
    assert (pad, pad) not in cfg.back_edges
    assert len(cfg.back_edges) == 3  # the loop unrolled ×16, ×4, and the remainder
    assert not cfg.indirect


def test_call_return_and_convergence_barriers() -> None:
    ins = _fn("cuda_strided.sass", "_Z13late_consumerPKfPfi")
    call = _at(ins, 0x140)
    assert call.flow == "call" and call.targets == (0x220,)
    assert _at(ins, 0x370).flow == "return"
    assert _at(ins, 0xB0).opcode == "BSSY" and _at(ins, 0xB0).flow == "next"
    cfg = build_cfg(ins)
    after_call = cfg.index_of(0x150)
    assert after_call is not None and cfg.prev_in_flow(after_call) == [after_call - 1]


def test_indirect_branch_and_unknown_opcode() -> None:
    brx = parse_instruction(0x40, "BRX R4 -0x50")
    assert brx.flow == "indirect"
    assert build_cfg([parse_instruction(0, "MOV R4, 0x10"), brx]).indirect
    odd = parse_instruction(0, "FROB.X R1, R2")
    assert not odd.known and odd.base == "FROB"


def test_a_listing_without_second_words_has_no_control() -> None:
    text = "\tFunction : k\n        /*0000*/   MOV R1, R2 ;   /* 0x0000000200017202 */\n"
    (ins,) = parse_cuobjdump(text)["k"]
    assert ins.control is None and ins.text == "MOV R1, R2"


def test_nvdisasm_hex_listing_reads_as_cuobjdumps() -> None:
    """Show Assembly's disassembler (``nvdisasm -g -hex -c``) labels branch targets
    (``BRA `(.L_x_4)``) and interleaves line comments; the same cubin reads the same."""
    cuobj = parse_cuobjdump((SASS / "cuda_strided.sass").read_text())
    text = (SASS / "cuda_strided.nvdisasm").read_text()
    nvdis = parse_cuobjdump(text)
    assert set(nvdis) == set(cuobj)
    for name, ins in cuobj.items():
        other = nvdis[name]
        assert len(other) == len(ins)
        for a, b in zip(ins, other, strict=True):
            assert (a.pc, a.opcode, a.control, a.flow, a.targets, a.writes, a.reads) == (
                b.pc, b.opcode, b.control, b.flow, b.targets, b.writes, b.reads,
            )  # fmt: skip
    assert _at(nvdis["_Z5chasePKiPiii"], 0x3D0).text == "@P1 BRA `(.L_x_4)"
    # without -hex: the same instructions and branches, no control words
    plain = "\n".join(line.split("/* 0x")[0] for line in text.splitlines())
    bare = parse_cuobjdump(plain)["_Z5chasePKiPiii"]
    assert [x.pc for x in bare] == [x.pc for x in cuobj["_Z5chasePKiPiii"]]
    assert all(x.control is None for x in bare)
    assert _at(bare, 0x3D0).targets == (0x1A0,)
