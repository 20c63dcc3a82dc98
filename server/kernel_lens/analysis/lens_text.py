"""Text of code lenses and hovers, from a profile result. Pure: unit-tested without a server.

Lenses are one short line (short kernel names); hovers are Markdown with the full kernel names in
code spans (kernel names are full of ``<``, ``>``, ``&`` and ``*``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernel_lens.analysis.compare import summary_delta
from kernel_lens.analysis.compiled_compare import (
    compare_hover_lines,
    compare_lens_text,
    compare_summary_text,
)
from kernel_lens.analysis.compiled_lines import compile_lens_text, fused_text
from kernel_lens.analysis.line_attribution import (
    BACKWARD_PREFIX,
    INTERPRETED_PREFIX,
    INTERPRETED_SUFFIX,
    all_ops,
)
from kernel_lens.analysis.memory_text import (
    memory_hover_lines,
    memory_lens_text,
    memory_summary_text,
    oom_short_text,
)
from kernel_lens.analysis.report_text import format_time_ms, format_us
from kernel_lens.analysis.safe_text import md_code, md_text
from kernel_lens.analysis.timing_policy import clock_warning, graph_parts

__all__ = [
    "code_span",
    "error_lens_title",
    "hover_markdown",
    "inputs_args_text",
    "inputs_text",
    "line_lens_title",
    "line_shares",
    "share_text",
    "short_op_name",
    "noise_hint",
    "LONGER_BUDGET_SCALE",
    "running_lens_title",
    "summary_lens_title",
    "timing_warning_short",
    "timing_policy_lines",
    "timing_warning_text",
]

MAX_LENS_OPS = 3


def _arg_label(arg: dict[str, Any]) -> str:
    shape = arg.get("shape")
    if isinstance(shape, list):
        dims = ", ".join(str(d) for d in shape)
        return f"{arg.get('type', '?')} {arg.get('dtype', '?')}[{dims}] {arg.get('device') or ''}"
    return f"{arg.get('type', '?')} {arg.get('repr', '')}".rstrip()


def inputs_text(inputs: Any, path: str | None = None) -> str | None:
    """Where a result's inputs came from, in one line: ``captured at square.py:31 (time_fn →
    square_2) after 0.42 s``, ``directive, line 11``, ``square_inputs()``, followed by the
    calling context when it is not the default (``· autocast cuda bfloat16 · no_grad``);
    ``None`` for a result without an ``inputs`` object (or with no inputs)."""
    if not isinstance(inputs, dict):
        return None
    source = inputs.get("source")
    line = inputs.get("line")
    text: str
    if source == "captured":
        driver = inputs.get("driver")
        name = (driver or path or "").replace("\\", "/").rsplit("/", 1)[-1]
        where = f"{name}:{line}" if name and line else (f"line {line}" if line else "the script")
        # from a driver script: ``inputs from bench.py:104 (model(X, Y) → … → Attn.forward)``
        text = f"inputs from {where}" if driver else f"captured at {where}"
        if inputs.get("call"):
            text += f" ({inputs['call']})"
        if isinstance(inputs.get("setup_s"), int | float):
            text += f" after {inputs['setup_s']:.2f} s of {name if driver else 'the script'}"
    elif source == "directive":
        text = f"directive, line {line}" if line else "directive"
    elif source == "factory":
        text = str(inputs.get("label") or "factory")
    elif source == "script":
        text = "the script's own run (as __main__)"
    else:
        text = "none (no parameters)"
    own = inputs.get("self")
    if isinstance(own, dict):
        how = own.get("how", "")
        made = f", line {own['made_at']}" if own.get("made_at") else ""
        name = f"{own['name']}{made}" if own.get("name") else ""
        if how == "captured":
            whose = "the driver's" if inputs.get("driver") else "the script's"
            text += f"; self = {whose} {own.get('class', '?')}"
            text += f" {name}" if name else ""
        elif name:
            text += f"; self = {name}"
        else:
            text += f"; self = {how}"
    context = inputs.get("context")
    if isinstance(context, dict) and context.get("label"):
        # the calling context every stage replays: ``· autocast cuda bfloat16 · no_grad``
        text += f" · {context['label']}"
    return text


def inputs_args_text(inputs: Any) -> list[str]:
    """``a: Tensor float32[10000, 10000] cuda:0`` for each input of a result."""
    if not isinstance(inputs, dict):
        return []
    return [
        f"{a.get('name', '?')}: {_arg_label(a)}".rstrip()
        for a in inputs.get("args") or []
        if isinstance(a, dict)
    ]


def code_span(text: str) -> str:
    """``text`` as a Markdown code span (:func:`kernel_lens.analysis.safe_text.md_code`: a fence
    longer than any backtick run inside, one line, bidi controls shown)."""
    return md_code(text)


def _calls(calls: float) -> str:
    return "" if calls == 1 else f" ×{calls:g}"


#: A spread (half the interquartile range, % of the median) above this is called unstable on
#: the lens even when no interference was seen: ±25% means the middle half of the samples spans
#: half the median.
UNSTABLE_SPREAD_PCT = 25.0


def timing_warning_text(timing: dict[str, Any] | None) -> str | None:
    """The whole warning a hover shows: the interference warning, else a clock drop or
    throttling while timing (NVML), else an unstable spread."""
    timing = timing or {}
    if timing.get("warning"):
        return str(timing["warning"])
    clocks = clock_warning(timing)
    if clocks:
        return clocks
    spread = timing.get("spread_pct")
    if isinstance(spread, (int, float)) and spread > UNSTABLE_SPREAD_PCT:
        return (
            f"unstable: the samples spread ±{spread:.0f}% around the median; "
            "re-profile on a quieter machine before comparing"
        )
    return None


def timing_warning_short(timing: dict[str, Any] | None) -> str | None:
    """``busy machine`` / ``interference?`` / ``unstable``: the timing's warning, for a lens."""
    warning = timing_warning_text(timing)
    if not warning:
        return None
    if warning.startswith("busy machine"):
        return "busy machine"
    if warning.startswith("GPU throttled"):
        return "GPU throttled"
    if "clock dropped" in warning:
        return "clock dropped"
    return "unstable" if warning.startswith("unstable") else "interference?"


