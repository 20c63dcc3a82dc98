"""The tests are laid out by purpose (issue 37 item 4): a test module imports its helpers from a
helper module (``tests/conftest.py``, ``tests/lsp/client.py``, ``tests/lsp/answers.py``,
``tests/traces.py``, …), never from another test module, so that moving or deleting a test file
breaks no other; and each editor end-to-end scenario is a file of its own under
``tests/e2e/scenarios/``, listed once in the index the runner reads."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

TESTS = ROOT / "tests"
SCENARIOS = TESTS / "e2e" / "scenarios"


def _is_test_module(module: str) -> bool:
    return any(part.startswith("test_") for part in module.split("."))


def _imported_modules(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """``(line, dotted module)`` of each import in ``path`` (of ``package``, by default the
    folder's under the repository), relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    if package is None:
        package = ".".join(path.relative_to(ROOT).parts[:-1])
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
                # ``from . import test_x`` names the module in the alias
                found += [(node.lineno, f"{base}.{a.name}") for a in node.names if not node.module]
            found.append((node.lineno, base))
    return found


def _test_code() -> list[Path]:
    """The tests' own Python files: not the user code they profile (``tests/data/*/``, the
    e2e fixtures)."""
    return [
        path
        for path in sorted(TESTS.rglob("*.py"))
        if not ({"data", "fixtures"} & set(path.relative_to(TESTS).parts[:-1]))
        or path.parent == TESTS / "data"
    ]


def test_no_test_module_imports_another() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _test_code()
        for line, module in _imported_modules(path)
        if module.startswith("tests.") and _is_test_module(module)
    ]
    assert offenders == [], "move the shared helper to a helper module:\n" + "\n".join(offenders)


def test_the_checker_sees_each_form_of_import(tmp_path: Path) -> None:
    """The check's teeth: absolute, relative and ``from . import`` forms are all caught."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from tests.lsp.test_protocol_answers import ask\n"
        "import tests.cli.test_cli_endings\n"
        "from .test_drivers_lsp import lenses_at\n"
        "from . import test_script_lsp\n"
        "from tests.lsp.client import open_doc\n"
    )
    modules = [m for _, m in _imported_modules(probe, "tests.lsp") if _is_test_module(m)]
    assert modules == [
        "tests.lsp.test_protocol_answers",
        "tests.cli.test_cli_endings",
        "tests.lsp.test_drivers_lsp",
        "tests.lsp.test_script_lsp",
    ], modules


def _index_entries() -> list[tuple[int, str]]:
    index = (SCENARIOS / "index.mjs").read_text()
    return [(int(n), f) for n, f in re.findall(r"\[\s*(\d+)\s*,\s*\"\./([^\"]+)\"\s*\]", index)]


def test_each_e2e_scenario_is_a_file_of_its_own_in_the_index() -> None:
    entries = _index_entries()
    numbers = [n for n, _ in entries]
    # listed in run order (each scenario builds on the one before), every number once
    assert len(set(numbers)) == len(numbers), numbers
    files = sorted(p.name for p in SCENARIOS.glob("*.mjs") if p.name != "index.mjs")
    assert sorted(f for _, f in entries) == files, "a scenario file missing from the index"
    for number, name in entries:
        assert name.startswith(f"{number:03d}-"), (number, name)
        text = (SCENARIOS / name).read_text()
        assert len(re.findall(r"^export default ", text, re.M)) == 1, name
        assert re.search(rf'^  name:\s*"{number}\. ', text, re.M), (
            f"{name} is not scenario {number}"
        )
    assert not (TESTS / "e2e" / "scenarios.mjs").exists()
