"""Nsight Compute's backward kernels on the forward lines that caused them (issue 34, item 2).

Under ncu a backward kernel runs on autograd's device thread, inside the range ``emit_nvtx``
opens for its node (``MulBackward0, seq = 12, op_id = …`` — libtorch's ``"{}, seq = {}"`` then
``"{}, op_id = {}"``), with no ``src:<line>`` range around it. These tests run a real training
step on CPU under the real ``LineTagger`` with the ncu child's ``SeqMarker``, then take every
autograd node of the step with its real sequence number and check that a kernel launched inside
that node's range lands on the forward line that created the node.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from kernel_lens.analysis.ncu_lines import SeqMarks, backward_seq, kernel_line, kernel_lines

torch = pytest.importorskip("torch")


def _step(model: Any, x: Any) -> Any:
    h = model[0](x)  # line +1: AddmmBackward0 (and TBackward0 of the weight)
    h = torch.relu(h)  # line +2: ReluBackward0
    h = h * 2.0  # line +3: MulBackward0
    loss = model[2](h).sum()  # line +4: AddmmBackward0, SumBackward0
    loss.backward()  # line +5: no node
    return loss


FIRST = _step.__code__.co_firstlineno


def _nodes(root: Any) -> list[Any]:
    seen: dict[int, Any] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(n for n, _ in node.next_functions)
    return list(seen.values())


def _run_step() -> tuple[Any, SeqMarks]:
    from kernel_lens.agent.ncu_child import SeqMarker
    from kernel_lens.agent.stages.ops import LineTagger

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    x = torch.randn(4, 8)
    _step(model, x)  # warm-up, as the child does: its nodes are outside the marks
    marker = SeqMarker(lambda name: contextlib.nullcontext())
    with LineTagger(_step.__code__, marker):
        loss = _step(model, x)
    return loss, marker.marks()


def test_every_backward_node_maps_to_the_forward_line_that_made_it() -> None:
    loss, marks = _run_step()
    expected = {
        "ReluBackward0": {FIRST + 2},
        "MulBackward0": {FIRST + 3},
        "SumBackward0": {FIRST + 4},
        "AddmmBackward0": {FIRST + 1, FIRST + 4},
        "TBackward0": {FIRST + 1, FIRST + 4},
    }
    found: dict[str, set[int]] = {}
    for node in _nodes(loss.grad_fn):
        if node.name() == "torch::autograd::AccumulateGrad":
            continue  # made for the leaf, never by a line; runs no kernel of its own
        seq = int(node._sequence_nr())
        # The range emit_nvtx opens around the node's apply(), then an op inside it whose
        # own seq is the device thread's counter (meaningless: it must not be taken).
        ranges = [f"{node.name()}, seq = {seq}, op_id = 91", "aten::mm, seq = 3, op_id = 92"]
        assert backward_seq(ranges) == seq
        line = kernel_line(ranges, marks)
        assert line is not None, node.name()
        found.setdefault(node.name(), set()).add(line)
    assert found == expected


def test_the_engine_prefix_and_forward_ranges() -> None:
    loss, marks = _run_step()
    relu = next(n for n in _nodes(loss.grad_fn) if n.name() == "ReluBackward0")
    seq = int(relu._sequence_nr())
    engine = [f"autograd::engine::evaluate_function: ReluBackward0, seq = {seq}, op_id = 5"]
    assert kernel_line(engine, marks) == FIRST + 2
    # A forward kernel: its innermost src: range, whatever op ranges (with their seq) it is in.
    forward = ["src:40", f"aten::linear, seq = {seq}, op_id = 1", "src:41", "aten::addmm"]
    assert kernel_line(forward, marks) == 41
    # A node made before the profiled call (the warm-up's graph): no line from its number, so
    # the src: range decides, and with none, no line rather than a guess.
    assert marks.line_of(0) is None
    assert kernel_line(["MulBackward0, seq = 0"], marks) is None
    assert kernel_line(["src:17", "MulBackward0, seq = 0"], marks) == 17
    # Without marks (an old child), a backward kernel has no line.
    assert kernel_line([f"ReluBackward0, seq = {seq}"], None) is None


def test_marks_round_trip_and_refuse_what_they_cannot_be() -> None:
    _, marks = _run_step()
    again = SeqMarks.from_json(marks.to_json())
    assert again is not None and again.to_json() == marks.to_json()
    assert SeqMarks.from_json({"marks": [["a", 1]], "end": 3}) is None
    assert SeqMarks.from_json([1, 2]) is None
    assert SeqMarks.from_json({"marks": [[5, 1], [2, 2]], "end": 9}) is None  # goes down
    # Lines that made no node share a number; the node goes to the last line at or below it.
    m = SeqMarks([(10, 1), (10, 2), (12, 3)], end=14)
    assert [m.line_of(n) for n in (9, 10, 11, 12, 13, 14)] == [None, 2, 2, 3, 3, None]


def test_a_gradient_reduced_after_its_node_goes_to_the_node_s_line() -> None:
    """On the H200 two ``reduce_kernel``s of a training step had no line: the engine sums a
    broadcast bias's gradient to the bias's shape after ``AddmmBackward0``'s apply, inside
    ``evaluate_function`` (which carries no sequence number) but outside the node's range. They
    take the number of the node that ran just before in the same ``evaluate_function``."""
    loss, marks = _run_step()
    addmms = sorted(
        int(n._sequence_nr()) for n in _nodes(loss.grad_fn) if n.name() == "AddmmBackward0"
    )
    engine = "autograd::engine::evaluate_function: AddmmBackward0"
    # the backward runs the second linear's node first, then the first's
    per_kernel = [
        [engine, f"AddmmBackward0, seq = {addmms[1]}, op_id = 7", "aten::mm"],  # its GEMM
        [engine, "aten::sum, seq = 40, op_id = 9"],  # validate_outputs' sum_to: no node range
        ["autograd::engine::evaluate_function: ReluBackward0"],  # a node with no kernel range
        [engine, f"AddmmBackward0, seq = {addmms[0]}, op_id = 11", "aten::mm"],
        [engine, "aten::sum, seq = 41, op_id = 12"],
    ]
    assert kernel_lines(per_kernel, marks) == [FIRST + 4, FIRST + 4, None, FIRST + 1, FIRST + 1]
    # the kernel alone (no order) has no line, as before
    assert kernel_line(per_kernel[1], marks) is None
