"""``KERNEL_LENS_TEST_CPU``'s list (tests/conftest.py) charges each test the agents forked for it.

The agents of a test session fork from one warm template per worker; they are the template's
children, not the test's. The list used to leave them out and charge the whole template — every
agent it forked — to the worker's last test (a skipped GPU test led a run's list at 169 CPU s).
A pytest run of three CLI tests in a subprocess, its own template, its list read back.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.slow

LISTED = re.compile(r"^\s+([0-9.]+)s cpu  (tests/\S+)$", re.M)
TEMPLATES = re.compile(r"^\s+([0-9.]+)s cpu  the warm templates", re.M)
LOGGED = re.compile(r": agent \d+: ([0-9.]+) CPU s, exit [^,]*, (tests/\S+) \((?:setup|call)\)$")


def test_each_test_is_charged_its_forked_agents_and_the_template_is_said_apart(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    # its own templates, not this session's
    env.pop("KERNEL_LENS_AGENT_FORK_SERVER", None)
    env.pop("KERNEL_LENS_TEST_LSP_FORK", None)
    env.update(KERNEL_LENS_TEST_CPU="10", KERNEL_LENS_TEST_FORK_SERVER="1")
    base = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         f"--basetemp={base}", "tests/cli/test_profile_cli.py::test_each_variant"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    listed = {test: float(cpu) for cpu, test in LISTED.findall(proc.stdout)}
    assert len(listed) == 3, proc.stdout[-2000:]
    logged: dict[str, float] = {}
    for line in (base / "fork-server.log").read_text().splitlines():
        found = LOGGED.search(line)
        if found:
            logged[found.group(2)] = logged.get(found.group(2), 0.0) + float(found.group(1))
    assert set(logged) == set(listed), (logged, listed)  # each test's agent was forked
    for test, cpu in listed.items():
        # its own CLI process, plus its agent as the template logged it
        assert logged[test] <= cpu < logged[test] + 5, (test, cpu, logged)
    templates = TEMPLATES.search(proc.stdout)
    assert templates is not None, proc.stdout[-2000:]
    # the template imported torch and the stages: more than any one test, on no test's line
    assert float(templates.group(1)) > max(listed.values()) / 2, (templates.group(0), listed)
