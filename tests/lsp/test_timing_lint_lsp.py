"""The timing lint through the real language server (pytest-lsp over stdio): opening a file with
naive timing publishes the diagnostic, and the code action there profiles the timed function.
Nothing runs: the lint reads the text."""

from __future__ import annotations

import ast
import asyncio
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import HAS_CUDA
from tests.lsp.client import OPTIONS, ROOT, initialize, open_doc, server_config

NAIVE = ROOT / "tests" / "data" / "examples" / "nosetup" / "naive_timing.py"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


def _line0(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


def _command_of(action: types.Command | types.CodeAction) -> tuple[str, Any]:
    """The command a code action runs. The test client's converter reads a ``CodeAction`` of
    ``Command | CodeAction`` as a ``Command`` whose ``command`` is the repr of the nested
    command object (VS Code tells them apart by ``typeof command``): read it back."""
    if isinstance(action, types.CodeAction):
        assert action.command is not None
        return action.command.command, action.command.arguments
    if action.command.startswith("{"):
        nested = ast.literal_eval(action.command)
        return nested["command"], nested.get("arguments")
    return action.command, action.arguments


async def _lint_diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    for _ in range(100):
        found = [d for d in client.diagnostics.get(uri, []) if d.source == "Kernel Lens"]
        if found:
            return found
        await asyncio.sleep(0.05)
    return []


async def test_naive_timing_gets_a_diagnostic_and_profile_this_instead(
    client: LanguageClient,
) -> None:
    text = NAIVE.read_text()
    uri = open_doc(client, NAIVE)
    diagnostics = await _lint_diagnostics(client, uri)
    assert len(diagnostics) == 1
    diag = diagnostics[0]
    assert diag.code == "no-sync"
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert diag.range.start.line == _line0(text, "end = time.time()")
    assert "torch.cuda.synchronize()" in diag.message

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    titles = [a.title for a in actions or []]
    assert titles == ["Profile this instead (square)"]
    command, arguments = _command_of((actions or [])[0])
    assert command == "kernelLens.profile"
    assert arguments == [{"uri": uri, "function": "square"}]

    # Elsewhere in the file there is nothing to offer.
    quiet = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not quiet


async def test_fixing_the_timing_clears_the_diagnostic(client: LanguageClient) -> None:
    text = NAIVE.read_text()
    uri = open_doc(client, NAIVE)
    assert await _lint_diagnostics(client, uri)
    fixed = text.replace(
        "    end = time.time()", "    torch.cuda.synchronize()\n    end = time.time()"
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    for _ in range(100):
        if not [d for d in client.diagnostics.get(uri, []) if d.source == "Kernel Lens"]:
            break
        await asyncio.sleep(0.05)
    assert [d for d in client.diagnostics.get(uri, []) if d.source == "Kernel Lens"] == []


@pytest.mark.skipif(HAS_CUDA, reason="the message of a machine without a GPU")
async def test_a_profile_error_and_the_lint_are_published_together(client: LanguageClient) -> None:
    # On a machine without a GPU, profiling `measure` (it asks for "cuda") fails with the
    # "needs an NVIDIA GPU" error on its line: that diagnostic and the lint's stay side by side.
    text = NAIVE.read_text()
    uri = open_doc(client, NAIVE)
    assert await _lint_diagnostics(client, uri)
    outcome = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.profile", arguments=[{"uri": uri, "function": "measure"}]
            )
        ),
        timeout=120,
    )
    assert outcome["error"]["kind"] == "unsupported"
    assert outcome["error"]["message"].startswith("this code needs an NVIDIA GPU")
    for _ in range(100):
        if len(client.diagnostics.get(uri, [])) >= 2:
            break
        await asyncio.sleep(0.05)
    by_line = {d.range.start.line: d for d in client.diagnostics.get(uri, [])}
    gpu_line = _line0(text, 'x = torch.randn(1 << 20, device="cuda")')
    assert "needs an NVIDIA GPU" in by_line[gpu_line].message
    assert by_line[_line0(text, "end = time.time()")].source == "Kernel Lens"
