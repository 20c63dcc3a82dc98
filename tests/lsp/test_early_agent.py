"""The agent started with the language server, before its imports (issue 28: the cold click).

The extension asks for it (``KERNEL_LENS_EARLY_AGENT=1``, the workspace folder in
``KERNEL_LENS_EARLY_AGENT_CWD``) only in a trusted workspace with the default agent. These tests
start the real server as the extension does and look at its child processes: the agent is there
before ``initialize`` is sent, the first profile runs on it (the server's log names its pid), and
an untrusted ``initialize`` stops it before any job could reach it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.client import ROOT, click_profile, initialize, open_doc

OPTIONS = {"timeoutSeconds": 120, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}
EARLY_ENV = {
    **os.environ,
    "KERNEL_LENS_EARLY_AGENT": "1",
    "KERNEL_LENS_EARLY_AGENT_CWD": str(ROOT),
}
SQUARE = ROOT / "kernels" / "square.py"


def _config() -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[sys.executable, "-m", "kernel_lens.lsp"], server_env=EARLY_ENV
    )


def _agents_under(server_pid: int) -> list[int]:
    """Live agent processes whose parent is the server (zombies left out)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == server_pid and state != "Z" and b"kernel_lens.agent.__main__" in cmdline:
            found.append(int(entry))
    return found


async def _until(probe: Any, seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


def _server_pid(client: LanguageClient) -> int:
    server = client._server  # the server process pytest-lsp started
    assert server is not None
    return server.pid


async def _early_agent(client: LanguageClient) -> tuple[int, int]:
    """The server's pid and its one agent, started before ``initialize`` (nothing sent yet)."""
    server_pid = _server_pid(client)
    early = await _until(lambda: _agents_under(server_pid), 10)
    assert early, "no agent started before initialize"
    assert len(early) == 1, early
    return server_pid, early[0]


@pytest_lsp.fixture(config=_config())
async def early_client(lsp_client: LanguageClient) -> Any:
    yield  # initialised by each test (trusted or not)
    await lsp_client.shutdown_session()


async def test_the_agent_starts_with_the_server_and_runs_the_first_profile(
    early_client: LanguageClient,
) -> None:
    lsp_client = early_client
    server_pid, early = await _early_agent(lsp_client)
    await initialize(lsp_client, {**OPTIONS, "workspaceTrusted": True})
    uri = open_doc(lsp_client, SQUARE)
    result = await click_profile(lsp_client, uri, "def square_three_ways(", SQUARE)
    assert result and result.get("ok") is not False, result
    said = [m.message for m in lsp_client.log_messages if "started with the server" in m.message]
    assert said == [f"[agent] agent: taking the agent started with the server (pid {early})"], (
        said or [m.message for m in lsp_client.log_messages][-20:]
    )


async def test_an_untrusted_workspace_stops_the_early_agent_at_initialize(
    early_client: LanguageClient,
) -> None:
    lsp_client = early_client
    server_pid, _ = await _early_agent(lsp_client)
    await initialize(lsp_client, {**OPTIONS, "workspaceTrusted": False})
    lsp_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=SQUARE.as_uri(), language_id="python", version=1, text=SQUARE.read_text()
            )
        )
    )
    gone = await _until(lambda: not _agents_under(server_pid), 10)
    assert gone, f"agents still running in an untrusted workspace: {_agents_under(server_pid)}"
    with_pid = [
        m.message for m in lsp_client.log_messages if "started with the server" in m.message
    ]
    assert with_pid == [], with_pid
