"""Eager against compiled, line by line (issue 33 item 4). Pure: built from two results' lines.

The same function runs eagerly (the profile's own ``lines`` and ``timing``) and under
``torch.compile`` (its profiled pass attributed by :mod:`kernel_lens.analysis.line_attribution`
with the compiled graphs: a fused kernel on the lines of the FX nodes it fused, counted once on
the first of them, ``shared`` on the others). Per line, what compilation changed:

- its time before and after: on CUDA the kernels' device time per call; on a CPU its share of
  each side's measured median (the profiler inflates CPU times; their proportions are what the
  lenses show, as :func:`kernel_lens.analysis.lens_text.line_shares` does);
- its kernels before and after (on a CPU: the ops eagerly, each a loop over memory, against the
  compiled C++ kernels), and the lines a fused kernel joined it with.

The function's speed-up is the eager median over the compiled one, both timed the timing stage's
way (warm-up; the compilation before, never in the timing), each with its spread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernel_lens.analysis.line_attribution import all_ops
from kernel_lens.analysis.report_text import format_time_ms, format_us
from kernel_lens.analysis.safe_text import md_code as code_span

__all__ = [
    "compare_hover_lines",
    "compare_lens_text",
    "compare_lines",
    "compare_summary_text",
    "compare_text_rows",
    "line_work",
    "speedup",
]


def _shares(lines: Sequence[Mapping[str, Any]], skip: int | None = None) -> dict[int, float]:
    """Each line's share (0–1) of the CPU time the profiler attributed to ops."""
    per_line: dict[int, float] = {}
    for line in lines:
        if skip is not None and int(line["line"]) == skip:
            continue
        total = sum(float(op.get("cpu_us") or 0.0) for op in all_ops(line))
        if total > 0:
            per_line[int(line["line"])] = total
    whole = sum(per_line.values())
    return {k: v / whole for k, v in per_line.items()} if whole > 0 else {}


def line_work(line: Mapping[str, Any], *, cuda: bool) -> float:
    """What one line launched per call: kernel launches on CUDA; on a CPU its top-level ops
    (a compiled kernel, an eager ATen op). Kernels counted on another line are not this
    line's."""
    ops = list(line.get("ops") or [])
    if cuda:
        return float(
            sum(float(k.get("calls") or 0.0) for op in ops for k in op.get("kernels") or [])
        )
    return float(sum(float(op.get("calls") or 0.0) for op in ops))


def _names(line: Mapping[str, Any] | None, *, cuda: bool) -> list[dict[str, Any]]:
    """The line's ops (with their kernels on CUDA) as the hover lists them."""
    out: list[dict[str, Any]] = []
    for op in (line or {}).get("ops") or []:
        entry: dict[str, Any] = {
            "name": str(op.get("name")),
            "calls": op.get("calls"),
            "device_us": op.get("device_us"),
        }
        if cuda:
            entry["kernels"] = [str(k.get("name")) for k in op.get("kernels") or []]
        info = op.get("compiled")
        if isinstance(info, Mapping):
            entry["fused_lines"] = [int(n) for n in info.get("lines") or []]
            entry["aten"] = [str(a) for a in info.get("aten") or []]
        out.append(entry)
    return out


def speedup(eager_ms: float | None, compiled_ms: float | None) -> float | None:
    """Eager median over compiled median (``None`` when either is missing or zero)."""
    if not eager_ms or not compiled_ms or eager_ms <= 0 or compiled_ms <= 0:
        return None
    return eager_ms / compiled_ms


