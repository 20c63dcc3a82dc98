"""What the language-server tests share: the real server started as the extension starts it,
and a client that asks as VS Code asks (open a document, list its lenses, click one, hover).

Test modules import from here (``from tests.lsp.client import initialize, open_doc, …``), not
from one another.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parent.parent.parent
SQUARE = ROOT / "kernels" / "square.py"
CASES = ROOT / "tests" / "data" / "examples" / "lsp_cases.py"
ERRORS = ROOT / "tests" / "data" / "examples" / "errors.py"
FAKE_AGENT = Path(__file__).with_name("fake_agent.py")

#: The initialization options most tests use: a minute per job, a short timing budget.
OPTIONS = {"timeoutSeconds": 60, "timing": {"warmupMs": 5, "budgetMs": 50, "reps": 0}}


def server_config() -> ClientServerConfig:
    """The real language server over stdio, started as the extension starts it."""
    return ClientServerConfig(server_command=[sys.executable, "-m", "kernel_lens.lsp"])


async def initialize(client: LanguageClient, options: dict[str, Any]) -> None:
    """``initialize`` as VS Code sends it, with ``options`` as the extension's initialization
    options; counts the server's ``workspace/codeLens/refresh`` requests in
    ``client.lens_refreshes``."""
    client.lens_refreshes = 0  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        ls.lens_refreshes += 1  # type: ignore[attr-defined]

    await client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=ROOT.as_uri(),
            # as the extension sends them (its `client: "vscode"`: VS Code's titles and links)
            initialization_options={"client": "vscode", **options},
        )
    )


def open_doc(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text or path.read_text()
            )
        )
    )
    return uri


async def lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    result = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return list(result or [])


def titles(items: list[types.CodeLens], line0: int | None = None) -> list[str]:
    return [
        lens.command.title
        for lens in items
        if lens.command and (line0 is None or lens.range.start.line == line0)
    ]


#: The share of the median a CPU line's lens starts with (`38% of 44.4 µs · `; a script's run:
#: `38% of the ops' time · `).
SHARE_PREFIX = re.compile(r"^(<1|\d+)% of ([\d.]+ (µs|ms)|the ops' time) · ")


def op_title(title: str) -> str:
    """A line lens's title without its share of the median: the ops it names."""
    return SHARE_PREFIX.sub("", title)


def line0_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines()) if text in line)


async def click(client: LanguageClient, lens: types.CodeLens) -> Any:
    assert lens.command is not None
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=lens.command.command, arguments=lens.command.arguments
            )
        ),
        timeout=120,
    )


async def click_profile(client: LanguageClient, uri: str, def_text: str, path: Path) -> Any:
    line0 = line0_of(path, def_text)
    found = [
        lens
        for lens in await lenses(client, uri)
        if lens.range.start.line == line0
        and lens.command
        and lens.command.command == "kernelLens.profile"
    ]
    assert found, titles(await lenses(client, uri))
    return await click(client, found[0])


async def hover_text(client: LanguageClient, uri: str, line0: int, col: int) -> str | None:
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line0, character=col),
        )
    )
    if hover is None:
        return None
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value
