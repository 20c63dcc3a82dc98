"""Compiled code on its source lines: which lines each kernel Inductor generated belongs to.

Inductor records, per generated kernel of a compiled graph (keyed ``<kernel>:<debug handle>``,
an extern call ``extern_kernels.mm:<handle>``), the ``stack_trace`` of every FX node it fused
(:mod:`kernel_lens.agent.inductor_capture` reads them as the run compiles); the nodes of
AOTAutograd's backward graph carry the stack traces of the forward nodes they differentiate. A
kernel's lines are, for each of those stack traces, its innermost frame in a file of the run's
(a workspace file): the same rule as for eager code. Nothing is inferred from kernel names.

In a profiler trace a graph's call is the range ``## Call CompiledFxGraph <key> ##``; its kernels
are the events directly inside it: a C++ kernel profiled by name (``graph_0_cpp_fused_…``, with
``config.cpp.enable_kernel_profile``), a Triton kernel's launch op (``triton_poi_fused_…``, whose
GPU kernel has the same name) and the extern calls, ATen ops (``aten::mm``) matched to the graph's
``extern_kernels.mm`` calls in the order its code makes them.

Everything here is pure (tested on recorded output code).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.wire.results import CompiledKernelInfo

__all__ = [
    "GRAPH_CALL_PREFIX",
    "CompiledGraph",
    "CompiledKernel",
    "compiled_graph",
    "break_reason",
    "compile_lens_text",
    "fused_text",
    "compile_report",
    "compiled_graphs",
    "called_kernels",
    "extern_calls",
    "graph_call_key",
    "kernel_event_name",
    "stack_frames",
]

#: The profiler's range around one call of a compiled graph.
GRAPH_CALL_PREFIX = "## Call CompiledFxGraph "
_GRAPH_CALL_RE = re.compile(r"^## Call CompiledFxGraph (?P<key>\S+) ##$")
_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
#: A C++ kernel's profiler event: ``graph_<n>_<kernel>`` (``enable_kernel_profile``).
_CPP_EVENT_RE = re.compile(r"^graph_\d+_(?P<name>cpp_\w+)$")
_HANDLE_RE = re.compile(r"#\s*\[Provenance debug handles\]\s*(?P<handle>\S+:\d+)")
_SOURCE_NODES_RE = re.compile(
    r"#\s*Topologically Sorted Source Nodes:\s*\[(?P<nodes>[^\]]*)\]"
    r"(?:,\s*Original ATen:\s*\[(?P<aten>[^\]]*)\])?"
)
_EXTERN_RE = re.compile(r"^\s*(?:\w+\s*=\s*)?extern_kernels\.(?P<name>\w+)\(")
_AOT_ID_RE = re.compile(r"#\s*AOT ID:\s*\[?'?(?P<id>[^'\]]*)")


def graph_call_key(name: str) -> str | None:
    """The graph key of a ``## Call CompiledFxGraph <key> ##`` range's name, else ``None``."""
    if not name.startswith(GRAPH_CALL_PREFIX):
        return None
    m = _GRAPH_CALL_RE.match(name)
    return m.group("key") if m else None


def kernel_event_name(name: str) -> str:
    """The kernel's name in the output code of a profiler event's name (``graph_0_`` dropped
    from a C++ kernel's)."""
    m = _CPP_EVENT_RE.match(name)
    return m.group("name") if m else name


def stack_frames(stack_trace: str) -> list[tuple[str, int]]:
    """``(file, line)`` of each frame of an FX node's ``stack_trace``, outermost first."""
    return [(m.group("file"), int(m.group("line"))) for m in _FRAME_RE.finditer(stack_trace)]


