"""Arguments and drivers, chosen once and kept (issue 41 items 1 and 2), through the real
server: an argparse script given arguments once is then the driver of a layer in another file
with them; a ``--key=value`` script (nanoGPT's configurator.py) that fails on a device it was
not given offers its CPU arguments; a driver is changed after a failure and cleared; the choice
survives closing the file (it is kept in the store, not in the document's state)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import ROOT
from tests.lsp.client import code_actions, initialize, lenses, lenses_at, line0_of, open_doc
from tests.lsp.client import server_config as _server_config

OPTIONS = {"timeoutSeconds": 120, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 3}}

#: nanoGPT's way: module-level globals, overridden by ``--key=value`` read from sys.argv by
#: configurator.py (tests/data/examples/nanogpt_like: nanoGPT's, in miniature).
CONFIGURATOR = (
    ROOT / "tests" / "data" / "examples" / "nanogpt_like" / "configurator.py"
).read_text()

BENCH_SYNTH = """\
import torch
from model import Config, Net

batch_size = 2
dim = 16
device = 'cuda'
compile = True
exec(open('configurator.py').read())

net = Net(Config(dim=dim)).to(device)
x = torch.randn(batch_size, 8, dim, device=device)
if compile:
    net = torch.compile(net)
loss = net(x)
"""


@pytest_lsp.fixture(config=_server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "examples" / "deep", ws)
    (ws / ".vscode" / "launch.json").unlink()
    (ws / "configurator.py").write_text(CONFIGURATOR)
    (ws / "bench_synth.py").write_text(BENCH_SYNTH)
    return ws


async def _command(client: LanguageClient, command: str, args: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[args])
    )


async def _profile(client: LanguageClient, uri: str, **more: Any) -> Any:
    return await _command(
        client, "kernelLens.profile", {"uri": uri, "function": "Attention.forward", **more}
    )


async def test_arguments_given_once_are_used_when_the_script_drives_a_layer(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = _workspace(tmp_path)
    drive_uri = open_doc(client, ws / "drive.py")
    # drive.py's Arguments… (what the input box sends): kept, not run yet
    kept = await _command(
        client, "kernelLens.setScriptArguments", {"uri": drive_uri, "argv": ["--dim", "32"]}
    )
    assert kept == {"ok": True}
    info = await _command(client, "kernelLens.scriptArgumentsOf", {"uri": drive_uri})
    assert info["argv"] == ["--dim", "32"] and info["source"] == "set"
    assert info["reader"] == "argparse" and info["form"] == "--option value"
    assert lenses_at(await lenses(client, drive_uri), 0)[-1] == "$(terminal) args: --dim 32"
    # The layer in model.py: its inputs error offers drive.py with those arguments.
    model = ws / "model.py"
    uri = open_doc(client, model)
    failed = await _profile(client, uri)
    assert failed["ok"] is False and failed["error"]["kind"] == "inputs", failed
    def0 = line0_of(model, "def forward(self, x):")
    fixes = await code_actions(client, uri, def0)
    title = "Take the inputs from drive.py --dim 32 (drive.py → model.py)"
    assert title in [t for t, _ in fixes], fixes
    [command] = [c for t, c in fixes if t == title]
    assert command is not None
    done = await _command(client, command.command, (command.arguments or [])[0])
    assert done["ok"] is True, done  # argparse got --dim 32: no "sys.argv[1:] = []"
    row = lenses_at(await lenses(client, uri), def0)
    assert "$(arrow-right) inputs from drive.py --dim 32" in row, row
    # Closed and opened again: the driver is kept (the store, not the document's state).
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    uri = open_doc(client, model)
    again = await _profile(client, uri)
    assert again["ok"] is True, again
    choices = await _command(
        client, "kernelLens.driverChoices", {"uri": uri, "function": "Attention.forward"}
    )
    assert choices["current"] == "drive.py --dim 32"
    assert choices["candidates"][0]["label"] == "drive.py --dim 32"
    assert choices["candidates"][1]["kind"] == "none"
    # The arguments changed once more: the driver's next run uses them.
    await _command(
        client, "kernelLens.setScriptArguments", {"uri": drive_uri, "argv": ["--dim", "8"]}
    )
    assert "$(arrow-right) inputs from drive.py --dim 8" in lenses_at(
        await lenses(client, uri), def0
    )
    shapes = await _profile(client, uri)
    assert shapes["ok"] is True, shapes


async def test_a_key_value_driver_that_needs_a_gpu_is_given_cpu_arguments_then_changed(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = _workspace(tmp_path)
    model = ws / "model.py"
    uri = open_doc(client, model)
    def0 = line0_of(model, "def forward(self, x):")
    bench = ws / "bench_synth.py"
    failed = await _profile(client, uri, driver=str(bench))
    assert failed["ok"] is False, failed
    assert "CUDA" in failed["error"]["message"], failed
    # Ctrl+. on the failure: the script's CPU arguments in its own form, then other drivers
    fixes = await code_actions(client, uri, def0)
    titles = [t for t, _ in fixes]
    assert "Run bench_synth.py on the CPU" in titles, titles
    assert "Change the Driver" in titles, titles
    assert "Clear the Driver (bench_synth.py): its own inputs" in titles, titles
    [cpu] = [c for t, c in fixes if t == "Run bench_synth.py on the CPU"]
    assert cpu is not None and cpu.command == "kernelLens.scriptArguments"
    [args] = cpu.arguments or []
    assert args["suggested"] == ["--device=cpu", "--compile=False"]
    assert args["then"] == {"uri": uri, "function": "Attention.forward"}
    # What the input box does with them: keep them for bench_synth.py, profile the layer again
    await _command(
        client, "kernelLens.setScriptArguments", {"uri": bench.as_uri(), "argv": args["suggested"]}
    )
    ok = await _profile(client, uri)
    assert ok["ok"] is True, ok
    row = lenses_at(await lenses(client, uri), def0)
    # (clipped in the row; its tooltip and the picker have all of it)
    assert "$(arrow-right) inputs from bench_synth.py --device=cpu --compile=F…" in row, row
    # Changed to another driver from the picker's list, then cleared
    choices = await _command(
        client, "kernelLens.driverChoices", {"uri": uri, "function": "Attention.forward"}
    )
    labels = [c["label"] for c in choices["candidates"]]
    assert labels[0] == "bench_synth.py --device=cpu --compile=False", labels
    assert "drive.py" in labels, labels
    changed = await _command(
        client,
        "kernelLens.setDriver",
        {
            "uri": uri,
            "function": "Attention.forward",
            "kind": "script",
            "driver": str(ws / "drive.py"),
        },
    )
    assert changed["ok"] is True
    assert "$(arrow-right) inputs from drive.py" in lenses_at(await lenses(client, uri), def0)
    cleared = await _command(
        client, "kernelLens.setDriver", {"uri": uri, "function": "Attention.forward"}
    )
    assert cleared["ok"] is True
    assert not [t for t in lenses_at(await lenses(client, uri), def0) if "inputs from" in t]
    store = json.loads(Path(__import__("os").environ["KERNEL_LENS_RUN_CHOICES"]).read_text())
    assert store["drivers"] == {}
    assert store["scripts"] == {str(bench): ["--device=cpu", "--compile=False"]}
