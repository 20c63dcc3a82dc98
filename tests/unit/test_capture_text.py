"""The pieces of captured inputs that need no agent: the inputs text of hovers and the CLI,
the suggested directive, argument descriptions, and finding the target's code object."""

from __future__ import annotations

import torch

from kernel_lens.agent.stages.capture import describe_value, find_code, suggested_directive
from kernel_lens.agent.types import ProfileError
from kernel_lens.analysis.functions import find_function
from kernel_lens.analysis.lens_text import hover_markdown, inputs_args_text, inputs_text

CAPTURED = {
    "source": "captured",
    "label": "captured",
    "line": 31,
    "call": "time_fn → square_2",
    "setup_s": 0.4213,
    "args": [
        {
            "name": "a",
            "type": "Tensor",
            "shape": [10000, 10000],
            "dtype": "float32",
            "device": "cuda:0",
            "repr": "tensor(…)",
        },
        {"name": "n", "type": "int", "shape": None, "dtype": None, "device": None, "repr": "3"},
    ],
}


def test_inputs_text_for_each_source() -> None:
    assert inputs_text(CAPTURED, "/w/pytorch_square.py") == (
        "captured at pytorch_square.py:31 (time_fn → square_2) after 0.42 s of the script"
    )
    assert inputs_text({"source": "directive", "line": 11, "args": []}) == "directive, line 11"
    assert inputs_text({"source": "factory", "label": "square_inputs()", "line": 4}) == (
        "square_inputs()"
    )
    assert inputs_text("directive") is None  # a result from before the inputs object
    method = {
        "source": "directive",
        "line": 3,
        "self": {"class": "Block", "how": "module instance model", "name": "model", "made_at": 27},
    }
    assert inputs_text(method) == "directive, line 3; self = model, line 27"
    fresh = {"source": "none", "self": {"class": "Block", "how": "Block() with no arguments"}}
    assert inputs_text(fresh) == "none (no parameters); self = Block() with no arguments"


def test_inputs_args_text() -> None:
    assert inputs_args_text(CAPTURED) == ["a: Tensor float32[10000, 10000] cuda:0", "n: int 3"]


def test_the_hover_ends_with_the_inputs() -> None:
    result = {
        "path": "/w/pytorch_square.py",
        "device_kind": "cpu",
        "device": "CPU",
        "profiled_runs": 1,
        "inputs": CAPTURED,
        "lines": [
            {
                "line": 5,
                "source": "return a * a",
                "ops": [
                    {"name": "aten::mul", "dispatch": [], "calls": 1, "cpu_us": 3.0, "kernels": []}
                ],
            }
        ],
    }
    text = hover_markdown(result, 5)
    assert text is not None
    assert "Inputs: captured at pytorch_square.py:31 (time_fn → square_2)" in text
    assert "- `a: Tensor float32[10000, 10000] cuda:0`" in text


def test_suggested_directive_from_the_parameter_names() -> None:
    one = find_function("def f(x):\n    return x\n", name="f")
    two = find_function("class A:\n    def g(self, x, scale):\n        pass\n", name="A.g")
    assert one is not None and two is not None
    assert suggested_directive(one) == "# kernel-lens: inputs = (torch.randn(1024),)  # x"
    assert suggested_directive(two) == (
        "# kernel-lens: inputs = ((), dict(x=torch.randn(1024), scale=torch.randn(1024)))"
    )


def test_the_suggested_directive_survives_the_agent_boundary() -> None:
    # The agent and the client pass kind, message, line and traceback only.
    fix = "# kernel-lens: inputs = (torch.randn(1024),)  # x"
    sent = ProfileError("inputs", f"no call; or this directive above the def: {fix}", 4)
    assert sent.suggested_directive == fix
    assert ProfileError.from_json(sent.to_json()).to_json()["suggested_directive"] == fix
    assert "suggested_directive" not in ProfileError("runtime", "boom").to_json()


def test_describe_value() -> None:
    t = describe_value("a", torch.ones(2, 3, dtype=torch.float64))
    assert (t.type, t.shape, t.dtype, t.device) == ("Tensor", [2, 3], "float64", "cpu")
    assert t.label() == "Tensor float64[2, 3] cpu"
    n = describe_value("n", 7)
    assert (n.type, n.shape, n.repr) == ("int", None, "7")
    long = describe_value("s", "x" * 500)
    assert len(long.repr) <= 60


def test_find_code_takes_the_definition_at_the_line() -> None:
    text = (
        "def f(x):\n    return 1\n\n\ndef f(x):\n    return 2\n\n\n"
        "class A:\n    def f(self):\n        pass\n"
    )
    code = compile(text, "m.py", "exec")
    first, second = find_code(code, "f", 1), find_code(code, "f", 5)
    method = find_code(code, "A.f", 10)
    assert first is not None and first.co_firstlineno == 1
    assert second is not None and second.co_firstlineno == 5
    assert method is not None and method.co_qualname == "A.f"
    assert find_code(code, "g", 10) is None
