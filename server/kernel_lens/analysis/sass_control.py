"""SASS with its control words: instructions, registers, dependency barriers and branches.

``cuobjdump -sass`` prints every sm_70+ instruction as two 64-bit words: the first on the
instruction's own line, the second alone on the next line::

    /*00d0*/                   LDG.E R3, desc[UR4][R2.64] ;       /* 0x0000000402037981 */
                                                                   /* 0x000ee2000c1e1900 */

The second word's bits 41–61 are the *control word* the compiler wrote for the warp scheduler
(shifted right by 41):

======  ===========================================================================
bits    meaning
======  ===========================================================================
0–3     stall cycles before the next instruction may issue (fixed-latency results)
4       yield
5–7     write barrier set by this instruction (7 = none): released when its result
        is written (a variable-latency producer: memory, MUFU, S2R, …)
8–10    read barrier set (7 = none): released once its source registers were read
11–16   wait mask: barriers (bit n = barrier n) that must be released before issue
17–20   register reuse cache flags
======  ===========================================================================

So ``FADD R9, R4, R3`` with second word ``0x008fca…`` waits on barrier 3, which both
``LDG``\\ s with ``0x000ee2…`` set. :func:`parse_cuobjdump` reads a listing into
:class:`Instruction` objects (pc offset, predicate, opcode with modifiers, operands, the
registers written and read, :class:`Control`, branch targets); :func:`build_cfg` gives the
basic blocks and their predecessors for walking backwards over the control flow.

Register widths follow the opcode's modifiers (``.64``/``.128`` loads and stores, ``.WIDE``,
``FP64``, ``LDSM.x4``, ``HMMA``/``HGMMA`` shapes); a form not listed counts the named
register only. Pure text parsing: no process, no file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

__all__ = [
    "KNOWN_OPCODES",
    "Cfg",
    "Control",
    "Instruction",
    "build_cfg",
    "decode_control",
    "parse_cuobjdump",
    "parse_instruction",
]

#: Base opcodes of the Turing…Hopper instruction sets (CUDA Binary Utilities, "Instruction Set
#: Reference"). An opcode outside it is *unknown*: what it waits for is not decided.
KNOWN_OPCODES = frozenset(
    """
    FADD FADD32I FCHK FFMA FFMA32I FMNMX FMUL FMUL32I FSEL FSET FSETP FSWZADD MUFU
    HADD2 HADD2_32I HFMA2 HFMA2_32I HMMA HMNMX2 HMUL2 HMUL2_32I HSET2 HSETP2
    DADD DFMA DMMA DMUL DSETP DMNMX
    BMMA BMSK BREV FLO IABS IADD IADD3 IADD32I IDP IDP4A IMAD IMMA IMNMX IMUL IMUL32I ISCADD
    ISCADD32I ISETP LEA LOP LOP3 LOP32I POPC SHF SHL SHR VABSDIFF VABSDIFF4 VIADD VIADDMNMX
    VIMNMX VIMNMX3 VHMNMX
    F2F F2I I2F I2I I2IP I2FP F2IP FRND F2FP
    MOV MOV32I MOVM PRMT SEL SGXT SHFL
    PLOP3 PSETP P2R R2P
    FENCE LD LDC LDG LDGDEPBAR LDGMC LDGSTS LDL LDS LDSM STSM ST STG STL STS STAS MATCH QSPC
    ATOM ATOMS ATOMG RED REDAS REDG CCTL CCTLL CCTLT ERRBAR MEMBAR
    R2UR REDUX S2UR UBMSK UBREV UCLEA UF2FP UFLO UIADD3 UIMAD UIMNMX UISETP ULDC ULEA ULOP
    ULOP3 ULOP32I UMOV UP2UR UPLOP3 UPOPC UPRMT UPSETP UR2UP USEL USGXT USHF USHL USHR VOTEU
    UVIADD USETMAXREG ULEPC UCGABAR_ARV UCGABAR_WAIT
    UBLKCP UBLKPF UBLKRED UTMACCTL UTMACMDFLUSH UTMALDG UTMAPF UTMAREDG UTMASTG
    TEX TLD TLD4 TMML TXD TXQ SUATOM SULD SURED SUST
    ACQBULK BMOV BPT BRA BREAK BRX BRXU BSSY BSYNC CALL CGAERRBAR ELECT ENDCOLLECTIVE EXIT JMP
    JMX JMXU KILL NANOSLEEP PREEXIT RET RPCMOV WARPSYNC YIELD
    B2R BAR CS2R DEPBAR GETLMEMBASE LEPC NOP PMTRIG R2B S2R SETCTAID SETLMEMBASE VOTE
    HGMMA IGMMA QGMMA BGMMA WARPGROUP SYNCS
    """.split()
)

_NO_DEST = frozenset(
    """
    ST STG STL STS STSM STAS RED REDAS REDG SUST SURED BAR BRA BRX BRXU JMP JMX JMXU EXIT CALL
    RET BSSY BSYNC BREAK WARPSYNC NOP MEMBAR DEPBAR LDGDEPBAR LDGSTS UTMALDG UTMASTG UTMAPF
    UTMAREDG UTMACCTL UTMACMDFLUSH UBLKCP UBLKPF UBLKRED WARPGROUP FENCE ERRBAR CGAERRBAR CCTL
    CCTLL CCTLT KILL BPT YIELD NANOSLEEP PREEXIT ACQBULK UCGABAR_ARV UCGABAR_WAIT ENDCOLLECTIVE
    USETMAXREG PMTRIG
    """.split()
)
_INDIRECT = frozenset({"BRX", "BRXU", "JMX", "JMXU"})
#: ``ISETP P0, PT, …``, ``PLOP3.LUT P0, PT, …``, ``SHFL.BFLY PT, R3, …``: two destinations.
_TWO_DESTS = frozenset(
    "ISETP FSETP DSETP HSETP2 PSETP UISETP UPSETP PLOP3 UPLOP3 SHFL VOTE".split()
)
#: ``ATOMG.E.ADD PT, R2, [R4.64], R5``: a predicate, then the data destination.
_PRED_THEN_DEST = frozenset({"ATOM", "ATOMG", "ATOMS"})

_LINE_RE = re.compile(
    r"^\s*/\*(?P<pc>[0-9a-fA-F]+)\*/\s+(?P<body>.*?)\s*;?\s*"
    r"(?:/\*\s*(?P<lo>0x[0-9a-fA-F]{16})\s*\*/)?\s*$"
)
_NVDISASM_FUNC_RE = re.compile(r"^\.text\.(?P<name>[^\s:]+):\s*$")
_LABEL_RE = re.compile(r"^(?P<label>[.$\w]+):\s*$")
_LABEL_REF_RE = re.compile(r"`\((?P<label>[^)\s]+)\)")
_HI_RE = re.compile(r"^\s*/\*\s*(?P<hi>0x[0-9a-fA-F]{16})\s*\*/\s*$")
_FUNC_RE = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)")
_PRED_RE = re.compile(r"^@(?P<p>!?U?P(?:\d+|T))\s+")
_REG_RE = re.compile(
    r"(?<![\w.])(?P<reg>U?R(?:\d+|Z)|U?P(?:\d+|T))(?P<suffix>(?:\.(?:64|reuse|H0|H1|B\d|F32|X\d))*)(?![\w])"
)
_HEX_RE = re.compile(r"0x([0-9a-fA-F]+)")


@dataclass(frozen=True)
class Control:
    """An instruction's decoded control word (the second 64-bit word shifted right by 41).

    Attributes:
        stall: cycles the scheduler waits before issuing the next instruction (0–15).
        yield_: the yield bit.
        write_barrier: the barrier (0–5) released when this instruction's result is written;
            ``None`` for none (encoded 7).
        read_barrier: the barrier released once its source registers were read; ``None``.
        wait_mask: 6 bits, bit ``n`` = waits on barrier ``n`` before issue.
        reuse: the 4 register-reuse flags.
    """

    stall: int
    yield_: bool
    write_barrier: int | None
    read_barrier: int | None
    wait_mask: int
    reuse: int

    @property
    def waits(self) -> tuple[int, ...]:
        """The barriers waited on, ascending."""
        return tuple(b for b in range(6) if self.wait_mask >> b & 1)

    @property
    def sets(self) -> tuple[int, ...]:
        """The barriers this instruction sets (write, then read), without duplicates."""
        out: list[int] = []
        for b in (self.write_barrier, self.read_barrier):
            if b is not None and b not in out:
                out.append(b)
        return tuple(out)


def decode_control(hi: int) -> Control:
    """Decode the control word of an instruction from its second (upper) 64-bit word."""
    c = (hi >> 41) & 0x1FFFFF
    wbar = (c >> 5) & 7
    rbar = (c >> 8) & 7
    return Control(
        stall=c & 0xF,
        yield_=bool(c >> 4 & 1),
        write_barrier=None if wbar == 7 else wbar,
        read_barrier=None if rbar == 7 else rbar,
        wait_mask=(c >> 11) & 0x3F,
        reuse=(c >> 17) & 0xF,
    )


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction.

    Attributes:
        pc: byte offset from the function's start.
        text: the instruction as printed, predicate included, without ``;``.
        predicate: the guard (``P0``, ``!P0``, ``UP1``…) or ``None``.
        opcode: the opcode with its modifiers (``LDG.E.128``).
        operands: the operands as printed.
        writes: registers written (``R4``, ``UR6``, ``P0``; 64-bit pairs and wider results
            expanded; ``RZ``/``PT`` left out).
        reads: registers read, address registers and the guard predicate included.
        control: the decoded control word; ``None`` when the listing has no second word.
        targets: branch/call targets (pc offsets) for direct branches.
        flow: ``next`` (falls through), ``branch`` (``BRA``/``JMP`` always), ``cond`` (a
            predicated branch), ``exit``, ``cond_exit``, ``call``, ``return``, ``indirect``.
    """

    pc: int
    text: str
    predicate: str | None
    opcode: str
    operands: tuple[str, ...]
    writes: frozenset[str]
    reads: frozenset[str]
    control: Control | None
    targets: tuple[int, ...] = ()
    flow: str = "next"
    hi: int | None = field(default=None, repr=False)

    @property
    def base(self) -> str:
        """The opcode without modifiers (``LDG``)."""
        return self.opcode.split(".", 1)[0]

    @property
    def modifiers(self) -> tuple[str, ...]:
        """The opcode's modifiers (``("E", "128")``)."""
        return tuple(self.opcode.split(".")[1:])

    @property
    def known(self) -> bool:
        """Whether the base opcode is in :data:`KNOWN_OPCODES`."""
        return self.base in KNOWN_OPCODES


