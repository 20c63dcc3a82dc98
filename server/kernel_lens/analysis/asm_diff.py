"""Compare two kernels' assembly (PTX or SASS): a normalised text per side, so that a diff shows
structure rather than names, and a summary per side (instructions by class, global load and
store widths, registers, spills, shared memory, block size) with one line saying what differs
most. Pure text work: the texts, line maps and resources come from the Triton and load_inline
stages.

Normalisation (:func:`normalise`) keeps every instruction, in order, and canonicalises what
differs between two compiles of the same code:

* registers are renumbered per class by first use (``%rd7`` → ``%rd0``; SASS ``R6`` → ``R0``,
  ``P0``, ``UR4`` …; ``RZ``/``PT`` kept), register declarations lose their counts;
* labels become ``L0``, ``L1``… by first appearance; labels no branch names are dropped;
* the kernel's name becomes ``KERNEL`` and its parameters ``param_N`` (PTX), constant-bank
  addresses become ``c[0x0][K0]``… (SASS), instruction addresses and encodings are dropped;
* comments, ``.loc``/``.file`` directives, debug sections, the PTX header (``.version``,
  ``.target``, ``.address_size``), blank lines, NOP padding and register reuse flags are dropped;
  spacing inside operands is made uniform.

Each normalised line remembers the original line it came from, so a line map of the original
text (:mod:`kernel_lens.analysis.asm_map`) carries over (:func:`carry_line_map`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from kernel_lens.wire.lsp import AsmDiffDocument, AsmDiffResult, AsmDiffSide, AsmDiffSummary
from kernel_lens.wire.results import LineMapEntry

__all__ = [
    "CLASSES",
    "Normalised",
    "Side",
    "Summary",
    "block_size_in_source",
    "carry_line_map",
    "compare",
    "entry_names",
    "extract_entry",
    "header_lines",
    "inline_side",
    "kernels_launched_by",
    "label_of",
    "matches_kernel",
    "normalise",
    "summarise",
    "target_kind",
    "triton_side",
    "verdict",
]

#: Instruction classes of the summary, in display order, with their labels.
CLASSES: dict[str, str] = {
    "global_load": "global loads",
    "global_store": "global stores",
    "atomic": "atomics",
    "shared": "shared memory",
    "local": "local (spills)",
    "alu": "FMA/ALU",
    "tensor": "tensor core",
    "control": "control flow",
    "other": "moves/other",
}


@dataclass(frozen=True)
class Normalised:
    """A normalised assembly text.

    Attributes:
        text: the normalised lines joined by newlines.
        origin: for each normalised line (index 0 = line 1), its 1-based line in the original.
    """

    text: str
    origin: list[int]


# PTX.

_PTX_REG = re.compile(r"%([a-z]+)(\d+)\b")
_PTX_REG_DECL = re.compile(r"%([a-z]+)<\d+>")
_PTX_LABEL = re.compile(r"\$L__\w+|\bL__\w+|\bLBB\d+_\d+")
_PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$.]+)\s*\(")
#: Dropped from the normalised PTX: blank lines, comments, debug line info, and the module's
#: header (the PTX version and target differ between compilers; the summary says the arch).
_PTX_SKIP = re.compile(
    r"^\s*(?:$|//|\.loc\b|\.file\b|\.pragma\b|\.version\b|\.target\b|\.address_size\b)"
)
_PTX_ALIGN_BRACKETS = re.compile(r"\[\s*([^\]]*?)\s*\]")
_PTX_PLUS_ZERO = re.compile(r"\s*\+\s*0\s*$")
#: Directives written at the left margin in the normalised text (the rest is indented).
_PTX_TOP = (
    ".version", ".target", ".address_size", ".visible", ".entry", ".weak", ".extern", ".global",
    ".const", ".reqntid", ".maxntid", ".minnctapersm", ".maxnreg", "{", "}", ")",
)  # fmt: skip


def _strip_comment(line: str) -> str:
    cut = line.find("//")
    return line[:cut] if cut >= 0 else line


def _ptx_branch_targets(lines: list[str]) -> set[str]:
    targets: set[str] = set()
    for line in lines:
        code = _strip_comment(line).strip()
        if not code or code.endswith(":"):
            continue
        targets.update(_PTX_LABEL.findall(code))
    return targets


def _normalise_ptx(text: str) -> Normalised:
    lines = text.splitlines()
    targets = _ptx_branch_targets(lines)
    entries = [m.group(1) for line in lines if (m := _PTX_ENTRY.match(line))]
    regs: dict[str, dict[str, int]] = {}
    labels: dict[str, str] = {}

    def reg(m: re.Match[str]) -> str:
        cls, number = m.group(1), m.group(2)
        table = regs.setdefault(cls, {})
        return f"%{cls}{table.setdefault(number, len(table))}"

    def label(m: re.Match[str]) -> str:
        return labels.setdefault(m.group(0), f"L{len(labels)}")

    out: list[str] = []
    origin: list[int] = []
    in_debug = False
    depth = 0
    for no, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if in_debug:
            depth += stripped.count("{") - stripped.count("}")
            if depth <= 0:
                in_debug = False
            continue
        if stripped.startswith(".section") and ".debug" in stripped:
            depth = stripped.count("{") - stripped.count("}")
            # `.section .debug_info` then `{` on the next line; `{ }` on the same line closes it.
            in_debug = depth > 0 or "{" not in stripped
            continue
        if _PTX_SKIP.match(raw):
            continue
        code = _strip_comment(raw).strip()
        if not code:
            continue
        if code.endswith(":") and " " not in code:
            name = code[:-1]
            if name not in targets:
                continue
            out.append(f"{label_of(name, labels)}:")
            origin.append(no)
            continue
        for entry in entries:
            code = code.replace(f"{entry}_param_", "param_")
            code = re.sub(rf"(?<![\w$]){re.escape(entry)}(?![\w$])", "KERNEL", code)
        code = _PTX_REG_DECL.sub(lambda m: f"%{m.group(1)}<N>", code)
        code = _PTX_REG.sub(reg, code)
        code = _PTX_LABEL.sub(label, code)
        code = _PTX_ALIGN_BRACKETS.sub(
            lambda m: "[" + _PTX_PLUS_ZERO.sub("", re.sub(r"\s+", " ", m.group(1))) + "]", code
        )
        code = re.sub(r"\{\s*", "{", code)
        code = re.sub(r"\s*\}", "}", code)
        code = re.sub(r"\s+", " ", code)
        indent = "" if code.startswith(_PTX_TOP) or code.endswith(":") else "\t"
        out.append(indent + code)
        origin.append(no)
    return Normalised("\n".join(out), origin)


def label_of(name: str, labels: dict[str, str]) -> str:
    """The canonical name of label ``name`` (``L0``, ``L1``… in order of first appearance)."""
    return labels.setdefault(name, f"L{len(labels)}")


# SASS.

_SASS_INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s*(?P<code>.*?)\s*;?\s*(?:/\*.*\*/)?\s*$")
_SASS_LABEL_DEF = re.compile(r"^\s*(\.L_x_\d+|\.L_\w+):\s*$")
_SASS_LABEL = re.compile(r"\.L_x_\d+|\.L_\w+")
_SASS_REG = re.compile(r"\b(UR|UP|R|P|B)(\d+)\b")
_SASS_CONST = re.compile(r"c\[(0x[0-9a-f]+)\]\[(0x[0-9a-f]+)\]")


def _sass_instructions(text: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each instruction (address, ``;`` and encoding comment removed)."""
    found: list[tuple[int, str]] = []
    for no, raw in enumerate(text.splitlines(), 1):
        m = _SASS_INSTR.match(raw)
        if m:
            code = m.group("code").rstrip(" ;")
            if code:
                found.append((no, code))
    return found


