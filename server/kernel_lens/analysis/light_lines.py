"""The light whole-run profile's lines: Proton's tree of kernel times by Python calling context,
as kernel time per line of the workspace's files (issue 36, item 4).

Proton (``triton.profiler``, in the triton wheel) with ``context="python"`` keeps, for each
kernel, the Python stack that launched it, and aggregates: one node per distinct stack and
kernel, with its launch count and total GPU time, whatever the number of steps. Its ``.hatchet``
file is a JSON list whose first element is the root node; a node is ``{"frame": {"name"},
"metrics": {"time (ns)", "count", …}, "children": […]}``; a Python frame's name is
``FILE:LINE@FUNCTION`` (triton 3.x). A kernel's node has a name that is not a Python frame.

Each kernel's time goes to the innermost frame of its stack in a workspace file (as the deep
profile's attribution does). What the light profile leaves out, said with its results
(`LIGHT_LABEL`): the ATen op names (only kernels), and backward's kernels on the forward lines
(autograd launches them from its own threads, which have no Python stack: they are counted as
``other``, not on a line).

Pure: a parsed tree and a predicate in, JSON out.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["LIGHT_LABEL", "light_answer", "light_lines", "python_frame", "within"]

#: What a light profile is, said where its results are shown.
LIGHT_LABEL = (
    "light profile (Proton): every line's GPU kernel time for the whole run, aggregated by "
    "calling context; no ATen op names, and backward's kernels are not on the forward lines "
    "(they are 'other': autograd launches them from its own threads). The deep profile "
    "(Profile Script, or a window: --steps N) has both"
)

_FRAME = re.compile(r"^(?P<file>.+):(?P<line>\d+)@(?P<func>.*)$")
#: An older layout, ``FILE:FUNCTION@LINE``.
_FRAME_OLD = re.compile(r"^(?P<file>.+):(?P<func>[^:@/\\]*)@(?P<line>\d+)$")


def python_frame(name: str) -> tuple[str, int, str] | None:
    """(file, line, function) of a Proton Python frame's name; None for a kernel's."""
    m = _FRAME.match(name) or _FRAME_OLD.match(name)
    if m is None or not (m.group("file").endswith(".py") or os.sep in m.group("file")):
        return None
    return m.group("file"), int(m.group("line")), m.group("func")


def within(roots: Iterable[str]) -> Callable[[str], bool]:
    """Whether a file is under one of the folders ``roots``."""
    folders = [os.path.join(os.path.abspath(r), "") for r in roots]
    return lambda path: any(os.path.abspath(path).startswith(f) for f in folders)


def _time_ns(metrics: dict[str, Any]) -> float:
    for key, value in metrics.items():
        if key.startswith("time") and isinstance(value, (int, float)):
            scale = {"(ns)": 1.0, "(us)": 1e3, "(ms)": 1e6, "(s)": 1e9}
            return float(value) * next((v for k, v in scale.items() if key.endswith(k)), 1.0)
    return 0.0


def light_lines(tree: Any, in_workspace: Callable[[str], bool]) -> dict[str, Any]:
    """Kernel time per workspace line from a Proton ``.hatchet`` tree.

    Args:
        tree: the parsed file (a list whose first element is the root, or the root itself).
        in_workspace: whether a file's lines get results.

    Returns:
        ``{"files": {path: {line: {"kernel_us", "launches", "kernels": [{"name", "us",
        "count"}]}}}, "total_kernel_us", "other_us", "launches", "label"}``: ``other_us`` is
        kernel time with no workspace frame on its stack (backward, library threads).
    """
    root = tree[0] if isinstance(tree, list) and tree else tree
    files: dict[str, dict[int, dict[str, Any]]] = {}
    totals = {"total": 0.0, "other": 0.0, "launches": 0}
    stack: list[tuple[dict[str, Any], tuple[str, int] | None]] = []
    if isinstance(root, dict):
        stack.append((root, None))
    while stack:
        node, where = stack.pop()
        frame = node.get("frame") or {}
        name = str(frame.get("name", ""))
        parsed = python_frame(name)
        if parsed is not None:
            if in_workspace(parsed[0]):
                where = (os.path.abspath(parsed[0]), parsed[1])
        elif name and name != "ROOT":
            metrics = node.get("metrics") or {}
            ns = _time_ns(metrics)
            count = int(metrics.get("count", 0) or 0)
            if ns > 0 or count > 0:
                totals["total"] += ns
                totals["launches"] += count
                if where is None:
                    totals["other"] += ns
                else:
                    entry = files.setdefault(where[0], {}).setdefault(
                        where[1], {"kernel_us": 0.0, "launches": 0, "kernels": {}}
                    )
                    entry["kernel_us"] += ns / 1e3
                    entry["launches"] += count
                    kernel = entry["kernels"].setdefault(name, {"us": 0.0, "count": 0})
                    kernel["us"] += ns / 1e3
                    kernel["count"] += count
        for child in node.get("children") or ():
            if isinstance(child, dict):
                stack.append((child, where))
    out_files: dict[str, dict[str, Any]] = {}
    for path, by_line in files.items():
        out_files[path] = {}
        for line, got in sorted(by_line.items()):
            kernels = sorted(got["kernels"].items(), key=lambda kv: -kv[1]["us"])
            out_files[path][str(line)] = {
                "kernel_us": round(got["kernel_us"], 3),
                "launches": got["launches"],
                "kernels": [
                    {"name": k, "us": round(v["us"], 3), "count": v["count"]} for k, v in kernels
                ],
            }
    return {
        "files": out_files,
        "total_kernel_us": round(totals["total"] / 1e3, 3),
        "other_us": round(totals["other"] / 1e3, 3),
        "launches": totals["launches"],
        "label": LIGHT_LABEL,
    }


def light_answer(stdout: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Split the stdout of ``python -m kernel_lens.agent.light``: its answer (the last
    ``{"ok": …}`` line, parsed; None when it ended without one) and the script's own lines."""
    lines = stdout.splitlines()
    answers = [line for line in lines if line.startswith('{"ok"')]
    printed = [line for line in lines if not line.startswith('{"ok"')]
    return (json.loads(answers[-1]) if answers else None), printed
