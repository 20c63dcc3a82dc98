"""Plain-text rendering of a profile result (the CLI's default output). Pure."""

from __future__ import annotations

from typing import Any

__all__ = ["format_profile", "format_time_ms", "format_us"]


def format_us(us: float) -> str:
    """``188 µs``, ``2.02 µs``, ``1.23 ms`` — three significant digits."""
    if us >= 1000:
        return f"{us / 1000:.3g} ms" if us < 100_000 else f"{us / 1000:.0f} ms"
    if us >= 100:
        return f"{us:.0f} µs"
    return f"{us:.3g} µs"


def format_time_ms(ms: float) -> str:
    """A median in milliseconds with 3 decimals, or µs below 0.01 ms."""
    if ms < 0.01:
        return f"{ms * 1000:.2f} µs"
    return f"{ms:.3f} ms"


def _graph_row(graph: dict[str, Any]) -> str:
    """``1.12 µs per call in a CUDA graph of 100 calls (launch-bound: …) · kernels 0.83 µs``."""
    if graph.get("median_ms") is None:
        return f"not measured in a CUDA graph: {graph.get('reason')}"
    text = f"{format_us(float(graph['median_ms']) * 1000)} per call in a CUDA graph"
    text += f" of {graph.get('calls')} calls"
    if graph.get("why"):
        text += f" (launch-bound: {graph['why']})"
    if isinstance(graph.get("kernels_us"), int | float):
        text += f" · kernels {format_us(float(graph['kernels_us']))}"
    return text


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _timing_rows(timing: dict[str, Any]) -> list[str]:
    """The function's median, how it was timed, its CUDA graph and the timing's warnings."""
    how = "CUDA events, L2 flushed" if timing["method"] == "cuda-events" else "perf_counter"
    out = [
        f"time   {format_time_ms(timing['median_ms'])} median  ±{timing['spread_pct']:.1f}%  "
        f"(min {format_time_ms(timing['min_ms'])}, {timing['reps']} reps, {how})"
    ]
    policy = timing.get("policy")
    if isinstance(policy, dict) and policy.get("text"):
        out.append(f"how    {policy['text']}")
    graph = timing.get("graph")
    if isinstance(graph, dict) and "calls" in graph:  # tried: launch-bound on CUDA
        out.append(f"graph  {_graph_row(graph)}")
    for warning in timing.get("warnings", []):
        out.append(f"       ! {warning}")
    return out


def _script_rows(script: dict[str, Any]) -> list[str]:
    """A script's wall time, its arguments, and the part of it that ran."""
    out = [f"time   {format_time_ms(script['wall_s'] * 1e3)}  {script['label']}"]
    if script.get("argv"):
        out.append(f"argv   {' '.join(script['argv'])}")
    window = script.get("window")
    partial = script.get("partial")
    if isinstance(partial, dict) and partial.get("reason") == "cancelled":
        out.append(
            f"partial the run was stopped (Cancel, Ctrl-C) after {partial.get('after_s')} s: "
            "the lines below are the part that ran"
        )
    elif isinstance(partial, dict):
        out.append(
            f"partial the run was cut at the time limit after {partial.get('after_s')} s, "
            "shortly before the job's limit: the lines below are the part that ran (a longer "
            "limit, --timeout / kernelLens.timeoutSeconds, or a window, --steps, for more)"
        )
    elif window:
        out.append(f"window {window_text(window)}")
    return out


def _other_file_rows(result: dict[str, Any], *, cuda: bool) -> list[str]:
    """The lines of the other files a script (or a named package) ran, file by file, and the
    shares of the time by file."""
    out: list[str] = []
    files = result.get("files") or {}
    named = result.get("packages") or {}
    if (result.get("script") or named) and files:
        for file, rows in files.items():
            out.append("")
            package = next(
                (n for n, root in named.items() if str(file).startswith(str(root) + "/")),
                None,
            )
            out.append(
                f"{file} (lines of this workspace file the run executed)"
                if package is None
                else f"{file} (lines of the installed package {package})"
            )
            out.extend(_line_rows(rows, cuda))
    by_file = result.get("by_file") or []
    if named and len(by_file) > 1:
        key = "device_us" if cuda else "cpu_us"
        total = sum(float(f.get(key) or 0.0) for f in by_file) or 1.0
        shares: dict[str, float] = {}
        for f in by_file:
            where = str(f.get("package") or "workspace")
            shares[where] = shares.get(where, 0.0) + float(f.get(key) or 0.0) / total
        out.append("")
        out.append(
            "by file: "
            + " · ".join(
                f"{w} {100 * v:.0f}%" for w, v in sorted(shares.items(), key=lambda i: -i[1])
            )
        )
    return out