def compare_lines(
    eager: Sequence[Mapping[str, Any]],
    compiled: Sequence[Mapping[str, Any]],
    *,
    cuda: bool,
    eager_ms: float | None = None,
    compiled_ms: float | None = None,
    call_line: int | None = None,
) -> list[dict[str, Any]]:
    """Per line, eager against compiled.

    Args:
        eager: the eager profile's ``lines`` (JSON).
        compiled: the compiled run's ``lines`` (attributed with its compiled graphs).
        cuda: device times (CUDA) or shares of the medians (CPU).
        eager_ms, compiled_ms: the two measured medians (the CPU's shares are of them).
        call_line: the line the compiled call was tagged with (its ``def``): the compiled
            region's own overhead is there, never a line's; left out here.

    Returns:
        ``[{"line", "source", "eager_us", "compiled_us", "eager_kernels", "compiled_kernels",
        "fused_with", "fused_eager_kernels", "counted_on", "eager", "compiled"}]`` by line:
        ``compiled_us`` is ``None`` on a line whose only compiled work is a kernel counted on
        another line (``counted_on``); ``fused_eager_kernels`` the eager kernels of every line
        this line's fused kernels came from (``3 kernels fused into 1``).
    """
    by_eager = {int(x["line"]): x for x in eager}
    by_compiled = {int(x["line"]): x for x in compiled if int(x["line"]) != call_line}
    eager_share = _shares(eager) if not cuda else {}
    # The compiled region's own overhead (guards, the graph's call) is on the call line: its
    # share of the median is its own, never a line's.
    compiled_share = _shares(compiled) if not cuda else {}

    def time_us(line: Mapping[str, Any] | None, share: float | None, median: float | None) -> float:
        if line is None:
            return 0.0
        if cuda:
            return float(line.get("device_us") or 0.0)
        return (share or 0.0) * float(median or 0.0) * 1000.0

    eager_work = {no: line_work(x, cuda=cuda) for no, x in by_eager.items()}
    rows: list[dict[str, Any]] = []
    for no in sorted(set(by_eager) | set(by_compiled)):
        e, c = by_eager.get(no), by_compiled.get(no)
        if (
            e is not None
            and not all_ops(e)
            and (c is None or not (c.get("ops") or c.get("shared")))
        ):
            continue
        fused: list[int] = []
        for op in (c or {}).get("ops") or []:
            info = op.get("compiled")
            if isinstance(info, Mapping):
                fused += [int(n) for n in info.get("shared_with") or [] if int(n) not in fused]
        counted_on: int | None = None
        for op in (c or {}).get("shared") or []:
            where = (op.get("compiled") or {}).get("counted_on") or {}
            if where.get("line") is not None and counted_on is None:
                counted_on = int(where["line"])
        own = bool((c or {}).get("ops"))
        row: dict[str, Any] = {
            "line": no,
            "source": str((e or c or {}).get("source") or ""),
            "eager_us": round(time_us(e, eager_share.get(no), eager_ms), 3),
            "compiled_us": round(time_us(c, compiled_share.get(no), compiled_ms), 3)
            if own or counted_on is None
            else None,
            "eager_kernels": eager_work.get(no, 0.0),
            "compiled_kernels": line_work(c, cuda=cuda) if c is not None else 0.0,
            "fused_with": sorted(fused),
            "fused_eager_kernels": eager_work.get(no, 0.0)
            + sum(eager_work.get(n, 0.0) for n in fused),
            "fused_eager_us": round(
                sum(time_us(by_eager.get(n), eager_share.get(n), eager_ms) for n in [no, *fused]),
                3,
            ),
            "counted_on": counted_on,
            "eager": _names(e, cuda=cuda),
            "compiled": _names(c, cuda=cuda)
            + [
                {**entry, "counted_on": counted_on}
                for entry in _names({"ops": (c or {}).get("shared") or []}, cuda=cuda)
            ],
        }
        rows.append(row)
    return rows


def _us(us: float) -> str:
    return format_us(us)


def _span(lines: list[int]) -> str:
    """``19–22`` for consecutive lines, ``19, 24`` otherwise."""
    if len(lines) > 2 and lines == list(range(lines[0], lines[-1] + 1)):
        return f"{lines[0]}–{lines[-1]}"
    return ", ".join(str(n) for n in lines)


def _count(n: float) -> str:
    return f"{n:g}"


def compare_lens_text(row: Mapping[str, Any], *, cuda: bool) -> str:
    """``compiled: 0.41 ms (was 1.2 ms on lines 18–20) · 3 kernels fused into 1`` (a fused
    kernel against the eager time of every line it fused); on a line whose kernel is
    counted on another, ``compiled: fused with line 18 (was 0.4 ms)``; on a line compilation
    left without work, ``compiled: no kernel (was 12 µs)``."""
    unit = "kernel" if cuda else "op"
    was = f"was {_us(float(row.get('eager_us') or 0.0))}"
    compiled_us = row.get("compiled_us")
    if compiled_us is None:
        return f"compiled: fused with line {row.get('counted_on')} ({was})"
    n_after = float(row.get("compiled_kernels") or 0.0)
    if n_after == 0:
        return f"compiled: no kernel ({was})"
    n_before = float(row.get("fused_eager_kernels") or 0.0)
    if row.get("fused_with"):
        # The fused kernel does the work of every line it fused: against all of theirs.
        group = [int(row["line"]), *(int(n) for n in row["fused_with"])]
        was = f"was {_us(float(row.get('fused_eager_us') or 0.0))} on lines {_span(group)}"
    text = f"compiled: {_us(float(compiled_us))} ({was})"
    if row.get("fused_with") or n_before > n_after:
        what = f"{unit}{'s' if n_before != 1 else ''}"
        text += f" · {_count(n_before)} {what} fused into {_count(n_after)}"
    else:
        text += f" · {_count(n_after)} kernel{'s' if n_after != 1 else ''}"
    return text


