"""Compiled code on its source lines, on recorded data (pure functions, no torch).

``tests/data/compiled/cpu_block-*``: ``kernels/compiled_step.py::train_step`` on a CPU (torch
2.13), its model compiled: what Inductor recorded of the forward and backward graphs (the
agent's capture) and the profiled pass's trace (``record.py``). The H200 trace of
``kernels/train_compiled.py::train_step`` (Triton kernels) was recorded without provenance: its
graphs' stack traces are written here by hand, as Inductor writes them, to check that Triton
kernel names and device time go the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.results import kernel_totals, line_results
from kernel_lens.analysis.compiled_lines import (
    compile_report,
    compiled_graph,
    compiled_graphs,
    extern_calls,
    kernel_event_name,
    stack_frames,
)
from kernel_lens.analysis.line_attribution import all_ops, attribute_trace

DATA = Path(__file__).resolve().parents[1] / "data"
CPU = DATA / "compiled"
H200 = DATA / "h200" / "training"
RUNS = 3  # record.py's profiled calls


def _key(name: str) -> Any:
    """Lines of one file, by its base name, as attribution keys of the profiled file."""

    def line_key(file: str, line: int) -> int | None:
        return line if os.path.basename(file) == name else None

    return line_key


@pytest.fixture(scope="module")
def cpu_graphs() -> dict[str, Any]:
    raw = json.loads((CPU / "cpu_block-graphs.json").read_text())
    return compiled_graphs(raw, _key("compiled_step.py"))


@pytest.fixture(scope="module")
def cpu_trace() -> dict[str, Any]:
    return json.loads((CPU / "cpu_block-trace.json").read_text())


def test_stack_frames_and_event_names() -> None:
    trace = (
        '  File "/w/m.py", line 30, in forward\n    x = self.b(x)\n  File "/w/b.py", line 9, in f'
    )
    assert stack_frames(trace) == [("/w/m.py", 30), ("/w/b.py", 9)]
    assert kernel_event_name("graph_0_cpp_fused_add_gelu_mul_0") == "cpp_fused_add_gelu_mul_0"
    assert kernel_event_name("triton_poi_fused_gelu_0") == "triton_poi_fused_gelu_0"


def test_kernel_lines_come_from_the_nodes_stack_traces(cpu_graphs: dict[str, Any]) -> None:
    by_kind = {g.kind: g for g in cpu_graphs.values()}
    fwd, bwd = by_kind["forward"], by_kind["backward"]
    # gelu (24) and `h * 2.0 + 1.0` (25) fused into one C++ kernel: on both lines
    assert fwd.kernels["cpp_fused_add_gelu_mul_0"].lines == [24, 25]
    assert fwd.kernels["cpp_fused_add_gelu_mul_0"].aten == ["aten.add", "aten.mul", "aten.gelu"]
    # the externs in the order the code calls them: fc1's addmm, then fc2's
    assert [(op, k.lines) for op, k in fwd.externs] == [
        ("aten::addmm", [23]),
        ("aten::addmm", [26]),
    ]
    # the backward graph's nodes carry the forward's stack traces: the forward lines
    assert bwd.kernels["cpp_fused_gelu_gelu_backward_mul_sum_0"].lines == [24, 25, 26]
    assert [k.lines for _, k in bwd.externs] == [[26], [26], [23]]
    # the innermost frame of the run's files; none in a file that is not the run's
    other = compiled_graphs(
        json.loads((CPU / "cpu_block-graphs.json").read_text()), _key("elsewhere.py")
    )
    assert all(not k.lines for g in other.values() for k in g.kernels.values())


def test_extern_calls_without_provenance_handles() -> None:
    code = (DATA / "h200" / "inductor_matmul_relu_code.py.txt").read_text()
    assert extern_calls(code) == [("extern_kernels.mm", "aten::mm")]


def test_cpu_step_kernels_on_forward_lines_counted_once(
    cpu_graphs: dict[str, Any], cpu_trace: dict[str, Any]
) -> None:
    found = attribute_trace(cpu_trace, runs=RUNS, first_line=32, last_line=38, compiled=cpu_graphs)
    lines = found.lines
    assert found.compiled_lines >= {23, 24, 25, 26}
    # nothing on the def line; the call line keeps the region's own overhead only
    assert 22 not in lines
    call = lines[33]
    assert not any(o.compiled for o in call.ops.values())
    assert set(call.ops) <= {"Torch-Compiled Region: 0/0", "TorchDynamo Cache Lookup"}
    fused = lines[24].ops["cpp_fused_add_gelu_mul_0"]
    assert fused.compiled is not None and fused.calls == 1
    shared = lines[25].shared[("cpp_fused_add_gelu_mul_0", False)]
    assert shared.cpu_us == pytest.approx(fused.cpu_us)
    # counted once: the kernel's CPU events, per call, are the op on line 24, not twice
    events = [
        e["dur"]
        for e in cpu_trace["traceEvents"]
        if e.get("name") == "graph_0_cpp_fused_add_gelu_mul_0"
    ]
    assert sum(events) / RUNS == pytest.approx(fused.cpu_us)
    counted = [
        o for s in lines.values() for o in s.ops.values() if o.name == "cpp_fused_add_gelu_mul_0"
    ]
    assert len(counted) == 1
    # the compiled backward on the forward lines, as their backward part
    assert "cpp_fused_gelu_gelu_backward_mul_sum_0" in lines[24].backward
    assert ("cpp_fused_gelu_gelu_backward_mul_sum_0", True) in lines[26].shared
    assert "aten::mm" in lines[23].backward and "aten::mm" in lines[26].backward
    # loss.backward() keeps the pass, over the forward lines
    bpass = lines[36].backward_pass
    assert bpass is not None and {23, 24, 25, 26} <= bpass.lines


def test_cpu_step_result_rows_outside_the_function(
    cpu_graphs: dict[str, Any], cpu_trace: dict[str, Any]
) -> None:
    out = line_results(
        cpu_trace,
        runs=RUNS,
        source_of=lambda n: f"line {n}",
        within=(32, 38),
        compiled=cpu_graphs,
    )
    rows = {r["line"]: r for r in out["lines"]}
    assert {23, 24, 25, 26, 27} <= set(rows)  # Block.forward's lines, outside train_step
    op = next(o for o in rows[24]["ops"] if o["name"] == "cpp_fused_add_gelu_mul_0")
    assert op["compiled"]["lines"] == [24, 25]
    assert op["compiled"]["shared_with"] == [25]
    assert op["compiled"]["nodes"]  # the post-grad nodes, for the hover
    shared = rows[25]["shared"][0]
    assert shared["name"] == "cpp_fused_add_gelu_mul_0"
    assert shared["compiled"]["counted_on"] == {"line": 24}
    assert shared["compiled"]["shared_with"] == [24]


def _h200_raw() -> list[dict[str, Any]]:
    """The two graphs of the H200 trace, with the stack traces Inductor writes for their nodes
    (``kernels/train_compiled.py``: line 23 ``h = F.gelu(self.fc1(x))``, 24
    ``return self.fc2(h)``)."""

    def at(*lines: int) -> list[str]:
        return [
            f'  File "/home/u/kernels/train_compiled.py", line {n}, in forward\n    code\n'
            for n in lines
        ]

    fwd_code = (
        "# AOT ID: ['0_forward']\n"
        "        # [Provenance debug handles] extern_kernels.addmm:1\n"
        "        extern_kernels.addmm(primals_2, primals_4, buf0)\n"
        "        # Topologically Sorted Source Nodes: [h], Original ATen: [aten.gelu]\n"
        "        # [Provenance debug handles] triton_poi_fused_gelu_0:2\n"
        "        triton_poi_fused_gelu_0.run(buf0, buf1, 4194304, stream=stream0)\n"
        "        # [Provenance debug handles] extern_kernels.addmm:3\n"
        "        extern_kernels.addmm(primals_5, buf1, primals_3, out=buf2)\n"
    )
    bwd_code = "# AOT ID: ['0_backward']\n" + "".join(
        f"        # [Provenance debug handles] extern_kernels.mm:{h}\n"
        f"        extern_kernels.mm(a, b, out=buf{h})\n"
        for h in (1, 2, 6, 9)
    )
    fwd = {
        "key": "fp3ccjvp4xuqchmg5uqngzy6lqlri3pkamfjxqn6urwtihf2tizy",
        "source_code": fwd_code,
        "stack_traces": {
            "extern_kernels.addmm:1": at(23),
            "triton_poi_fused_gelu_0:2": at(23),
            "extern_kernels.addmm:3": at(24),
        },
    }
    bwd = {
        "key": "fdsxnfkrbeh2rasn6hdpvkdlcqgcjg4ntgcslg5mbvaye3ejujto",
        "source_code": bwd_code,
        "stack_traces": {
            "extern_kernels.mm:1": at(24),
            "extern_kernels.mm:2": at(24),
            "triton_red_fused_sum_0:3": at(24),
            "triton_per_fused_sum_1:4": at(24),
            "triton_poi_fused_gelu_gelu_backward_2:5": at(24, 23),
            "extern_kernels.mm:6": at(23),
            "triton_red_fused_sum_3:7": at(23),
            "triton_per_fused_sum_4:8": at(23),
            "extern_kernels.mm:9": at(23),
        },
    }
    return [fwd, bwd]


def test_h200_triton_kernels_on_their_lines_all_device_time_once() -> None:
    result = json.loads((H200 / "train_compiled-train_step.json").read_text())
    trace = json.loads((H200 / "train_compiled-train_step-trace.json").read_text())
    keys = {
        e["name"].split()[3]
        for e in trace["traceEvents"]
        if str(e.get("name", "")).startswith("## Call CompiledFxGraph")
    }
    graphs = _h200_graphs_for(keys)
    runs = result["profiled_runs"]
    plain = attribute_trace(trace, runs=runs, first_line=27, last_line=33)
    found = attribute_trace(trace, runs=runs, first_line=27, last_line=33, compiled=graphs)
    # the same device time, all of it on lines, each kernel once
    assert found.accounting.device_us == pytest.approx(plain.accounting.device_us)
    assert found.accounting.on_lines_us == pytest.approx(plain.accounting.on_lines_us)
    rows = [s.to_json("") for s in found.lines.values()]
    on_rows = sum(k["device_us"] for r in rows for op in all_ops(r) for k in op["kernels"])
    assert on_rows == pytest.approx(found.accounting.on_lines_us, rel=1e-6)
    totals = {k["name"]: k for k in kernel_totals(rows)}
    assert totals["triton_poi_fused_gelu_gelu_backward_2"]["lines"] == [23]
    # the call line holds no kernel of the compiled graphs any more
    call = found.lines[28]
    assert call.device_us == 0 and call.bwd_device_us == 0
    assert found.lines[23].ops["triton_poi_fused_gelu_0"].kernels
    assert found.lines[23].device_us > 0 and found.lines[24].device_us > 0
    assert found.lines[24].bwd_device_us > 0
    shared = found.lines[24].shared[("triton_poi_fused_gelu_gelu_backward_2", True)]
    owner = found.lines[23].backward["triton_poi_fused_gelu_gelu_backward_2"]
    assert owner.device_us > 0
    assert shared.device_us == pytest.approx(owner.device_us)
    # the pass total stays on loss.backward()
    bpass = found.lines[31].backward_pass
    assert bpass is not None and bpass.device_us > 0 and {23, 24} <= bpass.lines


def _h200_graphs_for(keys: set[str]) -> dict[str, Any]:
    raw = _h200_raw()
    assert {r["key"] for r in raw} <= keys
    return {r["key"]: compiled_graph(r, _key("train_compiled.py")) for r in raw}


def test_compile_report_on_the_lines_that_compiled() -> None:
    compiles = {
        "0/0": {
            "seconds": 9.75,
            "backward_s": 1.5,
            "graphs": 2,
            "frames": [("/t/torch/nn/module.py", 1700), ("/w/s.py", 33), ("/t/eval_frame.py", 9)],
        },
        "0/1": {"seconds": 2.0, "graphs": 1, "frames": [("/w/s.py", 33)]},
    }
    breaks = [{"reason": "generic_jump TensorVariable()", "frames": [("/w/m.py", 27)]}]
    recompiles = [{"reason": "tensor 'x' size mismatch at index 0", "compile_id": "0/1"}]
    per_line, summary = compile_report(compiles, breaks, recompiles, _key("s.py"))
    assert per_line[33]["seconds"] == pytest.approx(11.75)
    assert per_line[33]["graphs"] == 3
    assert per_line[33]["recompiles"] == ["tensor 'x' size mismatch at index 0"]
    assert summary["seconds"] == pytest.approx(11.75)
    assert summary["graph_breaks"] == [{"reason": "generic_jump TensorVariable()", "key": None}]
