"""Stall blame on the recorded H200 reports of ``tests/data/inside/h200/`` (see its README):
Nsight Compute's source counters read with ``ncu_report``, the SASS of the very binaries that
ran (``cuobjdump -sass``), blamed with :func:`blame_stalls`. The raw view puts the samples on
the line that waits; the blame puts them on the line that causes the wait.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_lens.analysis.sass_control import Instruction, parse_cuobjdump
from kernel_lens.analysis.stall_blame import StallBlame, blame_stalls, explain

pytest.importorskip("ncu_report")

from tests.stall_reports import KernelPcs, line_of, read_kernel, shares_by_line  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "inside"
H200 = DATA / "h200"
STRIDED = "_Z11strided_sumPKfS0_Pfi"


def _sass(file: str, name: str) -> list[Instruction]:
    return parse_cuobjdump((H200 / file).read_text())[name]


def _blame(report: str, sass: str, name: str) -> tuple[KernelPcs, list[Instruction], StallBlame]:
    kernel = read_kernel(str(H200 / f"{report}.ncu-rep"))
    ins = _sass(sass, name)
    blame = blame_stalls(ins, kernel.samples, kernel.costs)
    assert blame.total == pytest.approx(kernel.sample_count)  # every sample accounted for
    assert blame.blamed + blame.unblamed == pytest.approx(blame.total)
    assert sum(blame.per_line(kernel.lines).values()) == pytest.approx(blame.total)
    return kernel, ins, blame


def _raw(kernel: KernelPcs) -> dict[tuple[str, int] | None, float]:
    return shares_by_line({pc: sum(r.values()) for pc, r in kernel.samples.items()}, kernel.lines)


def _blamed_share(kernel: KernelPcs, blame: StallBlame, line: tuple[str, int]) -> float:
    caused = blame.culprit_samples()
    return sum(v for pc, v in caused.items() if kernel.lines.get(pc) == line) / blame.blamed


def test_the_listings_compiled_here_are_the_binaries_that_ran() -> None:
    """nvcc 13.0 here and the H200's ``load_inline`` build, triton 3.7.1 here and 3.6 there:
    the same instructions and control words, except the matmul (a newer Triton)."""
    cuda = [STRIDED, "_Z13late_consumerPKfPfi", "_Z5chasePKiPiii"]
    for here, there, names in [
        ("cuda_strided.sass", "cuda_strided.sass", cuda),
        ("tl_strided.sass", "strided_sum_kernel.sass", ["strided_sum_kernel"]),
        ("tl_vector_add.sass", "add_kernel.sass", ["add_kernel"]),
    ]:  # fmt: skip
        a = parse_cuobjdump((DATA / "sass" / here).read_text())
        b = parse_cuobjdump((H200 / there).read_text())
        for name in names:
            assert [(x.pc, x.text, x.hi) for x in a[name]] == [
                (x.pc, x.text, x.hi) for x in b[name]
            ]


@pytest.mark.parametrize("report", ["cuda_strided_sum", "cuda_strided_sum_run2"])
def test_strided_sum_the_strided_line_causes_the_stalls(report: str) -> None:
    kernel, ins, blame = _blame(report, "cuda_strided.sass", STRIDED)
    strided = line_of(kernel.sources, "float b = y[(long)i * 32];", "void strided_sum(")
    store = line_of(kernel.sources, "out[i] = a + b;", "void strided_sum(")
    raw = _raw(kernel)
    # raw: ~89% on the store line (the FADD that waits), 0.2% on the strided load
    assert raw[store] > 0.85 and raw[strided] < 0.01
    # blamed: the strided load holds 92% of the blamed samples, 84% of all
    assert _blamed_share(kernel, blame, strided) >= 0.8
    assert blame.per_line(kernel.lines)[strided] / blame.total >= 0.8
    assert blame.fraction_blamed > 0.85
    fadd = next(x.pc for x in ins if x.base == "FADD")
    assert {m.waiter_pc for m in blame.moves if m.reason == "long_scoreboard"} == {fadd}
    culprit = max(blame.culprit_samples().items(), key=lambda t: t[1])[0]
    assert kernel.lines[culprit] == strided
    by_pc = {x.pc: x for x in ins}
    text = explain(by_pc[culprit], kernel.costs[culprit])
    assert text.cause == "global load, 32 sectors per request (uncoalesced; ideal 4)"
    # what stays: the stores draining at exit (on the pc after EXIT), said as such
    assert {k.why for k in blame.kept if k.reason == "drain"} == {"stores draining at exit"}


def test_the_two_runs_blame_the_same() -> None:
    shares = []
    for report in ("cuda_strided_sum", "cuda_strided_sum_run2"):
        kernel, _, blame = _blame(report, "cuda_strided.sass", STRIDED)
        shares.append(
            {kernel.lines.get(pc): v / blame.blamed for pc, v in blame.culprit_samples().items()}
        )
    assert shares[0].keys() == shares[1].keys()
    for line in shares[0]:
        assert shares[0][line] == pytest.approx(shares[1][line], abs=0.01)


def test_late_consumer_blames_the_load_lines_above() -> None:
    kernel, _, blame = _blame("cuda_late_consumer", "cuda_strided.sass", "_Z13late_consumerPKfPfi")
    load = line_of(kernel.sources, "float b = y[(long)i * 32];", "void late_consumer(")
    use = line_of(kernel.sources, "out[i] = s * b;", "void late_consumer(")
    assert use[1] - load[1] == 4
    raw = _raw(kernel)
    assert raw[load] < 0.01
    assert _blamed_share(kernel, blame, load) >= 0.9


def test_chase_blames_the_loads_of_the_loop() -> None:
    """16 steps, the loop unrolled ×16: one pass, so each load waits on the one before it."""
    kernel, _, blame = _blame("cuda_chase", "cuda_strided.sass", "_Z5chasePKiPiii")
    step = line_of(kernel.sources, "j = next[j];")
    assert _blamed_share(kernel, blame, step) >= 0.95
    assert blame.per_line(kernel.lines)[step] / blame.total >= 0.95


def test_triton_strided_blames_the_strided_load_not_the_store() -> None:
    kernel, _, blame = _blame("tl_strided", "strided_sum_kernel.sass", "strided_sum_kernel")
    y = line_of(kernel.sources, "y = tl.load(y_ptr + offs * STRIDE", "def strided_sum_kernel(")
    store = line_of(kernel.sources, "tl.store(out_ptr + offs, x + y", "def strided_sum_kernel(")
    raw = _raw(kernel)
    assert raw[store] > 0.4 and raw[y] < 0.05
    assert _blamed_share(kernel, blame, y) >= 0.8
    # most of the rest is honest: the stores draining and the memory queues' throttles
    kept = {k.category for k in blame.kept if k.samples > 100}
    assert kept <= {"drain", "throttle"}


def test_triton_matmul_blames_its_async_copies() -> None:
    kernel, ins, blame = _blame("tl_matmul", "matmul_kernel.sass", "matmul_kernel")
    a = line_of(kernel.sources, "a = tl.load(a_ptrs)")
    b = line_of(kernel.sources, "b = tl.load(b_ptrs)")
    dot = line_of(kernel.sources, "acc = tl.dot(a, b, acc)")
    caused = blame.culprit_samples()
    by_pc = {x.pc: x for x in ins}
    loads = sum(v for pc, v in caused.items() if kernel.lines.get(pc) in (a, b))
    assert loads / blame.blamed >= 0.6
    top = max(caused, key=lambda pc: caused[pc])
    assert by_pc[top].base == "LDGSTS"
    text = explain(
        by_pc[top], kernel.costs.get(top), consumers=[by_pc[w] for w in blame.waiters(top)]
    )
    assert "num_stages" in text.remedy
    # the DEPBAR at the loop's top waits on copies issued iterations earlier
    assert any("back edge" in m.via for m in blame.moves)
    assert dot in blame.per_line(kernel.lines)