#: How much longer *Re-profile longer* times: the timing budget times this.
LONGER_BUDGET_SCALE = 4


def noise_hint(result: dict[str, Any], budget_ms: float) -> str | None:
    """What would help when a timing is too noisy to read or to compare (``None`` otherwise):
    the way out that *Re-profile longer* takes, and the two others."""
    timing = result.get("timing") or {}
    comparison = result.get("comparison") if isinstance(result.get("comparison"), dict) else {}
    verdict = str(((comparison or {}).get("verdict") or {}).get("text") or "")
    warning = timing_warning_text(timing)
    if verdict.startswith(("too noisy to tell", "ambiguous")):  # (older runs say ambiguous)
        why = verdict.split(":", 1)[1].strip() if ":" in verdict else ""
        what = (
            f"Too noisy to tell: {why}, so a change cannot be told apart from it"
            if why
            else f"Too noisy to tell a change ({verdict.split('(')[-1].rstrip(')')})"
        )
    elif warning:
        short = timing_warning_short(timing)
        spread = float(timing.get("spread_pct") or 0.0)
        what = {
            "busy machine": f"The machine was busy while this was timed (±{spread:.0f}%)",
            "unstable": f"This timing is unstable (±{spread:.0f}%)",
        }.get(short or "", f"This timing may have been disturbed (±{spread:.0f}%)")
    else:
        return None
    longer = budget_ms * LONGER_BUDGET_SCALE
    budget = f"{longer / 1000:g} s" if longer >= 1000 else f"{longer:g} ms"
    return (
        f"{what}. What narrows it: a longer run (Re-profile longer: "
        f"{LONGER_BUDGET_SCALE}× the timing budget, {budget}; "
        "kernelLens.timing.budgetMs sets it for every run), closing the other load on this "
        "machine, or running on a GPU machine (kernelLens.agentCommand)."
    )


def summary_lens_title(result: dict[str, Any]) -> str:
    """``⏱ 0.577 ms ±0.1% · 3 kernels · NVIDIA H200`` (or ``… · 3 ops · CPU``).

    A timing taken on a busy machine says so after the number:
    ``⏱ 24.1 ms ±2.0% $(warning) busy machine · 3 ops · CPU``. A coroutine function ends with
    ``· awaited``, a generator function with ``· consumed``.
    """
    parts: list[str] = []
    timing = result.get("timing")
    if timing:
        graph = graph_parts(timing, short=True)
        per_call = " per call" if graph else ""
        text = (
            f"$(watch) {format_time_ms(timing['median_ms'])}{per_call} ±{timing['spread_pct']:.1f}%"
        )
        short = timing_warning_short(timing)
        if short:
            text += f" $(warning) {short}"
        parts.append(text)
        # launch-bound: the time in a CUDA graph and the kernels' own (issue 25)
        parts.extend(graph)
        delta = summary_delta(result)  # vs the previous run or the baseline (issue 11)
        if delta:
            parts.append(delta)
        compared = result.get("compare_compiled")
        vs = compare_summary_text(compared, short=True) if isinstance(compared, dict) else None
        if vs:  # Eager vs Compiled: the compiled median, its spread and the speed-up
            parts.append(vs)
    lines = result.get("lines") or []
    if result.get("device_kind") == "cuda":
        launches = sum(k["calls"] for k in result.get("kernels") or [])
        parts.append(f"{launches:g} kernel{'s' if launches != 1 else ''}")
    elif lines:
        ops = op_calls(result)
        parts.append(f"{ops_count_text(ops)} op{'s' if ops != 1 else ''}")
    on_lines = accounting_text(result, short=True)
    if on_lines:
        parts.append(on_lines)
    limit = roofline_summary_text(result)
    if limit:
        parts.append(limit)
    peak = memory_summary_text(result)
    if peak:
        parts.append(peak)
    parts.append(str(result.get("device", "")))
    if result.get("trace_error"):
        # Kernel Lens's own write failed (a full disk…): the numbers stand, the file is missing.
        parts.append("$(warning) trace not saved")
    if result.get("call_style") in ("awaited", "consumed"):
        # An ``async def`` is awaited, a generator consumed, on each call (issue 10 item 7).
        parts.append(str(result["call_style"]))
    return " · ".join(parts)


