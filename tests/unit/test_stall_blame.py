"""Blaming stall samples on the instructions they wait for (``analysis/stall_blame.py``).

The SASS is real (``tests/data/inside/sass/``, compiled for sm_90 from the kernels that
``tests/data/inside/record.sh`` profiles on the H200: the same bytes as the binaries there);
the sample counts are placed the way issue 43 describes an H200 measurement (on the
``strided_sum`` kernel ~8,600 long-scoreboard samples, 90% of the kernel's, on the ``LDG`` of
the coalesced ``x`` in one run and on the store line's address ``IMAD`` in another run of the
same binary; the waiting ``FADD`` had 5). The recordings committed later
(``tests/data/inside/h200``) had them on the ``FADD`` itself in both runs:
``test_stall_blame_h200.py`` blames those. The
sector counts are those of the access patterns (4 sectors per request for 32 consecutive
floats, 32 for a stride of 32 floats), as Nsight Compute's
``memory_l2_theoretical_sectors_global`` counts them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_lens.analysis.sass_control import Instruction, parse_cuobjdump
from kernel_lens.analysis.stall_blame import StallBlame, blame_stalls, explain

SASS = Path(__file__).resolve().parents[1] / "data" / "inside" / "sass"
STRIDED = "_Z11strided_sumPKfS0_Pfi"
N = 1 << 22  # threads of the recorded launches
REQUESTS = N // 32  # warp-level requests per load


def _fn(file: str, name: str) -> list[Instruction]:
    return parse_cuobjdump((SASS / file).read_text())[name]


def _at(ins: list[Instruction], pc: int) -> Instruction:
    return next(x for x in ins if x.pc == pc)


def _sectors(per_request: int, ideal: int, requests: int = REQUESTS) -> dict[str, float]:
    return {
        "memory_l2_theoretical_sectors_global": per_request * requests,
        "memory_l2_theoretical_sectors_global_ideal": ideal * requests,
        "inst_executed": requests,
    }


def _check_accounting(b: StallBlame) -> None:
    assert b.blamed + b.unblamed == pytest.approx(b.total)
    assert sum(sum(r.values()) for r in b.by_pc.values()) == pytest.approx(b.total)
    assert sum(m.samples for m in b.moves) == pytest.approx(b.blamed)
    assert sum(k.samples for k in b.kept) == pytest.approx(b.unblamed)


def _strided_costs() -> dict[int, dict[str, float]]:
    return {0xD0: _sectors(4, 4), 0xF0: _sectors(32, 4), 0x120: _sectors(4, 4)}


def test_the_strided_sum_listing_is_the_one_the_issue_describes() -> None:
    ins = _fn("cuda_strided.sass", STRIDED)
    ldg_x, imad_y, ldg_y, imad_out, fadd = (_at(ins, pc) for pc in (0xD0, 0xE0, 0xF0, 0x100, 0x110))
    assert ldg_x.base == ldg_y.base == "LDG" and fadd.base == "FADD"
    assert imad_y.text == "IMAD.WIDE R4, R9, 0x80, R4"  # y[(long)i * 32]: 128-byte stride
    assert imad_out.text == "IMAD.WIDE R6, R9, 0x4, R6"  # &out[i]
    assert ldg_x.control and ldg_y.control and fadd.control
    barrier = ldg_x.control.write_barrier
    assert barrier is not None and ldg_y.control.write_barrier == barrier
    assert fadd.control.waits == (barrier,)


@pytest.mark.parametrize(
    "placed_on",
    [
        pytest.param(0xD0, id="run1-on-the-LDG-of-x"),
        pytest.param(0x100, id="run2-on-the-IMAD-of-the-store-line"),
    ],
)
def test_strided_sum_blames_the_strided_load_wherever_the_samples_landed(placed_on: int) -> None:
    ins = _fn("cuda_strided.sass", STRIDED)
    samples = {
        placed_on: {"long_scoreboard": 8600, "selected": 40},
        0x110: {"long_scoreboard": 5, "wait": 3},  # the FADD that really waits
        0x120: {"drain": 120, "lg_throttle": 30},  # the store
        0x40: {"short_scoreboard": 150},  # IMAD of the index, waiting on S2R/LDC
        0x60: {"wait": 20},
        0xC0: {"short_scoreboard": 400},  # IMAD.WIDE of x's address, waiting on LDC.64
        0x130: {"no_instructions": 200},
    }
    b = blame_stalls(ins, samples, _strided_costs())
    _check_accounting(b)
    raw_top = max(samples, key=lambda pc: sum(samples[pc].values()))
    assert raw_top == placed_on  # the raw view points at the wrong line
    # every long-scoreboard sample went through the FADD to the two loads, 15/16 to y
    long_moves = [m for m in b.moves if m.reason == "long_scoreboard"]
    assert {m.waiter_pc for m in long_moves} == {0x110}
    assert {m.culprit_pc for m in long_moves} == {0xD0, 0xF0}
    assert all(m.via == "barrier 3" for m in long_moves)
    caused = b.culprit_samples()
    assert caused[0xF0] == pytest.approx(8605 * 15 / 16)
    assert caused[0xD0] == pytest.approx(8605 / 16)
    assert caused[0xF0] / b.blamed >= 0.8
    assert b.links[placed_on][0] == (0xF0, pytest.approx(8600 * 15 / 16 / 8640))
    assert (placed_on, pytest.approx(8600 * 15 / 16)) in b.caused[0xF0]
    # what stays, and why
    assert b.notes[0x120] == "stores draining at exit"
    assert b.by_pc[0x120] == {"drain": 120, "lg_throttle": 30}
    assert b.notes[placed_on] == "issued (not a stall)"
    text = explain(_at(ins, 0xF0), _strided_costs()[0xF0])
    assert text.cause == "global load, 32 sectors per request (uncoalesced; ideal 4)"
    assert "coalescing" in text.remedy


def test_both_runs_blame_the_same_lines() -> None:
    ins = _fn("cuda_strided.sass", STRIDED)
    runs = [
        blame_stalls(
            ins, {pc: {"long_scoreboard": n}, 0x110: {"long_scoreboard": 5}}, _strided_costs()
        )
        for pc, n in ((0xD0, 8600), (0x100, 8712))
    ]
    shares = [{pc: v / r.blamed for pc, v in r.culprit_samples().items()} for r in runs]
    assert shares[0] == pytest.approx(shares[1])
    assert shares[0][0xF0] == pytest.approx(15 / 16)


def test_per_line_folding_waiters_and_full_metric_names() -> None:
    ins = _fn("cuda_strided.sass", STRIDED)
    # the store line's IMAD, FADD and STG on one line, the loads on theirs (as -lineinfo does)
    line_of = {0xD0: 17, 0xE0: 18, 0xF0: 18, 0x100: 19, 0x110: 19, 0x120: 19}
    samples = {
        0x100: {"smsp__pcsamp_warps_issue_stalled_long_scoreboard": 160},
        0x130: {"drain": 40},
    }
    b = blame_stalls(ins, samples, _strided_costs())
    assert b.per_line(line_of) == {
        17: pytest.approx(10),
        18: pytest.approx(150),
        None: pytest.approx(40),
    }
    assert b.waiters(0xF0) == (0x110,)
    assert b.moves[0].reason == "long_scoreboard"


def test_without_costs_the_producers_share_equally() -> None:
    ins = _fn("cuda_strided.sass", STRIDED)
    b = blame_stalls(ins, {0x110: {"long_scoreboard": 100}})
    assert b.culprit_samples() == {0xD0: pytest.approx(50), 0xF0: pytest.approx(50)}
    assert b.fraction_blamed == 1.0


def test_a_consumer_several_lines_below_its_load() -> None:
    # late_consumer: b = y[i * 32]; three lines of arithmetic (with a sqrt); out[i] = s * b
    ins = _fn("cuda_strided.sass", "_Z13late_consumerPKfPfi")
    load, fadd, fmul = _at(ins, 0x1B0), _at(ins, 0x1D0), _at(ins, 0x1E0)
    assert load.text == "LDG.E R2, desc[UR4][R2.64]" and fmul.text == "FMUL R9, R5, R2"
    assert load.control and fadd.control and fmul.control
    assert fadd.control.waits == ()  # s = sqrtf(s) + s does not wait on the load
    costs = {0x1B0: _sectors(32, 4)}
    b = blame_stalls(ins, {0x1D0: {"long_scoreboard": 700}, 0x1E0: {"long_scoreboard": 300}}, costs)
    assert b.culprit_samples() == {0x1B0: pytest.approx(1000)}
    assert {m.waiter_pc for m in b.moves} == {0x1E0}
    # the sqrt's MUFU.RSQ is waited for (short scoreboard) by the branch of the slow path
    b2 = blame_stalls(ins, {0x120: {"short_scoreboard": 50}})
    assert b2.culprit_samples() == {0xE0: pytest.approx(50)}
    assert explain(_at(ins, 0xE0)).cause.startswith("special-function unit")


def test_chase_blame_crosses_the_loops_back_edge() -> None:
    ins = _fn("cuda_strided.sass", "_Z5chasePKiPiii")
    head = _at(ins, 0x1B0)
    assert head.text == "IMAD.WIDE R6, R19, 0x4, R4"  # j = next[j]: the address from last j
    b = blame_stalls(ins, {0x1B0: {"long_scoreboard": 1000}})
    ((culprit, share),) = b.links[0x1B0]
    assert culprit == 0x3C0 and share == pytest.approx(1.0)
    assert _at(ins, 0x3C0).text == "LDG.E R19, desc[UR4][R4.64]"  # the last load of the body
    assert b.moves[0].via == "barrier 5 across the loop's back edge"


def test_producers_that_never_ran_get_no_blame() -> None:
    # the ×4 loop's head is reached from the ×16 loop, the ×8 block and its own back edge
    ins = _fn("cuda_strided.sass", "_Z5chasePKiPiii")
    b = blame_stalls(ins, {0x560: {"long_scoreboard": 90}})
    assert set(b.culprit_samples()) == {0x3C0, 0x500, 0x5F0}
    costs = {
        0x3C0: _sectors(32, 4, 1000),
        0x500: _sectors(32, 4, 0) | {"inst_executed": 0},
        0x5F0: _sectors(32, 4, 3000),
    }
    b = blame_stalls(ins, {0x560: {"long_scoreboard": 90}}, costs)
    caused = b.culprit_samples()
    assert set(caused) == {0x3C0, 0x5F0}
    assert caused[0x5F0] > caused[0x3C0]
    assert sum(caused.values()) == pytest.approx(90)


def test_fixed_latency_wait_goes_to_the_register_writer() -> None:
    ins = _fn("cuda_strided.sass", STRIDED)
    # ISETP.GE.AND P0, PT, R9, UR4, PT right after IMAD R9 (and ULDC UR4)
    b = blame_stalls(ins, {0x60: {"wait": 10}})
    assert b.culprit_samples() == {0x40: pytest.approx(5), 0x50: pytest.approx(5)}
    assert {m.via for m in b.moves} == {"R9", "UR4"}


def test_triton_strided_blames_the_strided_line() -> None:
    ins = _fn("tl_strided.sass", "strided_sum_kernel")
    x_loads = [x.pc for x in ins if x.opcode == "LDG.E.128"]  # tl.load(x_ptr + offs): 16 B/thread
    y_loads = [x.pc for x in ins if x.opcode == "LDG.E"]  # tl.load(y_ptr + offs * STRIDE)
    assert len(x_loads) == 2 and len(y_loads) == 8
    costs = {pc: _sectors(16, 16) for pc in x_loads} | {pc: _sectors(32, 4) for pc in y_loads}
    fadds = [x.pc for x in ins if x.base == "FADD"]
    # the samples spread over the FADDs and the instructions just before them
    samples = {pc: {"long_scoreboard": 100} for pc in fadds} | {0x270: {"long_scoreboard": 300}}
    b = blame_stalls(ins, samples, costs)
    _check_accounting(b)
    caused = b.culprit_samples()
    assert set(caused) <= set(x_loads) | set(y_loads)
    y_share = sum(caused.get(pc, 0.0) for pc in y_loads) / b.blamed
    assert y_share >= 0.8
    assert b.fraction_blamed == pytest.approx(1.0)


def test_tl_dot_loop_waits_on_its_async_copies_and_mmas() -> None:
    ins = _fn("tl_matmul.sass", "matmul_kernel")
    loop = [x.pc for x in ins if x.base == "LDGSTS" and 0x13B0 <= x.pc < 0x19A0]
    prologue = [x.pc for x in ins if x.base == "LDGSTS" and x.pc < 0x13B0]
    assert len(loop) == 8 and len(prologue) == 16
    # DEPBAR.LE SB0, 0x2 at the loop's top waits for the tiles of two iterations back
    iterations = 4096 // 32 - 2
    costs = {pc: _sectors(16, 16, iterations) for pc in loop} | {
        pc: _sectors(16, 16, 1) for pc in prologue
    }
    b = blame_stalls(ins, {0x13B0: {"long_scoreboard": 1000}}, costs)
    caused = b.culprit_samples()
    assert set(caused) == set(loop) | set(prologue)
    assert sum(caused[pc] for pc in loop) / 1000 > 0.9
    assert all(m.via.startswith("SB0 (cp.async group)") for m in b.moves)
    remedy = explain(_at(ins, loop[0]), costs[loop[0]], consumers=[_at(ins, 0x13B0)])
    assert "tl.dot" in remedy.cause and "num_stages" in remedy.remedy
    # WARPGROUP.DEPBAR.LE gsb0, 0x1 waits for the previous iteration's HGMMA group
    b = blame_stalls(ins, {0x16D0: {"warpgroup_arrive": 80}})
    hgmma = [x.pc for x in ins if x.base == "HGMMA"]
    assert set(b.culprit_samples()) == set(hgmma)
    assert all(m.via == "gsb0 (wgmma group) across the loop's back edge" for m in b.moves)
    # after the loop, WARPGROUP.DEPBAR.LE gsb0, 0x0 waits for the last group, not across
    b = blame_stalls(ins, {0x19D0: {"warpgroup_arrive": 40}})
    assert set(b.culprit_samples()) == set(hgmma)
    assert explain(_at(ins, hgmma[0])).cause.startswith("tensor-core MMA")


def _listing(rows: list[tuple[int, str, int]]) -> str:
    """A cuobjdump-style listing: ``(pc, text, control word)`` per instruction."""
    out = ["\tFunction : k"]
    for pc, text, ctrl in rows:
        out.append(f"        /*{pc:04x}*/   {text} ;   /* 0x0000000000000000 */")
        out.append(f"                                   /* 0x{ctrl << 41:016x} */")
    return "\n".join(out) + "\n"


def _ctrl(*, wbar: int = 7, rbar: int = 7, wait: tuple[int, ...] = (), stall: int = 1) -> int:
    return stall | wbar << 5 | rbar << 8 | sum(1 << b for b in wait) << 11


def test_depbar_waits_only_for_the_groups_beyond_its_count() -> None:
    rows = [
        (0x00, "LDGSTS.E.128 [R1], desc[UR4][R2.64]", _ctrl()),
        (0x10, "LDGDEPBAR", _ctrl(wbar=0)),
        (0x20, "LDGSTS.E.128 [R1+0x10], desc[UR4][R4.64]", _ctrl()),
        (0x30, "LDGDEPBAR", _ctrl(wbar=0)),
        (0x40, "DEPBAR.LE SB0, 0x1", _ctrl()),
        (0x50, "EXIT", _ctrl()),
    ]
    (ins,) = parse_cuobjdump(_listing(rows)).values()
    b = blame_stalls(ins, {0x40: {"long_scoreboard": 10}})
    assert b.culprit_samples() == {0x00: pytest.approx(10)}


def test_undecidable_cases_stay_where_they_were_recorded() -> None:
    rows = [
        (0x00, "LDG.E R2, desc[UR4][R4.64]", _ctrl(wbar=2)),
        (0x10, "BRX R6 -0x20", _ctrl()),
        (0x20, "FADD R3, R2, R2", _ctrl(wait=(2,))),
        (0x30, "FROB R5, R3", _ctrl(wait=(2,))),
        (0x40, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2", _ctrl()),
        (0x50, "EXIT", _ctrl()),
    ]
    (ins,) = parse_cuobjdump(_listing(rows)).values()
    samples = {
        0x20: {"long_scoreboard": 10},  # reached through an indirect branch's targets
        0x30: {"long_scoreboard": 5},  # unknown opcode
        0x40: {"long_scoreboard": 7},  # mbarrier wait
        0x90: {"long_scoreboard": 3},  # no instruction there
    }
    b = blame_stalls(ins, samples)
    _check_accounting(b)
    assert b.blamed == 0 and b.unblamed == 25 and b.fraction_blamed == 0
    assert {k.category for k in b.kept} == {"undecidable"}
    assert "indirect branch" in b.notes[0x20]
    assert b.notes[0x30] == "unknown opcode FROB: not decided"
    assert "mbarrier" in b.notes[0x40]
    assert b.notes[0x90] == "no instruction at this address in the SASS"
    assert b.by_pc[0x20] == {"long_scoreboard": 10}


def test_throttles_stay_and_name_their_pipe() -> None:
    ins = _fn("cuda_strided.sass", STRIDED)
    b = blame_stalls(ins, {0x110: {"math_pipe_throttle": 12}, 0xD0: {"lg_throttle": 4}})
    assert b.blamed == 0 and b.by_pc == {
        0x110: {"math_pipe_throttle": 12},
        0xD0: {"lg_throttle": 4},
    }
    assert "FMA pipe" in b.notes[0x110]
    assert {k.category for k in b.kept} == {"throttle"}
    assert explain(_at(ins, 0x110), reason="math_pipe_throttle").remedy.startswith(
        "the kernel is compute-bound"
    )


def test_shared_memory_bank_conflicts_are_explained() -> None:
    lds = parse_cuobjdump(_listing([(0, "LDS R4, [R2]", _ctrl(wbar=1))]))["k"][0]
    cost = {
        "memory_l1_wavefronts_shared": 800,
        "memory_l1_wavefronts_shared_ideal": 100,
        "inst_executed": 100,
    }
    text = explain(lds, cost)
    assert text.cause.startswith("shared-memory load with bank conflicts (8-way")
    assert "pad" in text.remedy and "swizzle" in text.remedy


def test_no_samples() -> None:
    b = blame_stalls(_fn("cuda_strided.sass", STRIDED), {})
    assert (b.total, b.blamed, b.unblamed, b.fraction_blamed) == (0, 0, 0, 0)


def test_recorded_h200_report_without_control_words_uses_register_def_use() -> None:
    """The inductor kernel of ``tests/data/h200/triton_fused_full.ncu-rep`` (recorded on the
    H200, ``--set full``): 70% of its samples sit on ``triton_helpers.maximum`` (the FSETP that
    reads the loaded value), long scoreboard. A report carries the SASS text but no control
    words; from the registers alone the samples go to the ``tl.load`` line."""
    report = str(
        Path(__file__).resolve().parents[1] / "data" / "h200" / "triton_fused_full.ncu-rep"
    )
    pytest.importorskip("ncu_report")
    from kernel_lens.analysis.sass_control import parse_instruction
    from tests.stall_reports import line_of, read_kernel, shares_by_line

    kernel = read_kernel(report)
    ins = [parse_instruction(pc, text) for pc, text in sorted(kernel.sass.items())]
    assert all(x.control is None and x.known for x in ins)
    assert kernel.sample_count == 341
    raw = shares_by_line({pc: sum(r.values()) for pc, r in kernel.samples.items()}, kernel.lines)
    hot_raw = max(raw, key=lambda k: raw[k])
    assert hot_raw is not None and hot_raw[0].endswith("triton_helpers.py")
    assert raw[hot_raw] == pytest.approx(239 / 341)
    b = blame_stalls(ins, kernel.samples, kernel.costs)
    _check_accounting(b)
    assert b.total == 341
    caused = b.culprit_samples()
    load_line = line_of(kernel.sources, "tmp0 = tl.load(in_ptr0 + (x0), None)")
    ldg = next(x.pc for x in ins if x.base == "LDG")
    assert kernel.lines[ldg] == load_line
    assert caused[ldg] == pytest.approx(239)  # FSETP's long scoreboard: its R2 came from the LDG
    blamed = shares_by_line({pc: sum(r.values()) for pc, r in b.by_pc.items()}, kernel.lines)
    assert max(blamed, key=lambda k: blamed[k]) == load_line
    assert blamed[load_line] >= 239 / 341