def extern_calls(source_code: str) -> list[tuple[str, str]]:
    """``(handle, ATen op)`` of each extern call in an output module, in the order its code
    makes them: ``("extern_kernels.mm:1", "aten::mm")``. A call without a provenance handle
    gets ``extern_kernels.<name>`` (no lines)."""
    out: list[tuple[str, str]] = []
    handle: str | None = None
    for line in source_code.splitlines():
        m = _HANDLE_RE.search(line)
        if m:
            handle = m.group("handle")
            continue
        m = _EXTERN_RE.match(line)
        if m:
            name = m.group("name")
            h = handle if handle and handle.startswith(f"extern_kernels.{name}:") else None
            out.append((h or f"extern_kernels.{name}", f"aten::{name}"))
        if line.strip() and not line.strip().startswith("#"):
            handle = None
    return out


def _comments(source_code: str) -> dict[str, tuple[list[str], list[str]]]:
    """Per provenance handle, the nodes and ATen ops of the comment above it (Triton's and the
    externs' ``# Topologically Sorted Source Nodes: [...], Original ATen: [...]``)."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    last: tuple[list[str], list[str]] | None = None
    for line in source_code.splitlines():
        m = _SOURCE_NODES_RE.search(line)
        if m:
            nodes = [n.strip() for n in m.group("nodes").split(",") if n.strip()]
            aten = [a.strip() for a in (m.group("aten") or "").split(",") if a.strip()]
            last = (nodes, aten)
            continue
        m = _HANDLE_RE.search(line)
        if m:
            if last is not None:
                out[m.group("handle")] = last
            continue
        if line.strip() and not line.strip().startswith("#"):
            last = None
    return out


def _graph_kind(source_code: str) -> str:
    m = _AOT_ID_RE.search(source_code[:2000])
    found = m.group("id") if m else ""
    for kind in ("backward", "forward", "inference"):
        if kind in found:
            return kind
    return "graph"


@dataclass
class CompiledKernel:
    """One kernel (or extern call) of a compiled graph and the lines it belongs to.

    Attributes:
        name: its name in the output code (``cpp_fused_add_gelu_mul_0``,
            ``triton_per_fused_…``, ``extern_kernels.mm``).
        handle: Inductor's provenance key (``cpp_fused_add_gelu_mul_0:2``).
        lines: attribution keys of its source lines (``file * FILE_STRIDE + line``), the one it
            is counted on first, then the others in order.
        nodes: the FX nodes it was generated from; aten: their ATen ops.
        graph: the graph's key; kind: ``forward``, ``backward``, ``inference`` or ``graph``.
    """

    name: str
    handle: str
    lines: list[int] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    aten: list[str] = field(default_factory=list)
    graph: str = ""
    kind: str = "graph"

    def to_json(self) -> CompiledKernelInfo:
        """Plain JSON (the lines as attribution keys)."""
        return {
            "kernel": self.name,
            "graph": self.kind,
            "graph_key": self.graph,
            "nodes": list(self.nodes),
            "aten": list(self.aten),
            "lines": list(self.lines),
        }


@dataclass
class CompiledGraph:
    """A compiled graph's kernels by the name its events have, and its externs in call order."""

    key: str
    kind: str = "graph"
    kernels: dict[str, CompiledKernel] = field(default_factory=dict)
    externs: list[tuple[str, CompiledKernel]] = field(default_factory=list)

    def kernel_of(self, event_name: str, nth: int) -> CompiledKernel | None:
        """The kernel of an event directly inside a call of this graph: by name for a generated
        kernel; for an ATen op, the ``nth`` (0-based) extern call of that op."""
        found = self.kernels.get(kernel_event_name(event_name))
        if found is not None:
            return found
        seen = 0
        for op, kernel in self.externs:
            if op == event_name:
                if seen == nth:
                    return kernel
                seen += 1
        return None


def kernel_lines(traces: list[str], line_key: Callable[[str, int], int | None]) -> list[int]:
    """Attribution keys of the lines of ``traces`` (a kernel's nodes' stack traces): per trace,
    its innermost frame that ``line_key`` knows; the smallest key first (where it is counted),
    then the others in order."""
    keys: list[int] = []
    for trace in traces:
        for file, line in reversed(stack_frames(trace)):
            key = line_key(file, line)
            if key is not None:
                if key not in keys:
                    keys.append(key)
                break
    return sorted(keys)


