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

import gc
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.analysis.compiled_lines import (
    GRAPH_CALL_PREFIX,
    CompiledGraph,
    CompiledKernel,
    graph_call_key,
)
from kernel_lens.analysis.names import short_kernel_name
from kernel_lens.wire import results as wire
from kernel_lens.wire.results import (
    AccountingRemainder,
    BackwardPassInfo,
    DeviceWorkKind,
    ProfileBackward,
    ProfileKernel,
    ProfileLine,
    ProfileOp,
    ProfileSharedOp,
    RemainderReason,
)

__all__ = [
    "BACKWARD_PREFIX",
    "BACKWARD_SEED_RANGE",
    "FILE_STRIDE",
    "LINE_RANGE_RE",
    "INTERPRETED_PREFIX",
    "INTERPRETED_SUFFIX",
    "REMAINDER_REASONS",
    "Accounting",
    "Attribution",
    "BackwardPass",
    "Remainder",
    "all_ops",
    "attribute_trace",
    "backward_node_name",
    "KernelStat",
    "LineOps",
    "OpStat",
    "Place",
    "attribute_lines",
    "place_instants",
    "interpreted_range_name",
    "line_range_name",
    "split_line_key",
]

#: A line's range: ``src:<line>`` (the profiled file), ``src:<k>:<line>`` (the ``k``-th other
#: file of a deep whole run, :mod:`kernel_lens.agent.stages.deep`); the older
#: ``src:<path>:<line>`` of recorded traces is a line of the profiled file.
LINE_RANGE_RE = re.compile(r"^src:(?:(?P<file>\d+):|.*:)?(?P<line>\d+)$")
#: A line of the ``k``-th other file is attributed under the key ``k * FILE_STRIDE + line``.
FILE_STRIDE = 1_000_000
_CPU_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
_DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def all_ops(line: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A line's (JSON) forward ops and the backward ops its forward caused, in that order."""
    return [*(line.get("ops") or []), *((line.get("backward") or {}).get("ops") or [])]


#: The ``record_function`` range around one launch of a ``@triton.jit`` kernel under Triton's
#: interpreter: ``triton::square_kernel (interpreted)``; it is the launch line's op, with the
#: interpreter's own tensor plumbing (``aten::set_``, ``aten::copy_``) folded into it.
INTERPRETED_PREFIX = "triton::"
INTERPRETED_SUFFIX = " (interpreted)"


def interpreted_range_name(kernel: str) -> str:
    """The range name of an interpreted launch of ``kernel``."""
    return f"{INTERPRETED_PREFIX}{kernel}{INTERPRETED_SUFFIX}"


def line_range_name(line: int) -> str:
    """The ``record_function`` name that tags 1-based ``line``."""
    return f"src:{line}"


def split_line_key(key: int) -> tuple[int, int]:
    """``(file index, line)`` of an attribution key (file 0: the profiled file)."""
    return divmod(key, FILE_STRIDE)


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
    kind: DeviceWorkKind = "kernel"

    def to_json(self) -> ProfileKernel:
        """The wire's ``ProfileKernel``."""
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
    compiled: CompiledKernel | None = None

    def to_json(self) -> ProfileOp:
        """The wire's ``ProfileOp`` (``compiled``: for a kernel of a compiled graph, its nodes,
        ATen ops and every line it belongs to, as attribution keys)."""
        out: ProfileOp = {
            "name": self.name,
            "calls": _num(self.calls),
            "cpu_us": round(self.cpu_us, 3),
            "device_us": round(self.device_us, 3),
            "dispatch": list(self.dispatch),
            "kernels": [
                k.to_json() for k in sorted(self.kernels.values(), key=lambda k: -k.device_us)
            ],
        }
        if self.compiled is not None:
            out["compiled"] = self.compiled.to_json()
        return out


@dataclass
class BackwardPass:
    """The backward pass that ran while one line ran (``loss.backward()``), per call.

    Attributes:
        device_us: device time of every kernel the pass launched, per call, in microseconds.
        cpu_us: CPU time of the pass's autograd nodes, per call, in microseconds.
        lines: the forward lines its work was attributed to.
    """

    device_us: float = 0.0
    cpu_us: float = 0.0
    lines: set[int] = field(default_factory=set)

    def to_json(self) -> BackwardPassInfo:
        """The wire's ``BackwardPassInfo``."""
        return {
            "device_us": round(self.device_us, 3),
            "cpu_us": round(self.cpu_us, 3),
            "lines": sorted(self.lines),
        }


@dataclass
class LineOps:
    """What one source line did, per call of the function.

    Attributes:
        line: 1-based line.
        cpu_us: time spent on the line (its ranges), per call, in microseconds.
        device_us: device time of the line's own (forward) kernels, per call, in microseconds.
        hits: times the line ran per call.
        ops: top-level ops, in order of first appearance.
        backward: the backward work its forward ops caused, by autograd node
            (``AddmmBackward0``), wherever the backward ran.
        bwd_cpu_us: CPU time of those autograd nodes, per call, in microseconds.
        bwd_device_us: device time of their kernels, per call, in microseconds.
        backward_pass: for a line that ran a backward pass (``loss.backward()``): the pass's
            total, which is also on the forward lines (never added to them twice).
        shared: kernels of a compiled graph fused from this line and others, counted on another
            line (the first of theirs): shown here, never added to this line's totals; by
            ``(name, backward?)``.
    """

    line: int
    cpu_us: float = 0.0
    device_us: float = 0.0
    hits: float = 0.0
    ops: dict[str, OpStat] = field(default_factory=dict)
    backward: dict[str, OpStat] = field(default_factory=dict)
    bwd_cpu_us: float = 0.0
    bwd_device_us: float = 0.0
    backward_pass: BackwardPass | None = None
    shared: dict[tuple[str, bool], OpStat] = field(default_factory=dict)

    def to_json(self, source: str = "") -> ProfileLine:
        """The wire's ``ProfileLine`` (``source`` is the line's text); ``backward`` and
        ``backward_pass`` only where the line has them, so a forward-only function's lines read
        as before."""
        out: ProfileLine = {
            "line": self.line,
            "source": source,
            "hits": _num(self.hits),
            "cpu_us": round(self.cpu_us, 3),
            "device_us": round(self.device_us, 3),
            "ops": [op.to_json() for op in self.ops.values()],
        }
        if self.backward:
            backward: ProfileBackward = {
                "cpu_us": round(self.bwd_cpu_us, 3),
                "device_us": round(self.bwd_device_us, 3),
                "ops": [
                    op.to_json()
                    for op in sorted(
                        self.backward.values(), key=lambda o: (-o.device_us, -o.cpu_us)
                    )
                ],
            }
            out["backward"] = backward
        if self.backward_pass is not None:
            out["backward_pass"] = self.backward_pass.to_json()
        if self.shared:
            out["shared"] = [
                _shared_json(op, in_backward)
                for (_, in_backward), op in sorted(
                    self.shared.items(), key=lambda kv: (kv[0][1], -kv[1].device_us)
                )
            ]
        return out


def _shared_json(op: OpStat, backward: bool) -> ProfileSharedOp:
    """A shared op's ``ProfileOp`` with ``backward`` (the backward graph's kernel)."""
    # the op's keys, then ``backward`` last (as the JSON always had them)
    return {**op.to_json(), "backward": backward}


def _num(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 3)


class _Node:
    """One CPU event in its thread's nesting, with what attribution asks of it computed once
    while the forest is built (each from its parent's): the line range it ran in, the autograd
    node it ran in, the top-level op below either, and the innermost op around it."""

    __slots__ = (
        "cat",
        "compiling",
        "end",
        "event",
        "gcall",
        "gchild",
        "inner",
        "line",
        "line_node",
        "name",
        "parent",
        "root",
        "start",
        "top",
    )

    def __init__(self, event: Mapping[str, Any], start: float, end: float) -> None:
        self.event = event
        self.start = start
        self.end = end
        cat = event.get("cat", "")
        name = event.get("name", "")
        self.cat = cat if type(cat) is str else str(cat)
        self.name = name if type(name) is str else str(name)
        self.parent: _Node | None = None
        self.line: int | None = None
        self.line_node: _Node | None = None
        self.root: _Node | None = None
        self.top: _Node | None = None
        self.inner: _Node | None = None
        self.gcall: _Node | None = None
        self.gchild: _Node | None = None
        #: the outermost compilation range this event is in (Dynamo, AOT, Inductor)
        self.compiling: _Node | None = None

    def link(self, parent: _Node | None) -> None:
        """Set the parent and derive the cached fields from it."""
        self.parent = parent
        cat = self.cat
        if parent is not None and parent.gcall is not None:
            # inside a compiled graph's call: the event directly in it is a kernel's
            self.gcall = parent.gcall
            self.gchild = self if parent.gcall is parent else parent.gchild
        if self.name.startswith(GRAPH_CALL_PREFIX):
            self.gcall, self.gchild = self, None
        if parent is not None and parent.compiling is not None:
            self.compiling = parent.compiling
        elif self.name in COMPILE_RANGES:
            self.compiling = self
        if cat == "user_annotation":
            match = LINE_RANGE_RE.match(self.name)
            if match and _in_compiled_region(parent):
                # The compiled code of a frame Dynamo compiled runs under its ``def`` line: the
                # work is the calling line's, or the compiled graph's lines.
                match = None
            if match:
                index = match.group("file")
                self.line = int(match.group("line")) + (int(index) * FILE_STRIDE if index else 0)
                self.line_node = self
                self.root = parent.root if parent is not None else None
                return  # a line range starts a new chain of ops: no top, no inner
            if self.name.endswith(INTERPRETED_SUFFIX) and self.name.startswith(INTERPRETED_PREFIX):
                # An interpreted Triton launch is an op of its own: what runs in it is its.
                if parent is not None:
                    self.line, self.line_node = parent.line, parent.line_node
                    self.root, self.top = parent.root, parent.top
                if self.top is None:
                    self.top = self
                self.inner = self
                return
        if cat == "cpu_op" and self.name.startswith(BACKWARD_PREFIX):
            self.root = self
            self.top = self
            self.inner = self
            if parent is not None:
                self.line, self.line_node = parent.line, parent.line_node
            return
        if parent is not None:
            self.line, self.line_node = parent.line, parent.line_node
            self.root, self.top, self.inner = parent.root, parent.top, parent.inner
        if cat == "cpu_op":
            if self.top is None:
                self.top = self
            self.inner = self


#: The outermost ranges of a compilation (``dynamo_timed``): Dynamo's compile of a frame (with
#: AOTAutograd and Inductor inside), AOTAutograd's lazy compile of the backward.
COMPILE_RANGES = frozenset({"dynamo", "entire_backward_compile"})

#: The profiler's range around the run of a frame's code compiled by Dynamo.
COMPILED_REGION_PREFIX = "Torch-Compiled Region"


def _in_compiled_region(parent: _Node | None) -> bool:
    inner = parent.inner if parent is not None else None
    return inner is not None and inner.name.startswith(COMPILED_REGION_PREFIX)


def _build_cpu_forest(
    events: Iterable[Mapping[str, Any]],
    marks: Mapping[tuple[Any, Any], set[float]] | None = None,
    marked: dict[tuple[Any, Any, float], _Node] | None = None,
) -> list[_Node]:
    """Nest CPU events by time containment per (pid, tid); return all nodes.

    ``marks`` names, per thread, start times whose innermost ``cpu_op`` is wanted (where the
    profiler's flows bind); they are put in ``marked`` by ``(pid, tid, start)``.
    """
    by_thread: dict[tuple[Any, Any], list[_Node]] = defaultdict(list)
    for ev in events:
        ts, dur = ev.get("ts"), ev.get("dur")
        if ts is None or dur is None:
            continue
        start = float(ts)
        by_thread[(ev.get("pid"), ev.get("tid"))].append(_Node(ev, start, start + float(dur)))
    nodes: list[_Node] = []
    for thread, thread_nodes in by_thread.items():
        # Outer events first when two start together (longer first).
        thread_nodes.sort(key=lambda n: (n.start, n.start - n.end))
        stack: list[_Node] = []
        for node in thread_nodes:
            while stack and node.start >= stack[-1].end:
                stack.pop()
            node.link(stack[-1] if stack else None)
            stack.append(node)
        wanted = marks.get(thread) if marks is not None else None
        if wanted and marked is not None:
            for node in thread_nodes:
                # the innermost op starting there wins (nodes come outer first)
                if node.start in wanted and node.cat == "cpu_op":
                    marked[(thread[0], thread[1], node.start)] = node
        nodes.extend(thread_nodes)
    return nodes


_DEVICE_KINDS: dict[str, DeviceWorkKind] = {"gpu_memcpy": "memcpy", "gpu_memset": "memset"}


def _device_kind(cat: str) -> DeviceWorkKind:
    return _DEVICE_KINDS.get(cat, "kernel")


#: The autograd engine's range around one backward node (``… AddmmBackward0``).
BACKWARD_PREFIX = "autograd::engine::evaluate_function: "

#: The range around *Profile with backward*'s seeded backward (:mod:`kernel_lens.agent.backward`).
BACKWARD_SEED_RANGE = "kernel-lens: backward of the output"

#: Why device time is on no line (``accounting.remainder[].reason``).
REMAINDER_REASONS: dict[RemainderReason, str] = {
    "backward-seed": "the backward's seed and gradient accumulation (Profile with backward)",
    "no-launch": "a kernel with no launch on record",
    "other-thread": "launched from another thread, outside the function's lines",
    "outside": "launched outside the function's lines",
    "backward-unlinked": "backward work with no forward line",
    "compile": "torch.compile's own kernels while compiling (autotuning)",
}


def backward_node_name(name: str) -> str:
    """``AddmmBackward0`` from the engine's ``autograd::engine::evaluate_function: …``."""
    name = name[len(BACKWARD_PREFIX) :] if name.startswith(BACKWARD_PREFIX) else name
    return name.removeprefix("torch::autograd::")


@dataclass
class Remainder:
    """Device time on no line, for one reason, per call.

    Attributes:
        reason: a key of :data:`REMAINDER_REASONS`.
        device_us: per call, in microseconds.
        kernels: kernel names and their device time per call.
    """

    reason: RemainderReason
    device_us: float = 0.0
    kernels: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> AccountingRemainder:
        """The wire's ``AccountingRemainder``, the kernels by device time."""
        top = sorted(self.kernels.items(), key=lambda kv: -kv[1])
        return {
            "reason": self.reason,
            "text": REMAINDER_REASONS.get(self.reason, self.reason),
            "device_us": round(self.device_us, 3),
            "kernels": [{"name": k, "device_us": round(v, 3)} for k, v in top[:5]],
        }


@dataclass
class Accounting:
    """Where the trace's device time went, per call: on lines, or in a named remainder.

    Attributes:
        device_us: every kernel, memcpy and memset in the trace, per call, in microseconds.
        on_lines_us: the part on the function's lines (forward and backward parts).
        remainder: the rest, by reason; ``device_us == on_lines_us + Σ remainder``.
    """

    device_us: float = 0.0
    on_lines_us: float = 0.0
    remainder: dict[RemainderReason, Remainder] = field(default_factory=dict)

    def to_json(self) -> wire.Accounting:
        """The wire's ``Accounting``, with the share on lines in percent (100 when there is no
        device time)."""
        pct = 100.0 * self.on_lines_us / self.device_us if self.device_us > 0 else 100.0
        return {
            "device_us": round(self.device_us, 3),
            "on_lines_us": round(self.on_lines_us, 3),
            "on_lines_pct": round(pct, 2),
            "remainder": [
                r.to_json() for r in sorted(self.remainder.values(), key=lambda r: -r.device_us)
            ],
        }


@dataclass
class Attribution:
    """Everything :func:`attribute_trace` found, per call of the function.

    Attributes:
        lines: the lines by number.
        unattributed: device work on no line, by kernel name.
        accounting: the reconciliation of the trace's device time with the lines.
        compiled_lines: the lines (attribution keys) compiled kernels were placed on: lines of
            the function's file outside its own lines are kept for them.
    """

    lines: dict[int, LineOps]
    unattributed: list[KernelStat]
    accounting: Accounting
    compiled_lines: set[int] = field(default_factory=set)


class _Index:
    """The trace's CPU forest with the look-ups attribution needs."""

    def __init__(
        self,
        events: Sequence[Mapping[str, Any]],
        compiled: Mapping[str, CompiledGraph] | None = None,
    ) -> None:
        flows = [ev for ev in events if ev.get("cat") == "fwdbwd" and ev.get("ts") is not None]
        marks: dict[tuple[Any, Any], set[float]] = defaultdict(set)
        for ev in flows:
            marks[(ev.get("pid"), ev.get("tid"))].add(float(ev["ts"]))
        at: dict[tuple[Any, Any, float], _Node] = {}
        self.nodes = _build_cpu_forest(
            (ev for ev in events if ev.get("cat") in _CPU_CATS), marks, at
        )
        self.runtime_by_corr: dict[Any, _Node] = {}
        self.op_by_external: dict[Any, _Node] = {}
        self.line_ranges: list[_Node] = []
        self.seed_ranges: list[_Node] = []
        forward_by_seq: dict[Any, _Node] = {}
        roots: list[_Node] = []
        for node in self.nodes:
            cat = node.cat
            args = node.event.get("args")
            if cat == "cpu_op":
                if node.root is node:
                    roots.append(node)
                elif args and node.root is None:
                    seq = args.get("Sequence number")
                    if seq is not None and seq not in forward_by_seq:
                        forward_by_seq[seq] = node
                if args and "External id" in args:
                    self.op_by_external.setdefault(args["External id"], node)
            elif cat == "user_annotation":
                if node.line_node is node:
                    self.line_ranges.append(node)
                elif node.name == BACKWARD_SEED_RANGE:
                    self.seed_ranges.append(node)
                if args and "External id" in args:
                    self.op_by_external.setdefault(args["External id"], node)
            elif args and "correlation" in args:
                self.runtime_by_corr[args["correlation"]] = node
        self.line_ranges.sort(key=lambda n: n.start)
        self._range_starts = [n.start for n in self.line_ranges]
        self.forward_of: dict[int, _Node] = {}
        self._root_place: dict[int, tuple[int, bool] | None] = {}
        self._by_thread: dict[tuple[Any, Any], tuple[list[float], list[_Node]]] | None = None
        self._link_flows(flows, at)
        #: the compiled graph's kernel of each event directly inside a graph's call
        self.kernel_of: dict[int, CompiledKernel] = {}
        if compiled:
            self._match_kernels(compiled)
        for root in roots:
            if id(root) not in self.forward_of:
                seq = (root.event.get("args") or {}).get("Sequence number")
                fwd = forward_by_seq.get(seq) if seq is not None else None
                if fwd is not None:
                    self.forward_of[id(root)] = fwd

    def _match_kernels(self, compiled: Mapping[str, CompiledGraph]) -> None:
        """Each event directly inside a ``## Call CompiledFxGraph`` range: its graph's kernel
        (externs by their order in the call, per ATen op)."""
        seen: dict[tuple[int, str], int] = defaultdict(int)
        keys: dict[int, str | None] = {}
        for node in self.nodes:  # each thread's in time order
            call = node.gcall
            if node.gchild is not node or call is None:
                continue
            if id(call) not in keys:
                keys[id(call)] = graph_call_key(call.name)
            graph = compiled.get(keys[id(call)] or "")
            if graph is None:
                continue
            nth = seen[(id(call), node.name)]
            seen[(id(call), node.name)] = nth + 1
            kernel = graph.kernel_of(node.name, nth)
            if kernel is not None and kernel.lines:
                self.kernel_of[id(node)] = kernel

    def _link_flows(
        self, flows: Sequence[Mapping[str, Any]], at: dict[tuple[Any, Any, float], _Node]
    ) -> None:
        """The profiler's ``fwdbwd`` flows: each joins the forward op that made an autograd
        node (``s``) to that node's backward op (``f``), both bound to the op starting there."""
        starts: dict[Any, _Node] = {}
        ends: dict[Any, _Node] = {}
        for ev in flows:
            ph, ts = ev.get("ph"), ev.get("ts")
            if ts is None or ph not in ("s", "f"):
                continue
            found = at.get((ev.get("pid"), ev.get("tid"), float(ts)))
            if found is not None:
                (starts if ph == "s" else ends)[ev.get("id")] = found
        for flow_id, bwd in ends.items():
            fwd = starts.get(flow_id)
            if fwd is not None and bwd.root is not None:
                self.forward_of.setdefault(id(bwd.root), fwd)

    def range_during(self, node: _Node) -> _Node | None:
        """The line range that was open when ``node`` started (on the function's thread)."""
        i = bisect_right(self._range_starts, node.start) - 1
        # The latest range that started before it and still ran; ranges of one frame do not
        # nest, those of a whole script's frames do (a call line around its callee's lines),
        # so look a little further back than the latest start.
        for j in range(i, max(-1, i - 64), -1):
            rng = self.line_ranges[j]
            if rng.start <= node.start < rng.end:
                return rng
        return None

    def place_of(self, node: _Node) -> tuple[int, bool] | None:
        """``(line, backward?)`` of ``node``'s work: its line range's line, or for the work of
        an autograd node the forward line that made the node (``backward`` true), else the line
        that ran it; ``None`` when on no line."""
        root = node.root
        if root is None:
            return None if node.line is None else (node.line, False)
        key = id(root)
        if key not in self._root_place:
            fwd = self.forward_of.get(key)
            if fwd is not None and fwd.line is not None:
                self._root_place[key] = (fwd.line, True)
            else:
                host = self.host_line(root)
                self._root_place[key] = None if host is None else (host, False)
        return self._root_place[key]

    def node_at(self, pid: Any, tid: Any, ts: float) -> _Node | None:
        """The innermost CPU event of thread ``(pid, tid)`` running at ``ts`` (an instant
        event's time), or ``None``."""
        if self._by_thread is None:
            by_thread: dict[tuple[Any, Any], list[_Node]] = defaultdict(list)
            for each in self.nodes:
                by_thread[(each.event.get("pid"), each.event.get("tid"))].append(each)
            self._by_thread = {
                key: ([n.start for n in nodes], nodes) for key, nodes in by_thread.items()
            }
        found = self._by_thread.get((pid, tid))
        if found is None:
            return None
        starts, nodes = found
        i = bisect_right(starts, ts) - 1
        node: _Node | None = nodes[i] if i >= 0 else None
        # the latest event that started before ``ts``, or the first of its parents still running
        while node is not None and not node.start <= ts <= node.end:
            node = node.parent
        return node

    def in_seed(self, node: _Node) -> bool:
        """Whether ``node`` ran while *Profile with backward*'s seeded backward ran."""
        return any(r.start <= node.start < r.end for r in self.seed_ranges)

    def host_line(self, root: _Node) -> int | None:
        """The line that ran the backward node ``root``: its own range (the backward on the
        calling thread, CPU), else the range open while it ran (the engine's thread, CUDA)."""
        if root.line is not None:
            return root.line
        rng = self.range_during(root)
        return rng.line if rng is not None else None


@dataclass(frozen=True)
class Place:
    """Where an instant event of the trace (an allocation) belongs.

    Attributes:
        line: the function's 1-based line.
        backward: the work of an autograd node that this forward line made (the backward).
        in_backward: it happened while an autograd node ran (wherever it is attributed).
        host_line: the line that was running then (``loss.backward()`` for the backward's).
    """

    line: int
    backward: bool
    in_backward: bool
    host_line: int | None = None


def place_instants(
    events: Sequence[Mapping[str, Any]], instants: Iterable[Mapping[str, Any]]
) -> list[Place | None]:
    """The line each of ``instants`` (events with ``pid``, ``tid``, ``ts``) belongs to, by the
    same rules as the ops and kernels of :func:`attribute_trace` (the backward's on the forward
    line that made its node); ``None`` for one on no line.

    Args:
        events: the trace's events (``traceEvents``).
        instants: the events to place (``[memory]`` instants of ``profile_memory``).
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        index = _Index(events)
        out: list[Place | None] = []
        for ev in instants:
            ts = ev.get("ts")
            node = None if ts is None else index.node_at(ev.get("pid"), ev.get("tid"), float(ts))
            place = index.place_of(node) if node is not None else None
            if place is None or node is None:
                out.append(None)
                continue
            root = node.root
            host = index.host_line(root) if root is not None else node.line
            out.append(Place(place[0], place[1], root is not None, host))
        return out
    finally:
        if paused:
            gc.enable()


def _add_kernel(op: OpStat, name: str, kind: DeviceWorkKind, dur: float) -> None:
    """One launch of kernel ``name`` (``dur`` µs on the device) under ``op``."""
    k = op.kernels.get(name)
    if k is None:
        k = op.kernels[name] = KernelStat(name, kind=kind)
    k.device_us += dur
    k.calls += 1
    op.device_us += dur


def _add_line_time(stat: LineOps, backward: bool, dur: float) -> None:
    """``dur`` µs of device time on a line, to its backward part or its forward."""
    if backward:
        stat.bwd_device_us += dur
    else:
        stat.device_us += dur


def attribute_trace(
    trace: Mapping[str, Any],
    *,
    runs: int = 1,
    first_line: int | None = None,
    last_line: int | None = None,
    compiled: Mapping[str, CompiledGraph] | None = None,
) -> Attribution:
    """Per-line ops and kernels, the backward on the forward lines, and the accounting.

    A line's ops and kernels are those launched while it ran (its ``src:<line>`` range). The
    backward's work — autograd nodes run by the engine, on the calling thread (CPU) or on its
    own device thread (CUDA) — goes to the forward line whose op created the node (the
    profiler's ``fwdbwd`` flows, else the node's ``Sequence number``) as that line's
    ``backward`` part; nodes with no forward line (``AccumulateGrad``) stay on the line that ran
    the pass, which also keeps the pass's total (``backward_pass``).

    Args:
        trace: the loaded Chrome trace (``{"traceEvents": [...]}``).
        runs: how many calls of the function the trace holds; every number is divided by it.
        first_line, last_line: the function's lines; device time on other lines is a
            remainder (``outside``). None: every line counts.
        compiled: the compiled graphs of the run, by key
            (:func:`~kernel_lens.analysis.compiled_lines.compiled_graphs`): a kernel of one,
            run from a line of the function, is on the lines of the nodes it fused instead
            (counted on the first, ``shared`` on the others; the backward graph's as their
            backward part), wherever they are (:attr:`Attribution.compiled_lines`).

    Returns:
        the :class:`Attribution`.
    """
    # The collector paused: the forest is a million small objects that hold no cycles, and
    # generation-2 passes over them would cost more than the attribution itself.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _attribute(
            trace,
            runs=max(1, runs),
            first_line=first_line,
            last_line=last_line,
            compiled=compiled,
        )
    finally:
        if paused:
            gc.enable()


def _attribute(
    trace: Mapping[str, Any],
    *,
    runs: int,
    first_line: int | None,
    last_line: int | None,
    compiled: Mapping[str, CompiledGraph] | None = None,
) -> Attribution:
    events = [ev for ev in trace.get("traceEvents", []) if isinstance(ev, dict)]
    found = _Attributor(_Index(events, compiled), first_line, last_line)
    # The CPU events: a line range's time, a compilation taken off its op, a compiled kernel's
    # call, a top-level op on its line (nested ops are in their top op's ``dispatch``).
    for node in found.index.nodes:
        if node.line_node is node:
            found.line_range(node)
        elif node.compiling is not None:
            if node.compiling is node:
                found.compilation(node)
        elif node.gchild is node and found.compiled_call(node):
            pass
        elif node.top is node:
            found.top_op(node)
    # The device events: on the op (and line) that launched them, or a remainder.
    for ev in events:
        cat = ev.get("cat")
        if cat in _DEVICE_CATS and ev.get("ph") == "X":
            found.device_event(ev, _device_kind(str(cat)))
    return found.settled(runs)


class _Attributor:
    """One attribution in progress: the lines, the accounting and the unattributed kernels
    filled by the CPU events (line ranges, compilation, compiled kernels' calls, top-level ops)
    and then the device events (:meth:`device_event`), totals per trace until :meth:`settled`
    divides them by the calls."""

    def __init__(self, index: _Index, low: int | None, high: int | None) -> None:
        self.index = index
        self.low, self.high = low, high
        self.place_of = index.place_of
        self.lines: dict[int, LineOps] = {}
        #: CPU time of compiled kernels moved off the line that called the graph, to take off
        #: the top-level op there (``Torch-Compiled Region``…): by (line, backward?, op name)
        self.moved: dict[tuple[int, bool, str], float] = defaultdict(float)
        self.compiled_lines: set[int] = set()
        #: per autograd node: the pass it belongs to
        self.root_pass: dict[int, BackwardPass | None] = {}
        self.accounting = Accounting()
        self.unattributed: dict[str, KernelStat] = {}

    # The look-ups and the stats they create.

    def in_function(self, line: int) -> bool:
        low, high = self.low, self.high
        return low is None or high is None or low <= line <= high

    def line_stat(self, line: int) -> LineOps:
        stat = self.lines.get(line)
        if stat is None:
            stat = self.lines[line] = LineOps(line)
        return stat

    def op_stat(self, line: int, backward: bool, name: str) -> OpStat:
        stat = self.line_stat(line)
        ops = stat.backward if backward else stat.ops
        op = ops.get(name)
        if op is None:
            op = ops[name] = OpStat(name)
        return op

    @staticmethod
    def op_name(node: _Node, backward: bool) -> str:
        return backward_node_name(node.name) if backward or node.root is node else node.name

    def pass_of(self, node: _Node) -> BackwardPass | None:
        """The pass total of the line that ran ``node``'s backward, if it is backward work."""
        root = node.root
        if root is None:
            return None
        key = id(root)
        if key not in self.root_pass:
            host = self.index.host_line(root)
            if host is None:
                self.root_pass[key] = None
            else:
                stat = self.line_stat(host)
                if stat.backward_pass is None:
                    stat.backward_pass = BackwardPass()
                self.root_pass[key] = stat.backward_pass
        return self.root_pass[key]

    def compiled_place(self, node: _Node) -> tuple[CompiledKernel, tuple[int, bool]] | None:
        """The compiled kernel ``node`` is (or ran in) and where its call was made from,
        when that call was on a line of the function."""
        child = node.gchild
        kernel = self.index.kernel_of.get(id(child)) if child is not None else None
        if kernel is None or child is None:
            return None
        place = self.place_of(child)
        if place is None or not self.in_function(place[0]):
            return None
        return kernel, place

    def compiled_op(self, kernel: CompiledKernel, node: _Node, backward: bool) -> list[OpStat]:
        """The op a compiled kernel is on each of its lines: counted on the first, shared on
        the others."""
        name = kernel.name if not kernel.name.startswith("extern_kernels.") else node.name
        found: list[OpStat] = []
        for i, line in enumerate(kernel.lines):
            self.compiled_lines.add(line)
            if i == 0:
                op = self.op_stat(line, backward, name)
            else:
                shared = self.line_stat(line).shared
                op = shared.get((name, backward)) or OpStat(name)
                shared[(name, backward)] = op
            op.compiled = kernel
            found.append(op)
        return found

    # The CPU events.

    def line_range(self, node: _Node) -> None:
        """A line's range: one hit, its time."""
        stat = self.line_stat(node.line or 0)
        stat.hits += 1
        stat.cpu_us += node.end - node.start

    def compilation(self, node: _Node) -> None:
        """Compilation is its own figure (the run's ``compile``), never op time."""
        dur = node.end - node.start
        if node.line is not None:
            self.line_stat(node.line).cpu_us -= dur
        top = node.top
        place = self.place_of(node)
        if top is not None and top is not node and place is not None:
            self.moved[(place[0], place[1], self.op_name(top, place[1]))] += dur
            bpass = self.pass_of(node)
            if bpass is not None:
                bpass.cpu_us -= dur

    def compiled_call(self, node: _Node) -> bool:
        """The call of a compiled graph's kernel, on the lines it fused; False when it is not
        one run from a line of the function."""
        found = self.compiled_place(node)
        if found is None:
            return False
        kernel, (at, backward) = found
        dur = node.end - node.start
        for op in self.compiled_op(kernel, node, backward):
            op.calls += 1
            op.cpu_us += dur
        if backward:
            self.line_stat(kernel.lines[0]).bwd_cpu_us += dur
            bpass = self.pass_of(node)
            if bpass is not None:
                bpass.lines.update(kernel.lines)
        top = node.top
        if top is not None and top is not node:
            self.moved[(at, backward, self.op_name(top, backward))] += dur
        return True

    def top_op(self, node: _Node) -> None:
        """A top-level op: its calls and CPU time on its line (or its forward line)."""
        place = self.place_of(node)
        if place is None:
            return
        line, backward = place
        dur = node.end - node.start
        op = self.op_stat(line, backward, self.op_name(node, backward))
        op.calls += 1
        op.cpu_us += dur
        if backward:
            self.line_stat(line).bwd_cpu_us += dur
        bpass = self.pass_of(node)
        if bpass is not None:
            bpass.cpu_us += dur
            if backward:
                bpass.lines.add(line)

    # The device events.

    def device_event(self, ev: Mapping[str, Any], kind: DeviceWorkKind) -> None:
        """One kernel, memcpy or memset: on the op (and line) that launched it, or a remainder."""
        index = self.index
        args = ev.get("args") or {}
        launcher = index.runtime_by_corr.get(args.get("correlation"))
        if launcher is None:
            launcher = index.op_by_external.get(args.get("External id"))
        name = str(ev.get("name", ""))
        dur = float(ev.get("dur", 0.0))
        self.accounting.device_us += dur
        place = self.place_of(launcher) if launcher is not None else None
        if launcher is not None and launcher.compiling is not None:
            place = None  # the compilation's own kernels (autotuning): a remainder
        if launcher is None or place is None or not self.in_function(place[0]):
            self._remainder(self._reason(launcher, place), name, kind, dur)
            return
        self.accounting.on_lines_us += dur
        line, backward = place
        found = self.compiled_place(launcher)
        if found is not None:
            kernel, _ = found
            for op in self.compiled_op(kernel, launcher, backward):
                _add_kernel(op, name, kind, dur)
            _add_line_time(self.line_stat(kernel.lines[0]), backward, dur)
            self._pass_device(launcher, backward, dur, kernel.lines)
            return
        _add_kernel(self._launching_op(launcher, line, backward), name, kind, dur)
        _add_line_time(self.line_stat(line), backward, dur)
        self._pass_device(launcher, backward, dur, (line,))

    def _reason(self, launcher: _Node | None, place: tuple[int, bool] | None) -> RemainderReason:
        """Why device work launched by ``launcher`` (at ``place``) is on no line."""
        if launcher is None:
            return "no-launch"
        if launcher.compiling is not None:
            return "compile"
        if place is not None:
            return "outside"
        if self.index.in_seed(launcher):
            return "backward-seed"
        if launcher.root is not None:
            return "backward-unlinked"
        return "other-thread" if self.index.range_during(launcher) is None else "outside"

    def _remainder(self, reason: RemainderReason, name: str, kind: DeviceWorkKind,
                   dur: float) -> None:  # fmt: skip
        remainder = self.accounting.remainder
        rem = remainder.get(reason)
        if rem is None:
            rem = remainder[reason] = Remainder(reason)
        rem.device_us += dur
        rem.kernels[name] = rem.kernels.get(name, 0.0) + dur
        k = self.unattributed.get(name)
        if k is None:
            k = self.unattributed[name] = KernelStat(name, kind=kind)
        k.device_us += dur
        k.calls += 1

    def _launching_op(self, launcher: _Node, line: int, backward: bool) -> OpStat:
        """The op device work is counted on: the launcher's top-level op (the op under it that
        launched it in its ``dispatch``), else the bare launch (a runtime call)."""
        top = launcher.top
        if top is not None:
            top_name = self.op_name(top, backward)
            op = self.op_stat(line, backward, top_name)
            # the op that launched it, under the top-level one: aten::pow under aten::square,
            # aten::mm under the autograd node AddmmBackward0
            inner = launcher.inner.name if launcher.inner is not None else top.name
            if inner not in (top.name, top_name) and inner not in op.dispatch:
                op.dispatch.append(inner)
            return op
        op = self.op_stat(line, backward, launcher.name)
        if launcher.cat in ("cuda_runtime", "cuda_driver"):
            op.calls += 1
        return op

    def _pass_device(self, launcher: _Node, backward: bool, dur: float,
                     lines: Iterable[int]) -> None:  # fmt: skip
        """Device work of a backward pass: on its total, and (the backward's) its lines."""
        bpass = self.pass_of(launcher)
        if bpass is not None:
            bpass.device_us += dur
            if backward:
                bpass.lines.update(lines)

    # The end.

    def settled(self, runs: int) -> Attribution:
        """The moved CPU time taken off, passes seen only on their own line dropped, every
        number per call."""
        for (at, backward, top_name), dur in self.moved.items():
            stat = self.line_stat(at)
            top_op = (stat.backward if backward else stat.ops).get(top_name)
            if top_op is not None:
                top_op.cpu_us = max(0.0, top_op.cpu_us - dur)
            if backward:
                stat.bwd_cpu_us = max(0.0, stat.bwd_cpu_us - dur)
        for no, stat in self.lines.items():
            bpass = stat.backward_pass
            if bpass is not None and bpass.lines <= {no}:
                # Autograd nodes that ran inside the very line that made them — AOTAutograd
                # tracing the backward while torch.compile compiles the forward, a
                # torch.autograd.grad in the same statement — are that line's backward part
                # already; a "pass" there would only say it twice.
                stat.backward_pass = None
            _scale_line(stat, runs)
        for k in self.unattributed.values():
            k.device_us /= runs
            k.calls /= runs
        accounting = self.accounting
        accounting.device_us /= runs
        accounting.on_lines_us /= runs
        for rem in accounting.remainder.values():
            rem.device_us /= runs
            rem.kernels = {n: v / runs for n, v in rem.kernels.items()}
        return Attribution(
            dict(sorted(self.lines.items())),
            sorted(self.unattributed.values(), key=lambda k: -k.device_us),
            accounting,
            self.compiled_lines,
        )


def _scale_line(stat: LineOps, runs: int) -> None:
    stat.cpu_us /= runs
    stat.device_us /= runs
    stat.hits /= runs
    stat.bwd_cpu_us /= runs
    stat.bwd_device_us /= runs
    for op in [*stat.ops.values(), *stat.backward.values(), *stat.shared.values()]:
        op.calls /= runs
        op.cpu_us /= runs
        op.device_us /= runs
        for k in op.kernels.values():
            k.device_us /= runs
            k.calls /= runs
    if stat.backward_pass is not None:
        stat.backward_pass.device_us /= runs
        stat.backward_pass.cpu_us /= runs


def attribute_lines(
    trace: Mapping[str, Any], *, runs: int = 1
) -> tuple[dict[int, LineOps], list[KernelStat]]:
    """Per-line ops and kernels from a Chrome trace whose lines are tagged ``src:<line>``
    (:func:`attribute_trace` without the accounting).

    Args:
        trace: the loaded Chrome trace (``{"traceEvents": [...]}``).
        runs: how many calls of the function the trace holds; every number is divided by it.

    Returns:
        ``(lines, unattributed)``: the lines by number, and device work no line launched
        (per call).
    """
    found = attribute_trace(trace, runs=runs)
    return found.lines, found.unattributed
