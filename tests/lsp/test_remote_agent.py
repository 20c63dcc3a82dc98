"""The agent on another machine, for real (issue 27 item 5): ``ssh`` through a real sshd on
loopback and ``srun`` through a real one-node Slurm, from the CLI and the language server.

"Another machine" is a remote ``python3`` (``remote-python``, the command after ``ssh host`` or
``srun``) that cannot see the workspace: it runs in its own mount namespace with an empty tmpfs
over the workspace folder, in another folder, with another ``HOME`` and ``TMPDIR``, and without
``kernel_lens`` importable (``python -S``: no ``.pth`` of the virtual environment, only its
packages on ``PYTHONPATH``). The fixture checks both before any test. So a profile that works
proves that the agent's code travelled over stdin, that the job carried the workspace modules
the file imports (a package with a relative import, and a plain module), and the trace, written
in the remote ``HOME``'s cache, came back into the local cache. A dropped connection (the sshd
session killed mid-job) is a clear error, and the next click works.

Skips, saying why, when sshd, Slurm or ``unshare`` cannot run here (``scripts/ci-apt.sh``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import sysconfig
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.client import click_profile, initialize, open_doc
from tests.lsp.remote_servers import UnavailableError, slurm, sshd

MARKER = f"kl_remote_test_{uuid.uuid4().hex[:12]}"
MAIN = """\
import os
import time

import torch

import plain_helper
from helpers.scale import scale


# kernel-lens: inputs = (torch.ones(128, 128),)
def work(x):
    y = scale(x)
    return plain_helper.add_one(y)