def _normalise_sass(text: str) -> Normalised:
    lines = text.splitlines()
    targets: set[str] = set()
    for _, code in _sass_instructions(text):
        targets.update(_SASS_LABEL.findall(code))
    regs: dict[str, dict[str, int]] = {}
    labels: dict[str, str] = {}
    consts: dict[str, str] = {}

    def reg(m: re.Match[str]) -> str:
        cls, number = m.group(1), m.group(2)
        table = regs.setdefault(cls, {})
        return f"{cls}{table.setdefault(number, len(table))}"

    def const(m: re.Match[str]) -> str:
        key = f"{m.group(1)}:{m.group(2)}"
        return f"c[{m.group(1)}][{consts.setdefault(key, f'K{len(consts)}')}]"

    out: list[str] = []
    origin: list[int] = []
    for no, raw in enumerate(lines, 1):
        m = _SASS_LABEL_DEF.match(raw)
        if m:
            if m.group(1) in targets:
                out.append(f"{label_of(m.group(1), labels)}:")
                origin.append(no)
            continue
        im = _SASS_INSTR.match(raw)
        if not im:
            continue
        code = im.group("code").rstrip(" ;")
        if not code or code == "NOP":
            continue
        code = code.replace(".reuse", "")
        code = _SASS_CONST.sub(const, code)
        code = _SASS_REG.sub(reg, code)
        code = _SASS_LABEL.sub(lambda m: label_of(m.group(0), labels), code)
        code = code.replace("`(", "(")
        code = re.sub(r"\s+", " ", code).strip()
        out.append("\t" + code)
        origin.append(no)
    return Normalised("\n".join(out), origin)


