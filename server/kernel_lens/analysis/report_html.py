"""HTML rendering of a profile result (the magic's output in Jupyter). Pure.

The same result object as :mod:`kernel_lens.analysis.report_text` renders for a terminal (the
CLI's ``--json`` shape): the summary, the timing's warnings, one row per op and kernel of each
line, the kernels per run and the trace file. Every value that came from the user's code, the
profiler or a file name is escaped (:func:`html.escape`): a kernel named ``k<float, 4>`` or a
line ``y = x < 2 & m`` shows as text, never as markup (docs/security.md).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from kernel_lens.analysis.report_text import format_time_ms, format_us

__all__ = ["format_profile_html"]


def _time_cell(result: dict[str, Any]) -> str:
    timing = result["timing"]
    how = "CUDA events, L2 flushed" if timing["method"] == "cuda-events" else "perf_counter (CPU)"
    return (
        f"{format_time_ms(timing['median_ms'])} median ±{timing['spread_pct']:.1f}% "
        f"(min {format_time_ms(timing['min_ms'])}, {timing['reps']} reps, {how})"
    )


def _line_rows(lines: list[dict[str, Any]], cuda: bool) -> list[str]:
    """The per-line table's rows: each op of a line (the line's number and source on its first),
    each kernel an op launched under it. Every value escaped."""
    esc = html.escape
    rows: list[str] = []
    for line in lines:
        first = True
        for op in line["ops"]:
            label = op["name"] + "".join(f" → {d}" for d in op["dispatch"])
            value = op["device_us"] if cuda else op["cpu_us"]
            rows.append(
                f"<tr><td>{esc(str(line['line'])) if first else ''}</td>"
                f"<td><code>{esc(line['source']) if first else ''}</code></td>"
                f"<td>{esc(label)}</td><td>{esc(str(op['calls']))}</td>"
                f"<td>{esc(format_us(value))}</td></tr>"
            )
            first = False
            for k in op["kernels"]:
                rows.append(
                    f'<tr><td></td><td></td><td title="{esc(k["name"])}">↳ '
                    f"{esc(k['short_name'])}</td><td>{esc(str(k['calls']))}</td>"
                    f"<td>{esc(format_us(k['device_us']))}</td></tr>"
                )
    return rows


def format_profile_html(result: dict[str, Any]) -> str:
    """The HTML table of a result (Jupyter's rendering). Pure; every value is escaped."""
    esc = html.escape
    cuda = result.get("device_kind") == "cuda"
    unit = "device" if cuda else "CPU"
    parts = [
        '<div class="kernel-lens">',
        f"<p><b>{esc(str(result['function']))}</b> · {esc(str(result['device']))} · "
        f"{esc(_time_cell(result))}</p>",
    ]
    for warning in result["timing"].get("warnings") or []:
        parts.append(f"<p>⚠ {esc(str(warning))}</p>")
    runs = result.get("profiled_runs", "?")
    parts.append(
        f"<p>per line (per run, from {esc(str(runs))} profiled runs; times under the profiler "
        "are for attribution, not the time above)</p>"
    )
    parts.append(
        "<table><thead><tr><th>line</th><th>source</th><th>op / kernel</th><th>calls</th>"
        f"<th>{unit}</th></tr></thead><tbody>"
    )
    parts.extend(_line_rows(result.get("lines") or [], cuda))
    parts.append("</tbody></table>")
    if result.get("kernels"):
        parts.append("<p>kernels (per run)</p><table><tbody>")
        for k in result["kernels"]:
            lines = ", ".join(str(n) for n in k["lines"])
            parts.append(
                f"<tr><td>{esc(format_us(k['device_us']))}</td><td>×{esc(str(k['calls']))}</td>"
                f"<td>line {esc(lines)}</td><td>{esc(k['name'])}</td></tr>"
            )
        parts.append("</tbody></table>")
    elif cuda:
        parts.append("<p>no GPU kernels were launched</p>")
    trace = result.get("trace_path")
    if trace:
        uri = Path(trace).as_uri()
        parts.append(
            f'<p>trace <a href="{esc(uri)}" target="_blank">{esc(trace)}</a> '
            "(Perfetto or chrome://tracing)</p>"
        )
    elif result.get("trace_error"):
        parts.append(f"<p>{esc(str(result['trace_error']))}</p>")
    parts.append("</div>")
    return "".join(parts)