def _inside_rows(lines: list[dict[str, Any]]) -> list[str]:
    """A line whose time is mostly inside an installed package: said, with the way in."""
    out: list[str] = []
    for row in lines:
        for inside in row.get("inside") or []:
            if float(inside.get("share") or 0.0) >= 0.5:
                out.append(
                    f"line {row.get('line')}: {100 * float(inside['share']):.0f}% inside "
                    f"{inside['package']} (--in-package {inside['package']} to attribute "
                    "inside it)"
                )
                break
    return out


def _kernel_rows(result: dict[str, Any], *, cuda: bool, width: int) -> list[str]:
    """The kernels' time on lines and what is not, then the kernels one by one."""
    out: list[str] = []
    accounting = result.get("accounting")
    if cuda and accounting and accounting.get("device_us"):
        pct = float(accounting["on_lines_pct"])
        head = "100% on lines" if pct >= 99.995 else f"{pct:.1f}% on lines"
        out.append("")
        out.append(f"{format_us(float(accounting['device_us']))} of kernels per call · {head}")
        for rem in accounting.get("remainder") or []:
            names = ", ".join(k["name"][:40] for k in rem.get("kernels") or [])
            out.append(f"  {format_us(float(rem['device_us'])):>9}  {rem['text']}: {names}")
    kernels = result.get("kernels") or []
    if kernels:
        out.append("")
        out.append("kernels (per call)")
        for k in kernels:
            lines_txt = ",".join(str(n) for n in k["lines"])
            out.append(
                f"  {format_us(k['device_us']):>9}  ×{k['calls']:<4} line {lines_txt:<8} "
                f"{_clip(k['name'], width - 36)}"
            )
    elif cuda:
        out.append("no GPU kernels were launched by this function")
    return out


def _per_line_rows(result: dict[str, Any], lines: list[dict[str, Any]], *, width: int) -> list[str]:
    """The per-line table and what goes with it: other files, packages, memory, kernels."""
    cuda = result.get("device_kind") == "cuda"
    out = [""]
    if result.get("script"):
        out.append(
            "per line (the one run of the script; each op on the innermost line of a "
            "workspace file on the stack; times under the profiler)"
        )
    else:
        out.append(
            f"per line (per call, from {result.get('profiled_runs', '?')} profiled calls; "
            "times under the profiler are for attribution, not the function's time)"
        )
    header = f"{'line':>5}  {'source':<34} {'op / kernel':<44} {'calls':>5} "
    header += f"{'device':>9}" if cuda else f"{'cpu':>9}"
    out.append(header)
    out.extend(_line_rows(lines, cuda))
    out.extend(_other_file_rows(result, cuda=cuda))
    out.extend(_inside_rows(lines))
    out.extend(_memory_rows(result))
    out.extend(_kernel_rows(result, cuda=cuda, width=width))
    return out


def format_profile(result: dict[str, Any], *, width: int = 110) -> str:
    """The readable report of one ``run_profile`` result."""
    out: list[str] = []
    where = f"{result.get('path', '')}:{result.get('def_line', '')}"
    out.append(f"{result['function']}  ·  {where}  ·  {result['device']}")
    timing = result.get("timing")
    if timing:
        out.extend(_timing_rows(timing))
    script = result.get("script")
    if script:
        out.extend(_script_rows(script))
    for note in result.get("notes") or []:
        where = f"{note['path']}:" if note.get("path") else "line "
        out.append(f"note   {where}{note.get('line') or '?'}: {note.get('message')}")
    lines = result.get("lines")
    if lines is not None:
        out.extend(_per_line_rows(result, lines, width=width))
    summary = result.get("trace")
    if summary:
        busy = summary.get("gpu_busy_pct")
        if busy is not None:
            out.append(
                f"GPU busy {summary['gpu_busy_us']:.1f} µs of {summary['wall_us']:.1f} µs "
                f"profiled wall ({busy:.1f}%), {summary['launches']['count']} launches"
            )
    if result.get("trace_path"):
        out.append(f"trace  {result['trace_path']}")
    elif result.get("trace_error"):
        out.append(str(result["trace_error"]))
    return "\n".join(out)