#: What a streamed profile does now, as its summary lens says it (a stage's progress name).
RUNNING_STAGES = {
    "timing": "timing",
    "trace": "reading the trace",
    "compiled": "torch.compile",
    "compare_compiled": "eager vs compiled",
    "sweep": "sweeping",
}


def running_lens_title(result: dict[str, Any], stage: str) -> str:
    """The summary lens of a profile still running, from what it streamed so far (issue 28):
    ``$(sync~spin) 1 kernel · NVIDIA H200 · timing…`` once the lines are known, then
    ``$(sync~spin) $(watch) 0.192 ms ±0.3% · 1 kernel · NVIDIA H200 · timing… CI ±2.1%`` as the
    timing converges, ``$(sync~spin) Profiling…`` before anything is known."""
    if not result.get("lines") and not result.get("timing"):
        return "$(sync~spin) Profiling…"
    timing = result.get("timing")
    doing = RUNNING_STAGES.get(stage, stage or "profiling") + "…"
    if isinstance(timing, dict) and timing.get("converging"):
        ci = timing.get("ci_pct")
        if isinstance(ci, int | float):
            doing += f" CI ±{ci:.1f}%"
    return f"$(sync~spin) {summary_lens_title(result)} · {doing}"


def trace_text(result: dict[str, Any]) -> str | None:
    """``trace /cache/…/f-….json``, or ``trace not saved: <why>`` when Kernel Lens could not
    write it (``None``: the result has no trace)."""
    if result.get("trace_path"):
        return f"trace {result['trace_path']}"
    error = result.get("trace_error")
    return str(error) if error else None


def roofline_summary_text(result: dict[str, Any]) -> str | None:
    """``4.16 TB/s · 97% of peak bandwidth`` for a function of one kernel with a known roofline
    (several kernels: each one's figure is on the hover and in the Report)."""
    roofs = result.get("roofline") or []
    if len(roofs) != 1 or len(result.get("kernels") or []) != 1:
        return None
    roof = roofs[0]
    text = str(roof.get("text") or "")
    # the text starts with the kernel's name and time: the summary lens has its own time
    parts = text.split(" · ")[1:]
    return " · ".join(parts) or None


def roofline_hover_lines(result: dict[str, Any], line: dict[str, Any]) -> list[str]:
    """Each kernel of ``line`` against the limit: ``square_kernel 0.192 ms · 4.16 TB/s · 97% of
    peak bandwidth``, and which peaks; nothing for kernels whose bytes and FLOPs are unknown."""
    if not result.get("roofline"):
        return []  # a CPU run, or no kernel whose bytes or FLOPs are known
    names = {k["name"] for op in all_ops(line) for k in op.get("kernels") or []}
    roofs = [r for r in result.get("roofline") or [] if r.get("name") in names]
    if not roofs:
        return []
    out = ["", "**Against the limit** (per launch)"]
    for roof in roofs:
        source = {
            "inductor": "Inductor's launch metadata",
            "tensors": "the tensors' sizes",
            "ncu": "Nsight Compute (DRAM bytes, FLOP counters)",
        }.get(str(roof.get("source")), str(roof.get("source")))
        out.append(f"- {md_text(roof['text'])} · bytes from {md_text(source)}")
    note = roofs[0].get("peak_note")
    if note:
        out.append(f"_Peaks: {md_text(note)}._")
    return out


def op_calls(result: dict[str, Any]) -> float:
    """The figure "ops" wherever it is shown (the summary lens, the Report's box): top-level op
    calls per call of the function on its lines, forward and backward (``all_ops``)."""
    return float(sum(op["calls"] for line in result.get("lines") or [] for op in all_ops(line)))


def ops_count_text(calls: float) -> str:
    """``20``, or ``2.5`` for an op not called on every call (as the Report's ``formatOps``)."""
    if abs(calls - round(calls)) < 1e-9:
        return f"{round(calls)}"
    return f"{math.floor(calls * 10 + 0.5) / 10:.1f}"  # half up, as JavaScript's Math.round


