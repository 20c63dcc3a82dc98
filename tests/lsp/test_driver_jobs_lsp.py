"""Every job on a function whose inputs come from a driver (issue 23): once a quick fix has
profiled ``Mlp.forward`` of ``mlp.py`` from a launch configuration of its driver, the Sweep and
Generated Code of that function run the same driver, with its arguments and environment, and
so get the same inputs and ``self`` (real server, real agent, CPU)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import ROOT
from tests.lsp.client import code_actions, initialize, line0_of, open_doc
from tests.lsp.client import server_config as _server_config

OPTIONS = {"timeoutSeconds": 240, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 3}}
LAUNCH = (
    "Take the inputs from launch configuration “Drive MLP (dim 24)” "
    "(drive_mlp.py → mlp.py, --dim 24)"
)


@pytest_lsp.fixture(config=_server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def _command(client: LanguageClient, command: str, args: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[args])
    )


async def test_sweep_and_generated_code_use_the_driver_the_quick_fix_chose(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "examples" / "deep", ws)
    model = ws / "mlp.py"
    uri = open_doc(client, model)
    sweep_args = {"uri": uri, "function": "Mlp.forward", "param": "chunks", "values": [1, 2, 4]}
    # Before a driver is chosen the layer has no inputs: the sweep cannot run.
    failed = await _command(client, "kernelLens.sweep", sweep_args)
    assert failed["ok"] is False and failed["error"]["kind"] == "inputs", failed
    profiled = await _command(client, "kernelLens.profile", {"uri": uri, "function": "Mlp.forward"})
    assert profiled["ok"] is False and profiled["error"]["kind"] == "inputs", profiled
    fixes = await code_actions(client, uri, line0_of(model, "def forward(self, x, chunks"))
    [chosen] = [command for title, command in fixes if title == LAUNCH]
    [args] = chosen.arguments or []
    assert args["env"] == {"KL_BATCH": "6"}
    outcome = await _command(client, chosen.command, args)
    assert outcome["ok"] is True, outcome

    # The sweep: the driver's call (chunks=4, an (6, 4, 24) tensor: its --dim and KL_BATCH).
    swept = await _command(client, "kernelLens.sweep", sweep_args)
    assert swept["ok"] is True, swept
    assert swept["current"] == 4
    rows = {row["value"]: row for row in swept["rows"]}
    assert sorted(rows) == [1, 2, 4] and all(row["error"] is None for row in rows.values())
    assert all(row["bytes"] == 2 * 6 * 4 * 24 * 4 for row in rows.values()), rows

    # Generated Code: torch.compile of the driver's layer, on the driver's inputs.
    compiled = await asyncio.wait_for(
        client.protocol.send_request_async(
            "kernelLens/generatedCode", {"uri": uri, "function": "Mlp.forward"}
        ),
        240,
    )
    assert compiled.function == "Mlp.forward" and compiled.code
    forward = line0_of(model, "parts = [self.out") + 1
    assert any(forward in (k.lines or []) for k in compiled.kernels), compiled.kernels
    assert not (ws / "driven_mlp.txt").exists()  # every run stopped at the driver's call
