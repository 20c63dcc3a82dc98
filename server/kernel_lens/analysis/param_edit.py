"""Text edits that make a value an integer parameter's default. Pure."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from kernel_lens.analysis.functions import find_function

__all__ = ["TextEdit", "int_defaults", "int_parameters", "parameter_edits"]


@dataclass(frozen=True)
class TextEdit:
    """Replace 0-based ``line``'s columns ``start``..``end`` with ``text``."""

    line: int
    start: int
    end: int
    text: str


def _function_node(source: str, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    info = find_function(source, name=qualname)
    if info is None:
        return None
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.lineno == info.def_line
        ):
            return node
    return None


def _defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    out: dict[str, ast.expr] = {}
    for arg, default in zip(
        positional[len(positional) - len(args.defaults) :], args.defaults, strict=True
    ):
        out[arg.arg] = default
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if kw_default is not None:
            out[arg.arg] = kw_default
    return out


def int_parameters(source: str, qualname: str) -> dict[str, int]:
    """Parameters of the function whose default is an integer literal (``BLOCK_SIZE=1024``)."""
    node = _function_node(source, qualname)
    if node is None:
        return {}
    return int_defaults(node)


def int_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """:func:`int_parameters` of a parsed function."""
    return {
        name: default.value
        for name, default in _defaults(node).items()
        if isinstance(default, ast.Constant) and type(default.value) is int
    }


def parameter_edits(source: str, qualname: str, param: str, value: int) -> list[TextEdit]:
    """Edits for the literal default of ``param`` and its entry in the inputs directive."""
    node = _function_node(source, qualname)
    info = find_function(source, name=qualname)
    if node is None or info is None:
        return []
    edits: list[TextEdit] = []
    default = _defaults(node).get(param)
    if (
        isinstance(default, ast.Constant)
        and type(default.value) is int
        and default.end_col_offset is not None
        and default.lineno == default.end_lineno
    ):
        edits.append(
            TextEdit(default.lineno - 1, default.col_offset, default.end_col_offset, str(value))
        )
    if info.inputs_line is not None:
        line_text = source.splitlines()[info.inputs_line - 1]
        pattern = re.compile(rf"""(["']{re.escape(param)}["']\s*:\s*)(-?\d+)""")
        m = pattern.search(line_text)
        if m:
            edits.append(TextEdit(info.inputs_line - 1, m.start(2), m.end(2), str(value)))
    return edits
