"""A notebook's code cells as one virtual script: text, line map both ways, IPython lines."""

from __future__ import annotations

import ast

from kernel_lens.analysis.notebook_script import Cell, build_script, virtual_path

CELLS = [
    Cell("cell:a", "import torch\n%matplotlib inline\n"),
    Cell("cell:b", "def f(x):\n    !echo hi\n    return x * 2"),
    Cell("cell:c", "%%time\ny = f(1)\n"),
    Cell("cell:d", ""),
    Cell("cell:e", "z = f(torch.ones(2))\n"),
]


def test_script_keeps_one_line_per_cell_line_and_parses() -> None:
    script = build_script(CELLS)
    lines = script.text.splitlines()
    assert len(lines) == 2 + 3 + 2 + 0 + 1
    assert lines[0] == "import torch"
    assert lines[1].startswith("pass  # kernel-lens: %matplotlib")
    assert lines[3].startswith("    pass  # kernel-lens: !echo")  # indentation kept
    assert lines[4] == "    return x * 2"
    assert lines[5].startswith("# ") and lines[6].startswith("# ")  # the %%time cell
    assert lines[7] == "z = f(torch.ones(2))"
    ast.parse(script.text)


def test_line_map_both_ways() -> None:
    script = build_script(CELLS)
    assert script.starts == (1, 3, 6, 8, 8)
    assert script.to_cell(1) == ("cell:a", 1)
    assert script.to_cell(5) == ("cell:b", 3)
    assert script.to_cell(8) == ("cell:e", 1)
    assert script.to_cell(0) is None and script.to_cell(9) is None
    for n in range(1, 9):
        found = script.to_cell(n)
        assert found is not None
        assert script.to_script(*found) == n
    assert script.to_script("cell:b", 4) is None
    assert script.to_script("cell:zz", 1) is None
    assert script.cell_range(1) == (3, 5)
    assert script.cell_range(3) == (8, 7)  # empty


def test_notes_name_each_skipped_line() -> None:
    notes = build_script(CELLS).notes
    assert [(i, line) for i, line, _ in notes] == [(0, 2), (1, 2), (2, 1)]
    assert "%matplotlib" in notes[0][2]
    assert "shell line" in notes[1][2]
    assert "cell magic" in notes[2][2] and "%%time" in notes[2][2]


def test_upto_stops_after_the_target_cell() -> None:
    script = build_script(CELLS)
    assert script.upto(1).splitlines() == script.text.splitlines()[:5]
    assert script.upto(4) == script.text


def test_virtual_path_sits_beside_the_notebook() -> None:
    assert virtual_path("/w/nb/lecture.ipynb") == "/w/nb/lecture.kernel_lens.py"


def test_describe_names_the_notebook_cell_and_line() -> None:
    script = build_script(CELLS)
    assert script.describe(5) == "cell 2, line 3"  # code cells only: their own order
    numbered = build_script([Cell("a", "x = 1", number=1), Cell("b", "y = 2\nz = 3", number=3)])
    assert numbered.describe(3) == "cell 3, line 2"  # a markdown cell 2 sits between them
    assert numbered.describe(4) is None
