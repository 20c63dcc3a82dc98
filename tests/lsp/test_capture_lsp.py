"""Inputs taken from the script's own run, through the language server with the real agent
(issue 10 items 1–3): the Profile lens works on a function the script calls itself, the hover
says where the inputs came from, and a script that never calls the function gets a diagnostic
on the def line."""

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
from tests.lsp.client import (
    click_profile,
    hover_text,
    initialize,
    line0_of,
    module_server_config,
    open_doc,
)

OPTIONS = {"timeoutSeconds": 60, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}
EXAMPLES = ROOT / "tests" / "data" / "examples" / "capture"


# One server for the module (issue 37): each test works on its own copies in its tmp_path.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=module_server_config(), scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def profile_at_cursor(client: LanguageClient, uri: str, path: Path, text: str) -> Any:
    """``Profile Function at Cursor`` (a one-line function the script never uses has no lens)."""
    params = types.ExecuteCommandParams(
        command="kernelLens.profile",
        arguments=[{"uri": uri, "position": {"line": line0_of(path, text), "character": 4}}],
    )
    return await asyncio.wait_for(client.workspace_execute_command_async(params), 120)


def copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    shutil.copy(EXAMPLES / name, path)
    return path


async def test_captured_inputs_profile_and_show_in_the_hover(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = copy(tmp_path, "timed_square.py")
    uri = open_doc(client, path)
    outcome = await click_profile(client, uri, "def square_2", path)
    assert outcome["ok"] is True, outcome
    assert not (tmp_path / "reached_the_end.txt").exists()
    text = await hover_text(client, uri, line0_of(path, "return a * a"), 12)
    assert text is not None and "`aten::mul`" in text, text
    call_line = line0_of(path, "time_fn(square_2, b)") + 1
    assert f"Inputs: captured at timed_square.py:{call_line} (time_fn → square_2)" in text
    assert "`a: Tensor float32[64, 32] cpu`" in text


async def test_the_captured_module_instance_is_self(client: LanguageClient, tmp_path: Path) -> None:
    path = copy(tmp_path, "module_dtype.py")
    uri = open_doc(client, path)
    outcome = await click_profile(client, uri, "def forward", path)
    assert outcome["ok"] is True, outcome
    text = await hover_text(client, uri, line0_of(path, "h = torch.relu"), 20)
    assert text is not None, text
    made = line0_of(path, "model = Block(16, 64)") + 1
    assert f"self = the script's Block model, line {made}" in text
    assert "`x: Tensor float64[8, 16] cpu`" in text


async def test_a_script_that_never_calls_the_function_gets_a_diagnostic_on_the_def(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = copy(tmp_path, "never_called.py")
    uri = open_doc(client, path)
    outcome = await profile_at_cursor(client, uri, path, "return x * factor")
    assert outcome["ok"] is False and outcome["error"]["kind"] == "inputs", outcome
    [diag] = [
        d for d in client.diagnostics[uri] if d.range.start.line == line0_of(path, "def scale")
    ]
    assert "the script ran to its end" in diag.message
    assert "# kernel-lens: inputs = " in diag.message


async def test_the_quick_fix_inserts_the_suggested_directive_above_the_def(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = copy(tmp_path, "never_called.py")
    uri = open_doc(client, path)
    outcome = await profile_at_cursor(client, uri, path, "return x * factor")
    assert outcome["ok"] is False, outcome
    def0 = line0_of(path, "def scale")
    diags = [d for d in client.diagnostics[uri] if d.range.start.line == def0]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags),
        )
    )
    fixes = [
        a
        for a in actions or []
        if isinstance(a, types.CodeAction) and a.title == "Add an inputs directive above the def"
    ]
    assert len(fixes) == 1, actions
    assert fixes[0].edit is not None and fixes[0].edit.changes is not None
    [edit] = fixes[0].edit.changes[uri]
    assert edit.range.start == types.Position(line=def0, character=0)
    assert edit.new_text == (
        "# kernel-lens: inputs = ((), dict(x=torch.randn(64, 64), factor=torch.randn(64, 64)))"
        "  # checked: it runs; the shapes are a guess\n"
    )
    # The edited file profiles: the directive fits the signature.
    lines = path.read_text().splitlines(True)
    lines.insert(def0, edit.new_text)
    fixed = tmp_path / "fixed.py"
    fixed.write_text("".join(lines))
    uri2 = open_doc(client, fixed)
    again = await click_profile(client, uri2, "def scale", fixed)
    assert again["ok"] is True, again


async def test_the_quick_fix_uses_the_shapes_of_an_earlier_capture(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = copy(tmp_path, "timed_square.py")
    uri = open_doc(client, path)
    assert (await click_profile(client, uri, "def square_2", path))["ok"] is True
    # The script stops calling square_2: capture fails, and the fix rebuilds the inputs that
    # the last run captured (a float32 [64, 32] tensor), not a placeholder.
    edited = path.read_text().replace("    time_fn(square_2, b)\n", "")
    path.write_text(edited)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    outcome = await click_profile(client, uri, "def square_2", path)
    assert outcome["ok"] is False and outcome["error"]["kind"] == "inputs", outcome
    def0 = line0_of(path, "def square_2")
    diags = [d for d in client.diagnostics[uri] if d.range.start.line == def0]
    assert diags, client.diagnostics[uri]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diags[0].range,
            context=types.CodeActionContext(diagnostics=diags),
        )
    )
    fixes = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.edit is not None]
    [fix] = [a for a in fixes if a.title.startswith("Add an inputs directive")]
    assert fix.title.endswith("(shapes of the last run's inputs)")
    assert fix.edit is not None and fix.edit.changes is not None
    [edit] = fix.edit.changes[uri]
    assert edit.new_text == "# kernel-lens: inputs = (torch.randn(64, 32),)  # a\n"
