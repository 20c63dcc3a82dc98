"""Attribution inside an installed package through the language server (issue 48): a line
whose time went into an installed package offers *Attribute inside …*; the run with the package
named puts its lenses into the package's file (opened as Go to Definition opens it), which shows
results only — nothing runs from it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import EXAMPLES
from tests.lsp.client import click, lenses, line0_of, lsp_command, open_doc, titles

INSTALLED = EXAMPLES / "installed"
# The workspace and the "installed" package, outside it, on the server's (and so the agent's)
# PYTHONPATH, as pip would put it on the interpreter's path.
_BASE = Path(tempfile.mkdtemp(prefix="kl-packages-"))
WS = _BASE / "ws"
LIB = _BASE / "env" / "site-packages"
WS.mkdir(parents=True)
(WS / ".git").mkdir()
shutil.copy(INSTALLED / "train.py", WS / "train.py")
shutil.copy(INSTALLED / "step.py", WS / "step.py")
shutil.copytree(INSTALLED / "tinymodel", LIB / "tinymodel")
LAYERS = LIB / "tinymodel" / "layers.py"

OPTIONS = {"timeoutSeconds": 120, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(LIB), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=lsp_command(), server_env=_env()))
async def client(lsp_client: LanguageClient) -> Any:
    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        pass

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=WS.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=WS.as_uri(), name="ws")],
            initialization_options={"client": "vscode", **OPTIONS},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _execute(client: LanguageClient, command: str, args: dict[str, Any]) -> Any:
    lens = types.CodeLens(
        range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
        command=types.Command(title="", command=command, arguments=[args]),
    )
    return await click(client, lens)


async def test_the_call_line_offers_to_attribute_inside_then_the_package_file_shows_its_lines(
    client: LanguageClient,
) -> None:
    script = WS / "train.py"
    uri = open_doc(client, script)
    outcome = await _execute(client, "kernelLens.profile", {"uri": uri, "script": True})
    assert outcome["ok"] is True, outcome
    call0 = line0_of(script, "out = model(x)")
    offer = [
        lens
        for lens in await lenses(client, uri)
        if lens.range.start.line == call0
        and lens.command is not None
        and lens.command.command == "kernelLens.attributeInside"
    ]
    assert len(offer) == 1, titles(await lenses(client, uri), call0)
    command = offer[0].command
    assert command is not None
    assert command.title.startswith("$(package) ") and command.title.endswith(
        "% inside tinymodel · Attribute inside tinymodel"
    ), command.title
    share = int(command.title.split()[1].rstrip("%"))
    assert 50 <= share <= 100
    assert list(command.arguments or []) == [
        {"uri": uri, "package": "tinymodel", "function": None, "packages": []}
    ]
    # What the client's command runs: the script again, the package named for this run.
    outcome = await _execute(
        client, "kernelLens.profile", {"uri": uri, "script": True, "packages": ["tinymodel"]}
    )
    assert outcome["ok"] is True, outcome
    # The call line now holds no forward op of the model, and offers nothing.
    after = titles(await lenses(client, uri), call0)
    assert not any("Attribute inside" in t for t in after), after
    # Go to Definition opens the package's file: its lines, read-only.
    layers_uri = open_doc(client, LAYERS)
    found = await lenses(client, layers_uri)
    shown = titles(found)
    assert shown[0].startswith("$(package) tinymodel (read-only) · from train.py"), shown
    proj0 = line0_of(LAYERS, "h = self.proj(x)")
    on_proj = titles(found, proj0)
    assert on_proj and "linear" in on_proj[0], on_proj
    # No lens of that file runs it: the only command is the header's, a run of train.py.
    commands = [lens.command for lens in found if lens.command and lens.command.command]
    assert [c.command for c in commands] == ["kernelLens.profile"]
    assert list(commands[0].arguments or []) == [
        {"uri": uri, "script": True, "packages": ["tinymodel"]}
    ]
    assert not any(t.startswith("$(play)") or "Profile" in t for t in shown[1:]), shown
    # Its hover is the run's line, with no link that would profile the package's function.
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=layers_uri),
            position=types.Position(line=proj0, character=14),
        )
    )
    assert hover is not None
    text = hover.contents.value if isinstance(hover.contents, types.MarkupContent) else ""
    assert "installed package tinymodel" in text and "aten::linear" in text, text
    assert "command:kernelLens.profile" not in text, text
    # ...and a Profile asked for anyway (a forged argument) is refused, running nothing.
    refused = await _execute(
        client, "kernelLens.profile", {"uri": layers_uri, "function": "Block.forward"}
    )
    assert refused["ok"] is False
    assert "installed package tinymodel" in refused["error"]["message"]
    refused = await _execute(client, "kernelLens.profile", {"uri": layers_uri, "script": True})
    assert refused["ok"] is False


async def test_a_profiled_functions_call_line_offers_it_too(client: LanguageClient) -> None:
    step = WS / "step.py"
    uri = open_doc(client, step)
    outcome = await _execute(client, "kernelLens.profile", {"uri": uri, "function": "step"})
    assert outcome["ok"] is True, outcome
    call0 = line0_of(step, "out = model(x)")
    offer = [
        lens.command
        for lens in await lenses(client, uri)
        if lens.range.start.line == call0
        and lens.command is not None
        and lens.command.command == "kernelLens.attributeInside"
    ]
    assert len(offer) == 1, titles(await lenses(client, uri), call0)
    assert list(offer[0].arguments or []) == [
        {"uri": uri, "package": "tinymodel", "function": "step", "packages": []}
    ]
    outcome = await _execute(
        client, "kernelLens.profile", {"uri": uri, "function": "step", "packages": ["tinymodel"]}
    )
    assert outcome["ok"] is True, outcome
    found = await lenses(client, open_doc(client, LAYERS))
    head = titles(found)[0]
    assert head.startswith("$(package) tinymodel (read-only) · from step.py"), head
    header = found[0].command
    assert header is not None
    assert list(header.arguments or []) == [
        {"uri": uri, "function": "step", "packages": ["tinymodel"]}
    ]
