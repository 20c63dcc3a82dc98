"""A layer of ``model.py`` profiled from its driver in the editor (issue 23 item 1): the file
never calls the function, so the ``inputs`` diagnostic offers the workspace's scripts that
import the module and the Python launch configurations of ``.vscode/launch.json`` as quick
fixes; the chosen one profiles the function with its driver's inputs and is remembered."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import ROOT
from tests.lsp.client import (
    code_actions,
    hover_text,
    initialize,
    lenses,
    lenses_at,
    line0_of,
    open_doc,
)
from tests.lsp.client import server_config as _server_config

OPTIONS = {"timeoutSeconds": 120, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 3}}


@pytest_lsp.fixture(config=_server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def test_the_inputs_diagnostic_offers_the_drivers_and_the_chosen_one_is_remembered(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "examples" / "deep", ws)
    model = ws / "model.py"
    uri = open_doc(client, model)
    # Attention.forward is a method of a class the file never instantiates nor calls.
    failed = await _profile(client, uri)
    assert failed["ok"] is False and failed["error"]["kind"] == "inputs", failed
    def0 = line0_of(model, "def forward(self, x):")  # Attention's, the first
    fixes = await code_actions(client, uri, def0)
    titles = [title for title, _ in fixes]
    # asked before the client attached our diagnostic (VS Code's first Ctrl+.): the same fixes
    bare = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=def0, character=4),
                end=types.Position(line=def0, character=4),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert [a.title for a in bare or []] == titles, (bare, titles)
    launch = (
        "Take the inputs from launch configuration “Drive (dim 24)” (drive.py → model.py, --dim 24)"
    )
    assert launch in titles, titles
    # Scripts that import the module, launch configurations first; never a library file.
    assert all("pkg" not in t and "helpers" not in t for t in titles), titles
    assert not any("“Current file”" in t for t in titles)  # ${file}: not a driver
    [chosen] = [command for title, command in fixes if title == launch]
    assert chosen is not None and chosen.command == "kernelLens.profile"
    [args] = chosen.arguments or []
    assert args["driver"] == str(ws / "drive.py") and args["argv"] == ["--dim", "24"]
    assert args["env"] == {"KL_FIXTURE": "from-launch-json"}
    outcome = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=chosen.command, arguments=[args])
    )
    assert outcome["ok"] is True, outcome
    first = lenses_at(await lenses(client, uri), def0)
    assert first and "ms" in first[0], first
    assert not (ws / "driven.txt").exists()  # the driver stopped at the call
    assert not [d for d in client.diagnostics.get(uri, []) if d.range.start.line == def0]
    hover = await hover_text(client, uri, line0_of(model, "y = torch.nn.functional"), 12)
    call = line0_of(ws / "drive.py", "loss = net(x)") + 1
    assert hover is not None and (
        f"Inputs: inputs from drive.py:{call} (loss = net(x) → Net.forward → Block.forward → "
        "Attention.forward)" in hover
    ), hover
    # Profiled again without a driver in the arguments: the remembered one gives the inputs.
    again = await _profile(client, uri)
    assert again["ok"] is True, again


async def _profile(client: LanguageClient, uri: str) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile", arguments=[{"uri": uri, "function": "Attention.forward"}]
        )
    )


async def test_a_script_that_wants_arguments_offers_them_and_remembers_them(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "examples" / "deep", ws)
    # (no launch configuration: its args would be the script's own, issue 41)
    (ws / ".vscode" / "launch.json").unlink()
    driver, model = ws / "drive.py", ws / "model.py"
    uri = open_doc(client, driver)

    async def run(argv: list[str] | None = None) -> Any:
        args: dict[str, Any] = {"uri": uri, "script": True}
        if argv is not None:
            args["argv"] = argv
        return await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="kernelLens.profile", arguments=[args])
        )

    failed = await run()
    assert failed["ok"] is False and failed["error"]["kind"] == "exit", failed
    first = [lens for lens in await lenses(client, uri) if lens.range.start.line == 0]
    [ask] = [x for x in first if x.command and x.command.command == "kernelLens.scriptArguments"]
    assert ask.command is not None and ask.command.title == "$(terminal) Arguments…"
    assert list(ask.command.arguments or []) == [{"uri": uri, "argv": [], "suggested": None}]
    # What the input box sends back: a run with the arguments.
    outcome = await run(["--dim", "16"])
    assert outcome["ok"] is True, outcome
    assert (ws / "driven.txt").is_file()
    first = lenses_at(await lenses(client, uri), 0)
    assert "$(terminal) args: --dim 16" in first, first
    # Remembered: Re-run Script without arguments in the request runs with them again.
    (ws / "driven.txt").unlink()
    again = await run()
    assert again["ok"] is True, again
    assert (ws / "driven.txt").is_file()
    # And the model file the driver called shows its lines from this run.
    model_uri = open_doc(client, model)
    head = lenses_at(await lenses(client, model_uri), 0)
    assert head and head[0].startswith("$(run-all) from drive.py, "), head


async def test_a_window_of_a_scripts_steps_from_the_editor(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "examples" / "deep", ws)
    uri = open_doc(client, ws / "train_window.py")
    outcome = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile",
            arguments=[{"uri": uri, "script": True, "skip": 1, "steps": 2}],
        )
    )
    assert outcome["ok"] is True, outcome
    window = outcome["script"]["window"]
    assert window["steps_profiled"] == 2 and window["stopped"], window
    assert sorted(p.name for p in ws.glob("step*.txt")) == ["step0.txt", "step1.txt"]
