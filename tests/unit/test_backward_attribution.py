"""The training step, right: backward kernels on the forward lines that caused them, and every
microsecond of the trace on a line or in a named remainder.

On traces recorded on an NVIDIA H200 by the agent's own ops pass (tests/data/h200/training/,
see its README): ``kernels/train_step.py::train_step`` (fp32), ``train_step_bf16`` (autocast) and
``kernels/train_compiled.py::train_step`` (torch.compile). On CUDA the backward runs on the
autograd engine's own thread (``pt_autograd_0``), outside the calling thread's line ranges —
before this attribution 58% of the fp32 step's kernel time was on no line.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.line_attribution import (
    BACKWARD_PREFIX as BACKWARD,
)
from kernel_lens.analysis.line_attribution import attribute_trace, backward_node_name

DATA = Path(__file__).parent.parent / "data" / "h200" / "training"


def _load(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    result = json.loads((DATA / f"{name}.json").read_text())
    trace = json.loads((DATA / f"{name}-trace.json").read_text())
    return result, trace


def _attribute(name: str, trace: dict[str, Any] | None = None) -> Any:
    result, recorded = _load(name)
    return attribute_trace(
        trace if trace is not None else recorded,
        runs=result["profiled_runs"],
        first_line=result["first_line"],
        last_line=result["last_line"],
    )


def _trace_device_us(trace: dict[str, Any], runs: int) -> float:
    cats = ("kernel", "gpu_memcpy", "gpu_memset")
    return sum(e.get("dur", 0.0) for e in trace["traceEvents"] if e.get("cat") in cats) / runs


@pytest.fixture(scope="module")
def fp32() -> Any:
    return _attribute("train_step-train_step")


def test_backward_kernels_land_on_the_forward_lines_that_caused_them(fp32: Any) -> None:
    # line 44: out = model(x) (fc1 → gelu → fc2 inside MLP.forward); 45: the loss
    model_line, loss_line = fp32.lines[44].to_json(), fp32.lines[45].to_json()
    bwd = model_line["backward"]
    names = [op["name"] for op in bwd["ops"]]
    assert names[:2] == ["AddmmBackward0", "GeluBackward0"]  # by device time, costliest first
    addmm = bwd["ops"][0]
    assert addmm["dispatch"] == ["aten::mm", "aten::sum"]
    gemms = [k["name"] for k in addmm["kernels"]]
    assert "cutlass_80_simt_sgemm" in gemms[0]
    assert any(k.startswith("sm80_xmma_gemm_f32f32") for k in gemms)
    assert addmm["calls"] == 2  # two Linear layers per call
    assert bwd["device_us"] == pytest.approx(2115.6, abs=0.1)
    assert model_line["device_us"] == pytest.approx(1420.8, abs=0.1)  # the forward alone
    assert [op["name"] for op in loss_line["backward"]["ops"]] == ["MseLossBackward0"]


def test_the_backward_line_keeps_the_pass_total_said_as_such(fp32: Any) -> None:
    line = fp32.lines[47].to_json()  # loss.backward()
    assert "backward" not in line
    bpass = line["backward_pass"]
    assert bpass["lines"] == [44, 45]
    both = fp32.lines[44].bwd_device_us + fp32.lines[45].bwd_device_us
    # the pass = the forward lines' backward parts + the engine's work with no forward line
    # (AccumulateGrad); the gradient seed (aten::ones_like) is the line's own, not the engine's
    accumulate = sum(op["device_us"] for op in line["ops"] if op["name"] == "AccumulateGrad")
    assert bpass["device_us"] == pytest.approx(both + accumulate, abs=1e-3)
    assert bpass["device_us"] > 0.5 * fp32.accounting.device_us
    assert {op["name"] for op in line["ops"]} == {"AccumulateGrad", "aten::ones_like"}


def test_the_optimizer_lands_on_opt_step(fp32: Any) -> None:
    step = fp32.lines[48].to_json()
    assert [op["name"] for op in step["ops"]] == ["aten::_foreach_mul_", "aten::_foreach_add_"]
    kernel = step["ops"][0]["kernels"][0]["name"]
    assert "multi_tensor_apply_kernel" in kernel


@pytest.mark.parametrize(
    "name", ["train_step-train_step", "train_step-train_step_bf16", "train_compiled-train_step"]
)
def test_every_microsecond_of_the_step_is_on_a_line(name: str) -> None:
    result, trace = _load(name)
    found = _attribute(name)
    acc = found.accounting.to_json()
    total = _trace_device_us(trace, result["profiled_runs"])
    assert acc["device_us"] == pytest.approx(total, abs=1e-3)
    on_lines = sum(s.device_us + s.bwd_device_us for s in found.lines.values())
    assert on_lines == pytest.approx(total, rel=0.01)
    assert acc["on_lines_pct"] == pytest.approx(100.0, abs=1e-6)
    assert acc["remainder"] == []
    # before: the recorded result (this repo before the backward attribution) had 42% on lines
    before = sum(line["device_us"] for line in result["lines"])
    assert before < 0.6 * total


def test_autocast_backward_has_the_cast_nodes_on_their_lines() -> None:
    found = _attribute("train_step-train_step_bf16")
    names = {op["name"] for op in found.lines[54].to_json()["backward"]["ops"]}
    assert {"AddmmBackward0", "GeluBackward0", "ToCopyBackward0"} <= names
    kernels = [
        k["name"] for op in found.lines[54].to_json()["backward"]["ops"] for k in op["kernels"]
    ]
    assert any(k.startswith("nvjet_sm90") for k in kernels)  # bf16 tensor-core GEMMs


def test_a_compiled_step_has_its_backward_region_on_the_calling_line() -> None:
    found = _attribute("train_compiled-train_step")
    bwd = found.lines[28].to_json()["backward"]
    assert [op["name"] for op in bwd["ops"]] == ["CompiledFunctionBackward"]
    kernels = {k["name"] for k in bwd["ops"][0]["kernels"]}
    assert "triton_poi_fused_gelu_gelu_backward_2" in kernels


def test_without_flows_the_sequence_numbers_link_the_same_way() -> None:
    _, trace = _load("train_step-train_step")
    no_flows = copy.deepcopy(trace)
    no_flows["traceEvents"] = [e for e in trace["traceEvents"] if e.get("cat") != "fwdbwd"]
    with_flows = _attribute("train_step-train_step")
    without = _attribute("train_step-train_step", no_flows)
    for line in (44, 45, 47, 48):
        assert without.lines[line].to_json() == with_flows.lines[line].to_json()


def test_an_unlinked_backward_node_is_a_named_remainder_when_no_line_ran_it() -> None:
    _, trace = _load("train_step-train_step")
    cut = copy.deepcopy(trace)
    # drop the calling thread's line ranges: the backward thread's work has neither a forward
    # line nor a line that ran the pass
    cut["traceEvents"] = [
        e
        for e in trace["traceEvents"]
        if not (e.get("cat") == "user_annotation" and str(e.get("name")).startswith("src:"))
    ]
    found = attribute_trace(cut, runs=3, first_line=43, last_line=49)
    acc = found.accounting.to_json()
    reasons = {r["reason"]: r["device_us"] for r in acc["remainder"]}
    assert set(reasons) == {"backward-unlinked", "other-thread"}
    assert acc["on_lines_us"] == 0
    assert sum(reasons.values()) == pytest.approx(acc["device_us"], rel=1e-9)
    assert found.lines == {}


def test_kernels_outside_the_function_lines_and_without_launch_are_named() -> None:
    _, trace = _load("train_step-train_step")
    found = attribute_trace(trace, runs=3, first_line=43, last_line=47)  # opt.step() "outside"
    acc = found.accounting.to_json()
    outside = [r for r in acc["remainder"] if r["reason"] == "outside"]
    assert outside and outside[0]["device_us"] == pytest.approx(81.7, abs=0.1)
    assert "multi_tensor_apply_kernel" in outside[0]["kernels"][0]["name"]
    orphan = copy.deepcopy(trace)
    for ev in orphan["traceEvents"]:
        if ev.get("cat") == "kernel":
            ev.setdefault("args", {})["correlation"] = -1
            ev["args"].pop("External id", None)
    acc = attribute_trace(orphan, runs=3).accounting.to_json()
    assert [r["reason"] for r in acc["remainder"]][:1] == ["no-launch"]
    total = sum(r["device_us"] for r in acc["remainder"]) + acc["on_lines_us"]
    assert total == pytest.approx(acc["device_us"], rel=1e-9)


def test_backward_node_names_are_short() -> None:
    assert backward_node_name("autograd::engine::evaluate_function: AddmmBackward0") == (
        "AddmmBackward0"
    )
    assert (
        backward_node_name("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad")
        == "AccumulateGrad"
    )
    assert backward_node_name("aten::mm") == "aten::mm"


def _result_with(found: Any, name: str = "train_step-train_step") -> dict[str, Any]:
    result, _ = _load(name)
    sources = {line["line"]: line["source"] for line in result["lines"]}
    result["lines"] = [s.to_json(sources.get(n, "")) for n, s in found.lines.items()]
    result["accounting"] = found.accounting.to_json()
    return result


def test_lenses_read_fwd_and_bwd_and_the_pass_total(fp32: Any) -> None:
    from kernel_lens.analysis import lens_text

    result = _result_with(fp32)
    by_line = {line["line"]: line for line in result["lines"]}
    title = lens_text.line_lens_title(by_line[44], cuda=True)
    assert title is not None and title.startswith("fwd 1.42 ms · bwd 2.12 ms · aten::linear")
    title = lens_text.line_lens_title(by_line[47], cuda=True)
    assert title is not None and title.startswith(
        "backward pass 2.14 ms · spread over lines 44–45  |  "
    )
    assert "· 100% on lines ·" in lens_text.summary_lens_title(result)
    assert lens_text.accounting_text(result) == "3.66 ms of kernels · 100% on lines"
    hover = lens_text.hover_markdown(result, 44)
    assert hover is not None
    assert "**Backward** caused by this line · 2.12 ms device" in hover
    assert "- `AddmmBackward0` → `aten::mm` → `aten::sum` · **2.07 ms** device · 2 calls" in hover
    hover = lens_text.hover_markdown(result, 47)
    assert hover is not None and "**backward pass 2.14 ms · spread over lines 44–45**" in hover


def test_a_remainder_is_named_in_the_accounting_text() -> None:
    from kernel_lens.analysis import lens_text

    _, trace = _load("train_step-train_step")
    found = attribute_trace(trace, runs=3, first_line=43, last_line=47)
    text = lens_text.accounting_text({"accounting": found.accounting.to_json()})
    assert text == (
        "3.66 ms of kernels · 97.8% on lines · 81.7 µs launched outside the function's lines"
    )


def test_a_change_of_the_backward_is_a_change_of_the_line(fp32: Any) -> None:
    from kernel_lens.analysis.compare import diff_lines

    before = _result_with(fp32)["lines"]
    after = copy.deepcopy(before)
    line = next(x for x in after if x["line"] == 44)
    for op in line["backward"]["ops"]:
        for k in op["kernels"]:
            k["device_us"] *= 2
    line["backward"]["device_us"] *= 2
    deltas = {d.line: d for d in diff_lines(before, after, cuda=True)}
    text = deltas[44].text()
    assert text is not None and text.startswith("device +")
    assert deltas[45].text() is None


def test_a_compiled_region_says_where_its_kernels_are() -> None:
    from kernel_lens.analysis import lens_text

    found = _attribute("train_compiled-train_step")
    result = _result_with(found, "train_compiled-train_step")
    hover = lens_text.hover_markdown(result, 28)
    assert hover is not None and lens_text.COMPILED_REGION_NOTE in hover
    assert lens_text.COMPILED_REGION_NOTE not in (lens_text.hover_markdown(result, 29) or "")


def test_a_backward_run_inside_the_line_that_made_it_is_no_pass_of_its_own() -> None:
    # torch.compile's first call traces the backward (AOTAutograd) inside the forward line: the
    # engine's nodes then run on the calling thread, in that line's range, linked to it.
    trace = {
        "traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "src:5", "ts": 0, "dur": 100,
             "pid": 1, "tid": 1},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "ts": 1, "dur": 5, "pid": 1,
             "tid": 1, "args": {"Sequence number": 7}},
            {"ph": "X", "cat": "cpu_op", "name": BACKWARD + "MulBackward0", "ts": 10,
             "dur": 5, "pid": 1, "tid": 1, "args": {"Sequence number": 7}},
        ]
    }  # fmt: skip
    found = attribute_trace(trace)
    line = found.lines[5].to_json()
    assert [op["name"] for op in line["backward"]["ops"]] == ["MulBackward0"]
    assert "backward_pass" not in line


def test_the_timeline_names_the_autograd_engines_lane() -> None:
    from kernel_lens.analysis.timeline import build_timeline

    _, trace = _load("train_step-train_step")
    titles = [lane["title"] for lane in build_timeline(trace)["lanes"]]
    assert "CPU thread 525 · backward (autograd engine)" in titles  # pt_autograd_0
    assert "CPU thread 494" in titles  # the calling thread, with the line ranges
