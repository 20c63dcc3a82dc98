"""The quick fix's directive rebuilt from an earlier run's inputs: evaluated, it gives values of
the described shapes, dtypes and devices."""

from __future__ import annotations

import ast

import torch

from kernel_lens.analysis.inputs_directive import directive_from_inputs, value_expression


def _evaluate(directive: str) -> object:
    expr = directive.split("=", 1)[1].split("  #", 1)[0].strip()
    ast.parse(expr, mode="eval")
    return eval(expr, {"torch": torch})


def test_tensors_and_scalars_round_trip() -> None:
    inputs = {
        "source": "captured",
        "args": [
            {"name": "x", "type": "Tensor", "shape": [4, 3], "dtype": "float64", "device": "cpu"},
            {"name": "idx", "type": "Tensor", "shape": [5], "dtype": "int32", "device": "cpu"},
            {"name": "mask", "type": "Tensor", "shape": [2, 2], "dtype": "bool", "device": "cpu"},
            {"name": "scale", "type": "float", "repr": "0.5"},
            {"name": "n", "type": "int", "repr": "7"},
        ],
    }
    directive = directive_from_inputs(inputs)
    assert directive is not None and directive.startswith("# kernel-lens: inputs = ((), dict(")
    args, kwargs = _evaluate(directive)  # type: ignore[misc]
    assert args == ()
    assert kwargs["x"].shape == (4, 3) and kwargs["x"].dtype == torch.float64
    assert kwargs["idx"].shape == (5,) and kwargs["idx"].dtype == torch.int32
    assert kwargs["mask"].dtype == torch.bool and kwargs["mask"].shape == (2, 2)
    assert kwargs["scale"] == 0.5 and kwargs["n"] == 7


def test_one_tensor_is_a_one_tuple_named_in_a_comment() -> None:
    inputs = {"args": [{"name": "a", "type": "Tensor", "shape": [64, 32], "dtype": "float32"}]}
    directive = directive_from_inputs(inputs)
    assert directive == "# kernel-lens: inputs = (torch.randn(64, 32),)  # a"
    (value,) = _evaluate(directive)  # type: ignore[misc]
    assert value.shape == (64, 32) and value.dtype == torch.float32


def test_a_cuda_device_is_kept() -> None:
    arg = {"name": "a", "type": "Tensor", "shape": [8], "dtype": "float16", "device": "cuda:0"}
    assert value_expression(arg) == 'torch.randn(8, dtype=torch.float16, device="cuda")'
    arg["device"] = "cuda:1"
    assert value_expression(arg) == 'torch.randn(8, dtype=torch.float16, device="cuda:1")'


def test_a_value_that_cannot_be_rebuilt_gives_no_directive() -> None:
    module = {"name": "model", "type": "Block", "repr": "Block((lin): Linear(…))"}
    tensor = {"name": "a", "type": "Tensor", "shape": [2], "dtype": "float32"}
    assert directive_from_inputs({"args": [tensor, module]}) is None
    assert directive_from_inputs({"args": []}) is None
    assert directive_from_inputs(None) is None
    assert value_expression({"name": "s", "type": "str", "repr": "<not a literal>"}) is None
