"""The backward on the forward lines, on CPU torch, with the real profiler.

On a CPU the autograd engine runs the backward on the calling thread, inside the
``loss.backward()`` line's range; the attribution must still move each node to the forward
line that made it. *Profile with backward* (``agent/backward.py``) seeds the backward of a
forward function's output; its seed is named, not dropped. And the calling context: a CPU
autocast replayed around the pass puts the bf16 casts on the lines.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kernel_lens.agent.backward import NoGradOutputError, with_backward  # noqa: E402
from kernel_lens.agent.context import snapshot  # noqa: E402
from kernel_lens.agent.stages.ops import profile_pass  # noqa: E402
from kernel_lens.analysis.line_attribution import attribute_trace  # noqa: E402

KERNELS = Path(__file__).resolve().parents[2] / "kernels"


@pytest.fixture(scope="module")
def train_step_module() -> Any:
    sys.path.insert(0, str(KERNELS))
    try:
        import train_step

        yield train_step
    finally:
        sys.path.remove(str(KERNELS))


def _profiled_step(mod: Any, tmp_path: Path, *, runs: int) -> Any:
    """kernels/train_step.py's step on a small MLP, called once, then profiled and attributed."""
    model, opt, x, y = mod.make(batch=64, dim=32, hidden=64)
    step = mod.train_step
    step(model, opt, x, y)
    passed = profile_pass(
        lambda: step(model, opt, x, y), step.__code__, device="cpu", runs=runs,
        trace_dir=str(tmp_path),
    )  # fmt: skip
    return attribute_trace(passed.trace, runs=passed.runs)


def _line_of(code: Any, text: str) -> int:
    import inspect

    lines, first = inspect.getsourcelines(code)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.slow
def test_a_cpu_training_step_puts_each_backward_node_on_its_forward_line(
    train_step_module: Any, tmp_path: Path
) -> None:
    step = train_step_module.train_step
    found = _profiled_step(train_step_module, tmp_path, runs=2)
    forward, loss, backward, opt_line = (
        _line_of(step, "out = model(x)"),
        _line_of(step, "loss = F.mse_loss"),
        _line_of(step, "loss.backward()"),
        _line_of(step, "opt.step()"),
    )
    fwd = found.lines[forward].to_json()
    assert {op["name"] for op in fwd["backward"]["ops"]} == {
        "AddmmBackward0",
        "GeluBackward0",
        "TBackward0",
    }
    by_name = {op["name"]: op for op in fwd["backward"]["ops"]}
    assert by_name["AddmmBackward0"]["calls"] == 2  # two Linear layers
    assert by_name["AddmmBackward0"]["dispatch"] == []  # no kernels on CPU: nothing dispatched
    assert [op["name"] for op in found.lines[loss].to_json()["backward"]["ops"]] == [
        "MseLossBackward0"
    ]
    bwd_line = found.lines[backward].to_json()
    # no autograd node is left on the loss.backward() line but the leaves' AccumulateGrad
    assert {op["name"] for op in bwd_line["ops"]} == {"aten::ones_like", "AccumulateGrad"}
    assert bwd_line["backward_pass"]["lines"] == [forward, loss]
    assert bwd_line["backward_pass"]["cpu_us"] > 0
    # SGD with momentum on CPU tensors: a for-loop of in-place ops (foreach is for CUDA)
    assert {op["name"] for op in found.lines[opt_line].to_json()["ops"]} == {
        "aten::mul_",
        "aten::add_",
    }


def _layer(x: Any, w: Any) -> Any:
    h = x @ w
    return torch.relu(h)


def test_profile_with_backward_puts_the_layers_backward_on_its_lines(tmp_path: Path) -> None:
    x = torch.randn(16, 8)
    w = torch.randn(8, 8, requires_grad=True)
    layer = with_backward(_layer, qualname="_layer")
    layer(x, w)
    assert w.grad is not None
    passed = profile_pass(
        lambda: layer(x, w), _layer.__code__, device="cpu", runs=2, trace_dir=str(tmp_path)
    )
    found = attribute_trace(passed.trace, runs=passed.runs)
    mm, relu = _line_of(_layer, "h = x @ w"), _line_of(_layer, "return torch.relu")
    assert [op["name"] for op in found.lines[mm].to_json()["backward"]["ops"]] == ["MmBackward0"]
    assert [op["name"] for op in found.lines[relu].to_json()["backward"]["ops"]] == [
        "ReluBackward0"
    ]


def test_profile_with_backward_needs_an_output_that_requires_grad() -> None:
    layer = with_backward(_layer, qualname="_layer")
    with pytest.raises(NoGradOutputError, match="returned no tensor that requires grad"):
        layer(torch.ones(2, 2), torch.ones(2, 2))


def test_a_cpu_autocast_context_replayed_puts_the_bf16_casts_on_the_line(tmp_path: Path) -> None:
    x = torch.randn(16, 8)
    w = torch.randn(8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
        context = snapshot()
    assert [(a["device_type"], a["dtype"]) for a in context.autocast] == [("cpu", "bfloat16")]
    assert context.grad == "no_grad"

    def run() -> Any:
        with context.applied():
            return _layer(x, w)

    assert run().dtype == torch.bfloat16
    assert _layer(x, w).dtype == torch.float32  # put back after the block
    passed = profile_pass(run, _layer.__code__, device="cpu", runs=1, trace_dir=str(tmp_path))
    found = attribute_trace(passed.trace, runs=1)
    line = _line_of(_layer, "h = x @ w")
    mm = found.lines[line].to_json()
    assert [op["name"] for op in mm["ops"]] == ["aten::matmul"]
    assert "backward" not in mm  # no_grad: no autograd graph, no backward
    # the casts autocast inserts run inside the line's matmul: bf16 copies of x and w
    events = [e for e in passed.trace["traceEvents"] if e.get("ph") == "X"]
    rng = next(e for e in events if e.get("name") == f"src:{line}")
    inside = [
        e
        for e in events
        if e.get("cat") == "cpu_op" and rng["ts"] <= e["ts"] <= rng["ts"] + rng["dur"]
    ]
    casts = [e for e in inside if e["name"] == "aten::_to_copy"]
    assert len(casts) >= 2
    assert any("BFloat16" in str(e.get("args", {}).get("Input type")) for e in inside)


def test_a_cpu_line_lens_splits_its_share_between_the_passes(
    train_step_module: Any, tmp_path: Path
) -> None:
    from kernel_lens.analysis import lens_text

    step = train_step_module.train_step
    found = _profiled_step(train_step_module, tmp_path, runs=1)
    line = found.lines[_line_of(step, "out = model(x)")].to_json("out = model(x)")
    title = lens_text.line_lens_title(line, cuda=False, share="62% of 1.0 ms")
    assert title is not None
    head = title.split(" · ")
    assert head[0] == "62% of 1.0 ms"
    fwd, bwd = int(head[1].removeprefix("fwd ").rstrip("%")), int(head[2].removeprefix("bwd ")[:-1])
    assert fwd + bwd == 100 and bwd > 0
    bpass = lens_text.line_lens_title(
        found.lines[_line_of(step, "loss.backward()")].to_json(), cuda=False
    )
    assert bpass is not None and bpass.startswith("backward pass ")
    assert "CPU under the profiler · spread over lines " in bpass