def window_text(window: dict[str, Any]) -> str:
    """``steps 3–4 profiled (2 skipped, counted from optimizer.step()); the script was stopped
    after step 4``."""
    seen = int(window.get("steps_seen") or 0)
    profiled = window.get("steps_profiled")
    source = window.get("counted_from")
    if profiled is None:
        return f"never started ({seen} step(s))"
    first = seen - int(profiled) + 1
    span = f"step {first}" if profiled == 1 else f"steps {first}–{seen}"
    head = f"{span} profiled" if profiled else "no step profiled"
    if not seen and not profiled and not window.get("stopped"):
        # Started at once and no step ever ended: the whole run is what was profiled.
        head = (
            "the whole run profiled: no step was seen (steps are counted from "
            "optimizer.step(), a torch.profiler step() or a `# kernel-lens: step` comment)"
        )
    skipped = int(window.get("skip") or 0)
    after = window.get("after_s")
    why = [f"{skipped} skipped"] if skipped else []
    if after is not None:
        why.append(f"started {window.get('started_s')} s in (--after {after:g} s)")
    if source:
        why.append(f"counted from {source}")
    text = f"{head} ({', '.join(why)})" if why else head
    if window.get("stopped"):
        text += f"; the script was stopped after step {seen}"
    return text


def _line_rows(lines: list[dict[str, Any]], cuda: bool) -> list[str]:
    """The table rows of ``lines`` (each line's ops, its backward, their kernels; a compiled
    graph's kernels fused with other lines, and the compilation a line started)."""
    from kernel_lens.analysis.compiled_lines import compile_lens_text, fused_text

    out: list[str] = []
    for line in lines:
        first = True
        bpass = line.get("backward_pass")
        if bpass:
            # the pass's total, said as such: its parts are on the forward lines (bwd)
            spread = ",".join(str(n) for n in bpass.get("lines") or [])
            value = bpass["device_us"] if cuda else bpass["cpu_us"]
            label = f"backward pass · on lines {spread}" if spread else "backward pass"
            out.append(
                f"{line['line']:>5}  {_clip(line['source'], 34):<34} "
                f"{_clip(label, 44):<44} {'':>5} {format_us(value):>9}"
            )
            first = False
        compiled = compile_lens_text(line)
        if compiled:
            out.append(
                f"{line['line']:>5}  {_clip(line['source'], 34):<34} "
                f"{_clip(compiled + ' (not op time)', 44):<44}"
            )
            first = False
        backward = line.get("backward") or {}
        shared = line.get("shared") or []
        parts = [
            ("", line["ops"]),
            ("bwd ", backward.get("ops") or []),
            ("", [op for op in shared if not op.get("backward")]),
            ("bwd ", [op for op in shared if op.get("backward")]),
        ]
        for prefix, ops in parts:
            for op in ops:
                label = prefix + op["name"] + "".join(f" → {d}" for d in op["dispatch"])
                info = op.get("compiled")
                if isinstance(info, dict) and info.get("counted_on"):
                    # fused with this line, counted on another: shown, not added again
                    label = (
                        f"{prefix}= {op['name']} (fused, counted on {info['counted_on']['line']})"
                    )
                elif isinstance(info, dict):
                    label = prefix + fused_text(op) + op["name"]
                value = op["device_us"] if cuda else op["cpu_us"]
                out.append(
                    f"{line['line'] if first else '':>5}  "
                    f"{_clip(line['source'] if first else '', 34):<34} "
                    f"{_clip(label, 44):<44} {op['calls']:>5} {format_us(value):>9}"
                )
                first = False
                for k in op["kernels"]:
                    out.append(
                        f"{'':>5}  {'':<34} {_clip('  ↳ ' + k['short_name'], 44):<44} "
                        f"{k['calls']:>5} {format_us(k['device_us']):>9}"
                    )
        if first:
            out.append(f"{line['line']:>5}  {_clip(line['source'], 34):<34} (no ops)")
    return out


def _memory_rows(result: dict[str, Any]) -> list[str]:
    """The memory part (a profile with ``--memory``): each line's allocations per device, then
    each device's peak and what was alive at it, by line."""
    from kernel_lens.analysis.memory_text import memory_lens_text, peak_lines

    memory = result.get("memory")
    if not isinstance(memory, dict):
        return []
    out = ["", "memory per line (per call; bytes allocated + and freed −, live total after it)"]
    for line in result.get("lines") or []:
        text = memory_lens_text(line)
        if text:
            out.append(
                f"{line['line']:>5}  {_clip(line['source'], 34):<34} "
                + text.removeprefix("$(database) ")
            )
    return out + peak_lines(result)
