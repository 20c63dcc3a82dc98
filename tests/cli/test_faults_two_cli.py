"""Issue 39, the smaller items, from a terminal with the real agent: each gets the right kind
and message."""

from __future__ import annotations

from pathlib import Path

from kernel_lens.analysis.functions import SourceSyntaxError, find_functions
from tests.conftest import run_cli


def _deep(tmp_path: Path) -> Path:
    path = tmp_path / "deep.py"
    path.write_text(
        "import torch\n\n\n"
        "# kernel-lens: inputs = (torch.ones(4),)\n"
        "def f(x):\n"
        f"    y = {'-' * 200_000}x\n"
        "    return y\n"
    )
    return path


def test_a_file_nested_too_deeply_is_a_syntax_error_on_its_line(tmp_path: Path) -> None:
    """Item 10: Python's parser gives up on depth with MemoryError, not SyntaxError: the file
    gets a ``syntax`` error on its deepest line, never ``internal``."""
    path = _deep(tmp_path)
    try:
        find_functions(path.read_text())
    except SourceSyntaxError as exc:
        assert exc.line == 6 and "nested too deeply" in str(exc)
    else:
        raise AssertionError("a file Python cannot parse was parsed")
    code, out, err = run_cli("profile", f"{path}::f", "--json", timeout=300)
    assert code != 0
    assert out["error"]["kind"] == "syntax", out  # type: ignore[index]
    assert out["error"]["line"] == 6  # type: ignore[index]
    assert "nested too deeply for Python to parse" in out["error"]["message"]  # type: ignore[index]


NO_STEPS = """import torch

x = torch.ones(256)
for _ in range(3):
    x = x * 1.5
print(float(x.sum()))
"""


def test_a_window_on_a_script_without_steps_says_the_whole_run(tmp_path: Path) -> None:
    """Item 8: ``--steps 3`` on a script that never ends a step profiles the whole run, and
    says so instead of ``no step profiled``."""
    path = tmp_path / "nosteps.py"
    path.write_text(NO_STEPS)
    code, out, err = run_cli("profile", str(path), "--steps", "3", timeout=300)
    assert code == 0, err
    assert "no step profiled" not in out, out
    assert "the whole run profiled: no step was seen" in out, out
    assert "x = x * 1.5" in out  # and its lines are there