def normalise(stage: str, text: str) -> Normalised:
    """The normalised text of ``stage`` (``ptx`` or ``sass``) and each line's origin.

    Raises:
        ValueError: another stage.
    """
    if stage == "ptx":
        return _normalise_ptx(text)
    if stage == "sass":
        return _normalise_sass(text)
    raise ValueError(f"assembly diff compares PTX or SASS, not {stage!r}")


def carry_line_map(
    line_map: list[LineMapEntry], origin: list[int], *, offset: int = 0
) -> list[LineMapEntry]:
    """``[{"source_line", "asm_lines"}]`` of an original text carried onto its normalised text
    (``origin`` from :class:`Normalised`), each line moved down by ``offset`` (a header)."""
    where: dict[int, int] = {orig: i + 1 for i, orig in enumerate(origin)}
    out: list[LineMapEntry] = []
    for entry in line_map:
        lines = sorted({where[a] + offset for a in entry["asm_lines"] if a in where})
        if lines:
            out.append({"source_line": entry["source_line"], "asm_lines": lines})
    return out


# One kernel out of a module (load_inline's PTX holds every kernel of the CUDA source).


def entry_names(stage: str, text: str) -> list[str]:
    """The kernels (entry functions) of a PTX module or of ``nvdisasm`` output, in order."""
    if stage == "ptx":
        return [m.group(1) for line in text.splitlines() if (m := _PTX_ENTRY.match(line))]
    names: list[str] = []
    for line in text.splitlines():
        m = re.match(r"^//-+\s+\.text\.(\S+)\s+-+", line)
        if m:
            names.append(m.group(1))
    return names


def matches_kernel(entry: str, name: str) -> bool:
    """Whether the (possibly mangled) entry ``entry`` is the CUDA function ``name``."""
    if entry == name:
        return True
    # Itanium mangling: _Z13square_kernelPKfPfl, or nested …E / templated …I.
    return re.search(rf"(?<!\d){len(name)}{re.escape(name)}(?=[A-Z]|$)", entry) is not None


def extract_entry(stage: str, text: str, entry: str) -> tuple[str, int]:
    """The text of one entry function of a module and the original line it starts on (1-based).

    Raises:
        ValueError: no such entry.
    """
    lines = text.splitlines()
    if stage == "ptx":
        for i, line in enumerate(lines):
            m = _PTX_ENTRY.match(line)
            if m and m.group(1) == entry:
                depth = 0
                opened = False
                for j in range(i, len(lines)):
                    code = _strip_comment(lines[j])
                    depth += code.count("{") - code.count("}")
                    opened = opened or "{" in code
                    if opened and depth <= 0:
                        return "\n".join(lines[i : j + 1]), i + 1
                return "\n".join(lines[i:]), i + 1
    else:
        for i, line in enumerate(lines):
            if re.match(rf"^//-+\s+\.text\.{re.escape(entry)}\s+-+", line):
                for j in range(i + 1, len(lines)):
                    if lines[j].startswith("//----"):
                        return "\n".join(lines[i:j]).rstrip(), i + 1
                return "\n".join(lines[i:]).rstrip(), i + 1
    raise ValueError(f"no kernel {entry} in the {stage.upper()}")


def kernels_launched_by(cuda_source: str, host_function: str) -> list[str]:
    """The ``__global__`` kernels that the host function ``host_function`` of a CUDA source
    launches (``name<<<…>>>``), in order."""
    body = _function_body(cuda_source, host_function)
    if body is None:
        return []
    found: list[str] = []
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*<<<", body):
        if m.group(1) not in found:
            found.append(m.group(1))
    return found


def _function_body(source: str, name: str) -> str | None:
    for m in re.finditer(rf"\b{re.escape(name)}\s*\([^;{{)]*\)[^;{{]*\{{", source):
        depth = 0
        for j in range(m.end() - 1, len(source)):
            if source[j] == "{":
                depth += 1
            elif source[j] == "}":
                depth -= 1
                if depth == 0:
                    return source[m.end() : j]
    return None


