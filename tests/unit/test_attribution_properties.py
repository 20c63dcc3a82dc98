"""Line attribution and trace summaries on generated traces: boundary cases and properties.

Hand-written boundary cases first (back-to-back ops on one line, line ranges that touch,
device intervals that touch), then hypothesis: line attribution over random nested op/kernel
trees checked against the attribution rules computed from the tree itself, and the GPU busy
time/gaps of the trace summary (through its public ``summarize_trace``) against a brute-force
union of integer intervals.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel_lens.analysis.line_attribution import attribute_lines, line_range_name
from kernel_lens.analysis.trace_summary import summarize_trace

CPU = {"pid": 1, "tid": 1}


def _x(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
    ev: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, **CPU}
    if args:
        ev["args"] = args
    return ev


def _kernel(name: str, ts: float, dur: float, corr: int, stream: int = 7) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": "kernel",
        "name": name,
        "pid": 0,
        "tid": stream,
        "ts": ts,
        "dur": dur,
        "args": {"correlation": corr, "stream": stream},
    }


def test_back_to_back_ops_on_one_line_are_both_top_level() -> None:
    # aten::mul ends at 30 exactly where aten::add starts: siblings, not parent and child.
    events = [
        _x("user_annotation", line_range_name(5), 0, 100),
        _x("cpu_op", "aten::mul", 10, 20),
        _x("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=1),
        _x("cpu_op", "aten::add", 30, 20),
        _x("cuda_runtime", "cudaLaunchKernel", 40, 5, correlation=2),
        _kernel("mul_kernel", 1000, 7, 1),
        _kernel("add_kernel", 1010, 3, 2),
    ]
    lines, unattributed = attribute_lines({"traceEvents": events})
    assert unattributed == []
    ops = lines[5].ops
    assert list(ops) == ["aten::mul", "aten::add"]
    assert ops["aten::mul"].dispatch == [] and ops["aten::add"].dispatch == []
    assert (ops["aten::mul"].calls, ops["aten::mul"].cpu_us, ops["aten::mul"].device_us) == (
        1,
        20,
        7,
    )
    assert list(ops["aten::add"].kernels) == ["add_kernel"]
    assert lines[5].device_us == 10


def test_touching_line_ranges_keep_their_own_ops() -> None:
    # src:1 ends at 50 where src:2 starts; an op starting at 50 belongs to line 2.
    events = [
        _x("user_annotation", "src:1", 0, 50),
        _x("user_annotation", "src:2", 50, 50),
        _x("cpu_op", "aten::square", 50, 10),
        _x("cuda_runtime", "cudaLaunchKernel", 52, 2, correlation=9),
        _kernel("pow_kernel", 100, 4, 9),
    ]
    lines, _ = attribute_lines({"traceEvents": events})
    assert lines[1].ops == {} and lines[1].cpu_us == 50
    assert list(lines[2].ops) == ["aten::square"] and lines[2].device_us == 4


def test_touching_device_intervals_merge_into_one_busy_block() -> None:
    events = [
        _x("cpu_op", "aten::x", 0, 40),
        _kernel("a", 0, 10, 1),
        _kernel("b", 10, 10, 2),  # touches a: no gap
        _kernel("c", 25, 5, 3),  # 5 µs after b
        _kernel("d", 26, 2, 4, stream=8),  # inside c, on another stream
    ]
    s = summarize_trace({"traceEvents": events})
    assert s.gpu_busy_us == 25
    assert (s.gaps.count, s.gaps.total_us, s.gaps.max_us) == (1, 5, 5)
    assert s.gpu_span_us == 30 and s.wall_us == 40
    assert s.gpu_busy_pct == pytest.approx(62.5)
    assert s.kernel_total_us == 27 and s.kernel_calls == 4


# --- hypothesis: random nested op/kernel trees -------------------------------------------------

OPS = ["aten::a", "aten::b", "aten::c"]
KERNELS = ["k0", "k1", "k2"]


@dataclass
class Node:
    """A generated CPU range: an op, a line range, or a launch (``kernel_us`` set)."""

    kind: str  # "op", "line", "launch"
    name: str
    gap: int  # µs of idle time before it (0: touching its previous sibling)
    children: list[Node] = field(default_factory=list)
    kernel: str = ""
    kernel_us: int = 0


def _launch() -> st.SearchStrategy[Node]:
    return st.builds(
        lambda gap, k, us: Node("launch", "cudaLaunchKernel", gap, kernel=k, kernel_us=us),
        st.integers(0, 2),
        st.sampled_from(KERNELS),
        st.integers(1, 40),
    )


def _op(depth: int) -> st.SearchStrategy[Node]:
    inner: st.SearchStrategy[Node] = _launch()
    if depth < 3:
        inner = st.one_of(_launch(), st.deferred(lambda: _op(depth + 1)))
    return st.builds(
        lambda name, gap, children: Node("op", name, gap, children),
        st.sampled_from(OPS),
        st.integers(0, 2),
        st.lists(inner, max_size=3),
    )


def _line() -> st.SearchStrategy[Node]:
    return st.builds(
        lambda no, gap, children: Node("line", line_range_name(no), gap, children),
        st.integers(1, 3),
        st.integers(0, 2),
        st.lists(st.one_of(_op(1), _launch()), max_size=4),
    )


@dataclass
class Expected:
    hits: float = 0
    cpu_us: float = 0
    device_us: float = 0
    ops: dict[str, dict[str, Any]] = field(default_factory=dict)


class Layout:
    """Lays a tree out as trace events and computes what attribution must say of it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.device: list[dict[str, Any]] = []
        self.corr = itertools.count(1)
        self.gpu_t = 10_000
        self.lines: dict[int, Expected] = defaultdict(Expected)
        self.unattributed: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    def op(self, line: int, name: str) -> dict[str, Any]:
        return self.lines[line].ops.setdefault(
            name, {"calls": 0, "cpu_us": 0, "device_us": 0, "dispatch": [], "kernels": {}}
        )

    def place(self, node: Node, t: int, line: int | None, chain: list[str]) -> int:
        """Emit ``node`` starting at ``t``; return its end."""
        if node.kind == "launch":
            corr = next(self.corr)
            self.events.append(_x("cuda_runtime", node.name, t, 2, correlation=corr))
            self.device.append(_kernel(node.kernel, self.gpu_t, node.kernel_us, corr))
            self.gpu_t += node.kernel_us + 1
            if line is None:
                k = self.unattributed[node.kernel]
                k[0] += node.kernel_us
                k[1] += 1
                return t + 2
            op = self.op(line, chain[0] if chain else node.name)
            if not chain:
                op["calls"] += 1  # a bare launch counts as its runtime call
            elif chain[-1] != chain[0] and chain[-1] not in op["dispatch"]:
                op["dispatch"].append(chain[-1])
            k = op["kernels"].setdefault(node.kernel, [0.0, 0.0])
            k[0] += node.kernel_us
            k[1] += 1
            op["device_us"] += node.kernel_us
            self.lines[line].device_us += node.kernel_us
            return t + 2
        start = t
        if node.kind == "line":
            line = int(node.name.split(":")[1])
        below = [*chain, node.name] if node.kind == "op" else chain
        for child in node.children:
            t = self.place(child, t + child.gap, line, below)
        end = t + 1
        cat = "user_annotation" if node.kind == "line" else "cpu_op"
        self.events.append(_x(cat, node.name, start, end - start))
        if node.kind == "line":
            assert line is not None
            self.lines[line].hits += 1
            self.lines[line].cpu_us += end - start
        elif line is not None and not chain:
            op = self.op(line, node.name)
            op["calls"] += 1
            op["cpu_us"] += end - start
        return end


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    top=st.lists(st.one_of(_line(), _launch(), _op(1)), min_size=1, max_size=5),
    runs=st.integers(1, 3),
)
def test_attribution_of_random_nested_trees(top: list[Node], runs: int) -> None:
    layout = Layout()
    t = 0
    for node in top:
        t = layout.place(node, t + node.gap, None, [])
    trace = {"traceEvents": layout.events + layout.device}
    lines, unattributed = attribute_lines(trace, runs=runs)

    assert sorted(lines) == sorted(layout.lines)
    for no, want in layout.lines.items():
        got = lines[no]
        assert got.hits == pytest.approx(want.hits / runs)
        assert got.cpu_us == pytest.approx(want.cpu_us / runs)
        assert got.device_us == pytest.approx(want.device_us / runs)
        assert set(got.ops) == set(want.ops)
        for name, w in want.ops.items():
            op = got.ops[name]
            assert op.calls == pytest.approx(w["calls"] / runs)
            assert op.cpu_us == pytest.approx(w["cpu_us"] / runs)
            assert op.device_us == pytest.approx(w["device_us"] / runs)
            assert op.dispatch == w["dispatch"]
            assert {k: (s.device_us, s.calls) for k, s in op.kernels.items()} == {
                k: (pytest.approx(us / runs), pytest.approx(n / runs))
                for k, (us, n) in w["kernels"].items()
            }
        # The ATen ops come in the order they first ran.
        aten = [n for n in got.ops if n.startswith("aten::")]
        assert aten == [n for n in want.ops if n.startswith("aten::")]
    assert {k.name: (k.device_us, k.calls) for k in unattributed} == {
        k: (pytest.approx(us / runs), pytest.approx(n / runs))
        for k, (us, n) in layout.unattributed.items()
    }
    # Each kernel counted once: the lines and the unattributed list share the device time.
    total = sum(ev["dur"] for ev in layout.device)
    counted = sum(x.device_us for x in lines.values()) + sum(k.device_us for k in unattributed)
    assert counted == pytest.approx(total / runs)
    if unattributed:
        assert [k.device_us for k in unattributed] == sorted(
            (k.device_us for k in unattributed), reverse=True
        )