def compiled_graph(
    raw: Mapping[str, Any], line_key: Callable[[str, int], int | None]
) -> CompiledGraph:
    """A graph from what :class:`kernel_lens.agent.inductor_capture.CompileCapture` kept of it.

    Args:
        raw: ``{"key", "source_code", "stack_traces": {handle: [trace…]}, "nodes": {handle:
            {"nodes", "aten"}}}``.
        line_key: the attribution key of ``(file, line)``, ``None`` for a file that is not the
            run's (torch's own, site-packages).
    """
    key = str(raw.get("key") or "")
    code = str(raw.get("source_code") or "")
    kind = _graph_kind(code)
    traces: Mapping[str, Any] = raw.get("stack_traces") or {}
    nodes: Mapping[str, Any] = raw.get("nodes") or {}
    comments = _comments(code)
    graph = CompiledGraph(key, kind)

    def make(handle: str) -> CompiledKernel:
        name = handle.rsplit(":", 1)[0]
        k = CompiledKernel(name, handle, graph=key, kind=kind)
        k.lines = kernel_lines([str(t) for t in traces.get(handle) or []], line_key)
        info = nodes.get(handle) or {}
        k.nodes = [str(n) for n in info.get("nodes") or []]
        k.aten = [str(a) for a in info.get("aten") or []]
        if handle in comments:
            c_nodes, c_aten = comments[handle]
            k.nodes = k.nodes or c_nodes
            k.aten = k.aten or c_aten
        return k

    for handle in traces:
        name = handle.rsplit(":", 1)[0]
        if name.startswith("extern_kernels."):
            continue
        if name not in graph.kernels:
            graph.kernels[name] = make(handle)
    for handle, op in extern_calls(code):
        graph.externs.append((op, make(handle)))
    return graph


def called_kernels(graph: CompiledGraph, calls: Sequence[str]) -> list[CompiledKernel | None]:
    """The kernel of each call of a graph's output code, in call order (``calls``: the names
    the code calls, ``cpp_fused_…``/``triton_…`` or ``extern_kernels.mm``): the one place that
    says which lines a kernel of the code belongs to. It is :meth:`CompiledGraph.kernel_of`, the
    match the attribution makes for the trace's events (a generated kernel by name, the ``n``-th
    ``extern_kernels.mm`` call as the ``n``-th ``aten::mm`` event of the graph's call), so the
    Generated Code view and the lenses put every kernel on the same lines."""
    seen: dict[str, int] = {}
    out: list[CompiledKernel | None] = []
    for name in calls:
        if name.startswith("extern_kernels."):
            op = "aten::" + name.split(".", 1)[1]
            nth = seen.get(op, 0)
            seen[op] = nth + 1
            out.append(graph.kernel_of(op, nth))
        else:
            out.append(graph.kernel_of(name, 0))
    return out


def compiled_graphs(
    raws: Mapping[str, Mapping[str, Any]], line_key: Callable[[str, int], int | None]
) -> dict[str, CompiledGraph]:
    """:func:`compiled_graph` of each captured graph, by key."""
    return {key: compiled_graph(raw, line_key) for key, raw in raws.items()}


def _innermost(
    frames: list[Any], line_key: Callable[[str, int], int | None]
) -> tuple[int | None, tuple[str, int] | None]:
    """The attribution key of the innermost of ``frames`` (``(file, line)`` pairs, outermost
    first) that ``line_key`` knows, with that frame."""
    for frame in reversed(frames):
        try:
            file, line = str(frame[0]), int(frame[1])
        except (TypeError, ValueError, IndexError):
            continue
        key = line_key(file, line)
        if key is not None:
            return key, (file, line)
    return None, None