def short_op_name(name: str) -> str:
    """An op's name for a lens: autograd's nodes as ``MulBackward0 (autograd)``."""
    if name.startswith(BACKWARD_PREFIX):
        return f"{name[len(BACKWARD_PREFIX) :]} (autograd)"
    if name.startswith(INTERPRETED_PREFIX) and name.endswith(INTERPRETED_SUFFIX):
        return f"{name[len(INTERPRETED_PREFIX) : -len(INTERPRETED_SUFFIX)]} · interpreted"
    return name


def _compiled_op_text(op: dict[str, Any], cuda: bool, *, backward: bool = False) -> str:
    """A compiled graph's kernel on a line: ``fused with lines 56, 64 · <kernel> 88 µs``."""
    head = ("bwd " if backward else "") + fused_text(op) + short_op_name(op["name"])
    if cuda and op["kernels"] and op["name"] not in [k["name"] for k in op["kernels"]]:
        head += " → " + op["kernels"][0]["short_name"]  # an extern call's library kernel
    if cuda:
        return f"{head}{_calls(op['calls'])} {format_us(op['device_us'])}"
    return f"{head}{_calls(op['calls'])} · CPU"


def _op_text(op: dict[str, Any], cuda: bool) -> str:
    if isinstance(op.get("compiled"), dict):
        return _compiled_op_text(op, cuda)
    chain = [short_op_name(op["name"]), *op["dispatch"]]
    if cuda and op["kernels"]:
        names = [k["short_name"] for k in op["kernels"]]
        shown = names[0] if len(names) == 1 else f"{names[0]} +{len(names) - 1}"
        return f"{' → '.join(chain)} → {shown}{_calls(op['calls'])} {format_us(op['device_us'])}"
    if cuda:
        return f"{' → '.join(chain)}{_calls(op['calls'])} (no kernel)"
    # No number on CPU: an op's CPU time under the profiler is inflated by the profiler itself
    # (see docs/benchmarks.md), so it is not shown as the op's time; the hover gives it, labelled.
    return f"{' → '.join(chain)}{_calls(op['calls'])} · CPU"


def line_shares(result: dict[str, Any]) -> dict[int, float]:
    """Each profiled line's share (0–1) of the CPU time the profiler attributed to ops, by
    1-based line; ``{}`` on CUDA (lines show measured device time there) or without ops.

    The profiler inflates every op's CPU time, so absolute figures would not add up to the
    measured median; their proportions are what the per-line lenses show (``38% of 44.4 µs``).
    """
    if result.get("device_kind") == "cuda":
        return {}
    per_line: dict[int, float] = {}
    for line in result.get("lines") or []:
        total = sum(float(op.get("cpu_us") or 0.0) for op in all_ops(line))
        if total > 0:
            per_line[int(line["line"])] = total
    whole = sum(per_line.values())
    return {k: v / whole for k, v in per_line.items()} if whole > 0 else {}


def share_text(share: float, median_ms: float) -> str:
    """``38% of 44.4 µs``: a share of the measured median (``<1%`` for a sliver)."""
    pct = share * 100
    head = "<1%" if 0 < pct < 1 else f"{pct:.0f}%"
    return f"{head} of {format_us(median_ms * 1000)}"


def _lines_span(lines: list[int]) -> str:
    """``44–45`` for consecutive lines, ``44, 47`` otherwise."""
    if not lines:
        return ""
    if len(lines) > 1 and lines == list(range(lines[0], lines[-1] + 1)):
        return f"{lines[0]}–{lines[-1]}"
    return ", ".join(str(n) for n in lines)


def backward_pass_text(line: dict[str, Any], *, cuda: bool) -> str | None:
    """``backward pass 2.14 ms · spread over lines 44–45`` for the line that ran one."""
    bpass = line.get("backward_pass")
    if not bpass:
        return None
    spread = _lines_span(list(bpass.get("lines") or []))
    where = f" · spread over line{'s' if len(bpass.get('lines') or []) != 1 else ''} {spread}"
    amount = (
        format_us(float(bpass.get("device_us") or 0.0))
        if cuda
        else f"{format_us(float(bpass.get('cpu_us') or 0.0))} CPU under the profiler"
    )
    others = int(bpass.get("other_files") or 0)
    elsewhere = ("other files' lines" if others > 1 else "another file's lines") if others else ""
    if spread and elsewhere:
        return f"backward pass {amount}{where} and {elsewhere}"
    if elsewhere:
        return f"backward pass {amount} · spread over {elsewhere}"
    return f"backward pass {amount}" + (where if spread else " · on no forward line")