def block_size_in_source(cuda_source: str, kernel: str) -> tuple[int | None, str | None]:
    """The threads per block of ``kernel``'s launch in a CUDA source, when its text says
    (``kernel<<<blocks, 256>>>``, ``int threads = 1024; kernel<<<b, threads>>>``,
    ``dim3 block(16, 16)``), and the text it came from."""
    m = re.search(rf"\b{re.escape(kernel)}\s*(?:<[^<>;]*>)?\s*<<<\s*[^,>]+,\s*([^,>]+?)\s*[,>]",
                  cuda_source)  # fmt: skip
    if m is None:
        return None, None
    arg = m.group(1).strip()
    if arg.isdigit():
        return int(arg), f"<<<…, {arg}>>>"
    if not re.fullmatch(r"[A-Za-z_]\w*", arg):
        return None, None
    before = cuda_source[: m.start()]
    dims = list(re.finditer(rf"\bdim3\s+{arg}\s*[({{]\s*(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?",
                            before))  # fmt: skip
    if dims:
        d = dims[-1]
        total = 1
        for g in d.groups():
            total *= int(g) if g else 1
        return total, d.group(0).strip() + ")"
    assigns = list(re.finditer(rf"\b{arg}\s*=\s*(\d+)\s*;", before))
    if assigns:
        a = assigns[-1]
        return int(a.group(1)), f"{arg} = {a.group(1)}"
    return None, None


# The summary.


@dataclass
class Summary:
    """One kernel's instruction mix and resources.

    Attributes:
        instructions: instructions counted (NOP padding and directives are not).
        classes: class (:data:`CLASSES`) → count.
        fma: floating-point FMAs (counted in ``alu`` too).
        load_widths: bits per thread of each global load instruction → count.
        store_widths: the same for global stores.
        registers, spills, shared_bytes: per thread / bytes, where known.
        block_size: threads per block, where known, and ``block_from`` where it came from.
    """

    instructions: int = 0
    classes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    fma: int = 0
    load_widths: dict[int, int] = field(default_factory=dict)
    store_widths: dict[int, int] = field(default_factory=dict)
    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    block_size: int | None = None
    block_from: str | None = None

    def load_bits(self) -> float | None:
        """Mean bits per thread per global load instruction (``None`` without loads)."""
        return _mean_width(self.load_widths)

    def store_bits(self) -> float | None:
        """Mean bits per thread per global store instruction (``None`` without stores)."""
        return _mean_width(self.store_widths)

    def to_json(self) -> AsmDiffSummary:
        """The wire's ``AsmDiffSummary`` (width keys as strings)."""
        return {
            "instructions": self.instructions,
            "classes": dict(self.classes),
            "fma": self.fma,
            "load_widths": {str(k): v for k, v in sorted(self.load_widths.items())},
            "store_widths": {str(k): v for k, v in sorted(self.store_widths.items())},
            "registers": self.registers,
            "spills": self.spills,
            "shared_bytes": self.shared_bytes,
            "block_size": self.block_size,
            "block_from": self.block_from,
        }


def _mean_width(widths: dict[int, int]) -> float | None:
    count = sum(widths.values())
    return sum(k * v for k, v in widths.items()) / count if count else None


_PTX_TYPE_BITS = re.compile(r"^[bfsu](\d+)(?:x(\d+))?$")
_PTX_ALU = {
    "add", "sub", "mul", "mad", "fma", "div", "rem", "abs", "neg", "min", "max", "and", "or",
    "xor", "not", "shl", "shr", "setp", "selp", "set", "slct", "cnot", "lop3", "shf", "bfe", "bfi",
    "popc", "clz", "brev", "prmt", "rcp", "sqrt", "rsqrt", "sin", "cos", "ex2", "lg2", "tanh",
    "copysign", "testp", "dp4a", "dp2a", "mul24", "mad24", "sad", "bfind", "fns", "mad.lo",
}  # fmt: skip
_PTX_CONTROL = {
    "bra", "brx", "ret", "exit", "call", "bar", "barrier", "membar", "fence", "trap", "brkpt",
    "mbarrier", "elect", "griddepcontrol",
}  # fmt: skip


def _ptx_width(parts: list[str]) -> int:
    vec = 1
    bits = 32
    for p in parts[1:]:
        if p in ("v2", "v4", "v8"):
            vec = int(p[1:])
        m = _PTX_TYPE_BITS.match(p)
        if m:
            bits = int(m.group(1)) * (int(m.group(2)) if m.group(2) else 1)
    return vec * bits