# kernel-lens: inputs = (1,)
def sleepy(x):
    with open(os.path.join(os.environ["HOME"], "sleepy.pid"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
    return x
"""
FILES = {
    "main.py": MAIN,
    "plain_helper.py": "def add_one(t):\n    return t + 1\n",
    "helpers/__init__.py": "",
    "helpers/consts.py": "FACTOR = 3.0\n",
    "helpers/scale.py": "from .consts import FACTOR\n\n\ndef scale(t):\n    return t * FACTOR\n",
}


class Remote:
    """The workspace, the "remote" python and where its side writes."""

    def __init__(self, root: Path) -> None:
        self.ws = root / "ws"
        self.home = root / "remote-home"
        self.tmp = root / "remote-tmp"
        self.elsewhere = root / "remote-cwd"
        for folder in (self.ws, self.home, self.tmp, self.elsewhere):
            folder.mkdir()
        for name, text in FILES.items():
            (self.ws / name).parent.mkdir(exist_ok=True)
            (self.ws / name).write_text(text)
        self.python = root / "remote-python"
        inner = (
            'mount -t tmpfs kl-hidden "$0" && cd "$1" && shift && exec env -i '
            f"PATH=/usr/bin:/bin HOME={self.home} TMPDIR={self.tmp} "
            f"PYTHONPATH={sysconfig.get_paths()['purelib']} "
            f'{sys.executable} -S -X {MARKER} "$@"'
        )
        self.python.write_text(
            "#!/bin/sh\n"
            "# The remote machine's python3: the workspace hidden, another HOME and cwd.\n"
            f'exec unshare -m sh -c {shlex.quote(inner)} {self.ws} {self.elsewhere} "$@"\n'
        )
        self.python.chmod(0o755)

    @property
    def remote_traces(self) -> Path:
        return self.home / ".cache" / "kernel-lens" / "traces"


def _check_remote(argv: list[str], env: dict[str, str] | None = None) -> None:
    """The remote python sees neither kernel_lens nor the workspace (or the test cannot prove
    anything: skip); it does have torch."""
    probe = "import os,sys,importlib.util as u;print([u.find_spec(m) is None for m in ('kernel_lens','helpers','torch')], os.listdir(sys.argv[1]))"  # noqa: E501
    ws = argv[-1]
    out = subprocess.run(
        [*argv[:-1], "-c", shlex.quote(probe) if argv[0] == "ssh" else probe, ws],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    if out.returncode != 0:
        pytest.skip(f"the remote python cannot start here: {out.stderr.strip()[-400:]}")
    assert out.stdout.strip() == "[True, True, False] []", out.stdout + out.stderr


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Remote:
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -m (a mount namespace to hide the workspace) is not allowed here")
    return Remote(tmp_path_factory.mktemp("remote"))


@pytest.fixture(scope="module")
def ssh_python(remote: Remote, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """``["ssh", …, "localhost", remote-python]`` through a real sshd."""
    try:
        with sshd(tmp_path_factory.mktemp("sshd")) as prefix:
            argv = [*prefix, str(remote.python)]
            _check_remote([*argv, str(remote.ws)])
            yield argv
    except UnavailableError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def srun_python(
    remote: Remote, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[list[str], dict[str, str]]]:
    """``["srun", "-N1", "-n1", remote-python]`` on a real one-node Slurm, and its environment."""
    try:
        with slurm(tmp_path_factory.mktemp("slurm")) as env:
            argv = ["srun", "-N1", "-n1", "--immediate=30", str(remote.python)]
            _check_remote([*argv, str(remote.ws)], env)
            yield argv, env
    except UnavailableError as exc:
        pytest.skip(str(exc))


def _cli(argv: list[str], env: dict[str, str], remote: Remote, cache: Path) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernel_lens.cli",
            "profile",
            f"{remote.ws / 'main.py'}::work",
            "--json",
            "--reps",
            "5",
            "--budget-ms",
            "50",
            "--timeout",
            "200",
            "--agent-command",
            shlex.join(argv),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=240,
        env={**env, "KERNEL_LENS_CACHE": str(cache)},
        cwd=remote.ws,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _line_ops(result: dict[str, Any], source: str) -> list[str]:
    line = next(x for x in result["lines"] if x["source"].strip() == source)
    return [op["name"] for op in line["ops"]]


def _assert_came_back(result: dict[str, Any], remote: Remote, cache: Path) -> None:
    trace = Path(result["trace_path"])
    assert trace.parent == cache / "traces", trace
    assert trace.is_file() and json.loads(trace.read_text())["traceEvents"]
    # Written on the other side (its HOME's cache), brought back whole under the same name.
    assert (remote.remote_traces / trace.name).read_bytes() == trace.read_bytes()
    # The job's private copy of the workspace is gone from the remote TMPDIR, and the agent.
    assert not [p for p in remote.tmp.iterdir() if p.name.startswith("kernel-lens-job-")]
    deadline = time.monotonic() + 15
    while _agents() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _agents(), f"remote agents left: {_agents()}"


def test_cli_profiles_through_ssh_with_the_workspace_modules(
    ssh_python: list[str], remote: Remote, tmp_path: Path
) -> None:
    cache = tmp_path / "local-cache"
    result = _cli(ssh_python, dict(os.environ), remote, cache)
    assert result["function"] == "work"
    # The helpers ran there: their ops are on the lines that called them.
    assert "aten::mul" in _line_ops(result, "y = scale(x)")
    assert "aten::add" in _line_ops(result, "return plain_helper.add_one(y)")
    _assert_came_back(result, remote, cache)


def test_cli_profiles_through_srun_on_a_real_slurm(
    srun_python: tuple[list[str], dict[str, str]], remote: Remote, tmp_path: Path
) -> None:
    argv, env = srun_python
    cache = tmp_path / "local-cache"
    result = _cli(argv, env, remote, cache)
    assert "aten::mul" in _line_ops(result, "y = scale(x)")
    _assert_came_back(result, remote, cache)
    # srun was stopped so that it ended its step: the allocation is released, not leaked.
    deadline = time.monotonic() + 30
    while True:
        queue = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True)
        if queue.returncode == 0 and not queue.stdout.strip():
            break
        assert time.monotonic() < deadline, f"jobs left in Slurm: {queue.stdout}{queue.stderr}"
        time.sleep(0.5)


def server_config() -> ClientServerConfig:
    return ClientServerConfig(server_command=[sys.executable, "-m", "kernel_lens.lsp"])


@pytest_lsp.fixture(config=server_config())
async def lsp(lsp_client: LanguageClient) -> Any:
    yield lsp_client


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _ssh_session_of(pid: int) -> int:
    """The sshd process serving the connection that ``pid`` runs under."""
    while pid > 1:
        pid = _ppid(pid)
        if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
            return pid
    raise AssertionError("no sshd above the agent")


async def _wait_for_file(path: Path, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        await asyncio.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


def _agents() -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if MARKER.encode() in cmdline and cmdline[0].endswith(b"python") and state != "Z":
            out.append(int(entry))
    return out


async def test_lsp_through_ssh_lenses_land_a_dropped_connection_is_clear_and_the_next_click_works(
    lsp: LanguageClient, ssh_python: list[str], remote: Remote, tmp_path: Path
) -> None:
    await initialize(lsp, {"agentCommand": ssh_python, "timeoutSeconds": 150})
    path = remote.ws / "main.py"
    # An unsaved edit: the buffer is what runs there, not the file.
    text = MAIN.replace("return plain_helper.add_one(y)", "return plain_helper.add_one(y) * 2")
    uri = open_doc(lsp, path, text)

    first = await click_profile(lsp, uri, "def work", path)
    assert first["ok"] is True, first

    pid_file = remote.home / "sleepy.pid"
    pid_file.unlink(missing_ok=True)
    job = asyncio.ensure_future(click_profile(lsp, uri, "def sleepy", path))
    pid = int(await _wait_for_file(pid_file, 120))
    os.kill(_ssh_session_of(pid), signal.SIGKILL)
    dropped = await asyncio.wait_for(job, 60)
    assert dropped["ok"] is False, dropped
    message = dropped["error"]["message"]
    assert dropped["error"]["kind"] == "crash" and "the connection to localhost dropped" in message
    assert "the next job starts a new agent" in message

    again = await click_profile(lsp, uri, "def work", path)
    assert again["ok"] is True, again

    await lsp.shutdown_session()
    deadline = time.monotonic() + 15
    while _agents() and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert not _agents(), f"remote agents left: {_agents()}"