def accounting_text(result: dict[str, Any], *, short: bool = False) -> str | None:
    """``100% on lines`` (short) or ``3.66 ms of kernels · 100% on lines`` / ``… · 97.1% on
    lines · 0.11 ms launched from another thread, …``; None without device time."""
    acc = result.get("accounting")
    if not acc or not acc.get("device_us"):
        return None
    pct = float(acc.get("on_lines_pct") or 0.0)
    head = "100% on lines" if pct >= 99.995 else f"{pct:.1f}% on lines"
    if short:
        return head
    parts = [f"{format_us(float(acc['device_us']))} of kernels", head]
    for rem in acc.get("remainder") or []:
        parts.append(f"{format_us(float(rem['device_us']))} {rem.get('text', rem['reason'])}")
    return " · ".join(parts)


def compared_row(result: Mapping[str, Any], line_no: int) -> dict[str, Any] | None:
    """The *Eager vs Compiled* row of 1-based ``line_no`` (``None``: not compared)."""
    compared = result.get("compare_compiled")
    if not isinstance(compared, Mapping):
        return None
    return next((r for r in compared.get("lines") or [] if r.get("line") == line_no), None)


def compared_lens_title(result: Mapping[str, Any], line_no: int) -> str | None:
    """``compiled: 0.41 ms (was 1.2 ms) · 3 kernels fused into 1`` on a compared line."""
    row = compared_row(result, line_no)
    if row is None:
        return None
    return "$(zap) " + compare_lens_text(row, cuda=result.get("device_kind") == "cuda")


def _line_lead(line: dict[str, Any], ops: list[dict[str, Any]], *, cuda: bool) -> str:
    """What leads a line's ops in its lens: its forward and backward time (on a CPU, how its
    share splits between them), or on CUDA the total of several ops; else nothing."""
    backward = line.get("backward")
    if backward and cuda:
        return (
            f"fwd {format_us(float(line.get('device_us') or 0.0))} · "
            f"bwd {format_us(float(backward.get('device_us') or 0.0))}"
        )
    if backward:
        # On a CPU the line's share (its lead) covers both passes: say how it splits.
        fwd_cpu = sum(float(op.get("cpu_us") or 0.0) for op in line.get("ops") or [])
        bwd_cpu = float(backward.get("cpu_us") or 0.0)
        if fwd_cpu + bwd_cpu > 0:
            bwd_pct = round(100 * bwd_cpu / (fwd_cpu + bwd_cpu))
            return f"fwd {100 - bwd_pct}% · bwd {bwd_pct}%"
        return ""
    if cuda and len(ops) > 1 and line.get("device_us"):
        return format_us(line["device_us"])
    return ""


def line_lens_title(
    line: dict[str, Any], *, cuda: bool, share: str | None = None, memory_first: bool = True
) -> str | None:
    """The lens above one profiled line, or ``None`` when the line ran no ops.

    ``memory_first``: the line's memory leads (asked for: *Profile memory*); else (recorded by
    default) it follows the time.

    ``share`` (see :func:`share_text`) starts a CPU line's lens: its part of the measured median.
    A line whose forward ops caused backward work leads with both (``fwd 1.42 ms · bwd 2.12 ms``
    on CUDA); the line that ran the backward pass says so (``backward pass 2.14 ms · spread over
    lines 44–45``) before its own ops.
    """
    ops = list(line.get("ops") or [])
    bpass = backward_pass_text(line, cuda=cuda)
    memory = memory_lens_text(line)
    compiled = compile_lens_text(line)
    backward = line.get("backward")
    # a compiled graph's kernels fused from this line and others, counted on another line
    shared = line.get("shared") or []
    if not ops and bpass is None and not backward and not shared:
        return compiled or memory
    if cuda:
        # Kernels first: they are what the line costs on the GPU.
        ops = sorted(ops, key=lambda op: -op["device_us"])
    texts = [_op_text(op, cuda) for op in ops[:MAX_LENS_OPS]]
    more = len(ops) - MAX_LENS_OPS
    if more > 0:
        texts.append(f"+{more} more")
    texts += [
        _compiled_op_text(op, cuda, backward=bool(op.get("backward")))
        for op in shared[:MAX_LENS_OPS]
    ]
    title = "  |  ".join(texts)
    lead = _line_lead(line, ops, cuda=cuda)
    if lead:
        title = f"{lead} · {title}" if title else lead
    if bpass is not None:
        title = bpass + (f"  |  {title}" if title else "")
    if compiled:
        title = f"{compiled}  |  {title}" if title else compiled
    if share:
        # First: the number is what the line is read for, and a long row is cut at its end.
        title = f"{share} · {title}"
    if memory and memory_first:
        # Asked for (Profile memory): ahead of the time, which the row may cut.
        title = f"{memory}  |  {title}"
    elif memory:
        title = f"{title}  |  {memory}"
    return title