def _ptx_class(op: str) -> str:
    parts = op.split(".")
    base = parts[0]
    spaces = set(parts[1:])
    if base in ("ld", "ldu", "st"):
        if "global" in spaces:
            return "global_load" if base != "st" else "global_store"
        if any(p.startswith("shared") for p in spaces):
            return "shared"
        if "local" in spaces:
            return "local"
        return "other"
    if base in ("atom", "red"):
        return "shared" if any(p.startswith("shared") for p in spaces) else "atomic"
    if base in ("cp", "ldmatrix", "stmatrix"):
        return "shared"
    if base in ("mma", "wgmma", "tcgen05", "wmma"):
        return "tensor"
    if base in _PTX_CONTROL:
        return "control"
    if base in _PTX_ALU:
        return "alu"
    return "other"


def _ptx_instructions(text: str) -> list[str]:
    ops: list[str] = []
    in_debug = False
    depth = 0
    for raw in text.splitlines():
        stripped = raw.strip()
        if in_debug:
            depth += stripped.count("{") - stripped.count("}")
            in_debug = depth > 0
            continue
        if stripped.startswith(".section") and ".debug" in stripped:
            depth = stripped.count("{") - stripped.count("}")
            in_debug = depth > 0 or "{" not in stripped
            continue
        code = _strip_comment(raw).strip()
        if not code or code[0] in ".{}$" or code.endswith(":"):
            continue
        code = re.sub(r"^@!?%\w+\s+", "", code)
        op = code.split()[0].rstrip(";")
        if op and op[0].isalpha():
            ops.append(op)
    return ops


_SASS_ALU_PREFIX = (
    "FFMA", "FMUL", "FADD", "FMNMX", "FSETP", "FSEL", "FSET", "FCHK", "FRND", "FSWZ", "HFMA2",
    "HADD2", "HMUL2", "HMNMX2", "HSETP2", "DFMA", "DMUL", "DADD", "DSETP", "DMNMX", "IMAD", "IADD",
    "IMNMX", "ISETP", "IABS", "IMUL", "ISCADD", "LEA", "LOP", "SHF", "SHL", "SHR", "SEL", "MUFU",
    "F2F", "F2I", "I2F", "I2I", "F2FP", "POPC", "FLO", "BREV", "PRMT", "PLOP3", "VIADD", "VIMNMX",
    "BMSK", "SGXT", "IDP", "VABSDIFF", "UIADD", "UIMAD", "ULOP", "USHF", "ULEA", "UISETP", "USEL",
    "UPRMT", "UFLO", "UPOPC", "UBREV", "USGXT", "UBMSK",
)  # fmt: skip
_SASS_CONTROL = {
    "BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BAR", "BSSY", "BSYNC", "WARPSYNC", "SYNCS",
    "MEMBAR", "YIELD", "BPT", "DEPBAR", "ERRBAR", "KILL", "BREAK", "NANOSLEEP", "ACQBULK",
    "ELECT", "CCTL", "FENCE",
}  # fmt: skip
_SASS_TENSOR = ("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTC", "OMMA")


def _sass_width(parts: list[str]) -> int:
    for p in parts[1:]:
        if p in ("128", "64"):
            return int(p)
        if p in ("U8", "S8"):
            return 8
        if p in ("U16", "S16"):
            return 16
    return 32


def _sass_class(op: str) -> str:
    base = op.split(".")[0]
    if base == "LDG":
        return "global_load"
    if base == "STG":
        return "global_store"
    if base in ("ATOMG", "RED", "ATOM", "REDG"):
        return "atomic"
    if base in ("LDS", "STS", "LDSM", "STSM", "LDGSTS", "ATOMS", "UBLKCP", "UTMALDG", "UTMASTG"):
        return "shared"
    if base in ("LDL", "STL"):
        return "local"
    if base.startswith(_SASS_TENSOR):
        return "tensor"
    if base in _SASS_CONTROL:
        return "control"
    if base.startswith(_SASS_ALU_PREFIX):
        return "alu"
    return "other"


