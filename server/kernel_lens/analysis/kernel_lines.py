"""Inside a kernel: Nsight Compute's source counters folded onto the kernel's own source lines
(issue 35).

``ncu --section SourceCounters --import-source yes`` records, per SASS instruction (one
``inst_executed`` instance per PC, its correlation id the PC), the instructions executed, the
warp-state samples (``smsp__pcsamp_sample_count``) split by stall reason
(``smsp__pcsamp_warps_issue_stalled_<reason>``) and the memory metrics of the loads and stores;
``action.source_info(pc)`` gives the file and line the compiler's line table credits.

Three steps, each pure:

1. :func:`kernel_pcs_from_report` reads a loaded report (NVIDIA's ``ncu_report`` objects, passed
   in) into :class:`KernelPcs`: per PC offset (bytes from the function's start) the figures
   above, the SASS text and the line; launches of the same kernel are summed.
2. :func:`fold_lines` puts each PC on a line of the *document*: the report's files are mapped
   onto the document by their text (the report holds the device's paths, never ours), a
   ``load_inline`` kernel's generated ``cuda.cu`` onto the Python string it came from; a PC
   the line table gives to a helper (a ``@triton.jit`` helper in another file, a ``tl`` library
   function, a helper outside the kernel) is folded to the kernel line that calls it, with the
   helper named; whatever has no line stays in a named remainder.
3. :func:`lens_text`, :func:`line_hover` and :func:`remedy` say it.

The blame of issue 43 (what a stalled warp waited *for*) plugs in at :func:`blamed_samples`,
the one place: it takes the per-PC samples and costs in the shape
``analysis/stall_blame.py`` takes (``{pc_offset: {reason: count}}``,
``{pc_offset: {metric: value}}``) and :func:`fold_lines` folds its answer as a second figure.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.analysis.safe_text import md_code, md_text

__all__ = [
    "COST_METRICS",
    "MIN_SAMPLES",
    "SECOND_REASON",
    "STALL_LABELS",
    "KernelLines",
    "KernelPcs",
    "LineFigures",
    "PcRecord",
    "blamed_samples",
    "compare_lines",
    "fold_lines",
    "iter_sorted",
    "kernel_lines_json",
    "kernel_pcs_from_report",
    "kernel_span",
    "lens_text",
    "line_hover",
    "line_map",
    "remedy",
    "sampling_text",
    "shares",
    "stall_label",
]

_STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"

#: Each stall reason (the metric's suffix) as a user reads it.
STALL_LABELS: dict[str, str] = {
    "long_scoreboard": "long scoreboard (waiting on memory)",
    "short_scoreboard": "short scoreboard (waiting on shared memory or a special function)",
    "wait": "wait (a fixed-latency dependency)",
    "mio_throttle": "MIO throttle (shared-memory / special-instruction queue full)",
    "lg_throttle": "LG throttle (global/local memory queue full)",
    "math_pipe_throttle": "math pipe throttle (the math units are busy)",
    "tex_throttle": "texture throttle (the texture/L1 pipe is busy)",
    "barrier": "barrier (waiting for the block's other warps)",
    "membar": "memory barrier",
    "branch_resolving": "branch resolving",
    "dispatch_stall": "dispatch stall",
    "drain": "drain (stores draining at exit)",
    "imc_miss": "constant cache miss",
    "no_instructions": "no instructions (instruction fetch)",
    "not_selected": "not selected (another warp issued)",
    "selected": "selected (issuing)",
    "sleeping": "sleeping",
    "misc": "misc",
    "warpgroup_arrive": "warpgroup arrive (waiting on an async MMA)",
}

#: The usual remedy for the hottest line's reason, one sentence each, and the Nsight Compute
#: rules whose own text goes with it when the report has them.
_REMEDIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "long_scoreboard": (
        "Warps wait for global or local memory here: check that the load is coalesced "
        "(consecutive lanes read consecutive addresses), vectorise it, and give the loop more "
        "`num_stages` so loads are issued earlier.",
        ("UncoalescedGlobalAccess", "CPIStall"),
    ),
    "lg_throttle": (
        "The global/local memory queue is full: issue fewer, wider loads and stores "
        "(vectorise) and avoid register spills to local memory.",
        ("UncoalescedGlobalAccess", "CPIStall"),
    ),
    "mio_throttle": (
        "The shared-memory queue is full: look for bank conflicts (pad or swizzle the "
        "shared tile) and for many small shared-memory or special-function instructions.",
        ("UncoalescedSharedAccess", "CPIStall"),
    ),
    "short_scoreboard": (
        "Warps wait for shared memory or a special function (exp, sqrt, division): look for "
        "shared-memory bank conflicts, or use cheaper math.",
        ("UncoalescedSharedAccess", "CPIStall"),
    ),
    "math_pipe_throttle": (
        "The math pipe is busy: the kernel is compute-bound here, which is good; only fewer "
        "or cheaper operations (lower precision, tensor cores) go faster.",
        ("CPIStall",),
    ),
    "wait": (
        "A fixed-latency dependency: more independent work per thread (instruction-level "
        "parallelism) or more warps hide it.",
        ("CPIStall",),
    ),
    "barrier": (
        "Warps wait for the rest of the block at a barrier: balance the work between warps "
        "or use smaller blocks.",
        ("CPIStall",),
    ),
    "tex_throttle": (
        "The L1/texture pipe is busy: fewer, wider memory instructions help.",
        ("CPIStall",),
    ),
    "branch_resolving": (
        "Branch targets are being resolved: fewer or uniform branches (masks instead of "
        "`if`) help.",
        ("ThreadDivergence",),
    ),
    "no_instructions": (
        "Warps wait for instructions: the code is large or jumps a lot (unrolled loops, "
        "many specialisations); usually small unless the kernel is tiny.",
        (),
    ),
    "drain": (
        "Warps wait at exit for their stores to drain: normal for a kernel that ends with a "
        "large store.",
        (),
    ),
    "imc_miss": (
        "The constant cache missed (kernel arguments, constants): usually a start-up cost.",
        (),
    ),
    "warpgroup_arrive": (
        "Warps wait for an asynchronous MMA (wgmma) to finish: pipeline more stages so the "
        "next tile's MMA overlaps.",
        (),
    ),
}

#: The per-instruction memory metrics kept as each PC's costs (what the blame weighs).
COST_METRICS: tuple[str, ...] = (
    "memory_l2_theoretical_sectors_global",
    "memory_l2_theoretical_sectors_global_ideal",
    "derived__memory_l2_theoretical_sectors_global_excessive",
    "memory_l1_tag_requests_global",
    "memory_l1_wavefronts_shared",
    "memory_l1_wavefronts_shared_ideal",
    "derived__memory_l1_wavefronts_shared_excessive",
    "derived__memory_l1_conflicts_shared_nway",
    "memory_l2_theoretical_sectors_local",
)

#: Fewer samples than this for a kernel and the shares are said to be rough.
MIN_SAMPLES = 200
#: A line's second stall reason is said when it holds this share of the line's samples.
SECOND_REASON = 0.3


@dataclass
class PcRecord:
    """One SASS instruction of a kernel, with its figures summed over the launches read.

    Attributes:
        offset: bytes from the function's start (the PC less ``launch__function_pcs``).
        sass: the instruction's text (``LDG.E.64 R2, desc[UR4][R2.64]``).
        file: the file the line table credits (the device's path), or ``None``.
        line: its 1-based line, or ``None``.
        executed: warp-level instructions executed (``inst_executed``).
        samples: warp-state samples on this PC (``smsp__pcsamp_sample_count``).
        stalls: samples by reason (``long_scoreboard`` …; ``selected`` is issuing).
        costs: the instruction's memory metrics (:data:`COST_METRICS` present).
    """

    offset: int
    sass: str = ""
    file: str | None = None
    line: int | None = None
    executed: float = 0.0
    samples: float = 0.0
    stalls: dict[str, float] = field(default_factory=dict)
    costs: dict[str, float] = field(default_factory=dict)


@dataclass
class KernelPcs:
    """One kernel's source counters: its PCs and what the report says about the sampling."""

    name: str
    demangled: str
    launches: int = 1
    mangled: str = ""
    """The symbol (``_Z11strided_sumPKfS0_Pfi``), as ``cuobjdump`` names the function."""
    duration_us: float | None = None
    interval_cycles: float | None = None
    pcs: list[PcRecord] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    """The sources the report embedded (``--import-source yes``): path → text."""
    rules: dict[str, dict[str, str]] = field(default_factory=dict)
    """Nsight Compute's rule results by rule id: ``{"title", "message"}``."""

    @property
    def samples(self) -> float:
        return sum(p.samples for p in self.pcs)

    @property
    def executed(self) -> float:
        return sum(p.executed for p in self.pcs)


def _value(metric: Any, i: int | None = None) -> float:
    try:
        return float(metric.as_double() if i is None else metric.as_double(i))
    except Exception:
        return 0.0


def _per_pc(action: Any, name: str, base: int) -> dict[int, float]:
    """A per-instruction metric (instances correlated with PCs) as ``{offset: value}``."""
    metric = action.metric_by_name(name)
    if metric is None:
        return {}
    try:
        if metric.num_instances() == 0 or not metric.has_correlation_ids():
            return {}
        ids = metric.correlation_ids()
        return {
            int(ids.as_uint64(i)) - base: _value(metric, i) for i in range(metric.num_instances())
        }
    except Exception:
        return {}


def _scalar(action: Any, name: str) -> float | None:
    metric = action.metric_by_name(name)
    if metric is None:
        return None
    try:
        return float(metric.as_double()) if metric.num_instances() <= 1 else _value(metric, 0)
    except Exception:
        return None


def _function_base(action: Any, lowest: int) -> int:
    """The function's first PC (``launch__function_pcs``), the lowest PC sampled without it."""
    metric = action.metric_by_name("launch__function_pcs")
    starts: list[int] = []
    try:
        if metric is not None and metric.num_instances() > 0:
            starts = [int(metric.as_uint64(i)) for i in range(metric.num_instances())]
        elif metric is not None:
            starts = [int(metric.as_uint64())]
    except Exception:
        starts = []
    below = [s for s in starts if 0 < s <= lowest]
    return max(below) if below else lowest


def _rule_text(message: str) -> tuple[str, str | None]:
    """A rule's message without ncu's markup, and the first link it carries."""
    from kernel_lens.analysis.ncu import strip_markup

    url = re.search(r"@url:[^:@]*:(https://[^@\s]+)@", message)
    return strip_markup(message), url.group(1) if url else None


def _pc_source(action: Any, pc: int) -> tuple[str | None, int | None, str]:
    """A PC's source file and line (``None`` where the report has none) and its SASS."""
    info = action.source_info(pc)
    file = str(info.file_name()) if info is not None and info.file_name() else None
    line = int(info.line()) if info is not None and info.line() else None
    try:
        sass = str(action.sass_by_pc(pc) or "").strip()
    except Exception:
        sass = ""
    return file, line, sass


def _action_rules(action: Any) -> dict[str, dict[str, str]]:
    """The report's rule results that say something: title, message and link, by rule id."""
    rules: dict[str, dict[str, str]] = {}
    try:
        for rule in action.rule_results_as_dicts():
            message = rule.get("rule_message") or {}
            if message.get("message"):
                text, url = _rule_text(str(message.get("message")))
                rules[str(rule.get("rule_identifier"))] = {
                    "title": str(message.get("title") or rule.get("name") or ""),
                    "message": text,
                    **({"url": url} if url else {}),
                }
    except Exception:
        pass
    return rules


def _action_pcs(action: Any) -> KernelPcs | None:
    """One action's PCs; ``None`` when it holds no source counters."""
    inst = action.metric_by_name("inst_executed")
    if inst is None or inst.num_instances() == 0 or not inst.has_correlation_ids():
        return None
    ids = inst.correlation_ids()
    executed_at = {int(ids.as_uint64(i)): _value(inst, i) for i in range(inst.num_instances())}
    # Samples land on PCs ``inst_executed`` may not list (a trailing ``BRA``): the union.
    sampled = _per_pc(action, "smsp__pcsamp_sample_count", 0)
    pcs = sorted(set(executed_at) | {pc for pc, n in sampled.items() if n})
    base = _function_base(action, min(pcs))
    names = [str(n) for n in action.metric_names()]
    reasons = [
        n[len(_STALL_PREFIX) :]
        for n in names
        if n.startswith(_STALL_PREFIX) and not n.endswith("_not_issued")
    ]
    samples = _per_pc(action, "smsp__pcsamp_sample_count", base)
    stalls = {r: _per_pc(action, _STALL_PREFIX + r, base) for r in reasons}
    costs = {c: _per_pc(action, c, base) for c in COST_METRICS if c in names}
    records: list[PcRecord] = []
    for pc in pcs:
        offset = pc - base
        file, line, sass = _pc_source(action, pc)
        records.append(
            PcRecord(
                offset=offset,
                sass=sass,
                file=file,
                line=line,
                executed=executed_at.get(pc, 0.0),
                samples=samples.get(offset, 0.0),
                stalls={r: v[offset] for r, v in stalls.items() if v.get(offset)},
                costs={c: v[offset] for c, v in costs.items() if v.get(offset)},
            )
        )
    try:
        files = {str(k): str(v) for k, v in dict(action.source_files()).items()}
    except Exception:
        files = {}
    rules = _action_rules(action)
    duration = _scalar(action, "gpu__time_duration.sum")
    return KernelPcs(
        name=str(action.name()),
        demangled=str(action.name(action.NameBase_DEMANGLED)),
        mangled=str(action.name(action.NameBase_MANGLED)),
        duration_us=duration / 1000.0 if duration is not None else None,
        interval_cycles=_scalar(action, "smsp__pcsamp_interval_cycles"),
        pcs=sorted(records, key=lambda r: r.offset),
        files=files,
        rules=rules,
    )


def _merge(into: KernelPcs, other: KernelPcs) -> None:
    """Adds another launch of the same kernel (the same binary: the same offsets)."""
    by = {p.offset: p for p in into.pcs}
    for p in other.pcs:
        mine = by.get(p.offset)
        if mine is None:
            into.pcs.append(p)
            by[p.offset] = p
            continue
        mine.executed += p.executed
        mine.samples += p.samples
        for r, v in p.stalls.items():
            mine.stalls[r] = mine.stalls.get(r, 0.0) + v
        for c, v in p.costs.items():
            mine.costs[c] = mine.costs.get(c, 0.0) + v
    into.pcs.sort(key=lambda r: r.offset)
    into.launches += other.launches
    if into.duration_us is not None and other.duration_us is not None:
        into.duration_us += other.duration_us
    into.files.update({k: v for k, v in other.files.items() if k not in into.files})
    into.rules.update({k: v for k, v in other.rules.items() if k not in into.rules})


def kernel_pcs_from_report(report: Any, kernel: str | None = None) -> list[KernelPcs]:
    """Every kernel of a loaded report (``ncu_report.load_report(path)``) that has source
    counters, its launches summed (``duration_us`` is then the mean launch's); only those
    whose name or demangled name contains ``kernel`` when given. In order of first launch."""
    out: dict[str, KernelPcs] = {}
    for r in range(report.num_ranges()):
        rng = report.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            name = str(action.name())
            if (
                kernel
                and kernel not in name
                and kernel not in str(action.name(action.NameBase_DEMANGLED))
            ):
                continue
            pcs = _action_pcs(action)
            if pcs is None:
                continue
            if name in out:
                _merge(out[name], pcs)
            else:
                out[name] = pcs
    for k in out.values():
        if k.duration_us is not None and k.launches > 1:
            k.duration_us /= k.launches
    return list(out.values())


# ---- mapping the report's files onto the document ----


def line_map(report_text: str, doc_text: str) -> dict[int, int]:
    """Lines of a file as the report embedded it → the same lines of the document (1-based),
    where their text is the same (stripped): the device's checkout of the kernel's file, an
    edited buffer, or ``load_inline``'s ``cuda.cu`` inside the Python string it came from.
    Blank lines and lone braces only count inside a matched run of lines."""
    a = [line.strip() for line in report_text.splitlines()]
    b = [line.strip() for line in doc_text.splitlines()]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        if block.size == 0:
            continue
        meaningful = sum(1 for t in a[block.a : block.a + block.size] if len(t) > 2)
        if meaningful == 0 or (block.size == 1 and len(a[block.a]) < 8):
            continue  # a lone ``}`` or blank: chance, not the same code
        for k in range(block.size):
            out[block.a + k + 1] = block.b + k + 1
    return out


_CUDA_DEF = r"__global__\s+[\w\s\*<>:,]*?\b{name}\s*\("


def kernel_span(doc_text: str, name: str) -> tuple[int, int] | None:
    """1-based first and last line of kernel ``name`` in the document: a Python ``def`` (from
    its first decorator), else a CUDA ``__global__`` function inside the file's strings (to its
    closing brace)."""
    try:
        tree = ast.parse(doc_text)
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return first, int(node.end_lineno or node.lineno)
    lines = doc_text.splitlines()
    pattern = re.compile(_CUDA_DEF.format(name=re.escape(name)))
    for i, text in enumerate(lines):
        if pattern.search(text):
            depth, seen = 0, False
            for j in range(i, len(lines)):
                for ch in lines[j]:
                    if ch == "{":
                        depth, seen = depth + 1, True
                    elif ch == "}":
                        depth -= 1
                if seen and depth <= 0:
                    return i + 1, j + 1
            return i + 1, len(lines)
    return None


def _enclosing_def(text: str, line: int) -> str | None:
    """The function of a file (Python, or C/CUDA) that holds ``line``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    if tree is not None:
        best: tuple[int, str] | None = None
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                end = node.end_lineno or node.lineno
                if node.lineno <= line <= end and (best is None or node.lineno > best[0]):
                    best = (node.lineno, node.name)
        return best[1] if best else None
    lines = text.splitlines()
    c_def = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(?:[\w:<>\*&]+\s+)+\**(\w+)\s*\([^;]*$")
    for i in range(min(line, len(lines)) - 1, -1, -1):
        m = c_def.match(lines[i])
        if m and m.group(1) not in ("if", "for", "while", "switch", "return"):
            return m.group(1)
    return None


def _call_lines(text_lines: list[str], first: int, last: int, name: str) -> list[int]:
    """1-based lines in ``first..last`` that call ``name`` (``name(`` or ``x.name(``), the
    span's first line (a ``def``) excluded."""
    pattern = re.compile(rf"(?<![\w]){re.escape(name)}\s*\(")
    out: list[int] = []
    for n in range(first + 1, min(last, len(text_lines)) + 1):
        code = text_lines[n - 1].split("#", 1)[0] if "__global__" not in name else ""
        code = code or text_lines[n - 1]
        if pattern.search(code) and not re.match(r"\s*def\s", code):
            out.append(n)
    return out


@dataclass
class LineFigures:
    """What one line of the kernel holds.

    Attributes:
        line: 1-based line of the document.
        samples, executed: summed over its PCs (helpers folded here included).
        stalls: samples by reason.
        helpers: helpers whose instructions were folded onto this line (``leaky_relu``,
            ``maximum → where``).
        by_address: some PCs came here by address (a helper with no call site found).
        pcs: the offsets of its instructions, in address order.
        blamed: the samples blamed on this line (issue 43), when the blame ran.
    """

    line: int
    samples: float = 0.0
    executed: float = 0.0
    stalls: dict[str, float] = field(default_factory=dict)
    helpers: list[str] = field(default_factory=list)
    by_address: bool = False
    pcs: list[int] = field(default_factory=list)
    blamed: float | None = None
    cause: str | None = None
    """What the line's chief culprit instruction is (``global load, 32 sectors per request
    (uncoalesced; ideal 4)``), once blamed."""
    cause_remedy: str | None = None

    @property
    def stall(self) -> str | None:
        """The dominant reason (``selected``, issuing, only when nothing else is there)."""
        waits = {r: v for r, v in self.stalls.items() if v > 0 and r != "selected"}
        if waits:
            return max(waits, key=lambda r: waits[r])
        return "selected" if self.stalls.get("selected") else None

    @property
    def second_stall(self) -> str | None:
        """A second reason that holds at least :data:`SECOND_REASON` of the line's samples (a
        store line's drain beside its wait on the loads): said too, never hidden."""
        first = self.stall
        rest = {r: v for r, v in self.stalls.items() if r not in (first, "selected") and v > 0}
        if not rest or self.samples <= 0:
            return None
        best = max(rest, key=lambda r: rest[r])
        return best if rest[best] >= SECOND_REASON * self.samples else None


@dataclass
class KernelLines:
    """A kernel's source counters on the document's lines."""

    kernel: KernelPcs
    lines: dict[int, LineFigures]
    unplaced_samples: float = 0.0
    unplaced_executed: float = 0.0
    unplaced_why: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    """Each report file that mapped onto the document → how (``same text``, ``load_inline``)."""
    blamed_total: float | None = None
    blamed_by_pc: dict[int, float] = field(default_factory=dict)
    """Samples each PC carries after the blame (a culprit: what it caused)."""
    waits_on: dict[int, list[int]] = field(default_factory=dict)
    """A stalled PC → the culprit PCs its samples were moved onto (the assembly view's link)."""
    pc_causes: dict[int, str] = field(default_factory=dict)

    def share(self, value: float, total: float) -> float:
        return 100.0 * value / total if total > 0 else 0.0

    @property
    def hottest(self) -> LineFigures | None:
        """The line to change: the one that causes most stalls once blamed, else the one with
        the most samples."""
        ranked = list(iter_sorted(self))
        if not ranked:
            return None
        top = ranked[0]
        if self.blamed_total:
            return top if (top.blamed or 0.0) > 0 else None
        return top if top.samples > 0 else None


def _file_text(kernel: KernelPcs, file: str, read_files: bool) -> str | None:
    text = kernel.files.get(file)
    if text is None and read_files and os.path.isfile(file):
        try:
            with open(file, encoding="utf-8", errors="replace") as fh:
                text = fh.read(1 << 22)
        except OSError:
            text = None
    return text


def _document_files(
    kernel: KernelPcs, doc_text: str, doc_path: str | None, read_files: bool
) -> tuple[dict[str, dict[int, int]], dict[str, str], dict[str, str | None]]:
    """The report files of ``kernel`` that map onto the document (each file's line → document
    line), how each mapped (for `KernelLines.files`), and every file's text (``None`` unread)."""
    doc_lines = doc_text.splitlines()
    maps: dict[str, dict[int, int]] = {}
    files: dict[str, str] = {}
    texts: dict[str, str | None] = {}
    for file in {p.file for p in kernel.pcs if p.file}:
        assert file is not None
        text = _file_text(kernel, file, read_files)
        texts[file] = text
        if text is not None:
            mapping = line_map(text, doc_text)
            # a helper file sharing a few lines (``import triton``) is not the document
            used = {p.line for p in kernel.pcs if p.file == file and p.line}
            hits = sum(1 for n in used if n in mapping)
            if mapping and hits >= max(1, len(used) // 2):
                maps[file] = mapping
                how = "load_inline" if file.endswith((".cu", ".cuh")) else "same text"
                files[file] = how
        elif doc_path and os.path.basename(file) == os.path.basename(doc_path):
            maps[file] = {n: n for n in range(1, len(doc_lines) + 1)}
            files[file] = "same name (no text in the report)"
    return maps, files, texts


class _Placer:
    """Which kernel line of the document each PC goes on: its own line when it maps inside the
    kernel's span, else the line calling the helper it is in, else the kernel line nearest by
    address."""

    def __init__(
        self,
        kernel: KernelPcs,
        doc_text: str,
        maps: dict[str, dict[int, int]],
        texts: dict[str, str | None],
        span: tuple[int, int] | None,
    ) -> None:
        self.doc_text = doc_text
        self.doc_lines = doc_text.splitlines()
        self.maps = maps
        self.texts = texts
        self.first, self.last = span if span is not None else (1, len(self.doc_lines))
        self.owned = {p.offset: self.own_line(p) for p in kernel.pcs}
        order = [p.offset for p in kernel.pcs]
        self.own_offsets = [o for o in order if self.owned[o] is not None]
        self.cache: dict[str, tuple[list[int], list[str]]] = {}

    def own_line(self, p: PcRecord) -> int | None:
        if p.file is None or p.line is None or p.file not in self.maps:
            return None
        n = self.maps[p.file].get(p.line)
        return n if n is not None and self.first <= n <= self.last else None

    def by_address(self, offset: int) -> int | None:
        own_offsets, owned = self.own_offsets, self.owned
        i = bisect.bisect_left(own_offsets, offset)
        if i > 0:
            return owned[own_offsets[i - 1]]
        return owned[own_offsets[i]] if i < len(own_offsets) else None

    def helper_of(self, p: PcRecord) -> str | None:
        if p.file is None or p.line is None:
            return None
        if p.file in self.maps:  # the document itself, outside the kernel: its own helper
            n = self.maps[p.file].get(p.line)
            return _enclosing_def(self.doc_text, n) if n is not None else None
        text = self.texts.get(p.file)
        return _enclosing_def(text, p.line) if text else None

    def caller(self, name: str, depth: int = 0) -> tuple[list[int], list[str]]:
        """Kernel lines calling ``name`` (directly or through helpers of the embedded files)
        and the chain of helper names from the kernel's call down."""
        direct = _call_lines(self.doc_lines, self.first, self.last, name)
        if direct or depth >= 3:
            return direct, [name]
        for text in self.texts.values():
            if not text:
                continue
            for n, row in enumerate(text.splitlines(), start=1):
                if re.search(rf"(?<![\w]){re.escape(name)}\s*\(", row):
                    outer = _enclosing_def(text, n)
                    if outer and outer != name:
                        found, chain = self.caller(outer, depth + 1)
                        if found:
                            return found, [*chain, name]
        return [], [name]

    def place(self, p: PcRecord) -> tuple[int | None, str | None, bool]:
        """The PC's line (``None``: nowhere), the helper chain it came through, and whether it
        was placed by address alone."""
        line = self.owned[p.offset]
        if line is not None:
            return line, None, False
        helper = self.helper_of(p)
        if helper is None:
            return None, None, False
        if helper not in self.cache:
            self.cache[helper] = self.caller(helper)
        sites, chain = self.cache[helper]
        helper = " → ".join(chain)
        if len(sites) == 1:
            return sites[0], helper, False
        if sites:  # several calls: the one nearest the code around it
            near = self.by_address(p.offset)
            return min(sites, key=lambda s: abs(s - (near or s))), helper, False
        return self.by_address(p.offset), helper, True


def _add_pc(
    out: KernelLines, p: PcRecord, line: int | None, helper: str | None, moved: bool
) -> None:
    """Add the PC's figures to its line's (or to the unplaced ones)."""
    if line is None:
        out.unplaced_samples += p.samples
        out.unplaced_executed += p.executed
        why = f"{os.path.basename(p.file)}:{p.line}" if p.file else "no line information"
        if why not in out.unplaced_why:
            out.unplaced_why.append(why)
        return
    fig = out.lines.setdefault(line, LineFigures(line=line))
    fig.samples += p.samples
    fig.executed += p.executed
    fig.pcs.append(p.offset)
    for r, v in p.stalls.items():
        fig.stalls[r] = fig.stalls.get(r, 0.0) + v
    if helper and helper not in fig.helpers:
        fig.helpers.append(helper)
    fig.by_address = fig.by_address or moved


def _add_blame(
    out: KernelLines,
    blamed: Mapping[int, Mapping[str, float]],
    causes: Mapping[int, Mapping[str, str]] | None,
    links: Mapping[int, Sequence[tuple[int, float]]] | None,
) -> None:
    """The blamed samples on the lines, the PCs' links to their culprits and each line's chief
    cause."""
    lines = out.lines
    pc_line = {o: ln for ln, f in lines.items() for o in f.pcs}
    total = 0.0
    for offset, reasons in blamed.items():
        value = float(sum(reasons.values()))
        total += value
        ln = pc_line.get(int(offset))
        if ln is not None:
            fig = lines[ln]
            fig.blamed = (fig.blamed or 0.0) + value
    for fig in lines.values():
        fig.blamed = fig.blamed or 0.0
    out.blamed_total = total
    out.blamed_by_pc = {int(o): float(sum(r.values())) for o, r in blamed.items()}
    out.waits_on = {
        int(o): [int(c) for c, _ in targets if int(c) != int(o)]
        for o, targets in (links or {}).items()
        if any(int(c) != int(o) for c, _ in targets)
    }
    out.pc_causes = {int(o): str(c["cause"]) for o, c in (causes or {}).items() if c.get("cause")}
    # each line's chief culprit: its pc carrying the most blamed samples that has a cause
    best: dict[int, float] = {}
    for offset, reasons in blamed.items():
        ln = pc_line.get(int(offset))
        found = (causes or {}).get(int(offset))
        value = float(sum(reasons.values()))
        if ln is not None and found and value > best.get(ln, 0.0):
            best[ln] = value
            lines[ln].cause = found.get("cause")
            lines[ln].cause_remedy = found.get("remedy")


def fold_lines(
    kernel: KernelPcs,
    doc_text: str,
    *,
    doc_path: str | None = None,
    span: tuple[int, int] | None = None,
    blamed: Mapping[int, Mapping[str, float]] | None = None,
    read_files: bool = False,
    causes: Mapping[int, Mapping[str, str]] | None = None,
    links: Mapping[int, Sequence[tuple[int, float]]] | None = None,
) -> KernelLines:
    """Each PC of ``kernel`` on a line of the document ``doc_text``.

    Args:
        kernel: the kernel's PCs (:func:`kernel_pcs_from_report`).
        doc_text: the document (the Python file; a ``load_inline`` kernel's too).
        doc_path: its path: a report file of the same name with no embedded text maps by line.
        span: the kernel's first and last line in the document (:func:`kernel_span`): a PC
            on a document line outside it is a helper's, folded to its call.
        blamed: samples per PC offset and reason after the blame (:func:`blamed_samples`).
        read_files: read a helper's file from disk when the report did not embed it.
    """
    maps, files, texts = _document_files(kernel, doc_text, doc_path, read_files)
    placer = _Placer(kernel, doc_text, maps, texts, span)
    out = KernelLines(kernel=kernel, lines={}, files=files)
    for p in kernel.pcs:
        _add_pc(out, p, *placer.place(p))
    if blamed is not None:
        _add_blame(out, blamed, causes, links)
    return out


def blamed_samples(kernel: KernelPcs, sass_text: str | None) -> dict[int, dict[str, float]] | None:
    """The blame of issue 43: the dependency-stall samples each PC offset caused, once each is
    moved onto the instruction it waited for (``{offset: {"caused": n}}``) — ``None`` (the raw
    figure only) without the kernel's ``cuobjdump -sass`` text (see :func:`blame_explained`)."""
    found = blame_explained(kernel, sass_text)
    return None if found is None else found[0]


#: Stalled PC → ``[(culprit PC, share)]``.
_Links = dict[int, list[tuple[int, float]]]


def blame_explained(
    kernel: KernelPcs, sass_text: str | None
) -> (
    tuple[
        dict[int, dict[str, float]], dict[int, dict[str, str]], dict[int, list[tuple[int, float]]]
    ]
    | None
):
    """The blame (:func:`blamed_samples`), for each culprit PC what it is and what to do about it
    (``{"cause", "remedy"}`` from :func:`stall_blame.explain`, with the instructions that waited
    on it), and the links (stalled PC → ``[(culprit PC, share)]``); ``None`` without the SASS or
    without the kernel in it.

    This is the one place the blame plugs in: ``sass_control.parse_cuobjdump(text)`` gives
    ``{function_name: [instructions]}`` and ``stall_blame.blame_stalls(instructions, samples,
    costs)`` takes ``samples = {pc_offset: {reason: count}}`` and ``costs = {pc_offset:
    {metric: value}}`` (offsets in bytes from the function's start, as :class:`PcRecord`).
    """
    if not sass_text:
        return None
    from kernel_lens.analysis import sass_control, stall_blame

    functions = sass_control.parse_cuobjdump(sass_text)
    instructions = functions.get(kernel.mangled) or functions.get(kernel.name)
    if instructions is None:
        for fn, ins in functions.items():
            if kernel.name in fn or fn in kernel.demangled:
                instructions = ins
                break
    if instructions is None:
        return None
    samples = {p.offset: dict(p.stalls) for p in kernel.pcs if p.stalls}
    costs = {p.offset: {**p.costs, "inst_executed": p.executed} for p in kernel.pcs}
    result = stall_blame.blame_stalls(instructions, samples, costs)
    # What each instruction *caused*: the dependency stalls moved onto it. Samples the blame
    # kept where they were (drain at exit, throttles) are the raw figure's, not a cause: on the
    # H200's Triton strided kernel they would otherwise rank the store line (42% draining)
    # above the strided load that causes 87% of the waiting.
    by_pc = {int(o): {"caused": float(v)} for o, v in result.culprit_samples().items() if v > 0}
    at = {ins.pc: ins for ins in instructions}
    causes: dict[int, dict[str, str]] = {}
    for culprit, waiters in result.caused.items():
        culprit_ins = at.get(culprit)
        if culprit_ins is None:
            continue
        consumers = [at[w] for w, _ in waiters if w in at and w != culprit]
        try:
            why = stall_blame.explain(culprit_ins, costs.get(culprit), consumers=consumers)
        except Exception:  # an opcode the explainer does not know: the figure stays
            continue
        causes[int(culprit)] = {"cause": why.cause, "remedy": why.remedy}
    links = {int(o): [(int(c), float(w)) for c, w in t] for o, t in result.links.items()}
    return by_pc, causes, links


# ---- saying it ----


def _pct(value: float) -> str:
    if value <= 0:
        return "0%"
    return f"{value:.0f}%" if value >= 1 else "<1%"


def stall_label(reason: str | None) -> str:
    """A stall reason as a user reads it."""
    if reason is None:
        return "no samples"
    return STALL_LABELS.get(reason, reason.replace("_", " "))


def lens_text(lines: KernelLines, fig: LineFigures) -> str:
    """``38% of samples · long scoreboard (waiting on memory) · 12% of instructions``, with
    the helpers folded there; once blamed, a line that causes stalls says so first
    (``causes 88% of stalls · global load, 32 sectors per request (uncoalesced; ideal 4) · 3%
    of samples · …``)."""
    k = lines.kernel
    parts = [f"{_pct(lines.share(fig.samples, k.samples))} of samples"]
    if fig.samples > 0:
        second = fig.second_stall
        parts.append(
            stall_label(fig.stall) + (f", {stall_label(second)}" if second is not None else "")
        )
    parts.append(f"{_pct(lines.share(fig.executed, k.executed))} of instructions")
    if fig.helpers:
        parts.append("via " + ", ".join(fig.helpers))
    if fig.blamed and lines.blamed_total:
        # Once blamed the cause leads (the line to change), the raw figure after it: an
        # editor cuts a long line's text at its right edge.
        cause = [f"causes {_pct(lines.share(fig.blamed, lines.blamed_total))} of stalls"]
        if fig.cause:
            cause.append(fig.cause)
        parts = cause + parts
    return " · ".join(parts)


def remedy(lines: KernelLines, fig: LineFigures | None = None) -> dict[str, str] | None:
    """The hottest line's (or ``fig``'s) stall explained in one sentence with the usual remedy,
    and Nsight Compute's own rule text for it when the report has one:
    ``{"reason", "text", "rule", "rule_title", "rule_message"}``."""
    fig = fig or lines.hottest
    if fig is not None and fig.cause and fig.cause_remedy and (fig.blamed or 0.0) > 0:
        # the blame's culprit: what the waiting warps waited for, and what to do about it
        return {"reason": "blame", "text": f"{fig.cause}: {fig.cause_remedy}"}
    if fig is None or fig.stall is None:
        return None
    reason = fig.stall
    # a store line's drain beside a real wait: the wait is what can be changed
    if reason == "drain" and fig.second_stall in _REMEDIES:
        reason = str(fig.second_stall)
    if reason not in _REMEDIES:
        return None
    text, rules = _REMEDIES[reason]
    out = {"reason": reason, "text": text}
    for rule in rules:
        found = lines.kernel.rules.get(rule)
        if found:
            out.update(rule=rule, rule_title=found["title"], rule_message=found["message"])
            if found.get("url"):
                out["rule_url"] = found["url"]
            break
    return out


def sampling_text(lines: KernelLines) -> str:
    """``1,234 samples · 1 every 2,048 cycles per SM sub-partition · 1 launch``."""
    k = lines.kernel
    every = (
        f" · 1 every {k.interval_cycles:,.0f} cycles per SM sub-partition"
        if k.interval_cycles
        else ""
    )
    launches = f" · {k.launches} launch{'es' if k.launches != 1 else ''}"
    return f"{k.samples:,.0f} samples{every}{launches}"


def line_hover(lines: KernelLines, fig: LineFigures, *, max_instructions: int = 40) -> str:
    """Markdown: the line's figures, its stall reasons, and its SASS instructions with their
    samples (hottest first kept when there are many)."""
    k = lines.kernel
    by = {p.offset: p for p in k.pcs}
    out = [f"**{md_text(lens_text(lines, fig))}**", ""]
    if fig.helpers:
        how = " (placed by address: no call found)" if fig.by_address else ""
        out.append(f"Folded here from {', '.join(md_code(h) for h in fig.helpers)}{how}.")
        out.append("")
    reasons = sorted(((v, r) for r, v in fig.stalls.items() if v > 0), reverse=True)
    if reasons:
        out.append(
            "Stalls: " + ", ".join(f"{md_text(stall_label(r))} {v:,.0f}" for v, r in reasons[:5])
        )
        out.append("")
    pcs = [by[o] for o in fig.pcs if o in by]
    shown = pcs
    if len(pcs) > max_instructions:
        keep = {p.offset for p in sorted(pcs, key=lambda p: -p.samples)[:max_instructions]}
        shown = [p for p in pcs if p.offset in keep]
    out.append("| offset | SASS | samples | stall | executed |")
    out.append("|---:|---|---:|---|---:|")
    for p in shown:
        reason = max(p.stalls, key=lambda r: p.stalls[r]) if p.stalls else ""
        out.append(
            f"| {p.offset:#06x} | {md_code(p.sass or '?')} | {p.samples:,.0f} | "
            f"{md_text(reason.replace('_', ' '))} | {p.executed:,.0f} |"
        )
    if len(shown) < len(pcs):
        out.append("")
        out.append(f"{len(pcs) - len(shown)} more instructions with fewer samples.")
    out.append("")
    out.append(f"*{md_text(sampling_text(lines))} (Nsight Compute source counters)*")
    return "\n".join(out)


def compare_lines(
    before: Mapping[int, float], after: Mapping[int, float]
) -> list[tuple[int, float | None, float | None]]:
    """Two versions of a kernel per line: ``(line, share before, share after)`` for every line
    either has (shares in percent; ``None`` where a version has no such line)."""
    return [(n, before.get(n), after.get(n)) for n in sorted(set(before) | set(after))]


def shares(lines: KernelLines) -> dict[int, float]:
    """Each line's share of the kernel's samples, in percent."""
    total = lines.kernel.samples
    return {n: lines.share(f.samples, total) for n, f in lines.lines.items()}


def iter_sorted(lines: KernelLines) -> Iterable[LineFigures]:
    """The lines, hottest first: by the stalls each causes once blamed (the line to change),
    else by the samples recorded on it."""
    if lines.blamed_total:
        return sorted(lines.lines.values(), key=lambda f: (-(f.blamed or 0.0), -f.samples, f.line))
    return sorted(lines.lines.values(), key=lambda f: (-f.samples, f.line))


def _sass_entry(lines: KernelLines, p: PcRecord) -> dict[str, Any]:
    """One instruction for the assembly view: its samples and, once blamed, what it carries
    after the blame, the culprits it waited on and what it is (a culprit)."""
    entry: dict[str, Any] = {
        "offset": p.offset,
        "text": p.sass,
        "samples": p.samples,
        "executed": p.executed,
    }
    if lines.blamed_total is not None:
        entry["blamed"] = lines.blamed_by_pc.get(p.offset, 0.0)
        if p.offset in lines.waits_on:
            entry["waits_on"] = list(lines.waits_on[p.offset])
        if p.offset in lines.pc_causes and entry["blamed"] > 0:
            entry["cause"] = lines.pc_causes[p.offset]
    return entry


def kernel_lines_json(lines: KernelLines) -> dict[str, Any]:
    """The wire's ``KernelLinesKernel``: each line's figures, lens text and hover, the SASS of
    its instructions (for the assembly view's marks), the remainder, the remedy and the
    sampling, as plain JSON."""
    k = lines.kernel
    by = {p.offset: p for p in k.pcs}
    rows: list[dict[str, Any]] = []
    for fig in iter_sorted(lines):
        rows.append(
            {
                "line": fig.line,
                "samples": fig.samples,
                "share_pct": round(lines.share(fig.samples, k.samples), 3),
                "executed": fig.executed,
                "inst_share_pct": round(lines.share(fig.executed, k.executed), 3),
                "stall": fig.stall,
                "stall_label": stall_label(fig.stall) if fig.samples > 0 else None,
                "stalls": {r: v for r, v in sorted(fig.stalls.items()) if v > 0},
                "helpers": list(fig.helpers),
                "by_address": fig.by_address,
                "blamed_pct": (
                    round(lines.share(fig.blamed, lines.blamed_total), 3)
                    if fig.blamed is not None and lines.blamed_total
                    else None
                ),
                "text": lens_text(lines, fig),
                "hover": line_hover(lines, fig),
                "sass": [_sass_entry(lines, by[o]) for o in fig.pcs if o in by],
            }
        )
    notes: list[str] = []
    if k.samples < MIN_SAMPLES:
        notes.append(
            f"only {k.samples:,.0f} samples: the shares are rough (a longer run or more "
            "launches give more)"
        )
    if lines.unplaced_samples or lines.unplaced_executed:
        notes.append(
            f"{_pct(lines.share(lines.unplaced_samples, k.samples))} of samples on no line of "
            "this file (" + ", ".join(lines.unplaced_why[:4]) + ")"
        )
    return {
        "kernel": k.name,
        "demangled": k.demangled,
        "duration_us": k.duration_us,
        "launches": k.launches,
        "samples": k.samples,
        "executed": k.executed,
        "interval_cycles": k.interval_cycles,
        "sampling": sampling_text(lines),
        "lines": rows,
        "unplaced_samples": lines.unplaced_samples,
        "unplaced_executed": lines.unplaced_executed,
        "unplaced_why": list(lines.unplaced_why),
        "files": dict(lines.files),
        "remedy": remedy(lines),
        "blamed": lines.blamed_total is not None,
        "notes": notes,
    }