def _width_of(opcode: str) -> int:
    """Registers in a memory access's data operand from its modifiers."""
    mods = opcode.split(".")[1:]
    if "128" in mods:
        return 4
    if "64" in mods:
        return 2
    return 1


def _expand(reg: str, width: int) -> list[str]:
    if reg in ("RZ", "URZ", "PT", "UPT") or width <= 1:
        return [] if reg in ("RZ", "URZ", "PT", "UPT") else [reg]
    prefix = "UR" if reg.startswith("UR") else "R"
    n = int(reg[len(prefix) :])
    return [f"{prefix}{n + k}" for k in range(width)]


def _regs(operand: str, width: int = 1) -> list[str]:
    """Registers named in one operand; ``.64`` on a register (``[R2.64]``) means a pair."""
    out: list[str] = []
    for m in _REG_RE.finditer(operand):
        reg = m.group("reg")
        w = 2 if ".64" in m.group("suffix") else width
        if operand[max(0, m.start() - 5) : m.start()] == "desc[":
            w = 2  # a memory descriptor is a 64-bit uniform pair
        if reg.startswith(("P", "UP")):
            w = 1
        out.extend(_expand(reg, w))
    return out


def _split_operands(rest: str) -> list[str]:
    """Split on commas outside brackets."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in rest:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        out.append(tail)
    return out


def _is_pred(operand: str) -> bool:
    return re.fullmatch(r"U?P(?:\d+|T)", operand) is not None


def _mma_widths(opcode: str, base: str) -> tuple[int, int, int, int]:
    """(D, A, B, C) register counts of an ``HMMA``/``IMMA``/``HGMMA`` form."""
    mods = opcode.split(".")[1:]
    f32 = any(m in ("F32", "S32") for m in mods)
    if base.endswith("GMMA"):
        shape = next((m for m in mods if re.fullmatch(r"\d+x\d+x\d+", m)), "64x8x16")
        n = int(shape.split("x")[1])
        d = n // 2 if f32 or base == "IGMMA" else n // 4
        return d, 4, 0, d
    shape = next((m for m in mods if re.fullmatch(r"\d+", m)), "16816")
    d = 4 if f32 else 2
    if shape == "1688":
        return d, 2, 1, d
    return d, 4, 2, d


def _defs_uses(opcode: str, operands: list[str]) -> tuple[list[str], list[str]]:
    base = opcode.split(".", 1)[0]
    mods = opcode.split(".")[1:]
    if base in _NO_DEST:
        width = _width_of(opcode) if base in ("ST", "STG", "STL", "STS", "RED", "REDG") else 1
        uses: list[str] = []
        for i, op in enumerate(operands):
            last = i == len(operands) - 1
            uses.extend(_regs(op, width if last and "[" not in op else 1))
        return [], uses
    n_dest = 1
    if base in _TWO_DESTS or (base in _PRED_THEN_DEST and operands and _is_pred(operands[0])):
        n_dest = 2
    else:
        while n_dest < len(operands) and _is_pred(operands[n_dest]) and operands[0] != "":
            n_dest += 1
        # ``ISETP P0, PT, R9, UR4, PT``: only leading predicates; a comparison's last operand
        # (a predicate source) stays a source.
        if n_dest == len(operands):
            n_dest = max(1, n_dest - 1)
    dests, srcs = operands[:n_dest], operands[n_dest:]
    dwidth = 1
    swidths = [1] * len(srcs)
    if base in (
        "LDG",
        "LD",
        "LDL",
        "LDS",
        "LDC",
        "ULDC",
        "ATOM",
        "ATOMG",
        "ATOMS",
        "LDGMC",
        "SULD",
    ):
        dwidth = _width_of(opcode)
    elif base == "LDSM":
        dwidth = (
            4
            if any(m in ("4", "x4") for m in mods)
            else 2
            if any(m in ("2", "x2") for m in mods)
            else 1
        )
    elif base in ("DADD", "DMUL", "DFMA", "DMNMX"):
        dwidth = 2
        swidths = [2] * len(srcs)
    elif base == "DSETP":
        swidths = [2] * len(srcs)
    elif "WIDE" in mods:
        dwidth = 2
        if srcs:
            swidths[-1] = 2
    elif base == "CS2R" and "32" not in mods:
        dwidth = 2
    elif base in ("HMMA", "IMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA"):
        d, a, b, c = _mma_widths(opcode, base)
        dwidth = d
        widths = [a, b, c] if not base.endswith("GMMA") else [a, c]
        for i in range(len(srcs)):
            if base.endswith("GMMA") and "gdesc" in srcs[i]:
                continue
            if widths:
                swidths[i] = widths.pop(0)
        if base.endswith("GMMA"):
            # the accumulator source is the last register operand
            for i in range(len(srcs) - 1, -1, -1):
                if srcs[i].startswith("R"):
                    swidths[i] = d
                    break
    defs: list[str] = []
    for op in dests:
        defs.extend(_regs(op, dwidth if op.startswith(("R", "UR")) else 1))
    uses = []
    for op, w in zip(srcs, swidths, strict=True):
        uses.extend(_regs(op, w))
    return defs, uses


def parse_instruction(pc: int, body: str, hi: int | None = None) -> Instruction:
    """One instruction from its printed text (``@!P0 LDG.E R2, desc[UR4][R2.64]``)."""
    text = body.strip().rstrip(";").strip()
    predicate = None
    rest = text
    m = _PRED_RE.match(rest)
    if m:
        predicate = m.group("p")
        rest = rest[m.end() :]
    parts = rest.split(None, 1)
    opcode = parts[0] if parts else ""
    operand_text = parts[1] if len(parts) > 1 else ""
    operands = _split_operands(operand_text)
    base = opcode.split(".", 1)[0]
    defs, uses = _defs_uses(opcode, operands)
    if predicate and predicate.lstrip("!") not in ("PT", "UPT"):
        uses.append(predicate.lstrip("!"))
    targets: tuple[int, ...] = ()
    flow = "next"
    conditional = predicate is not None and predicate not in ("PT",)
    if base in ("BRA", "JMP"):
        hexes = _HEX_RE.findall(operand_text)
        if hexes:
            targets = (int(hexes[-1], 16),)
        # ``BRA.DIV UR4, 0x…`` and ``BRA.U !UP0, 0x…`` carry their condition as an operand.
        cond_operand = any(_is_pred(op.lstrip("!")) for op in operands[:-1]) or "DIV" in opcode
        flow = "cond" if conditional or cond_operand else "branch"
    elif base in _INDIRECT:
        flow = "indirect"
    elif base in ("EXIT", "KILL"):
        flow = "cond_exit" if conditional else "exit"
    elif base == "CALL":
        hexes = _HEX_RE.findall(operand_text)
        targets = (int(hexes[-1], 16),) if hexes else ()
        flow = "call"
    elif base == "RET":
        flow = "return"
    skip = {"RZ", "URZ", "PT", "UPT"}
    return Instruction(
        pc=pc,
        text=text,
        predicate=predicate,
        opcode=opcode,
        operands=tuple(operands),
        writes=frozenset(r for r in defs if r not in skip),
        reads=frozenset(r for r in uses if r not in skip),
        control=decode_control(hi) if hi is not None else None,
        targets=targets,
        flow=flow,
        hi=hi,
    )


def parse_cuobjdump(text: str) -> dict[str, list[Instruction]]:
    """The instructions of each function in a ``cuobjdump -sass`` listing (or an
    ``nvdisasm -hex`` one: ``.text.NAME:`` sections, ``.L_x_N`` labels as branch targets).

    Args:
        text: the listing (every ``Function : NAME`` section; sm_70+ two-word encodings).

    Returns:
        ``{function name as printed (mangled for C++): [Instruction, …]}`` in pc order. An
        instruction whose second word is missing (``nvdisasm`` without ``-hex``) gets
        ``control=None``. A function listed twice (a fat binary with several cubins) keeps
        its first listing.
    """
    out: dict[str, list[Instruction]] = {}
    labels: dict[str, dict[str, int]] = {}
    current: list[Instruction] | None = None
    current_labels: dict[str, int] = {}
    waiting_labels: list[str] = []
    pending: tuple[int, str] | None = None

    def flush(hi: int | None = None) -> None:
        nonlocal pending
        if pending is not None and current is not None:
            current.append(parse_instruction(pending[0], pending[1], hi))
            for label in waiting_labels:
                current_labels[label] = pending[0]
            waiting_labels.clear()
        pending = None

    for line in text.splitlines():
        fm = _FUNC_RE.match(line) or _NVDISASM_FUNC_RE.match(line)
        if fm:
            flush()
            waiting_labels.clear()
            name = fm.group("name")
            # a function listed again (the same kernel in another cubin of a fat binary):
            # the first listing is kept; ``cuobjdump -sass -arch sm_XX`` picks one
            current = [] if name in out else out.setdefault(name, [])
            current_labels = labels.setdefault(name, {}) if current is out.get(name) else {}
            continue
        if current is None:
            continue
        lm = _LINE_RE.match(line)
        if lm:
            flush()
            pending = (int(lm.group("pc"), 16), lm.group("body"))
            if lm.group("lo") is None:
                flush()
            continue
        hm = _HI_RE.match(line)
        if hm and pending is not None:
            flush(int(hm.group("hi"), 16))
            continue
        lab = _LABEL_RE.match(line)
        if lab:
            flush()
            waiting_labels.append(lab.group("label"))
    flush()
    for name, ins in out.items():
        names = labels.get(name, {})
        for k, x in enumerate(ins):
            refs = _LABEL_REF_RE.findall(" ".join(x.operands))
            if refs and not x.targets and x.flow in ("branch", "cond", "call"):
                targets = tuple(names[r] for r in refs if r in names)
                ins[k] = replace(x, targets=targets[-1:])
    return out


@dataclass(frozen=True)
class Cfg:
    """Basic blocks and edges of one function, by instruction index.

    Attributes:
        instructions: the function's instructions in pc order.
        block_of: instruction index → block index.
        blocks: each block's ``(first, last)`` instruction indices (inclusive).
        succs: block → successor blocks.
        preds: block → predecessor blocks.
        back_edges: ``(from block, to block)`` edges whose target does not come later, among
            the blocks reachable from the entry (the padding ``BRA`` to itself is not one).
        indirect: whether the function has an indirect branch (``BRX``/``JMX``): its targets,
            and so some predecessors, are unknown.
    """

    instructions: tuple[Instruction, ...]
    block_of: tuple[int, ...]
    blocks: tuple[tuple[int, int], ...]
    succs: tuple[tuple[int, ...], ...]
    preds: tuple[tuple[int, ...], ...]
    back_edges: frozenset[tuple[int, int]]
    indirect: bool

    def index_of(self, pc: int) -> int | None:
        """The index of the instruction at ``pc``; ``None`` if there is none."""
        return self._by_pc.get(pc)

    @property
    def _by_pc(self) -> dict[int, int]:
        cached: dict[int, int] | None = self.__dict__.get("_pcs")
        if cached is None:
            cached = {ins.pc: i for i, ins in enumerate(self.instructions)}
            object.__setattr__(self, "_pcs", cached)
        return cached

    def prev_in_flow(self, index: int) -> list[int]:
        """Indices of the instructions that may run right before ``index``."""
        b = self.block_of[index]
        first, _ = self.blocks[b]
        if index > first:
            return [index - 1]
        return [self.blocks[p][1] for p in self.preds[b]]


def build_cfg(instructions: Sequence[Instruction]) -> Cfg:
    """The basic blocks of ``instructions`` (one function, pc order) and their edges.

    A block starts at the function's entry, at a branch or call target, and after a branch,
    exit, return or indirect branch. A predicated branch or exit falls through too; a call
    is taken as returning to the next instruction (its callee is not followed).
    """
    ins = tuple(instructions)
    by_pc = {x.pc: i for i, x in enumerate(ins)}
    leaders = {0} if ins else set()
    for i, x in enumerate(ins):
        for t in x.targets:
            if t in by_pc:
                leaders.add(by_pc[t])
        if x.flow != "next" and i + 1 < len(ins):
            leaders.add(i + 1)
    starts = sorted(leaders)
    blocks = [
        (s, (starts[k + 1] - 1) if k + 1 < len(starts) else len(ins) - 1)
        for k, s in enumerate(starts)
    ]
    block_of = [0] * len(ins)
    for b, (s, e) in enumerate(blocks):
        for i in range(s, e + 1):
            block_of[i] = b
    succs: list[list[int]] = [[] for _ in blocks]
    for b, (_, e) in enumerate(blocks):
        last = ins[e]
        nxt = block_of[e + 1] if e + 1 < len(ins) else None
        out: list[int] = []
        if last.flow in ("branch", "cond"):
            out.extend(block_of[by_pc[t]] for t in last.targets if t in by_pc)
        if last.flow in ("next", "cond", "cond_exit", "call") and nxt is not None:
            out.append(nxt)
        if last.flow == "call":
            out.extend(block_of[by_pc[t]] for t in last.targets if t in by_pc)
        succs[b] = list(dict.fromkeys(out))
    reachable = {0} if blocks else set()
    todo = list(reachable)
    while todo:
        b = todo.pop()
        for s in succs[b]:
            if s not in reachable:
                reachable.add(s)
                todo.append(s)
    preds: list[list[int]] = [[] for _ in blocks]
    back: set[tuple[int, int]] = set()
    for b, ss in enumerate(succs):
        for s in ss:
            preds[s].append(b)
            if s <= b and b in reachable:
                back.add((b, s))
    return Cfg(
        instructions=ins,
        block_of=tuple(block_of),
        blocks=tuple(blocks),
        succs=tuple(tuple(s) for s in succs),
        preds=tuple(tuple(p) for p in preds),
        back_edges=frozenset(back),
        indirect=any(x.flow == "indirect" for x in ins),
    )