def compare_summary_text(cmp: Mapping[str, Any], *, short: bool = False) -> str | None:
    """``eager 1.20 ms ±2.1% → compiled 0.410 ms ±3.0% · ×2.93`` (``short``: ``compiled 0.410
    ms ±3.0% · ×2.93``); ``None`` without both timings."""
    e, c = cmp.get("eager") or {}, cmp.get("compiled") or {}
    if not isinstance(e.get("median_ms"), int | float) or not isinstance(
        c.get("median_ms"), int | float
    ):
        return None
    ratio = cmp.get("speedup")
    tail = f" · ×{ratio:.2f}" if isinstance(ratio, int | float) else ""
    # The interleaved timing's verdict, where it is not a clear win or loss: a ratio near 1 is
    # "≈ same" or "ambiguous", never a speed-up to believe.
    verdict = cmp.get("verdict")
    if isinstance(verdict, Mapping) and verdict.get("kind") in ("same", "ambiguous"):
        text = str(verdict.get("text") or verdict["kind"])
        text = text.replace(" vs eager", "").replace(" as eager", "")
        tail += f" ({text})"
    after = f"compiled {format_time_ms(float(c['median_ms']))} ±{float(c['spread_pct']):.1f}%"
    if short:
        return after + tail
    before = f"eager {format_time_ms(float(e['median_ms']))} ±{float(e['spread_pct']):.1f}%"
    return f"{before} → {after}{tail}"


def compare_hover_lines(row: Mapping[str, Any], *, cuda: bool) -> list[str]:
    """The hover's part: the line's eager ops (and kernels) against its compiled kernels."""
    out = ["", f"**Eager vs compiled** · {compare_lens_text(row, cuda=cuda)}", "", "Eager:"]
    for op in row.get("eager") or []:
        kernels = ", ".join(code_span(k) for k in op.get("kernels") or [])
        out.append(
            f"- {code_span(op['name'])} ×{float(op.get('calls') or 0):g}"
            + (f" → {kernels}" if kernels else "")
        )
    if not row.get("eager"):
        out.append("- nothing ran on this line")
    out.append("Compiled:")
    for op in row.get("compiled") or []:
        text = f"- {code_span(op['name'])} ×{float(op.get('calls') or 0):g}"
        if op.get("counted_on") is not None:
            text += f" · counted on line {op['counted_on']}"
        fused = op.get("fused_lines") or []
        if len(fused) > 1:
            text += " · fused from lines " + ", ".join(str(n) for n in fused)
        if op.get("aten"):
            text += " · ATen " + ", ".join(code_span(a) for a in op["aten"][:8])
        out.append(text)
    if not row.get("compiled"):
        out.append("- no kernel: compilation left this line no work of its own")
    return out


def compare_text_rows(cmp: Mapping[str, Any], *, cuda: bool, width: int = 130) -> list[str]:
    """The CLI's section: the speed-up, then one row per line."""
    out = ["", "eager vs compiled (torch.compile, Inductor)"]
    summary = compare_summary_text(cmp)
    if summary:
        out.append(f"time   {summary}")
    e, c = cmp.get("eager") or {}, cmp.get("compiled") or {}
    unit = "kernels" if cuda else "ops → kernels"
    out.append(
        f"work   {_count(float(e.get('kernels') or 0))} → {_count(float(c.get('kernels') or 0))}"
        f" {unit} per call"
        + (
            f" · compiled in {float(c['compile_s']):.1f} s (not timed)"
            if c.get("compile_s")
            else ""
        )
    )
    how = "device time per call" if cuda else "each line's share of its side's median"
    out.append(f"per line ({how})")
    for row in cmp.get("lines") or []:
        text = compare_lens_text(row, cuda=cuda)
        source = str(row.get("source") or "")
        source = source if len(source) <= 34 else source[:33] + "…"
        line = f"{row['line']:>5}  {source:<34} {text}"
        out.append(line if len(line) <= width else line[: width - 1] + "…")
    return out
