"""Issue 39, the smaller items, from a terminal with the real agent: each gets the right kind
and message."""

from __future__ import annotations

from pathlib import Path

import pytest

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


# Its agent must be the CLI's own child: the CLI is the subreaper of what the job left.
@pytest.mark.fresh_agents
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


def _bomb(path: Path, *, lie: bool) -> None:
    """A valid-looking trace of one small event repeated: ~300× smaller gzipped than inflated
    (real traces compress 3–40×); with ``lie`` its trailer claims 1 MB."""
    import gzip
    import io

    event = b'{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{}},'
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as out:
        out.write(b'{"traceEvents":[')
        while buf.tell() < 400_000:
            out.write(event * 20_000)
        out.write(event[:-1] + b"]}")
    data = bytearray(buf.getvalue())
    if lie:
        data[-4:] = (1_000_000).to_bytes(4, "little")
    path.write_bytes(bytes(data))


def _peak_mib(*args: str, limit_kib: int | None = None) -> tuple[int, str, float]:
    """Run the CLI in a child: (exit code, stdout, its peak resident memory in MiB).

    Measured by a small Python in between: a child forked from the test process would count
    the test process's own memory in its peak (Linux keeps the high-water mark across exec)."""
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    wrapper = (
        "import json, resource, subprocess, sys\n"
        "limit = json.loads(sys.argv[1])\n"
        "def cap():\n"
        "    if limit:\n"
        "        resource.setrlimit(resource.RLIMIT_AS, (limit * 1024, limit * 1024))\n"
        "done = subprocess.run(sys.argv[2:], capture_output=True, text=True, preexec_fn=cap)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps([done.returncode, done.stdout, peak]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, json.dumps(limit_kib),
         sys.executable, "-m", "kernel_lens", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    code, out, peak = json.loads(done.stdout)
    return int(code), str(out), float(peak) / 1024


def test_a_gzip_bomb_is_refused_before_it_costs_memory(tmp_path: Path) -> None:
    """Item 6: an honest bomb is refused by its trailer before a byte is inflated; one whose
    trailer lies is stopped as it inflates; under an address-space limit the refusal is still
    a JSON error, never an uncaught MemoryError."""
    import json

    honest, liar = tmp_path / "bomb.json.gz", tmp_path / "liar.json.gz"
    _bomb(honest, lie=False)
    _bomb(liar, lie=True)
    code, out, peak = _peak_mib("trace", "summarize", str(honest), "--json")
    error = json.loads(out)["error"]
    assert code == 1 and error["kind"] == "trace" and "gzip bomb" in error["message"], out
    print(f"honest bomb: peak {peak:.0f} MiB")
    assert peak < 400, f"{peak:.0f} MiB"
    code, out, _ = _peak_mib("trace", "summarize", str(liar), "--json")
    assert code == 1 and "gzip bomb" in json.loads(out)["error"]["message"], out
    code, out, _ = _peak_mib("trace", "summarize", str(liar), "--json", limit_kib=700_000)
    error = json.loads(out)["error"]
    assert code == 1 and error["kind"] == "trace", out
    assert "gzip bomb" in error["message"] or "does not fit" in error["message"], out


def test_a_json_trace_named_pftrace_is_read_as_json(tmp_path: Path) -> None:
    """Item 11: the content decides, not the name (``protobuf wire type 3`` before)."""
    import json
    import shutil

    from tests.conftest import ROOT

    misnamed = tmp_path / "run.pftrace"
    shutil.copy(ROOT / "tests" / "data" / "h200" / "matmul_relu_trace.json", misnamed)
    code, out, err = run_cli("trace", "summarize", str(misnamed), "--json")
    assert code == 0, (out, err)
    same = run_cli(
        "trace", "summarize", str(ROOT / "tests" / "data" / "h200" / "matmul_relu_trace.json"),
        "--json",
    )[1]  # fmt: skip
    assert json.dumps(out, sort_keys=True) == json.dumps(same, sort_keys=True)


def test_an_agent_command_that_never_answers_fails_at_the_jobs_limit(tmp_path: Path) -> None:
    """Item 11: ``--timeout 5`` with an agent command that never says ready: a ``timeout``
    after about 5 s (not silence for the start's own 180 s), and nothing left running."""
    import subprocess
    import time

    silent = tmp_path / "silent.sh"
    silent.write_text("#!/bin/sh\nexec sleep 4321\n")
    silent.chmod(0o755)
    src = tmp_path / "k.py"
    src.write_text("import torch\n\n\n# kernel-lens: inputs = (torch.ones(4),)\ndef f(x):\n"
                   "    return x * 2\n")  # fmt: skip
    started = time.monotonic()
    code, out, err = run_cli(
        "profile", f"{src}::f", "--json", "--timeout", "5", "--agent-command", str(silent),
        timeout=120,
    )  # fmt: skip
    took = time.monotonic() - started
    assert code != 0 and out["error"]["kind"] == "timeout", (out, err)  # type: ignore[index]
    assert "did not start within 5 s (--timeout)" in out["error"]["message"]  # type: ignore[index]
    assert took < 60, took
    left = subprocess.run(["pgrep", "-f", "sleep 4321"], capture_output=True, text=True)
    assert left.stdout.strip() == "", left.stdout