# --- hypothesis: interval merging in the trace summary -----------------------------------------

intervals = st.lists(
    st.tuples(st.integers(0, 60), st.integers(1, 15), st.sampled_from([7, 8])),
    min_size=1,
    max_size=12,
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)  # a pandas summary each: ~15 ms
@given(kernels=intervals)
def test_gpu_busy_time_is_the_union_of_device_intervals(
    kernels: list[tuple[int, int, int]],
) -> None:
    events = [_kernel(f"k{i}", ts, dur, i, stream) for i, (ts, dur, stream) in enumerate(kernels)]
    summary = summarize_trace({"traceEvents": events})
    # Brute force over 1 µs cells: a cell is busy when any kernel covers it.
    busy = sorted({c for ts, dur, _ in kernels for c in range(ts, ts + dur)})
    runs = [list(g) for _, g in itertools.groupby(enumerate(busy), lambda p: p[1] - p[0])]
    blocks = [(r[0][1], r[-1][1] + 1) for r in runs]
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(blocks)]
    assert summary.gpu_busy_us == len(busy)
    assert summary.gaps.count == len(gaps)
    assert summary.gaps.total_us == sum(gaps)
    assert summary.gaps.max_us == max(gaps, default=0)
    assert summary.gpu_span_us == blocks[-1][1] - blocks[0][0]
    assert summary.kernel_total_us == sum(dur for _, dur, _ in kernels)
    per_stream = {
        s: len({c for ts, dur, st_ in kernels if st_ == s for c in range(ts, ts + dur)})
        for s in {s for _, _, s in kernels}
    }
    assert {row.stream: row.busy_us for row in summary.streams} == per_stream
