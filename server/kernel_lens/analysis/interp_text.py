"""Show Values' text: the hover of a kernel line's values under Triton's interpreter (each block
whole, a 2-D block as a grid with a heat map, masked lanes marked), the diagnostics' words, the
kernel lens's title, and the launcher functions of a kernel in a file's text. Pure."""

from __future__ import annotations

import ast
import math
from typing import Any

from kernel_lens.analysis.safe_text import md_code, md_fence, md_text

__all__ = [
    "SHADES",
    "heat_rows",
    "kernel_launchers",
    "line_hover",
    "mask_for",
    "values_lens_title",
    "with_hovers",
]

#: The heat map's shades, lowest to highest; a masked lane is ``·``.
SHADES = " ░▒▓█"
#: The widest heat map row, and the most rows.
HEAT_COLS = 64
HEAT_ROWS = 32
#: The most columns and rows of numbers in a hover grid.
GRID_COLS = 8
GRID_ROWS = 16


def kernel_launchers(text: str, kernel: str) -> list[str]:
    """Qualified names of the functions of ``text`` whose body launches ``kernel[grid](…)``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found: list[str] = []

    def launches(node: ast.AST) -> bool:
        return any(
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Subscript)
            and isinstance(sub.func.value, ast.Name)
            and sub.func.value.id == kernel
            for sub in ast.walk(node)
        )

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and launches(node):
                found.append(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def _pid(values: list[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def values_lens_title(result: dict[str, Any]) -> str:
    """The kernel lens once values were shown: the program, the grid, where they ran."""
    grid = " × ".join(str(g) for g in result.get("grid", []))
    problems = len(result.get("oob") or [])
    tail = f" · $(warning) {problems} out of bounds" if problems else ""
    return (
        f"$(symbol-variable) Values: program {_pid(result.get('pid', []))} of {grid} · "
        f"interpreter{tail}"
    )


def mask_for(lines: list[dict[str, Any]], line: int, name: str, shape: list[int]) -> Any:
    """The mask that applies to a block of ``line``: the last bool block of the same shape bound
    on that line or before it (``mask`` for ``x = tl.load(…, mask=mask)``); ``None`` if none."""
    found: dict[str, Any] | None = None
    for row in lines:
        if row["line"] > line:
            break
        for value in row["values"]:
            if value["name"] == name and row["line"] == line:
                continue
            if value.get("kind") == "block" and value.get("dtype") == "bool":
                if list(value.get("shape") or []) == list(shape) and "data" in value:
                    found = value
    return found


def _grid_shape(shape: list[int], size: int) -> tuple[int, int]:
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    cols = min(size, HEAT_COLS) or 1
    return math.ceil(size / cols), cols


def heat_rows(data: list[Any], shape: list[int], mask: list[Any] | None) -> list[str]:
    """A block as rows of shades (lowest ``' '`` … highest ``'█'``), masked lanes ``·``; a 1-D
    block wraps every 64 lanes."""
    numbers = [v for v in data if isinstance(v, int | float) and not isinstance(v, bool)]
    if not numbers:
        return []
    lo, hi = min(numbers), max(numbers)
    rows, cols = _grid_shape(shape, len(data))
    out: list[str] = []
    for r in range(min(rows, HEAT_ROWS)):
        cells = []
        for c in range(min(cols, HEAT_COLS)):
            i = r * cols + c
            if i >= len(data):
                break
            v = data[i]
            if mask is not None and i < len(mask) and not mask[i]:
                cells.append("·")
            elif not isinstance(v, int | float) or isinstance(v, bool):
                cells.append("?")
            else:
                level = 0 if hi == lo else int((v - lo) / (hi - lo) * (len(SHADES) - 1) + 0.5)
                cells.append(SHADES[level])
        out.append("".join(cells))
    return out


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "·"
    if isinstance(v, float):
        return f"{v:.4g}"
    if v is None:
        return "nan"
    return str(v)


def _grid_lines(data: list[Any], shape: list[int], mask: list[Any] | None) -> list[str]:
    rows, cols = _grid_shape(shape, len(data)) if len(shape) == 2 else (0, 0)
    if len(shape) != 2:  # 1-D: rows of 8, the first and last lanes when it is long
        cols = GRID_COLS
        rows = math.ceil(len(data) / cols)
    cells = [
        "·" if mask is not None and i < len(mask) and not mask[i] else _cell(v)
        for i, v in enumerate(data)
    ]
    width = max((len(c) for c in cells), default=1)
    shown_rows = list(range(rows))
    if rows > GRID_ROWS:
        half = GRID_ROWS // 2
        shown_rows = [*range(half), -1, *range(rows - half, rows)]
    out: list[str] = []
    for r in shown_rows:
        if r < 0:
            out.append("…")
            continue
        row = cells[r * cols : (r + 1) * cols]
        more = len(row) > GRID_COLS
        row = row[:GRID_COLS]
        label = f"[{r}]" if len(shape) == 2 else f"[{r * cols}]"
        out.append(f"{label:>7} " + " ".join(c.rjust(width) for c in row) + (" …" if more else ""))
    return out


def _value_md(value: dict[str, Any], mask: dict[str, Any] | None) -> list[str]:
    head = md_code(value["text"])
    data = value.get("data")
    if not isinstance(data, list) or not data:
        return [f"- {head}"]
    shape = [int(s) for s in value.get("shape") or [len(data)]]
    mask_data = mask.get("data") if mask is not None and mask is not value else None
    if value.get("dtype") == "bool":
        mask_data = None
    parts = [f"{head}"]
    if mask_data is not None and mask is not None:
        parts.append(f"masked lanes · (by {md_code(mask['name'])})" if mask.get("masked") else "")
    if value.get("truncated"):
        parts.append(f"first {len(data)} elements")
    if value.get("kind") == "pointers" and value.get("arg"):
        parts.append(f"offsets into {md_code(value['arg'])}")
    lines = [" · ".join(p for p in parts if p), ""]
    lines += md_fence(_grid_lines(data, shape, mask_data))
    if value.get("dtype") != "bool" and value.get("kind") == "block":
        heat = heat_rows(data, shape, mask_data)
        if heat and len(data) > 1:
            lines += ["", f"heat map ({md_text(SHADES.strip())}: low → high, · masked)", ""]
            lines += md_fence(heat)
    return lines + [""]


def line_hover(result: dict[str, Any], row: dict[str, Any]) -> str:
    """The Markdown hover of one line's values (the whole blocks; labels say where they ran)."""
    grid = " × ".join(str(g) for g in result.get("grid", []))
    passes = f" · pass {row['hit']} of {row['hits']}" if row.get("hits", 1) > 1 else ""
    out = [
        f"**{md_text(result.get('kernel', ''))}** · program {_pid(result.get('pid', []))} of "
        f"grid {grid}{passes}",
        "",
        f"*{md_text(result.get('label', 'Triton interpreter'))}*",
        "",
    ]
    lines = result.get("lines", [])
    for value in row["values"]:
        mask = mask_for(lines, row["line"], value["name"], list(value.get("shape") or []))
        out += _value_md(value, mask)
    return "\n".join(out).rstrip() + "\n"


def with_hovers(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with each line's ``hover`` Markdown added."""
    for row in result.get("lines", []):
        row["hover"] = line_hover(result, row)
    return result