def summarise(
    stage: str,
    text: str,
    *,
    registers: int | None = None,
    spills: int | None = None,
    shared_bytes: int | None = None,
    block_size: int | None = None,
    block_from: str | None = None,
) -> Summary:
    """Count the instructions of ``text`` (PTX or SASS) by class, with global load and store
    widths, and attach the resources known from elsewhere (``ptxas -v``, the launch). A PTX
    ``.reqntid``/``.maxntid`` gives the block size when none is passed."""
    summary = Summary(
        registers=registers,
        spills=spills,
        shared_bytes=shared_bytes,
        block_size=block_size,
        block_from=block_from,
    )
    loads: Counter[int] = Counter()
    stores: Counter[int] = Counter()
    if stage == "ptx":
        ops = _ptx_instructions(text)
        for op in ops:
            cls = _ptx_class(op)
            summary.classes[cls] += 1
            parts = op.split(".")
            if cls == "global_load":
                loads[_ptx_width(parts)] += 1
            elif cls == "global_store":
                stores[_ptx_width(parts)] += 1
            if parts[0] == "fma" or (parts[0] == "mad" and any(p.startswith("f") for p in parts)):
                summary.fma += 1
        if summary.block_size is None:
            m = re.search(r"\.(reqntid|maxntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", text)
            if m:
                total = 1
                for g in m.groups()[1:]:
                    total *= int(g) if g else 1
                summary.block_size, summary.block_from = total, f".{m.group(1)}"
    elif stage == "sass":
        for _, code in _sass_instructions(text):
            op = re.sub(r"^@!?U?P\w+\s+", "", code).split()[0]
            if op == "NOP":
                continue
            cls = _sass_class(op)
            summary.classes[cls] += 1
            parts = op.split(".")
            if cls == "global_load":
                loads[_sass_width(parts)] += 1
            elif cls == "global_store":
                stores[_sass_width(parts)] += 1
            if parts[0] in ("FFMA", "DFMA", "FFMA2"):
                summary.fma += 1
            elif parts[0] == "HFMA2" and "MMA" not in parts:  # HFMA2.MMA Rx, -RZ, RZ, 0, 0: a move
                summary.fma += 1
    else:
        raise ValueError(f"assembly diff compares PTX or SASS, not {stage!r}")
    summary.instructions = sum(summary.classes.values())
    summary.load_widths = dict(loads)
    summary.store_widths = dict(stores)
    return summary