def compile_report(
    compiles: Mapping[str, Mapping[str, Any]],
    breaks: Sequence[Mapping[str, Any]],
    recompiles: Sequence[Mapping[str, Any]],
    line_key: Callable[[str, int], int | None],
) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
    """Compilation, said apart from the run's op time: per line (attribution key) that started
    a compilation, its seconds, graphs and compile ids (``compiled in 9.8 s · 1 graph``); and
    the run's ``compile`` object, with its graph breaks and recompilations on their lines.

    Args:
        compiles: by compile id, ``{"seconds", "backward_s", "graphs", "frames",
            "recompile"?}`` (:class:`kernel_lens.agent.inductor_capture.CompileCapture`).
        breaks: ``{"reason", "frames"}`` each (Dynamo's user stack, innermost last).
        recompiles: ``{"reason", "function", "compile_id"?}`` each.
        line_key: the attribution key of ``(file, line)``, ``None`` for a file not the run's.

    Returns:
        ``(per_line, summary)``; a line key is in ``summary`` entries as ``key``.
    """
    per_line: dict[int, dict[str, Any]] = {}
    entries: list[dict[str, Any]] = []
    for cid, raw in compiles.items():
        key, _ = _innermost(list(raw.get("frames") or []), line_key)
        seconds = float(raw.get("seconds") or 0.0)
        entry: dict[str, Any] = {
            "compile_id": str(cid),
            "seconds": round(seconds, 3),
            "backward_s": round(float(raw.get("backward_s") or 0.0), 3),
            "graphs": int(raw.get("graphs") or 0),
            "key": key,
        }
        reason = next(
            (str(r.get("reason")) for r in recompiles if r.get("compile_id") == cid), None
        )
        if reason:
            entry["recompile"] = reason
        entries.append(entry)
        if key is None:
            continue
        row = per_line.setdefault(
            key, {"seconds": 0.0, "graphs": 0, "compile_ids": [], "recompiles": []}
        )
        row["seconds"] = round(row["seconds"] + seconds, 3)
        row["graphs"] += entry["graphs"]
        row["compile_ids"].append(str(cid))
        if reason:
            row["recompiles"].append(reason)
    found_breaks: list[dict[str, Any]] = []
    for raw in breaks:
        key, _ = _innermost(list(raw.get("frames") or []), line_key)
        item = {"reason": str(raw.get("reason") or ""), "key": key}
        if item not in found_breaks:
            found_breaks.append(item)
    summary = {
        "seconds": round(sum(float(r.get("seconds") or 0.0) for r in compiles.values()), 3),
        "graphs": sum(int(r.get("graphs") or 0) for r in compiles.values()),
        "compiles": entries,
        "graph_breaks": found_breaks,
    }
    return per_line, summary


def break_reason(reason: str) -> str:
    """Dynamo's graph-break reason, on one line and short enough for a diagnostic."""
    first = " ".join(reason.split())
    return first if len(first) <= 300 else first[:297] + "…"


def fused_text(op: dict[str, Any]) -> str:
    """``fused with lines 56, 64 · `` for a compiled graph's kernel fused from this line and
    others (``counted on line 56`` where it is counted on another line); ``""`` otherwise."""
    info = op.get("compiled")
    if not isinstance(info, dict):
        return ""
    others = [int(n) for n in info.get("shared_with") or []]
    others += [int(e["line"]) for e in info.get("elsewhere") or [] if e.get("line") is not None]
    if not others:
        return ""
    return f"fused with line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))} · "


def compile_lens_text(line: dict[str, Any]) -> str | None:
    """``compiled in 9.8 s · 1 graph`` on a line that started a torch.compile compilation
    (``· recompiled: <guard>`` when one was a recompilation)."""
    info = line.get("compile")
    if not isinstance(info, dict):
        return None
    graphs = int(info.get("graphs") or 0)
    text = f"compiled in {float(info.get('seconds') or 0.0):.1f} s · {graphs} graph"
    text += "" if graphs == 1 else "s"
    recompiles = info.get("recompiles") or []
    if recompiles:
        text += f" · recompiled: {str(recompiles[0])[:60]}"
    return text