def error_lens_title(error: Mapping[str, Any]) -> str:
    """``⚠ Profile failed: runtime — ValueError: boom`` (one line, clipped)."""
    message = str(error.get("message", "")).splitlines()[0] if error.get("message") else ""
    memory = error.get("memory")
    if isinstance(memory, Mapping):
        # An out-of-memory read from the allocator's snapshot: what the lens has room for.
        return f"$(warning) Profile failed: {oom_short_text(memory)}"
    if len(message) > 90:
        message = message[:89] + "…"
    return f"$(warning) Profile failed: {error.get('kind', 'error')} — {message}"


def _hover_worth(line: dict[str, Any] | None, compared: Any) -> bool:
    """Whether a line has anything for the hover: ops, a comparison, backward, memory, fused
    kernels or compile time."""
    return line is not None and bool(
        compared is not None
        or line["ops"]
        or line.get("backward_pass")
        or line.get("memory")
        or line.get("backward")
        or line.get("shared")
        or line.get("compile")
    )


def _hover_op_shares(result: dict[str, Any], ops: list[dict[str, Any]]) -> dict[int, float]:
    """Each op's share of the CPU time the profiler attributed, over the same whole as the
    lenses' shares (line_shares): forward and backward ops."""
    whole = sum(
        float(o.get("cpu_us") or 0.0) for x in result.get("lines") or [] for o in all_ops(x)
    )
    return {id(op): (float(op.get("cpu_us") or 0.0) / whole if whole > 0 else 0.0) for op in ops}


def _hover_compile_lines(line: dict[str, Any]) -> list[str]:
    """torch.compile's own time on the line, said apart from its op time."""
    compiled = compile_lens_text(line)
    if not compiled:
        return []
    ids = md_text(", ".join(str(c) for c in (line.get("compile") or {}).get("compile_ids") or []))
    return [
        f"**{compiled}** — torch.compile's own time (Dynamo, AOTAutograd, Inductor; "
        f"compile {ids}), said apart: not the line's op time.",
        "",
    ]


def _hover_op_lines(
    ops: list[dict[str, Any]],
    *,
    cuda: bool,
    op_shares: dict[int, float] | None,
    median_ms: float,
    attributed: list[str],
) -> list[str]:
    """One bullet per op (its kernels under it on a GPU); the ops' profiler CPU times are
    added to ``attributed`` when they read as shares of the median."""
    out: list[str] = []
    for op in ops:
        chain = " → ".join(code_span(n) for n in [op["name"], *op["dispatch"]])
        out_len = len(out)
        if cuda:
            out.append(
                f"- {chain} · **{format_us(op['device_us'])}** device · "
                f"{op['calls']:g} call{'s' if op['calls'] != 1 else ''}"
            )
            for k in op["kernels"]:
                out.append(
                    f"  - {code_span(k['name'])} · {format_us(k['device_us'])} · ×{k['calls']:g}"
                )
            if not op["kernels"]:
                out.append("  - no kernel launched")
        elif op_shares is not None:
            share = op_shares.get(id(op), 0.0)
            out.append(
                f"- {chain} · {op['calls']:g} call{'s' if op['calls'] != 1 else ''} · "
                f"**{share_text(share, median_ms)}**"
            )
            attributed.append(f"{code_span(op['name'])} {format_us(op['cpu_us'])}")
        else:
            out.append(
                f"- {chain} · {op['calls']:g} call{'s' if op['calls'] != 1 else ''} · "
                f"{format_us(op['cpu_us'])} CPU under the profiler"
            )
        if isinstance(op.get("compiled"), dict) and len(out) > out_len:
            out.insert(out_len + 1, compiled_hover_line(op))
    return out


def _hover_shared_lines(shared: list[dict[str, Any]], *, cuda: bool) -> list[str]:
    """The kernels fused with other lines, each counted once on its first line."""
    if not shared:
        return []
    out = ["", "**Fused with other lines** (each kernel counted once, on its first line):"]
    for op in shared:
        value = (
            f"{format_us(op['device_us'])} device"
            if cuda
            else f"{format_us(op['cpu_us'])} CPU under the profiler"
        )
        where = (op.get("compiled") or {}).get("counted_on") or {}
        out.append(
            f"- {'bwd ' if op.get('backward') else ''}{code_span(op['name'])} · {value}"
            + (f" · counted on line {where.get('line')}" if where.get("line") else "")
        )
        out.append(compiled_hover_line(op))
    return out


