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


LONG_STEPS = """import time

import torch

x = torch.ones(64)
for step in range(10_000):
    x = x * 1.0001  # kernel-lens: step
    time.sleep(0.01)
"""


def test_ctrl_c_in_a_script_window_keeps_what_was_profiled(tmp_path: Path) -> None:
    """Item 3: Ctrl-C during ``--steps`` of a long script keeps the part that ran, as the
    editor's Cancel does (printed, labelled, exit 130); the agent does not outlive the CLI."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    path = tmp_path / "long.py"
    path.write_text(LONG_STEPS)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kernel_lens", "profile", str(path), "--steps", "5000"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        started = time.monotonic()
        for line in proc.stderr:  # wait until the run is inside the script's loop
            if any(f"line {n} of long.py" in line for n in (6, 7, 8)):
                break
            assert time.monotonic() - started < 240, "the script never started"
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (out, err)
    assert "partial the run was stopped (Cancel, Ctrl-C)" in out, out
    assert "x = x * 1.0001" in out and "aten::mul" in out, out
    # nothing the job started outlives it
    left = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True)
    assert left.stdout.strip() == "", left.stdout


CRASH_WITH_A_DAEMON = """import os
import subprocess

import torch


# kernel-lens: inputs = (torch.ones(4),)
def f(x):
    subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
    os._exit(3)
"""


def test_a_crashed_agents_new_session_child_does_not_outlive_the_job(tmp_path: Path) -> None:
    """Item 4: user code starts a process in a new session, then its agent dies (``os._exit``):
    the process is adopted by the client (a subreaper) and stopped when the job ends — the
    same code path the language server's client takes."""
    import random
    import subprocess

    marker = str(random.randint(10_000, 99_999))
    path = tmp_path / "crash.py"
    path.write_text(CRASH_WITH_A_DAEMON.replace("{marker}", marker))
    try:
        code, out, err = run_cli("profile", f"{path}::f", "--json", timeout=300)
        assert code != 0 and out["error"]["kind"] == "crash", (out, err)  # type: ignore[index]
        assert "stopped 1 process(es) the job left running" in err, err
        left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
        assert left.stdout.strip() == "", f"the job's process outlived it: {left.stdout}"
    finally:
        subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)
