"""What the language-server tests share: the real server started as the extension starts it,
and a client that asks as VS Code asks (open a document, list its lenses, click one, hover).

Test modules import from here (``from tests.lsp.client import initialize, open_doc, …``), not
from one another.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import os
import re
import sys
import tempfile
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


#: The launcher of a forked language server (tests/lsp/launch.py, docs/testing.md).
LAUNCH = Path(__file__).with_name("launch.py")


def lsp_command() -> list[str]:
    """The command of the real language server over stdio: ``python -m kernel_lens.lsp``, as
    the extension starts it, forked from the worker's warm template
    (``$KERNEL_LENS_TEST_LSP_FORK``, tests/conftest.py) where it can be the same server."""
    if os.environ.get("KERNEL_LENS_TEST_LSP_FORK"):
        return [sys.executable, "-S", str(LAUNCH)]
    return [sys.executable, "-m", "kernel_lens.lsp"]


def server_config() -> ClientServerConfig:
    """The real language server over stdio, started as the extension starts it."""
    return ClientServerConfig(server_command=lsp_command())


def module_server_config() -> ClientServerConfig:
    """The server of a module-scoped fixture (one server for a module's tests), with a history
    folder and a run-choices file of its own: it starts before any test's fixtures, so the
    per-test ones of tests/conftest.py (``_own_history``) cannot reach it."""
    own = Path(tempfile.mkdtemp(prefix="kernel-lens-module-server-"))
    # The warm templates log each forked server's and agent's CPU seconds under this name
    # (``KERNEL_LENS_TEST_CPU`` lists it): built at the module's import, the environment has
    # no test of its own.
    caller = Path(sys._getframe(1).f_globals.get("__file__", "tests/unknown.py")).resolve()
    module = caller.relative_to(ROOT) if caller.is_relative_to(ROOT) else caller
    env = {
        **os.environ,
        "KERNEL_LENS_HISTORY": str(own / "history"),
        "KERNEL_LENS_RUN_CHOICES": str(own / "run-choices.json"),
        "PYTEST_CURRENT_TEST": f"{module}::(its module's server) (setup)",
    }
    return ClientServerConfig(server_command=lsp_command(), server_env=env)


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


PROFILE_SCRIPT = "$(run-all) Profile Script"


async def code_actions(client: LanguageClient, uri: str, line0: int) -> list[tuple[str, Any]]:
    """``(title, command)`` of each code action. (lsprotocol's client side reads a CodeAction
    that has a ``command`` as a ``Command`` whose command is the inner object's text: read it
    back; VS Code gets the JSON as sent.)"""
    diags = [d for d in client.diagnostics[uri] if d.range.start.line == line0]
    assert diags, client.diagnostics[uri]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags),
        )
    )
    out: list[tuple[str, Any]] = []
    for action in actions or []:
        if isinstance(action, types.CodeAction):
            out.append((action.title, action.command))
        else:
            inner = ast.literal_eval(action.command)
            out.append((action.title, types.Command(**inner)))
    return out


def lenses_at(found: list[types.CodeLens], line0: int) -> list[str]:
    return [lens.command.title for lens in found if lens.command and lens.range.start.line == line0]


async def click_script(client: LanguageClient, uri: str) -> Any:
    """Click the one Profile Script lens of line 0 (its arguments as the server sends them)."""
    found = [
        lens
        for lens in await lenses(client, uri)
        if lens.range.start.line == 0 and lens.command and lens.command.title == PROFILE_SCRIPT
    ]
    assert len(found) == 1, titles(await lenses(client, uri))
    assert found[0].command is not None
    assert list(found[0].command.arguments or []) == [{"uri": uri, "script": True}]
    return await click(client, found[0])


def capabilities() -> types.ClientCapabilities:
    """VS Code's capabilities with notebook sync, as vscode-languageclient 9 declares it (the
    recording pytest-lsp ships predates it)."""
    caps = pytest_lsp.client_capabilities("visual-studio-code")
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(
            dynamic_registration=True, execution_summary_support=True
        )
    )
    return caps


def cell_uri(path: Path, index: int) -> str:
    return f"vscode-notebook-cell:{path}#W{index}sZmlsZQ%3D%3D"


def open_notebook(client: LanguageClient, path: Path, cells: list[tuple[str, str]]) -> list[str]:
    uris = [cell_uri(path, i) for i in range(len(cells))]
    kinds = {"code": types.NotebookCellKind.Code, "markdown": types.NotebookCellKind.Markup}
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=path.as_uri(),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=kinds[kind], document=uri)
                    for uri, (kind, _) in zip(uris, cells, strict=True)
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=uri,
                    language_id="python" if kind == "code" else "markdown",
                    version=1,
                    text=text,
                )
                for uri, (kind, text) in zip(uris, cells, strict=True)
            ],
        )
    )
    return uris


async def shutdown_if_running(client: LanguageClient) -> None:
    """End a fixture's server that its test left running (it failed before its own shutdown):
    pytest-lsp's teardown only waits for the server to exit, which it never would."""
    server = getattr(client, "_server", None)
    if server is not None and server.returncode is None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 30)
