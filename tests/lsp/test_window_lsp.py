"""A wall-clock window of a long run from the editor (issue 23 item 4): *Profile Script: a
Window…* with ``after 4s`` sends ``after_s``; a script that never ends runs its first seconds
unprofiled and is profiled from its 4th second until the job's time limit cuts it (what was
profiled is kept, labelled partial). Real server, real agent, CPU."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import ROOT
from tests.lsp.client import initialize, line0_of, open_doc
from tests.lsp.client import server_config as _server_config

# A short time limit: the never-ending script is cut about 3 s before it (at ~11 s).
OPTIONS = {"timeoutSeconds": 14, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}
SLEEP_S = 0.05  # forever.py's sleep per iteration


@pytest_lsp.fixture(config=_server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def test_a_window_by_time_profiles_a_never_ending_script_from_its_4th_second(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "forever.py"
    shutil.copy(ROOT / "tests" / "data" / "examples" / "scripts" / "forever.py", path)
    uri = open_doc(client, path)
    # What the command sends for `after 4s` (extension/scriptArgs.ts parseWindow).
    outcome = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.profile",
                arguments=[{"uri": uri, "script": True, "skip": 0, "after_s": 4}],
            )
        ),
        60,
    )
    assert outcome["ok"] is True, outcome
    script = outcome["script"]
    window = script["window"]
    assert window["after_s"] == 4 and window["cut_at_limit"], window
    # No step in forever.py: the window started at the first line past 4 s.
    assert 4 <= window["started_s"] < 6, window
    assert script["partial"]["reason"] == "time limit", script
    report = await asyncio.wait_for(
        client.protocol.send_request_async(
            "kernelLens/report", {"uri": uri, "function": "<script>"}
        ),
        30,
    )
    line = line0_of(path, "y = torch.ones(1000) * step") + 1
    [row] = [r for r in report.profile.lines if r.line == line]
    assert any(op.name == "aten::ones" for op in row.ops), row
    print(script, row.hits)
    # Only the iterations after the start were profiled (``wall_s`` is the window's): at most
    # one per sleep in it, far fewer than the whole run, cut ~11 s in, would give.
    window_s, into_run = float(script["wall_s"]), float(script["partial"]["after_s"])
    assert 9 <= into_run <= 14 and into_run == pytest.approx(
        window["started_s"] + window_s, abs=0.01
    )
    assert 10 <= row.hits <= window_s / SLEEP_S + 2, (row.hits, script)
    assert row.hits < into_run / SLEEP_S * 0.8, (row.hits, script)
