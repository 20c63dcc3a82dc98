"""A ``# kernel-lens: inputs = …`` directive rebuilt from the inputs of an earlier run (their
shapes, dtypes and devices), for the quick fix offered when the script no longer reaches the
function (issue 10 item 3)."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["directive_from_inputs", "value_expression"]

_FLOATS = {"float16", "bfloat16", "float32", "float64", "half", "float", "double"}
_COMPLEX = {"complex64", "complex128"}
_INTS = {"int8", "int16", "int32", "int64", "uint8", "long", "int", "short"}
_SCALARS = {"int", "float", "bool", "str", "NoneType", "complex"}


def _device_kw(device: Any) -> str:
    if not device or str(device) == "cpu":
        return ""
    text = str(device)
    return f', device="{"cuda" if text == "cuda:0" else text}"'


def value_expression(arg: Mapping[str, Any]) -> str | None:
    """Python source that makes a value like ``arg`` (an ``inputs.args`` entry), or ``None``
    when it cannot be rebuilt from its description (a module, a custom object)."""
    shape = arg.get("shape")
    dtype = arg.get("dtype")
    if arg.get("type") == "Tensor" and isinstance(shape, list) and isinstance(dtype, str):
        dims = ", ".join(str(int(d)) for d in shape)
        size = f"({dims},)" if len(shape) == 1 else f"({dims})"
        device = _device_kw(arg.get("device"))
        if dtype in _FLOATS or dtype in _COMPLEX:
            return _randn(shape, dtype, device)
        if dtype in _INTS:
            return f"torch.randint(0, 100, {size}, dtype=torch.{dtype}{device})"
        if dtype == "bool":
            return f"torch.zeros({size}, dtype=torch.bool{device})"
        return None
    if arg.get("type") in _SCALARS:
        text = arg.get("repr")
        if not isinstance(text, str):
            return None
        try:
            ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return None
        return text
    return None


def _randn(shape: Sequence[int], dtype: str, device: str) -> str:
    dims = ", ".join(str(int(d)) for d in shape)
    if not shape:
        dims = "()"
    dtype_kw = "" if dtype == "float32" else f", dtype=torch.{dtype}"
    return f"torch.randn({dims}{dtype_kw}{device})"


def directive_from_inputs(inputs: Mapping[str, Any] | None) -> str | None:
    """The directive that rebuilds ``inputs`` (a result's ``inputs`` object): positional
    arguments in order, as keywords by their names; ``None`` when any argument cannot be
    rebuilt, or there are none."""
    if not inputs:
        return None
    args = inputs.get("args") or []
    if not args:
        return None
    parts: list[tuple[str, str]] = []
    for arg in args:
        expr = value_expression(arg)
        name = arg.get("name")
        if expr is None or not isinstance(name, str) or not name.isidentifier():
            return None
        parts.append((name, expr))
    if len(parts) == 1:
        name, expr = parts[0]
        return f"# kernel-lens: inputs = ({expr},)  # {name}"
    kw = ", ".join(f"{name}={expr}" for name, expr in parts)
    return f"# kernel-lens: inputs = ((), dict({kw}))"
