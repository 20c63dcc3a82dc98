"""Blame each warp-stall sample on the instruction(s) it waits for, from the SASS control words.

Nsight Compute's source counters say *where* a warp was when it was sampled (a PC) and *why*
it could not issue (``smsp__pcsamp_warps_issue_stalled_<reason>``), not *what* it was waiting
for. A dependency stall's cause is another instruction: the load whose result has not
arrived, often several lines above, or in the previous iteration of a loop. This module moves
those samples onto their causes, by backward slicing over the kernel's SASS as GPA does
("GPA: A GPU Performance Advisor Based on Instruction Sampling", Zhou et al., CGO 2021,
which "approximately attributes measured instruction stalls to their root causes") and LEO
(arXiv 2604.20032, 2026, on HPCToolkit). The method, per sample count ``n`` at ``pc`` with
``reason``:

1. **Dependency reasons** (``long_scoreboard``, ``short_scoreboard``, ``wait``,
   ``warpgroup_arrive``): find the instruction that actually waits — the sampled one or one of
   the next few (:data:`WINDOW`) in its basic block, the first whose control word waits on a
   barrier that a producer of the reason's kind set (an L1TEX memory operation for long
   scoreboard; shared memory, ``MUFU``, ``S2R``, ``LDC`` for short scoreboard), else one of
   the :data:`LOOKBACK` just before it. Samples land on or near the waiting instruction: in
   the H200 recordings of ``tests/data/inside/h200`` a strided sum's samples sat on the
   ``FADD`` that waits, a Triton matmul's on the instruction right after its
   ``DEPBAR.LE SB0, 0x2``.
2. Its producers: walking backwards over the control-flow graph (across a loop's back edge
   too), every instruction that sets a waited barrier until an instruction that waited on it
   (which drained it). ``DEPBAR.LE SBn, k`` waits for all but the ``k`` most recent commits
   (``LDGDEPBAR`` groups of ``LDGSTS``, i.e. ``cp.async``); ``WARPGROUP.DEPBAR.LE gsb0, k``
   the same for ``HGMMA`` groups. A ``wait`` stall (fixed latency) goes to the nearest
   fixed-latency writer of a register the instruction reads, a few instructions above.
3. The samples are split among the producers by their measured cost: the waiter waits for the
   slowest, so each producer gets its Shapley value in the *max* of the producers' costs
   (global/local sectors, shared-memory wavefronts; a coalesced load with 4 sectors beside a
   strided one with 32 gets 1/16); equal shares without costs. Producers that never executed
   (``inst_executed`` of 0) get none.
4. **Throttle and pipe reasons** stay on the sampled instruction with the pipe named;
   ``drain`` stays and says the stores are draining; anything the SASS cannot decide (an
   unknown opcode, an indirect branch on the way, an ``mbarrier`` wait on a TMA copy) stays
   where it was recorded and says why.

Every sample ends somewhere: ``blamed + unblamed == total`` (:class:`StallBlame`). Pure: no
I/O, no process; the caller gives the parsed SASS and the per-PC numbers::

    ins = sass_control.parse_cuobjdump(cuobjdump_text)[function_name]
    blame = blame_stalls(ins, samples, costs)  # {pc: {reason: n}}, {pc: {metric: x}}
    by_pc = {x.pc: x for x in ins}
    for culprit, n in blame.culprit_samples().items():
        why = explain(by_pc[culprit], costs.get(culprit),
                      consumers=[by_pc[w] for w in blame.waiters(culprit)])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from kernel_lens.analysis.sass_control import Cfg, Instruction, build_cfg

__all__ = [
    "DEPENDENCY_REASONS",
    "LOOKBACK",
    "WINDOW",
    "Explanation",
    "Kept",
    "Move",
    "StallBlame",
    "blame_stalls",
    "explain",
    "kind_of",
]

_K = TypeVar("_K")
_PREFIX = "smsp__pcsamp_warps_issue_stalled_"

#: How many instructions after the sampled one (same basic block) may be the waiting one.
WINDOW = 8
#: How many instructions before the sampled one may be the waiting one (the sample landed on
#: the next pc: on the H200 a matmul's long-scoreboard samples sat on the instruction right
#: after its ``DEPBAR.LE SB0, 0x2``).
LOOKBACK = 2
#: How far above a ``wait`` stall its fixed-latency producer may be (instructions).
WAIT_DISTANCE = 6
_MAX_STEPS = 50_000

#: Dependency reasons → the kinds of producer they wait for (see :func:`kind_of`).
DEPENDENCY_REASONS: dict[str, tuple[str, ...]] = {
    "long_scoreboard": ("long",),
    "short_scoreboard": ("short",),
    "warpgroup_arrive": ("gmma",),
    "wait": ("fixed",),
}

_LONG = frozenset(
    """LDG LD LDL ST STG STL ATOM ATOMG RED REDG LDGSTS LDGMC TEX TLD TLD4 TMML TXD TXQ SULD SUST
    SUATOM SURED CCTL CCTLL LDGDEPBAR UBLKCP UTMALDG UTMASTG UTMAREDG""".split()
)
_SHORT = frozenset(
    """LDS LDSM STS STSM ATOMS LDC S2R S2UR MUFU SHFL MATCH REDUX QSPC B2R R2B BMOV VOTEU POPC
    FLO BREV R2UR GETLMEMBASE""".split()
)
_GMMA = frozenset({"HGMMA", "IGMMA", "QGMMA", "BGMMA"})
_MEMBAR = frozenset({"MEMBAR", "FENCE", "ERRBAR", "CGAERRBAR"})

_KEPT_TEXT = {
    "math_pipe_throttle": "math pipe throttle: the {pipe} pipe is busy (the work, not a wait)",
    "mio_throttle": "MIO queue full ({pipe}): many shared-memory or special-function instructions",
    "lg_throttle": "local/global memory queue full: fewer, wider accesses (vectorise)",
    "tex_throttle": "texture pipe throttle",
    "drain": "stores draining at exit",
    "barrier": "waiting at a CTA barrier (__syncthreads): other warps arrive later",
    "membar": "waiting on a memory fence",
    "branch_resolving": "waiting for a branch target to resolve",
    "dispatch_stall": "dispatch stall",
    "no_instructions": "no instructions fetched (instruction cache miss or after a branch)",
    "imc_miss": "immediate-constant cache miss",
    "sleeping": "sleeping (nanosleep)",
    "misc": "miscellaneous stall",
    "selected": "issued (not a stall)",
    "not_selected": "ready, another warp was picked",
}


def kind_of(ins: Instruction) -> str:
    """The kind of wait an instruction's result causes: ``long`` (L1TEX memory: global, local,
    texture, ``cp.async``), ``short`` (MIO: shared memory, ``MUFU``, ``S2R``, ``LDC``, …),
    ``gmma`` (warpgroup MMA), ``membar`` (fences) or ``fixed`` (fixed latency)."""
    base = ins.base
    if base in _LONG:
        return "long"
    if base in _SHORT:
        return "short"
    if base in _GMMA:
        return "gmma"
    if base in _MEMBAR:
        return "membar"
    return "fixed"


def pipe_of(ins: Instruction) -> str:
    """The pipe an instruction issues to, as Nsight Compute names it (roughly)."""
    base = ins.base
    if base in _GMMA or base in ("HMMA", "IMMA", "DMMA", "BMMA"):
        return "tensor"
    if base in ("DADD", "DMUL", "DFMA", "DSETP", "DMNMX"):
        return "FP64"
    if base == "MUFU":
        return "XU (special functions)"
    if base in ("FFMA", "FADD", "FMUL", "FFMA32I", "FADD32I", "FMUL32I", "IMAD", "IMUL", "IDP"):
        return "FMA"
    if base in ("HFMA2", "HADD2", "HMUL2"):
        return "FMA (half)"
    if base in _SHORT or base in ("LDS", "STS", "LDSM"):
        return "shared memory / MIO"
    if base.startswith("U"):
        return "uniform"
    return "ALU"


@dataclass(frozen=True)
class Move:
    """Samples moved from where they were recorded onto one culprit.

    Attributes:
        stalled_pc: where the samples were recorded.
        waiter_pc: the instruction found to wait (``stalled_pc`` or a few after it).
        culprit_pc: the producer blamed.
        reason: the stall reason (Nsight Compute's suffix).
        samples: samples moved (a share of the recorded ones; fractional).
        via: what links them: ``barrier 3``, ``SB0 (cp.async group)``, ``gsb0 (wgmma group)``,
            ``R4``; `` across the loop's back edge`` appended when the path crosses one.
    """

    stalled_pc: int
    waiter_pc: int
    culprit_pc: int
    reason: str
    samples: float
    via: str


@dataclass(frozen=True)
class Kept:
    """Samples that stay where they were recorded.

    Attributes:
        pc: where they were recorded.
        reason: the stall reason.
        samples: how many.
        category: ``throttle`` (a pipe or queue: the instruction itself), ``drain``,
            ``other`` (not a dependency), ``undecidable`` (the SASS cannot say) or
            ``no_producer`` (a dependency whose producer was not found).
        why: one line for the user.
    """

    pc: int
    reason: str
    samples: float
    category: str
    why: str


@dataclass(frozen=True)
class StallBlame:
    """The blame of one kernel's stall samples.

    Attributes:
        by_pc: samples per pc *after* blame, by reason: a culprit carries what it caused, a
            kept sample stays; sums to ``total``.
        links: stalled pc → ``[(culprit pc, share)]``, the share of that pc's recorded samples
            (all reasons) moved to the culprit, largest first.
        caused: culprit pc → ``[(stalled pc, samples)]``, the other direction.
        moves: every move, in input order.
        kept: every kept count, in input order.
        notes: recorded pc → why some of its samples stayed (the largest kept count's text).
        total: all samples given.
        blamed: samples moved onto a culprit (a producer may be the sampled pc itself).
        unblamed: samples kept where recorded (``total - blamed``).
    """

    by_pc: dict[int, dict[str, float]]
    links: dict[int, list[tuple[int, float]]]
    caused: dict[int, list[tuple[int, float]]]
    moves: tuple[Move, ...]
    kept: tuple[Kept, ...]
    notes: dict[int, str]
    total: float
    blamed: float
    unblamed: float

    @property
    def fraction_blamed(self) -> float:
        """``blamed / total`` (0 when there are no samples)."""
        return self.blamed / self.total if self.total else 0.0

    def culprit_samples(self) -> dict[int, float]:
        """Samples each culprit caused (all reasons)."""
        out: dict[int, float] = defaultdict(float)
        for m in self.moves:
            out[m.culprit_pc] += m.samples
        return dict(out)

    def waiters(self, culprit_pc: int) -> tuple[int, ...]:
        """The instructions found waiting on ``culprit_pc`` (for :func:`explain`'s
        ``consumers``), in pc order."""
        return tuple(sorted({m.waiter_pc for m in self.moves if m.culprit_pc == culprit_pc}))

    def per_line(self, line_of: Mapping[int, _K]) -> dict[_K | None, float]:
        """The samples after blame folded onto source lines (``line_of``: pc → line key; a
        pc without one folds onto ``None``); sums to ``total``."""
        out: dict[_K | None, float] = defaultdict(float)
        for pc, reasons in self.by_pc.items():
            out[line_of.get(pc)] += sum(reasons.values())
        return dict(out)


@dataclass(frozen=True)
class _Found:
    producers: list[tuple[int, str, bool]]  # (index, via, across a back edge)
    undecidable: str | None = None


def _is_group_wait(ins: Instruction) -> bool:
    """``DEPBAR.LE SBn, k`` or ``WARPGROUP.DEPBAR.LE gsb0, k``: waits on groups of async work."""
    return ins.base == "DEPBAR" or (ins.base == "WARPGROUP" and "DEPBAR" in ins.modifiers)


def _is_async_copy(ins: Instruction) -> bool:
    return ins.base == "LDGSTS"


def _is_commit(ins: Instruction, barrier: int) -> bool:
    """Whether ``ins`` commits a group counted on ``barrier`` (``LDGDEPBAR`` → ``SBn``)."""
    return (
        ins.base == "LDGDEPBAR" and ins.control is not None and ins.control.write_barrier == barrier
    )


def _walk(
    cfg: Cfg,
    start: int,
    *,
    is_setter: Callable[[Instruction], bool],
    drains: Callable[[Instruction], bool],
    limit_at: Callable[[Instruction], int | None],
    keep_last: int,
) -> tuple[list[tuple[int, bool]], bool]:
    """Setters that must have completed when ``start`` issues: walking backwards over every
    path, setters counted from the most recent; those beyond the ``keep_last`` most recent
    are waited for. A ``drains`` instruction (it waited for all) ends a path after it is
    counted; a ``limit_at`` instruction (``DEPBAR.LE … k``) bounds what was still pending.
    Returns ``(setters as (index, across a back edge), crossed an unknown predecessor)``."""
    inf = 1 << 30
    found: dict[int, bool] = {}
    unknown = False
    seen: set[tuple[int, int, int, bool]] = set()
    stack: list[tuple[int, int, int, bool]] = []

    def push_preds(i: int, count: int, remaining: int, back: bool) -> None:
        nonlocal unknown
        b = cfg.block_of[i]
        first = cfg.blocks[b][0]
        if i > first:
            stack.append((i - 1, count, remaining, back))
            return
        if cfg.indirect:
            unknown = True
        for p in cfg.preds[b]:
            stack.append((cfg.blocks[p][1], count, remaining, back or (p, b) in cfg.back_edges))

    push_preds(start, 0, inf, False)
    steps = 0
    while stack and steps < _MAX_STEPS:
        steps += 1
        j, count, remaining, back = stack.pop()
        key = (j, min(count, keep_last + 1), min(remaining, inf), back)
        if key in seen:
            continue
        seen.add(key)
        ins = cfg.instructions[j]
        if is_setter(ins):
            count += 1
            remaining -= 1
            if count > keep_last:
                found[j] = found.get(j, False) or back
            if remaining <= 0:
                continue
        if drains(ins):
            continue
        limit = limit_at(ins)
        if limit is not None:
            # at most ``limit`` setters before it were still pending when it issued
            remaining = min(remaining, limit)
            if remaining <= 0:
                continue
        push_preds(j, count, remaining, back)
    return sorted(found.items()), unknown


def _group(
    cfg: Cfg,
    commit: int,
    member: Callable[[Instruction], bool],
    is_commit: Callable[[Instruction], bool],
) -> list[int]:
    """The members of the group that ``commit`` closes: walking back to the previous commit."""
    out: set[int] = set()
    seen: set[int] = set()
    stack = [commit]
    while stack:
        i = stack.pop()
        b = cfg.block_of[i]
        prevs = [i - 1] if i > cfg.blocks[b][0] else [cfg.blocks[p][1] for p in cfg.preds[b]]
        for j in prevs:
            if j in seen:
                continue
            seen.add(j)
            ins = cfg.instructions[j]
            if is_commit(ins):
                continue
            if member(ins):
                out.add(j)
            stack.append(j)
    return sorted(out)


def _scoreboard_producers(
    cfg: Cfg, idx: int, barrier: int, keep: int
) -> tuple[list[tuple[int, str, bool]], bool]:
    """The producers the instruction at ``idx`` waits for on scoreboard ``barrier`` (a
    ``cp.async`` commit stands for its group), and whether an indirect branch may lead here."""

    def sets(x: Instruction, b: int = barrier) -> bool:
        return x.control is not None and b in x.control.sets

    def drains(x: Instruction, b: int = barrier) -> bool:
        return x.control is not None and b in x.control.waits

    def limit(x: Instruction, b: int = barrier) -> int | None:
        if x.base == "DEPBAR" and x.operands and x.operands[0].strip() == f"SB{b}":
            return int(x.operands[1], 0) if len(x.operands) > 1 else 0
        return None

    setters, unknown = _walk(
        cfg, idx, is_setter=sets, drains=drains, limit_at=limit, keep_last=keep
    )
    out: list[tuple[int, str, bool]] = []
    for j, back in setters:
        prod = cfg.instructions[j]
        if _is_commit(prod, barrier):
            members = _group(cfg, j, _is_async_copy, partial(_is_commit, barrier=barrier))
            out.extend((m, f"SB{barrier} (cp.async group)", back) for m in members)
        else:
            out.append((j, f"barrier {barrier}", back))
    return out, unknown


def _wgmma_producers(cfg: Cfg, idx: int, keep: int) -> tuple[list[tuple[int, str, bool]], bool]:
    """The ``wgmma`` groups a ``WARPGROUP.DEPBAR`` at ``idx`` waits for, and whether an
    indirect branch may lead here."""

    def commit(x: Instruction) -> bool:
        return x.base in _GMMA and any(op.strip() == "gsb0" for op in x.operands)

    def wg_limit(x: Instruction) -> int | None:
        if x.base == "WARPGROUP" and "DEPBAR" in x.modifiers and len(x.operands) > 1:
            return int(x.operands[1], 0)
        return None

    setters, unknown = _walk(
        cfg, idx, is_setter=commit, drains=lambda x: False, limit_at=wg_limit, keep_last=keep
    )
    out: list[tuple[int, str, bool]] = []
    for j, back in setters:
        members = [j, *_group(cfg, j, lambda x: x.base in _GMMA, commit)]
        out.extend((m, "gsb0 (wgmma group)", back) for m in members)
    return out, unknown


def _barrier_producers(cfg: Cfg, idx: int, kinds: Sequence[str] | None) -> _Found:
    """Producers the instruction at ``idx`` waits for through its control word (and a
    ``DEPBAR``/``WARPGROUP.DEPBAR``), of the given kinds (``None``: any)."""
    ins = cfg.instructions[idx]
    out: list[tuple[int, str, bool]] = []
    unknown = False
    if ins.base == "SYNCS":
        return _Found(
            [], "waits on an mbarrier (TMA or bulk copy): its producer is not in the SASS"
        )
    waits: list[tuple[int, int]] = []  # (barrier, keep_last)
    if ins.control is not None:
        waits.extend((b, 0) for b in ins.control.waits)
    if ins.base == "DEPBAR" and ins.operands:
        sb = ins.operands[0].strip()
        if sb.startswith("SB") and sb[2:].isdigit():
            keep = int(ins.operands[1], 0) if len(ins.operands) > 1 else 0
            waits.append((int(sb[2:]), keep))
    for barrier, keep in waits:
        found, unk = _scoreboard_producers(cfg, idx, barrier, keep)
        unknown = unknown or unk
        out.extend(found)
    if ins.base == "WARPGROUP" and "DEPBAR" in ins.modifiers and ins.operands:
        keep = int(ins.operands[1], 0) if len(ins.operands) > 1 else 0
        found, unk = _wgmma_producers(cfg, idx, keep)
        unknown = unknown or unk
        out.extend(found)
    if kinds is not None:
        out = [p for p in out if kind_of(cfg.instructions[p[0]]) in kinds]
    if unknown:
        return _Found([], "an indirect branch may lead here: the producers are not known")
    return _Found(_dedupe(out))


def _dedupe(items: Iterable[tuple[int, str, bool]]) -> list[tuple[int, str, bool]]:
    seen: dict[int, tuple[int, str, bool]] = {}
    for idx, via, back in items:
        if idx in seen:
            old = seen[idx]
            seen[idx] = (idx, old[1], old[2] or back)
        else:
            seen[idx] = (idx, via, back)
    return [seen[k] for k in sorted(seen)]


def _fixed_producers(cfg: Cfg, idx: int) -> list[tuple[int, str, bool]]:
    """Nearest fixed-latency writers (same block, within :data:`WAIT_DISTANCE`) of the
    registers ``idx`` reads."""
    ins = cfg.instructions[idx]
    first = cfg.blocks[cfg.block_of[idx]][0]
    need = set(ins.reads)
    out: list[tuple[int, str, bool]] = []
    j = idx - 1
    while j >= max(first, idx - WAIT_DISTANCE) and need:
        prod = cfg.instructions[j]
        hit = need & prod.writes
        if hit:
            need -= hit
            # without a control word the opcode says whether the result has a fixed latency
            fixed = (
                kind_of(prod) == "fixed"
                if prod.control is None
                else prod.control.write_barrier is None
            )
            if fixed:
                out.append((j, ", ".join(sorted(hit)), False))
        j -= 1
    return out


def _cost(pc: int, costs: Mapping[int, Mapping[str, float]]) -> tuple[str, float] | None:
    c = costs.get(pc)
    if not c:
        return None
    sectors = sum(
        v
        for k, v in c.items()
        if k.startswith("memory_l2_theoretical_sectors_") and not k.endswith("_ideal")
    )
    if sectors > 0:
        return "sectors", float(sectors)
    wavefronts = sum(
        v
        for k, v in c.items()
        if k.startswith("memory_l1_wavefronts_shared") and not k.endswith("_ideal")
    )
    if wavefronts > 0:
        return "wavefronts", float(wavefronts)
    return None


def _shapley_max(values: Sequence[float]) -> list[float]:
    """Each player's Shapley value in the game ``v(S) = max(values[S])``, as shares."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    n = len(values)
    out = [0.0] * n
    acc = 0.0
    prev = 0.0
    for rank, i in enumerate(order):
        acc += (values[i] - prev) / (n - rank)
        prev = values[i]
        out[i] = acc
    total = sum(out)
    return [v / total for v in out] if total > 0 else [1.0 / n] * n


def _shares(pcs: Sequence[int], costs: Mapping[int, Mapping[str, float]]) -> list[float]:
    executed = [costs.get(pc, {}).get("inst_executed") for pc in pcs]
    alive = [e is None or e > 0 for e in executed]
    if not any(alive):
        alive = [True] * len(pcs)
    measured = [_cost(pc, costs) for pc in pcs]
    units = {m[0] for m, a in zip(measured, alive, strict=True) if m is not None and a}
    if len(units) == 1 and all(m is not None for m, a in zip(measured, alive, strict=True) if a):
        values = [
            m[1] if (m is not None and a) else 0.0 for m, a in zip(measured, alive, strict=True)
        ]
        return _shapley_max(values)
    n = sum(alive)
    return [1.0 / n if a else 0.0 for a in alive]


def _register_producers(cfg: Cfg, idx: int, kinds: Sequence[str]) -> list[tuple[int, str, bool]]:
    """The nearest writers, over every path, of the registers ``idx`` reads, kept when they
    are producers of ``kinds``."""
    out: list[tuple[int, str, bool]] = []
    for reg in sorted(cfg.instructions[idx].reads):
        seen: set[tuple[int, bool]] = set()
        stack = [(j, False) for j in cfg.prev_in_flow(idx)]
        steps = 0
        while stack and steps < _MAX_STEPS:
            steps += 1
            j, back = stack.pop()
            if (j, back) in seen:
                continue
            seen.add((j, back))
            prod = cfg.instructions[j]
            if reg in prod.writes:
                if kind_of(prod) in kinds:
                    out.append((j, reg, back))
                continue
            b = cfg.block_of[j]
            if j > cfg.blocks[b][0]:
                stack.append((j - 1, back))
            else:
                stack.extend(
                    (cfg.blocks[p][1], back or (p, b) in cfg.back_edges) for p in cfg.preds[b]
                )
    return _dedupe(out)


def _find_waiter(
    cfg: Cfg,
    idx: int,
    kinds: tuple[str, ...],
    cache: dict[tuple[int, tuple[str, ...] | None], _Found],
) -> tuple[int, _Found] | None:
    """The instruction that waits, and for what: the first from ``idx`` on (same block, up to
    :data:`WINDOW` after it) whose control word waits for a producer of ``kinds``; failing
    that, one of the :data:`LOOKBACK` instructions just before it; failing that, the
    producers of ``kinds`` of the registers the sampled instruction reads (its wait was on an
    earlier instruction's mask, or the listing has no control words); failing that, the
    sampled instruction's own waits of any kind."""
    last = cfg.blocks[cfg.block_of[idx]][1]
    for i in range(idx, min(last, idx + WINDOW) + 1):
        if not cfg.instructions[i].known:
            return i, _Found([], f"unknown opcode {cfg.instructions[i].base}: not decided")
        if (i, kinds) not in cache:
            cache[(i, kinds)] = _barrier_producers(cfg, i, kinds)
        found = cache[(i, kinds)]
        if found.producers or found.undecidable:
            return i, found
    first = cfg.blocks[cfg.block_of[idx]][0]
    for i in range(idx - 1, max(first, idx - LOOKBACK) - 1, -1):
        if (i, kinds) not in cache:
            cache[(i, kinds)] = _barrier_producers(cfg, i, kinds)
        found = cache[(i, kinds)]
        if found.producers or found.undecidable:
            return i, found
    regs = _register_producers(cfg, idx, kinds)
    if regs:
        return idx, _Found(regs)
    found = _barrier_producers(cfg, idx, None)
    if found.producers or found.undecidable:
        return idx, found
    return None


def _category(reason: str) -> str:
    """How a reason that is not a dependency stays: ``drain``, ``throttle`` or ``other``."""
    if reason == "drain":
        return "drain"
    if reason.endswith("throttle") or reason == "dispatch_stall":
        return "throttle"
    return "other"


@dataclass(frozen=True)
class _Keep:
    """Samples that stay on their instruction: how (`Kept.category`) and why."""

    category: str
    why: str


def _decide(
    cfg: Cfg,
    pc: int,
    reason: str,
    cache: dict[tuple[int, tuple[str, ...] | None], _Found],
) -> tuple[int, list[tuple[int, str, bool]]] | _Keep:
    """Where the samples of ``reason`` at ``pc`` go: the instruction that waits and the
    producers it waits for, or why they stay."""
    idx = cfg.index_of(pc)
    ins = cfg.instructions[idx] if idx is not None else None
    if reason not in DEPENDENCY_REASONS:
        if reason in _KEPT_TEXT:
            pipe = pipe_of(ins) if ins is not None else "?"
            return _Keep(_category(reason), _KEPT_TEXT[reason].format(pipe=pipe))
        return _Keep("other", f"{reason.replace('_', ' ')}: not a dependency stall")
    if idx is None or ins is None:
        return _Keep("undecidable", "no instruction at this address in the SASS")
    if not ins.known:
        return _Keep("undecidable", f"unknown opcode {ins.base}: not decided")
    kinds = DEPENDENCY_REASONS[reason]
    if kinds == ("fixed",):
        waiter, found = idx, _Found(_fixed_producers(cfg, idx))
        if not found.producers and _is_group_wait(ins):
            found = _barrier_producers(cfg, idx, None)
        if not found.producers and not found.undecidable:
            return _Keep("no_producer", "wait: a fixed stall count, no register dependency")
    else:
        hit = _find_waiter(cfg, idx, kinds, cache)
        if hit is None:
            return _Keep(
                "no_producer", f"{reason.replace('_', ' ')}: no producer found in the SASS"
            )
        waiter, found = hit
    if found.undecidable:
        return _Keep("undecidable", found.undecidable)
    prods = found.producers
    unknown = [cfg.instructions[p[0]].base for p in prods if not cfg.instructions[p[0]].known]
    if unknown:
        return _Keep("undecidable", f"unknown opcode {unknown[0]} among the producers: not decided")
    if not prods:
        return _Keep("no_producer", f"{reason.replace('_', ' ')}: no producer found in the SASS")
    return waiter, prods


def _moves(
    cfg: Cfg,
    pc: int,
    reason: str,
    n: float,
    decided: tuple[int, list[tuple[int, str, bool]]],
    costs: Mapping[int, Mapping[str, float]],
) -> list[Move]:
    """The ``n`` samples of ``reason`` at ``pc`` moved onto the producers the waiting
    instruction waits for, shared out by their costs."""
    waiter, prods = decided
    pcs = [cfg.instructions[p[0]].pc for p in prods]
    out = []
    for (_, via, back), cpc, share in zip(prods, pcs, _shares(pcs, costs), strict=True):
        if share <= 0:
            continue
        text = via + (" across the loop's back edge" if back else "")
        out.append(Move(pc, cfg.instructions[waiter].pc, cpc, reason, n * share, text))
    return out


def _links(
    samples: Mapping[int, Mapping[str, float]], moves: list[Move]
) -> tuple[dict[int, list[tuple[int, float]]], dict[int, list[tuple[int, float]]]]:
    """Each stalled PC's culprits with the share of its recorded samples each took, and each
    culprit's stalled PCs with the samples moved from each (`StallBlame.links`, ``caused``)."""
    recorded: dict[int, float] = defaultdict(float)
    for pc, reasons in samples.items():
        recorded[pc] += sum(float(v) for v in reasons.values() if float(v) > 0)
    per_link: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for m in moves:
        per_link[m.stalled_pc][m.culprit_pc] += m.samples
    links = {
        s: sorted(((c, v / recorded[s]) for c, v in d.items()), key=lambda t: -t[1])
        for s, d in per_link.items()
    }
    back_links: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for m in moves:
        back_links[m.culprit_pc][m.stalled_pc] += m.samples
    caused = {c: sorted(d.items(), key=lambda t: -t[1]) for c, d in back_links.items()}
    return links, caused


def _kept_notes(kept: list[Kept]) -> dict[int, str]:
    """Each PC's why for the most samples it kept."""
    notes: dict[int, str] = {}
    best: dict[int, float] = {}
    for k in kept:
        if k.samples > best.get(k.pc, 0.0):
            best[k.pc] = k.samples
            notes[k.pc] = k.why
    return notes


def blame_stalls(
    instructions: Sequence[Instruction],
    samples: Mapping[int, Mapping[str, float]],
    costs: Mapping[int, Mapping[str, float]] | None = None,
) -> StallBlame:
    """Move each dependency stall's samples onto the instruction(s) it waits for.

    Args:
        instructions: one function's SASS (``parse_cuobjdump(text)[name]``), pc order.
        samples: ``{pc offset: {reason: samples}}``, reasons as Nsight Compute's
            ``smsp__pcsamp_warps_issue_stalled_<reason>`` suffixes (``long_scoreboard``,
            ``wait``, ``math_pipe_throttle``, …; the full metric name is accepted too, the
            ``_not_issued`` variants are not wanted); pc offsets in bytes from the function
            start.
        costs: optional ``{pc offset: {metric: value}}`` from the source counters
            (``memory_l2_theoretical_sectors_global`` and ``…_ideal``,
            ``memory_l1_wavefronts_shared`` and ``…_ideal``, ``inst_executed``).

    Returns:
        A :class:`StallBlame`; ``blamed + unblamed == total``.
    """
    costs = costs or {}
    cfg = build_cfg(instructions)
    cache: dict[tuple[int, tuple[str, ...] | None], _Found] = {}
    by_pc: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    moves: list[Move] = []
    kept: list[Kept] = []
    total = 0.0
    for pc, reasons in samples.items():
        for full_reason, raw in reasons.items():
            reason = full_reason.removeprefix(_PREFIX)
            n = float(raw)
            if n <= 0:
                continue
            total += n
            decided = _decide(cfg, pc, reason, cache)
            if isinstance(decided, _Keep):
                kept.append(Kept(pc, reason, n, decided.category, decided.why))
                by_pc[pc][reason] += n
                continue
            for move in _moves(cfg, pc, reason, n, decided, costs):
                moves.append(move)
                by_pc[move.culprit_pc][reason] += move.samples
    blamed = sum(m.samples for m in moves)
    links, caused = _links(samples, moves)
    return StallBlame(
        by_pc={pc: dict(r) for pc, r in by_pc.items()},
        links=links,
        caused=caused,
        moves=tuple(moves),
        kept=tuple(kept),
        notes=_kept_notes(kept),
        total=total,
        blamed=blamed,
        unblamed=total - blamed,
    )


@dataclass(frozen=True)
class Explanation:
    """What a culprit is and what to do about it, one line each."""

    cause: str
    remedy: str


def _per_request(c: Mapping[str, float], key: str) -> tuple[float, float] | None:
    executed = c.get("inst_executed")
    value = c.get(key)
    if not executed or value is None:
        return None
    ideal = c.get(key + "_ideal")
    return value / executed, (ideal / executed if ideal else 0.0)


def _explain_kept(instruction: Instruction, reason: str) -> Explanation:
    """Samples kept on their instruction (a throttle, ``drain``, …): the reason and its
    remedy."""
    text = _KEPT_TEXT.get(reason, reason.replace("_", " ")).format(pipe=pipe_of(instruction))
    remedies = {
        "math_pipe_throttle": "the kernel is compute-bound here: fewer or cheaper operations",
        "mio_throttle": "fewer, wider shared-memory instructions; bank-conflict-free layouts",
        "lg_throttle": "fewer, wider global accesses (vectorise, coalesce)",
        "drain": "nothing to do unless the stores are uncoalesced",
        "barrier": "balance the work between warps before the barrier",
    }
    return Explanation(text, remedies.get(reason, "nothing specific"))


def _explain_global(base: str, c: Mapping[str, float], feeds_mma: bool) -> Explanation:
    """A global (or local) load, an async copy or an atomic: spills, uncoalesced accesses, a
    ``tl.dot`` operand, or memory latency."""
    what = {
        "LDGSTS": "async copy global → shared (cp.async)",
        "LDL": "local-memory load (register spill)",
        "ATOM": "atomic",
        "ATOMG": "atomic",
        "RED": "atomic reduction",
        "REDG": "atomic reduction",
    }.get(base, "global load")
    if base == "LDL":
        return Explanation(what, "reduce register pressure: smaller tiles, fewer live values")
    per = _per_request(c, "memory_l2_theoretical_sectors_global")
    if per is not None:
        got, ideal = per
        if ideal > 0 and got > 1.25 * ideal:
            return Explanation(
                f"{what}, {got:.0f} sectors per request (uncoalesced; ideal {ideal:.0f})",
                "check coalescing: neighbouring threads should read neighbouring addresses "
                "(the index's stride, a transposed layout, or stage through shared memory)",
            )
        what = f"{what}, {got:.0f} sectors per request"
    if feeds_mma or base == "LDGSTS":
        return Explanation(
            f"{what}, feeding tl.dot (tensor-core MMA waits on its operands)",
            "raise num_stages (software pipelining keeps later tiles' loads in flight) or "
            "check BLOCK_K",
        )
    return Explanation(
        f"{what} (memory latency)",
        "more memory in flight: vectorise, prefetch/num_stages, or more warps",
    )


def _explain_shared(c: Mapping[str, float], feeds_mma: bool) -> Explanation:
    """A shared-memory load: bank conflicts, a ``tl.dot`` operand, or its latency."""
    per = _per_request(c, "memory_l1_wavefronts_shared")
    if per is not None and per[1] > 0 and per[0] > 1.25 * per[1]:
        ways = per[0] / per[1]
        return Explanation(
            f"shared-memory load with bank conflicts ({ways:.0f}-way: {per[0]:.0f} wavefronts "
            f"per request, ideal {per[1]:.0f})",
            "pad the shared array (one extra column) or swizzle its layout",
        )
    if feeds_mma:
        return Explanation(
            "shared-memory load feeding tl.dot", "raise num_stages (software pipelining)"
        )
    return Explanation("shared-memory load", "keep more independent work between load and use")


def _explain_fixed(base: str) -> Explanation:
    """An instruction of fixed (or no memory) latency whose result is awaited."""
    if base in _GMMA or base in ("HMMA", "IMMA"):
        return Explanation(
            "tensor-core MMA (tl.dot) results awaited",
            "the math itself: larger tiles or fewer dependent MMAs per iteration",
        )
    if base == "MUFU":
        return Explanation(
            "special-function unit (exp, rsqrt, sin, …)",
            "fewer transcendental operations or their fast approximations",
        )
    if base == "LDC":
        return Explanation(
            "constant load (kernel arguments)", "nothing to do unless inside a hot loop"
        )
    if base in ("S2R", "S2UR"):
        return Explanation("special-register read (thread or block index)", "nothing to do")
    if base in ("STG", "ST", "STL", "STS"):
        return Explanation("store (its source registers are still being read)", "nothing specific")
    return Explanation(
        f"fixed-latency {base} result awaited",
        "more independent instructions between dependent ones (unrolling, more warps)",
    )


def explain(
    instruction: Instruction,
    cost: Mapping[str, float] | None = None,
    *,
    consumers: Sequence[Instruction] = (),
    reason: str | None = None,
) -> Explanation:
    """The culprit's cause and remedy in one line each.

    Args:
        instruction: the culprit (or a kept instruction with its ``reason``).
        cost: its per-PC metrics (``memory_l2_theoretical_sectors_global[_ideal]``,
            ``memory_l1_wavefronts_shared[_ideal]``, ``inst_executed``).
        consumers: instructions that waited on it (an ``HMMA``/``HGMMA`` among them means the
            load feeds ``tl.dot``).
        reason: for samples kept on the instruction (a throttle, ``drain``): the reason.
    """
    c = cost or {}
    base = instruction.base
    feeds_mma = any(
        x.base in _GMMA or x.base in ("HMMA", "IMMA", "DEPBAR", "WARPGROUP") for x in consumers
    )
    if reason is not None and reason not in DEPENDENCY_REASONS:
        return _explain_kept(instruction, reason)
    if base in ("LDG", "LD", "LDGSTS", "ATOM", "ATOMG", "RED", "REDG") or (base == "LDL"):
        return _explain_global(base, c, feeds_mma)
    if base in ("LDS", "LDSM", "ATOMS"):
        return _explain_shared(c, feeds_mma)
    return _explain_fixed(base)
