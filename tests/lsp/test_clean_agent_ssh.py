"""Stopping a job stops the user's code on the other side of ``ssh`` (issue 14, defect 11).

A real sshd on localhost (a free port, a temporary host key and an authorized key) carries the
agent: ``kernelLens.agentCommand`` = ``["ssh", …, "localhost", "env", "PYTHONPATH=…", python]``.
A function that spins forever writes its pid first; after the timeout (through the language
server) or a cancel (through the client), that remote process must be gone, and after shutdown
no agent of the server is left. Skips, saying why, when sshd cannot be started
(``scripts/ci-apt.sh`` installs it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from kernel_lens.client import AgentClient
from kernel_lens.wire.errors import ProfileError
from tests.lsp.client import click, initialize, lenses, open_doc, shutdown_if_running
from tests.lsp.remote_servers import UnavailableError, sshd

SERVER_DIR = Path(__file__).resolve().parent.parent.parent / "server"
MARKER = f"kl_ssh_test_{uuid.uuid4().hex[:12]}"
SPIN = """\
import os


# kernel-lens: inputs = (1,)
def spins(x):
    with open(os.environ.get("KL_PID_FILE", "/tmp/kl-pid"), "w") as f:
        f.write(str(os.getpid()))
    while True:
        x += 1
"""


@pytest.fixture(scope="module")
def ssh_prefix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """An argv prefix that starts this interpreter on localhost through a real sshd
    (:func:`tests.lsp.remote_servers.sshd`)."""
    home = tmp_path_factory.mktemp("sshd")
    pid_file = home / "spin.pid"
    servers = contextlib.ExitStack()
    try:
        login = servers.enter_context(sshd(home))
    except UnavailableError as exc:
        pytest.skip(str(exc))
    with servers:
        yield [
            *login,
            "env",
            f"PYTHONPATH={SERVER_DIR}",
            f"KL_PID_FILE={pid_file}",
            sys.executable,
            "-X",
            MARKER,  # names every remote agent of this module, for the leftovers check
        ]


def _pid_file(prefix: list[str]) -> Path:
    return Path(next(a for a in prefix if a.startswith("KL_PID_FILE=")).split("=", 1)[1])


def _agents() -> list[int]:
    """Processes of this module's remote agents (``-X MARKER`` on their command line)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if MARKER.encode() in cmdline and b"ssh" not in cmdline[0] and state != "Z":
            out.append(int(entry))
    return out


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


async def _wait_for(check: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(0.1)
    return bool(check())


async def _spinning_pid(pid_file: Path) -> int:
    assert await _wait_for(pid_file.exists, 60), "the function never started"
    await asyncio.sleep(0.1)
    return int(pid_file.read_text())


async def test_cancel_stops_the_remote_agent(ssh_prefix: list[str], tmp_path: Path) -> None:
    pid_file = _pid_file(ssh_prefix)
    pid_file.unlink(missing_ok=True)
    path = tmp_path / "spin.py"
    path.write_text(SPIN)
    client = AgentClient(ssh_prefix, [].append, local=False, spare=False)
    cancelled = asyncio.Event()
    job = asyncio.ensure_future(
        client.run({"path": str(path), "function": "spins"}, timeout=120, cancelled=cancelled)
    )
    pid = await _spinning_pid(pid_file)
    assert not _gone(pid)
    cancelled.set()
    with pytest.raises(ProfileError) as info:
        await job
    assert info.value.kind == "cancelled"
    assert await _wait_for(lambda: _gone(pid), 10), f"remote agent {pid} outlived its cancel"
    await client.close()


def server_config() -> ClientServerConfig:
    return ClientServerConfig(server_command=[sys.executable, "-m", "kernel_lens.lsp"])


@pytest_lsp.fixture(config=server_config())
async def lsp(lsp_client: LanguageClient) -> Any:
    yield lsp_client
    await shutdown_if_running(lsp_client)


async def test_timeout_stops_the_remote_agent_and_shutdown_leaves_none(
    lsp: LanguageClient, ssh_prefix: list[str], tmp_path: Path
) -> None:
    pid_file = _pid_file(ssh_prefix)
    pid_file.unlink(missing_ok=True)
    await initialize(lsp, {"agentCommand": ssh_prefix, "timeoutSeconds": 8})
    path = tmp_path / "spin.py"
    path.write_text(SPIN)
    uri = open_doc(lsp, path)
    line0 = SPIN.splitlines().index("def spins(x):")
    lens = next(
        item
        for item in await lenses(lsp, uri)
        if item.range.start.line == line0
        and item.command
        and item.command.command == "kernelLens.profile"
    )
    job = asyncio.ensure_future(click(lsp, lens))
    pid = await _spinning_pid(pid_file)
    outcome = await job
    assert outcome["ok"] is False and outcome["error"]["kind"] == "timeout", outcome
    # The loop's line: its body, or its `while` (the jump back), wherever the stack dump found it.
    loop = [SPIN.splitlines().index(text) + 1 for text in ("    while True:", "        x += 1")]
    assert outcome["error"]["line"] in loop, outcome
    assert await _wait_for(lambda: _gone(pid), 10), f"remote agent {pid} outlived its timeout"

    await lsp.shutdown_session()
    assert await _wait_for(lambda: not _agents(), 10), f"agents left: {_agents()}"
