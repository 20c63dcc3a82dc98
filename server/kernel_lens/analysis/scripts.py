"""Whole scripts: which files have module-level work to profile, and how a script's one run is
described (pure: the agent's *script* stage and the language server share it)."""

from __future__ import annotations

import ast
from typing import Any

from kernel_lens.analysis.lens_text import summary_lens_title
from kernel_lens.analysis.report_text import format_time_ms

__all__ = [
    "SCRIPT_NAME",
    "WALL_LABEL",
    "WINDOW_LABEL",
    "module_work_lines",
    "script_share_text",
    "script_summary_title",
    "window_text",
]

#: The ``function`` of a whole-script result (never a valid Python name, so never a function's).
SCRIPT_NAME = "<script>"
#: How a script's time is labelled wherever it is shown.
WALL_LABEL = "wall time of one run as __main__, under the profiler (not a median)"
#: How the time of a window of a script's run is labelled.
WINDOW_LABEL = "wall time of the profiled window of one run as __main__, under the profiler"

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _does_work(node: ast.stmt) -> bool:
    """Whether a module-level statement runs code: a call anywhere in it, or a loop/with."""
    if isinstance(node, ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith):
        return True
    return any(isinstance(sub, ast.Call | ast.Await) for sub in ast.walk(node))


def module_work_lines(tree: ast.Module) -> list[int]:
    """The 1-based lines of module-level statements that do work (calls, loops, ``with``,
    the ``if __name__ == "__main__":`` block's statements): empty for a library-style file of
    imports, definitions and constants."""
    out: list[int] = []
    for node in tree.body:
        if isinstance(node, _DEFINITIONS) or _is_docstring(node):
            continue
        if _does_work(node):
            out.append(node.lineno)
    return out


def script_summary_title(result: dict[str, Any]) -> str:
    """``$(run-all) script · 165 ms wall, one run · 12 ops · CPU``: the number is the wall time
    of the script's one run (under the profiler), never a median."""
    script = result.get("script") or {}
    wall_s = float(script.get("wall_s") or 0.0)
    counts = summary_lens_title({k: v for k, v in result.items() if k != "timing"})
    partial = script.get("partial")
    if isinstance(partial, dict):
        # Cut at the job's time limit, or cancelled: the part that ran, said as such.
        why = (
            "cancelled"
            if partial.get("reason") == "cancelled"
            else f"cut at the time limit ({partial.get('setting', 'kernelLens.timeoutSeconds')})"
        )
        took = f"{wall_s:.1f} s" if wall_s >= 1 else format_time_ms(wall_s * 1e3)
        return f"$(warning) partial: the first {took} of the script, {why} · {counts}"
    window = script.get("window")
    if isinstance(window, dict):
        # A window of a long run (skip/steps/after_s): the steps profiled, not "one run".
        return f"$(run-all) {window_text(window)} · {format_time_ms(wall_s * 1e3)} wall · {counts}"
    return f"$(run-all) script · {format_time_ms(wall_s * 1e3)} wall, one run · {counts}"


def window_text(window: dict[str, Any]) -> str:
    """``window: steps 3–5 of the run`` (``window: from 30 s into the run`` when no step was
    counted): what a windowed Profile Script profiled."""
    profiled = window.get("steps_profiled")
    seen = window.get("steps_seen")
    if isinstance(profiled, int) and isinstance(seen, int) and profiled > 0:
        first = seen - profiled + 1
        steps = f"step {first}" if profiled == 1 else f"steps {first}–{seen}"
        return f"window: {steps} of the run"
    after_s = window.get("after_s")
    if isinstance(after_s, int | float):
        return f"window: from {after_s:g} s into the run"
    return "window of the run"


def script_share_text(share: float) -> str:
    """``38% of the ops' time``: a CPU line's part of a script run's op time (one run has no
    median to take a share of; the profiler's own times are inflated, their proportions hold)."""
    pct = share * 100
    return f"{'<1' if 0 < pct < 1 else f'{pct:.0f}'}% of the ops' time"
