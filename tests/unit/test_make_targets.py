"""The README's three commands do what it says (``make -n``: the commands, nothing run).

``make check`` had lost its rule in a Makefile edit and answered "Nothing to be done" (it is
.PHONY), which reads like success: the inner loop checked nothing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _dry_run(target: str) -> str:
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def test_the_readme_names_each_make_command_it_documents() -> None:
    readme = (ROOT / "README.md").read_text()
    for target in ("run", "test", "check"):
        assert re.search(rf"^make {target}\b", readme, re.M), target


def test_make_check_lints_types_and_runs_the_unit_and_typescript_tests() -> None:
    commands = _dry_run("check")
    assert "ruff check" in commands
    assert "mypy" in commands
    assert re.search(r"pytest .*tests/unit", commands), commands
    assert "npm run check" in commands


def test_make_test_runs_every_suite() -> None:
    # `make test` runs its phases through sub-makes: their targets are what it names
    commands = _dry_run("test")
    for part in ("setup-py", "test-py-parallel", "test-checks", "test-py-serial", "test-e2e"):
        assert part in commands, part
    # tests/unit leaves the parallel pass only to run beside the editor tests
    assert "PYTEST_SCOPE=--ignore=tests/unit" in commands and "test-py-unit-idle" in commands
    unit = _dry_run("test-py-unit-idle")
    assert re.search(r"pytest .*-m \"not serial\".* tests/unit", unit), unit
    checks = _dry_run("test-checks")
    for part in ("lint", "typecheck", "test-ts", "vsix"):
        assert part in checks, part


@pytest.mark.slow  # collects the whole suite (~15 s)
def test_the_serial_pass_names_every_module_with_a_serial_test() -> None:
    """The serial pass collects only the modules that say ``mark.serial``: a test marked serial
    any other way would be run by no pass at all."""
    import sys

    named = set(re.search(r"-m serial --durations=\d+(.*)", _dry_run("test-py-serial"))[1].split())
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
         "-m", "serial", "tests"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    marked = {line.split("::")[0] for line in out.stdout.splitlines() if "::" in line}
    assert marked, out.stdout[-2000:] + out.stderr[-2000:]
    assert marked <= named, marked - named