def _hover_note(
    result: dict[str, Any], timing: dict[str, Any] | None, *, cuda: bool, attributed: bool
) -> str:
    """The hover's italic note: what the figures are, and the function's median."""
    runs = md_text(result.get("profiled_runs", "?"))
    device = md_text(result.get("device", "?"))
    if attributed:
        note = (
            f"Shares of the function's measured median, split as the profiler attributed CPU "
            f"time over {runs} profiled calls on {device}."
        )
    elif result.get("script"):
        note = (
            f"Totals of the script's one run as `__main__` on {device}, "
            "under the profiler" + ("" if cuda else " (CPU times for attribution only)") + "."
        )
    else:
        note = (
            f"Per call, from {runs} profiled calls on {device}"
            + ("" if cuda else " (CPU times under the profiler: for attribution only)")
            + "."
        )
    if timing:
        how = "CUDA events" if timing.get("method") == "cuda-events" else "perf_counter"
        note += (
            f" Function: {format_time_ms(timing['median_ms'])} median "
            f"±{timing['spread_pct']:.1f}% of {timing['reps']} reps ({how})."
        )
    return f"_{note}_"


def _hover_footer(
    result: dict[str, Any], timing: dict[str, Any] | None, *, cuda: bool, attributed: list[str]
) -> list[str]:
    """The note, how the function was timed, the profiler's CPU detail, the inputs and the
    timing warning."""
    out = [_hover_note(result, timing, cuda=cuda, attributed=bool(attributed))]
    out.extend(timing_policy_lines(timing))
    if attributed:
        out.append("")
        out.append(
            "Detail: CPU time per call under the profiler (inflated by the profiler itself, "
            "not comparable with the median): " + ", ".join(attributed) + "."
        )
    source = inputs_text(result.get("inputs"), result.get("path"))
    if source is not None and not result.get("script"):
        out.append("")
        out.append(f"Inputs: {md_text(source)}")
        out.extend(f"- {code_span(arg)}" for arg in inputs_args_text(result.get("inputs")))
    warning = timing_warning_text(timing)
    if warning:
        out.append("")
        out.append(f"⚠ Timing: {md_text(warning)}")
    return out


def hover_markdown(result: dict[str, Any], line_no: int, *, word: str | None = None) -> str | None:
    """Markdown for a hover on 1-based ``line_no`` of a profiled function, or ``None``."""
    line = next((x for x in result.get("lines") or [] if x["line"] == line_no), None)
    compared = compared_row(result, line_no)
    if line is None or not _hover_worth(line, compared):
        return None
    cuda = result.get("device_kind") == "cuda"
    ops = list(line["ops"])
    if word:
        # The op the hovered word names comes first (``square`` → aten::square).
        ops.sort(key=lambda op: 0 if op["name"].split("::")[-1] == word else 1)
    out: list[str] = [f"**Kernel Lens** · line {line_no} · {code_span(line['source'])}", ""]
    timing = result.get("timing")
    # On a CPU, each op reads as its share of the measured median; the profiler's own
    # (inflated) CPU times go in the detail below, labelled, so the big number is not the one
    # read first.
    median_ms = float(timing.get("median_ms") or 0.0) if timing else 0.0
    op_shares = _hover_op_shares(result, ops) if not cuda and median_ms > 0 else None
    attributed: list[str] = []
    out += _hover_compile_lines(line)
    out += _hover_op_lines(
        ops, cuda=cuda, op_shares=op_shares, median_ms=median_ms, attributed=attributed
    )
    out.extend(_backward_hover(line, cuda=cuda))
    shared = line.get("shared") or []
    out += _hover_shared_lines(shared, cuda=cuda)
    if compared is not None:  # Eager vs Compiled: the eager ops against the compiled kernels
        out.extend(compare_hover_lines(compared, cuda=cuda))
    out.extend(roofline_hover_lines(result, line))
    out.extend(memory_hover_lines(result, line))
    if any(isinstance(op.get("compiled"), dict) for op in [*all_ops(line), *shared]):
        out += ["", COMPILED_KERNELS_NOTE]
    elif any(_is_compiled_region(op["name"]) for op in all_ops(line)):
        out += ["", COMPILED_REGION_NOTE]
    out.append("")
    out += _hover_footer(result, timing, cuda=cuda, attributed=attributed)
    return "\n".join(out)


def timing_policy_lines(timing: dict[str, Any] | None) -> list[str]:
    """The hover's lines on how the function's time was made (issue 25): ``Timed: eager · L2
    cold · CPU launch overhead included · 812 reps · stable (σ 0.4%)``, the CUDA graph's time
    of a launch-bound function (or why it could not be captured) with its own policy, and the
    GPU's clocks; ``[]`` for a timing without a policy (an older result)."""
    if not timing or not isinstance(timing.get("policy"), dict):
        return []
    policy = timing["policy"]
    out = ["", f"Timed: {md_text(policy.get('text', ''))}"]
    if policy.get("nvml"):
        out.append(f"- {md_text(policy['nvml'])}")
    graph = timing.get("graph")
    parts = graph_parts(timing)
    if parts and isinstance(graph, dict):
        why = f" (launch-bound: {md_text(graph['why'])})" if graph.get("why") else ""
        out.append(f"- {md_text(' · '.join(parts))}{why}")
        graph_policy = graph.get("policy")
        if isinstance(graph_policy, dict) and graph_policy.get("text"):
            out.append(f"- graph: {md_text(graph_policy['text'])}")
    clocks = timing.get("clocks")
    if isinstance(clocks, dict):
        text = clocks_text(clocks)
        if text:
            out.append(f"- GPU: {md_text(text)}")
    return out


