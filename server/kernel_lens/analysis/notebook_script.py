"""A notebook's code cells as one virtual script, with the map between its lines and the cells'.

The agent cannot see a live Jupyter kernel, so a notebook is profiled by running its code cells
in order, as a script. Pure: cells in, script text and line map out. The script has exactly one
line per cell line (cells joined in order, no separator lines), so every line maps both ways.
IPython syntax a script cannot run is neutralised on its own line, with a note: a line magic
(``%timeit …``) or shell line (``!pip …``) becomes ``pass`` at the same indentation, and a cell
with a cell magic (``%%time``, ``%%bash``) becomes comments (the cell is skipped).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "VIRTUAL_SUFFIX",
    "Cell",
    "NotebookScript",
    "build_script",
    "virtual_path",
]

#: The virtual script's name beside the notebook: ``<folder>/<name>.kernel_lens.py``.
VIRTUAL_SUFFIX = ".kernel_lens.py"


@dataclass(frozen=True)
class Cell:
    """One code cell.

    Attributes:
        uri: the cell document's URI (``vscode-notebook-cell:…``).
        text: its text.
        number: its 1-based position in the notebook, markdown cells counted (as VS Code's
            "Cell 3 of 4"); 0 when unknown (the position among code cells is used).
    """

    uri: str
    text: str
    number: int = 0


@dataclass(frozen=True)
class NotebookScript:
    """Code cells joined into one script.

    Attributes:
        text: the script.
        lines: for each 1-based script line ``n``, ``lines[n - 1]`` = ``(cell index, 1-based
            line in that cell)``.
        cells: the cells, in order.
        starts: each cell's first script line (1-based), by cell index.
        notes: ``(cell index, cell line, message)`` for every line that was neutralised.
    """

    text: str
    lines: tuple[tuple[int, int], ...]
    cells: tuple[Cell, ...]
    starts: tuple[int, ...]
    notes: tuple[tuple[int, int, str], ...] = field(default=())

    def to_cell(self, line: int) -> tuple[str, int] | None:
        """``(cell uri, 1-based cell line)`` of 1-based script ``line``; ``None`` outside."""
        if not 1 <= line <= len(self.lines):
            return None
        index, cell_line = self.lines[line - 1]
        return self.cells[index].uri, cell_line

    def to_script(self, uri: str, cell_line: int) -> int | None:
        """The 1-based script line of 1-based ``cell_line`` of cell ``uri``; ``None`` outside."""
        index = self.index_of(uri)
        if index is None:
            return None
        count = _line_count(self.cells[index].text)
        if not 1 <= cell_line <= max(count, 1):
            return None
        return self.starts[index] + cell_line - 1

    def cell_number(self, index: int) -> int:
        """The 1-based number users see for cell ``index`` (see :attr:`Cell.number`)."""
        return self.cells[index].number or index + 1

    def describe(self, line: int) -> str | None:
        """``cell 3, line 2`` for 1-based script ``line``; ``None`` outside."""
        if not 1 <= line <= len(self.lines):
            return None
        index, cell_line = self.lines[line - 1]
        return f"cell {self.cell_number(index)}, line {cell_line}"

    def index_of(self, uri: str) -> int | None:
        """The index of cell ``uri``, or ``None``."""
        return next((i for i, c in enumerate(self.cells) if c.uri == uri), None)

    def cell_range(self, index: int) -> tuple[int, int]:
        """First and last script line (1-based, inclusive) of cell ``index`` (last < first for
        an empty cell)."""
        start = self.starts[index]
        return start, start + _line_count(self.cells[index].text) - 1

    def upto(self, index: int) -> str:
        """The script's text of the cells up to and including cell ``index``."""
        _, last = self.cell_range(index)
        return "".join(line + "\n" for line in self.text.splitlines()[:last])


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _neutralised(line: str) -> tuple[str, str | None]:
    """The script's version of one cell line and, when it changed, why."""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith("%"):
        return f"{indent}pass  # kernel-lens: {stripped[:60]}", (
            f"IPython magic skipped in the script run: {stripped.split()[0]}"
        )
    if stripped.startswith("!"):
        return f"{indent}pass  # kernel-lens: {stripped[:60]}", (
            f"shell line skipped in the script run: {stripped[:40]}"
        )
    return line, None


def build_script(cells: Sequence[Cell]) -> NotebookScript:
    """Join ``cells`` (code cells, in notebook order) into one script. Pure.

    A cell whose first non-blank line is a cell magic (``%%…``) is turned into comments: its
    body is not Python. Other lines starting with ``%`` or ``!`` become ``pass``.
    """
    out: list[str] = []
    lines: list[tuple[int, int]] = []
    starts: list[int] = []
    notes: list[tuple[int, int, str]] = []
    for index, cell in enumerate(cells):
        starts.append(len(out) + 1)
        cell_lines = cell.text.splitlines()
        first = next((ln.strip() for ln in cell_lines if ln.strip()), "")
        cell_magic = first.startswith("%%")
        for number, line in enumerate(cell_lines, start=1):
            if cell_magic:
                text = f"# kernel-lens (cell magic, skipped): {line}" if line.strip() else ""
                if line.strip() == first and not any(n[0] == index for n in notes):
                    notes.append(
                        (index, number, f"cell magic skipped in the script run: {first.split()[0]}")
                    )
            else:
                text, why = _neutralised(line)
                if why is not None:
                    notes.append((index, number, why))
            out.append(text)
            lines.append((index, number))
    text = "".join(line + "\n" for line in out)
    return NotebookScript(text, tuple(lines), tuple(cells), tuple(starts), tuple(notes))


def virtual_path(notebook_path: str) -> str:
    """``<folder>/<name>.kernel_lens.py`` for ``<folder>/<name>.ipynb`` (it is never written:
    the agent gets its text)."""
    folder, name = os.path.split(notebook_path)
    stem = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
    return os.path.join(folder, stem + VIRTUAL_SUFFIX)
