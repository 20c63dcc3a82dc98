"""Attribute ATen ops and GPU kernels to source lines, from a torch.profiler Chrome trace.

The agent wraps each line of the profiled function in a ``record_function("src:<line>")`` range
(see :mod:`kernel_lens.agent.stages.ops`). In the exported trace those ranges are
``user_annotation`` events; ATen ops are ``cpu_op`` events nested in them by time on the same
thread; a kernel is linked to the runtime call that launched it by ``args.correlation`` (and to
the innermost op by ``args["External id"]``). Everything here is pure, so it is tested on traces
recorded on an H200 without a GPU.

Counting rules (no double counting): a line's ops are its *top-level* ops (an op nested in
another op, e.g. ``aten::pow`` under ``aten::square``, is listed in the outer op's ``dispatch``);
a kernel counts once, on the top-level op whose subtree launched it; a kernel launched with no
ATen op around it (a Triton kernel, a ``load_inline`` extension's launch) is listed under the
runtime call that launched it (``cuLaunchKernelEx``, ``cudaLaunchKernel``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.analysis.names import short_kernel_name

__all__ = [
    "LINE_RANGE_RE",
    "KernelStat",
    "LineOps",
    "OpStat",
    "attribute_lines",
    "line_range_name",
]

LINE_RANGE_RE = re.compile(r"^src:(?:.*:)?(?P<line>\d+)$")
_CPU_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
_DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def line_range_name(line: int) -> str:
    """The ``record_function`` name that tags 1-based ``line``."""
    return f"src:{line}"


@dataclass
class KernelStat:
    """One kernel name's work on one op of one line, per call of the function.

    Attributes:
        name: full (demangled) kernel name, or the memcpy/memset name.
        device_us: device time per function call, in microseconds.
        calls: launches per function call.
        kind: ``kernel``, ``memcpy`` or ``memset``.
    """

    name: str
    device_us: float = 0.0
    calls: float = 0.0
    kind: str = "kernel"

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "name": self.name,
            "short_name": short_kernel_name(self.name),
            "device_us": round(self.device_us, 3),
            "calls": _num(self.calls),
            "kind": self.kind,
        }


@dataclass
class OpStat:
    """A top-level op (or a bare launch) on one line, per call of the function.

    Attributes:
        name: ``aten::mul``, or the runtime call for launches outside ATen.
        calls: occurrences per function call.
        cpu_us: inclusive CPU time per function call, in microseconds.
        device_us: device time of the kernels it launched, per function call, in microseconds.
        dispatch: nested ops that launched kernels (``aten::pow`` under ``aten::square``).
        kernels: kernels launched, by total device time.
    """

    name: str
    calls: float = 0.0
    cpu_us: float = 0.0
    device_us: float = 0.0
    dispatch: list[str] = field(default_factory=list)
    kernels: dict[str, KernelStat] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "name": self.name,
            "calls": _num(self.calls),
            "cpu_us": round(self.cpu_us, 3),
            "device_us": round(self.device_us, 3),
            "dispatch": list(self.dispatch),
            "kernels": [
                k.to_json() for k in sorted(self.kernels.values(), key=lambda k: -k.device_us)
            ],
        }


@dataclass
class LineOps:
    """What one source line did, per call of the function.

    Attributes:
        line: 1-based line.
        cpu_us: time spent on the line (its ranges), per call, in microseconds.
        device_us: device time of the line's kernels, per call, in microseconds.
        hits: times the line ran per call.
        ops: top-level ops, in order of first appearance.
    """

    line: int
    cpu_us: float = 0.0
    device_us: float = 0.0
    hits: float = 0.0
    ops: dict[str, OpStat] = field(default_factory=dict)

    def to_json(self, source: str = "") -> dict[str, Any]:
        """Plain JSON (``source`` is the line's text)."""
        return {
            "line": self.line,
            "source": source,
            "hits": _num(self.hits),
            "cpu_us": round(self.cpu_us, 3),
            "device_us": round(self.device_us, 3),
            "ops": [op.to_json() for op in self.ops.values()],
        }


def _num(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 3)


@dataclass
class _Node:
    event: Mapping[str, Any]
    start: float
    end: float
    parent: _Node | None = None

    @property
    def cat(self) -> str:
        return str(self.event.get("cat", ""))

    @property
    def name(self) -> str:
        return str(self.event.get("name", ""))


def _build_cpu_forest(events: Iterable[Mapping[str, Any]]) -> list[_Node]:
    """Nest CPU events by time containment per (pid, tid); return all nodes."""
    by_thread: dict[tuple[Any, Any], list[_Node]] = defaultdict(list)
    for ev in events:
        ts, dur = ev.get("ts"), ev.get("dur")
        if ts is None or dur is None:
            continue
        by_thread[(ev.get("pid"), ev.get("tid"))].append(
            _Node(ev, float(ts), float(ts) + float(dur))
        )
    nodes: list[_Node] = []
    for thread_nodes in by_thread.values():
        # Outer events first when two start together (longer first).
        thread_nodes.sort(key=lambda n: (n.start, -(n.end - n.start)))
        stack: list[_Node] = []
        for node in thread_nodes:
            while stack and node.start >= stack[-1].end:
                stack.pop()
            node.parent = stack[-1] if stack else None
            stack.append(node)
        nodes.extend(thread_nodes)
    return nodes


def _line_of(node: _Node) -> tuple[int, _Node] | None:
    cur: _Node | None = node
    while cur is not None:
        if cur.cat == "user_annotation":
            match = LINE_RANGE_RE.match(cur.name)
            if match:
                return int(match.group("line")), cur
        cur = cur.parent
    return None


def _op_chain(node: _Node, line_node: _Node) -> list[_Node]:
    """cpu_op ancestors of ``node`` (itself included) below the line range, outermost first."""
    chain: list[_Node] = []
    cur: _Node | None = node
    while cur is not None and cur is not line_node:
        if cur.cat == "cpu_op":
            chain.append(cur)
        cur = cur.parent
    chain.reverse()
    return chain


def _device_kind(cat: str) -> str:
    return {"gpu_memcpy": "memcpy", "gpu_memset": "memset"}.get(cat, "kernel")


def attribute_lines(
    trace: Mapping[str, Any], *, runs: int = 1
) -> tuple[dict[int, LineOps], list[KernelStat]]:
    """Per-line ops and kernels from a Chrome trace whose lines are tagged ``src:<line>``.

    Args:
        trace: the loaded Chrome trace (``{"traceEvents": [...]}``).
        runs: how many calls of the function the trace holds; every number is divided by it.

    Returns:
        ``(lines, unattributed)``: the lines by number, and device work no line launched
        (per call).
    """
    runs = max(1, runs)
    events = [
        ev for ev in trace.get("traceEvents", []) if isinstance(ev, Mapping) and ev.get("ph") == "X"
    ]
    cpu_events = [ev for ev in events if ev.get("cat") in _CPU_CATS]
    device_events = [ev for ev in events if ev.get("cat") in _DEVICE_CATS]
    nodes = _build_cpu_forest(cpu_events)

    lines: dict[int, LineOps] = {}

    def line_stat(line: int) -> LineOps:
        if line not in lines:
            lines[line] = LineOps(line)
        return lines[line]

    def op_stat(stat: LineOps, name: str) -> OpStat:
        if name not in stat.ops:
            stat.ops[name] = OpStat(name)
        return stat.ops[name]

    runtime_by_corr: dict[Any, _Node] = {}
    op_by_external: dict[Any, _Node] = {}
    for node in nodes:
        args = node.event.get("args") or {}
        if node.cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            runtime_by_corr[args["correlation"]] = node
        elif node.cat in ("cpu_op", "user_annotation") and "External id" in args:
            op_by_external.setdefault(args["External id"], node)
        if node.cat == "user_annotation":
            match = LINE_RANGE_RE.match(node.name)
            if match:
                stat = line_stat(int(match.group("line")))
                stat.hits += 1
                stat.cpu_us += node.end - node.start
        elif node.cat == "cpu_op":
            found = _line_of(node)
            if found is None:
                continue
            line, line_node = found
            chain = _op_chain(node, line_node)
            if chain and chain[0] is node:
                op = op_stat(line_stat(line), node.name)
                op.calls += 1
                op.cpu_us += node.end - node.start

    unattributed: dict[str, KernelStat] = {}
    for ev in device_events:
        args = ev.get("args") or {}
        launcher = runtime_by_corr.get(args.get("correlation"))
        if launcher is None:
            launcher = op_by_external.get(args.get("External id"))
        name = str(ev.get("name", ""))
        dur = float(ev.get("dur", 0.0))
        kind = _device_kind(str(ev.get("cat")))
        found = _line_of(launcher) if launcher is not None else None
        if launcher is None or found is None:
            k = unattributed.setdefault(name, KernelStat(name, kind=kind))
            k.device_us += dur
            k.calls += 1
            continue
        line, line_node = found
        chain = _op_chain(launcher, line_node)
        stat = line_stat(line)
        if chain:
            op = op_stat(stat, chain[0].name)
            inner = chain[-1].name
            if inner != chain[0].name and inner not in op.dispatch:
                op.dispatch.append(inner)
        else:
            op = op_stat(stat, launcher.name)
            if launcher.cat in ("cuda_runtime", "cuda_driver"):
                op.calls += 1
        k = op.kernels.setdefault(name, KernelStat(name, kind=kind))
        k.device_us += dur
        k.calls += 1
        op.device_us += dur
        stat.device_us += dur

    for stat in lines.values():
        stat.cpu_us /= runs
        stat.device_us /= runs
        stat.hits /= runs
        for op in stat.ops.values():
            op.calls /= runs
            op.cpu_us /= runs
            op.device_us /= runs
            for k in op.kernels.values():
                k.device_us /= runs
                k.calls /= runs
    for k in unattributed.values():
        k.device_us /= runs
        k.calls /= runs
    return dict(sorted(lines.items())), sorted(unattributed.values(), key=lambda k: -k.device_us)