def _bits(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def _times(ratio: float) -> str:
    return f"{ratio:.0f}×" if abs(ratio - round(ratio)) < 0.05 else f"{ratio:.1f}×"


def verdict(a: Summary, b: Summary, names: tuple[str, str] = ("A", "B")) -> str:
    """One line saying what differs most between two kernels (``names`` are their labels)."""
    na, nb = names
    sa, sb = a.spills or 0, b.spills or 0
    if (sa > 0) != (sb > 0):
        spiller, bytes_, other = (na, sa, nb) if sa else (nb, sb, na)
        return f"{spiller} spills {bytes_} bytes to local memory, {other} none"
    for what, wa, wb in (("loads", a.load_bits(), b.load_bits()),
                         ("stores", a.store_bits(), b.store_bits())):  # fmt: skip
        if wa and wb and abs(wa - wb) / max(wa, wb) > 0.05:
            (wide, bw), (narrow, nw) = ((na, wa), (nb, wb)) if wa > wb else ((nb, wb), (na, wa))
            instr = "load" if what == "loads" else "store"
            return (
                f"{wide} {what[:-1]}s {_bits(bw)} bits per thread per instruction, {narrow} "
                f"{_bits(nw)}: {narrow} issues {_times(bw / nw)} the {instr} instructions "
                "for the same bytes"
            )
    ta, tb = a.classes["tensor"], b.classes["tensor"]
    if (ta > 0) != (tb > 0):
        user, count, other = (na, ta, nb) if ta else (nb, tb, na)
        plural = "s" if count != 1 else ""
        return f"{user} uses the tensor cores ({count} instruction{plural}), {other} does not"
    ra, rb = a.registers, b.registers
    if ra and rb and max(ra, rb) >= 1.5 * min(ra, rb):
        (more, m), (fewer, f) = ((na, ra), (nb, rb)) if ra > rb else ((nb, rb), (na, ra))
        return f"{more} uses {m} registers per thread, {fewer} {f}: fewer {more} warps fit an SM"
    if a.block_size and b.block_size and a.block_size != b.block_size:
        return (
            f"{na} runs {a.block_size} threads per block, {nb} {b.block_size}; "
            f"instructions {a.instructions} vs {b.instructions}"
        )
    if a.instructions != b.instructions:
        (more, m), (fewer, f) = (
            ((na, a.instructions), (nb, b.instructions))
            if a.instructions > b.instructions
            else ((nb, b.instructions), (na, a.instructions))
        )
        biggest = max(CLASSES, key=lambda c: abs(a.classes[c] - b.classes[c]))
        return (
            f"{more} has {m} instructions, {fewer} {f} (most of the difference: "
            f"{CLASSES[biggest]}, {a.classes[biggest]} vs {b.classes[biggest]})"
        )
    return "the same instruction mix and resources"


def _widths_text(widths: dict[int, int]) -> str:
    if not widths:
        return "0"
    return " + ".join(f"{n} × {w}-bit" for w, n in sorted(widths.items(), reverse=True))


def _known(value: int | None, unit: str) -> str:
    return f"? {unit}" if value is None else f"{value} {unit}"


def header_lines(name: str, title: str, summary: Summary, differs: str) -> list[str]:
    """The summary block above one side of the diff (``//`` comments: valid PTX and SASS
    comments), the same number of lines for every side so the two bodies stay aligned."""
    s = summary
    block = "block ? threads"
    if s.block_size is not None:
        block = f"block {s.block_size} threads" + (f" ({s.block_from})" if s.block_from else "")
    c = s.classes
    return [
        f"// {name}: {title}",
        f"// {_known(s.registers, 'registers')} · {_known(s.spills, 'B spilled')} · "
        f"{_known(s.shared_bytes, 'B shared')} · {block}",
        f"// {s.instructions} instructions · global loads {_widths_text(s.load_widths)} · "
        f"global stores {_widths_text(s.store_widths)}",
        f"// FMA/ALU {c['alu']} (FMA {s.fma}) · shared {c['shared']} · local {c['local']} · "
        f"atomics {c['atomic']} · tensor core {c['tensor']} · control {c['control']} · "
        f"moves/other {c['other']}",
        f"// differs most: {differs}",
        "//",
    ]


# The two sides and the comparison (shared by ``kernel-lens asm-diff`` and the editor).


@dataclass
class Side:
    """One kernel at one stage, ready to compare.

    Attributes:
        kind: ``triton`` or ``inline`` (a ``load_inline`` CUDA kernel).
        title: how the kernel is named above its side of the diff.
        path: the Python file; ``line_map`` maps lines of ``text`` to its lines.
        kernel: the kernel's name (the Triton function, or the CUDA kernel's PTX entry).
        text: the stage's text (for load_inline: the one kernel's part of the module).
    """

    kind: Literal["triton", "inline"]
    title: str
    path: str
    kernel: str
    arch: str
    text: str
    line_map: list[LineMapEntry]
    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    block_size: int | None = None
    block_from: str | None = None


def target_kind(source: str, name: str) -> str | None:
    """``triton`` when ``name`` is a ``@triton.jit`` function of the Python ``source``,
    ``inline`` when the source calls ``load_inline`` (``name`` is then a CUDA kernel or a host
    function of its CUDA source), else ``None``."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            if any("jit" in ast.unparse(d) for d in node.decorator_list):
                return "triton"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called == "load_inline":
                return "inline"
    return None


def triton_side(result: dict[str, Any], path: str, stage: str, label: str | None = None) -> Side:
    """A side from ``kernel-lens asm --json``'s one-kernel result (the ``asm`` job with a
    stage)."""
    import os

    consts = ", ".join(f"{k}={v}" for k, v in (result.get("constexprs") or {}).items())
    warps = result.get("num_warps")
    title = f"{result['kernel']} · Triton · {os.path.basename(path)}"
    if consts:
        title += f" · {consts}"
    if label:
        title += f" · {label}"
    title += f" · {stage.upper()} {result['arch']}"
    return Side(
        kind="triton",
        title=title,
        path=path,
        kernel=result["kernel"],
        arch=result["arch"],
        text=result.get("asm") or "",
        line_map=list(result.get("line_map") or []),
        registers=result.get("registers"),
        spills=result.get("spills"),
        shared_bytes=result.get("shared_bytes"),
        block_size=warps * 32 if isinstance(warps, int) else None,
        block_from=f"{warps} warps" if isinstance(warps, int) else None,
    )


def inline_side(
    result: dict[str, Any], path: str, name: str, stage: str, label: str | None = None
) -> Side:
    """A side from the ``inline`` job's result: the CUDA kernel ``name`` (or the kernel the
    host function ``name`` launches) cut out of its module's PTX or SASS.

    Raises:
        ValueError: no such kernel (the message lists those there are), or no text at the
            stage (nvcc's or ptxas's failure).
    """
    import os

    known: list[str] = []
    for module in result.get("modules", []):
        ptx = module.get("ptx")
        if not ptx:
            continue
        entries = entry_names("ptx", ptx)
        cuda = (module.get("files") or {}).get("cuda.cu") or ""
        wanted = [name, *kernels_launched_by(cuda, name)]
        entry = next((e for w in wanted for e in entries if matches_kernel(e, w)), None)
        known.extend(_plain_name(e) for e in entries)
        if entry is None:
            continue
        full = ptx if stage == "ptx" else module.get("sass")
        full_map = module.get("line_map" if stage == "ptx" else "sass_line_map") or []
        if not full:
            raise ValueError(f"no {stage.upper()} of {module['name']} (ptxas or nvdisasm failed)")
        text, start = extract_entry(stage, full, entry)
        end = start + text.count("\n")
        line_map: list[LineMapEntry] = []
        for item in full_map:
            lines = [a - start + 1 for a in item["asm_lines"] if start <= a <= end]
            if lines:
                line_map.append({"source_line": item["source_line"], "asm_lines": lines})
        info = next((k for k in module.get("kernels") or [] if k["entry"] == entry), None)
        plain = _plain_name(entry)
        block, block_from = block_size_in_source(cuda, plain)
        title = f"{plain} · CUDA (load_inline {module['name']}) · {os.path.basename(path)}"
        if label:
            title += f" · {label}"
        return Side(
            kind="inline",
            title=title + f" · {stage.upper()} {module['arch']}",
            path=path,
            kernel=entry,
            arch=module["arch"],
            text=text,
            line_map=line_map,
            registers=info["registers"] if info else None,
            spills=info["spills"] if info else None,
            shared_bytes=info["shared_bytes"] if info else None,
            block_size=block,
            block_from=f"the launch: {block_from}" if block_from else None,
        )
    there = ", ".join(known) if known else "none compiled"
    raise ValueError(f"no CUDA kernel {name} in the load_inline modules of "
                     f"{os.path.basename(path)} (kernels: {there})")  # fmt: skip


def _plain_name(entry: str) -> str:
    """``square_kernel`` from ``_Z13square_kernelPKfPfl`` (the first mangled name)."""
    m = re.match(r"_Z(?:N\d*\w*?)?(\d+)", entry)
    if m:
        n = int(m.group(1))
        rest = entry[m.end() :]
        return rest[:n] if len(rest) >= n else entry
    return entry


def _document(header: list[str], body: str, origin: list[int] | None,
              line_map: list[LineMapEntry]) -> AsmDiffDocument:  # fmt: skip
    offset = len(header)
    moved: list[LineMapEntry]
    if origin is None:
        moved = [
            {"source_line": e["source_line"], "asm_lines": [a + offset for a in e["asm_lines"]]}
            for e in line_map
        ]
    else:
        moved = carry_line_map(line_map, origin, offset=offset)
    return {"text": "\n".join([*header, body]) + "\n", "line_map": moved}


def compare(a: Side, b: Side, stage: str) -> AsmDiffResult:
    """The comparison of two sides at ``stage``: per side its summary, its header (the summary
    as comments) and two documents — ``normalised`` and ``original`` — each the header and the
    text, with the line map moved onto it; ``verdict`` (what differs most); ``identical``
    (the normalised texts are the same)."""
    na, nb = normalise(stage, a.text), normalise(stage, b.text)
    summaries = []
    for side in (a, b):
        summaries.append(
            summarise(
                stage,
                side.text,
                registers=side.registers,
                spills=side.spills,
                shared_bytes=side.shared_bytes,
                block_size=side.block_size,
                block_from=side.block_from,
            )
        )
    identical = na.text == nb.text
    differs = verdict(summaries[0], summaries[1])
    if identical:
        differs = "nothing: the normalised texts are identical"
    sides: list[AsmDiffSide] = []
    for key, side, norm, summary in (("a", a, na, summaries[0]), ("b", b, nb, summaries[1])):
        header = header_lines(key.upper(), side.title, summary, differs)
        sides.append(
            {
                "kind": side.kind,
                "title": side.title,
                "path": side.path,
                "kernel": side.kernel,
                "arch": side.arch,
                "summary": summary.to_json(),
                "header": header,
                "normalised": _document(header, norm.text, norm.origin, side.line_map),
                "original": _document(header, side.text.rstrip("\n"), None, side.line_map),
            }
        )
    return {
        "stage": stage,
        "verdict": differs,
        "identical": identical,
        "a": sides[0],
        "b": sides[1],
    }