def clocks_text(clocks: dict[str, Any]) -> str | None:
    """``SM 1980 MHz · memory 3201 MHz · 41 °C`` (before → after where they differ)."""
    before, after = clocks.get("before") or {}, clocks.get("after") or {}
    parts: list[str] = []
    for key, label, unit in (("sm_mhz", "SM", " MHz"), ("mem_mhz", "memory", " MHz"),
                             ("temperature_c", "", " °C")):  # fmt: skip
        a, b = before.get(key), after.get(key)
        if not isinstance(a, int | float) and not isinstance(b, int | float):
            continue
        value = f"{a:g} → {b:g}" if a is not None and b is not None and a != b else f"{b or a:g}"
        parts.append(f"{label} {value}{unit}".strip())
    return " · ".join(parts) or None


#: Said on a line whose work ran in a torch.compile region (forward or backward).
COMPILED_REGION_NOTE = (
    "_torch.compile region: Inductor's kernels, forward and backward, are on the line that "
    "called the compiled code (Inductor fuses several source lines into one kernel, and its "
    "provenance of each kernel is not in the trace); **Generated Code** shows which lines each "
    "kernel fused._"
)


#: Said on a line that holds kernels of a compiled graph.
COMPILED_KERNELS_NOTE = (
    "_torch.compile: each kernel Inductor generated is on the lines of the FX nodes it fused "
    "(Inductor's provenance of the kernel), counted once on the first of them; the backward "
    "graph's kernels are on the forward lines whose nodes they differentiate._"
)


def compiled_hover_line(op: dict[str, Any]) -> str:
    """``  - fused from lines 24, 25 · nodes `mul`, `erf` · ATen `aten.gelu```."""
    info = op.get("compiled") or {}
    lines = [str(n) for n in info.get("lines") or []]
    lines += [md_text(f"{e.get('path')}:{e.get('line')}") for e in info.get("elsewhere") or []]
    parts = [f"{md_text(str(info.get('graph', 'graph')))} graph"]
    if lines:
        parts.append(f"from line{'s' if len(lines) > 1 else ''} {', '.join(lines)}")
    nodes = [str(n) for n in info.get("nodes") or []]
    if nodes:
        shown = ", ".join(code_span(n) for n in nodes[:8])
        parts.append(f"nodes {shown}" + (f" +{len(nodes) - 8}" if len(nodes) > 8 else ""))
    aten = [str(a) for a in info.get("aten") or []]
    if aten:
        parts.append("ATen " + ", ".join(code_span(a) for a in aten[:8]))
    return "  - " + " · ".join(parts)


def _is_compiled_region(name: str) -> bool:
    return name.startswith("Torch-Compiled Region") or name in (
        "CompiledFunction",
        "CompiledFunctionBackward",
    )


def _backward_hover(line: dict[str, Any], *, cuda: bool) -> list[str]:
    """The hover's backward part: the autograd nodes the line's forward ops made, costliest
    first, each with the ATen ops and kernels it ran; and the pass total on the line that ran
    the backward."""
    out: list[str] = []
    bpass = backward_pass_text(line, cuda=cuda)
    if bpass is not None:
        out += ["", f"**{bpass}** — each forward line carries its own part as `bwd`."]
    backward = line.get("backward")
    if not backward:
        return out
    total = (
        f"{format_us(float(backward.get('device_us') or 0.0))} device"
        if cuda
        else f"{format_us(float(backward.get('cpu_us') or 0.0))} CPU under the profiler"
    )
    out += ["", f"**Backward** caused by this line · {total}"]
    for op in backward.get("ops") or []:
        chain = " → ".join(code_span(n) for n in [op["name"], *op["dispatch"]])
        calls = f"{op['calls']:g} call{'s' if op['calls'] != 1 else ''}"
        if cuda:
            out.append(f"- {chain} · **{format_us(op['device_us'])}** device · {calls}")
            out.extend(
                f"  - {code_span(k['name'])} · {format_us(k['device_us'])} · ×{k['calls']:g}"
                for k in op["kernels"]
            )
        else:
            out.append(f"- {chain} · {calls} · {format_us(op['cpu_us'])} CPU under the profiler")
        if isinstance(op.get("compiled"), dict):
            out.append(compiled_hover_line(op))
    return out
