"""Issue 41's server-side steps through a real pygls server (pytest-lsp): a failed profile's
Problems entry goes away with the edit or revert that made it stale, and stays for an edit
elsewhere."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.client import (
    OPTIONS,
    click_profile,
    initialize,
    lenses,
    line0_of,
    open_doc,
    server_config,
    titles,
)

FAILING = """import torch


def scale(x):
    y = x * 2
    raise ValueError("a long message that makes the failure lens far too long for a narrow editor")
    return y


def scale_inputs():
    return (torch.ones(4),)
"""


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def _entries(client: LanguageClient, uri: str, want: int, timeout: float = 10.0) -> int:
    """The document's Problems entries once there are ``want`` (or the timeout's count)."""
    for _ in range(int(timeout / 0.1)):
        count = len(client.diagnostics.get(uri, []))
        if count == want:
            return count
        await asyncio.sleep(0.1)
    return len(client.diagnostics.get(uri, []))


async def test_a_failures_problem_goes_with_the_edit_and_the_revert(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "fails.py"
    path.write_text(FAILING)
    uri = open_doc(client, path)
    outcome = await click_profile(client, uri, "def scale(x):", path)
    assert outcome["ok"] is False and outcome["error"]["kind"] == "runtime", outcome
    assert await _entries(client, uri, 1) == 1
    row = titles(await lenses(client, uri), line0_of(path, "def scale(x):"))
    assert row[0].startswith("$(warning) Profile failed: runtime"), row
    # Fixed: the entry goes (its lens still says what the last run hit, until the next run).
    fixed = FAILING.replace('    raise ValueError("a long', '    # raise ValueError("a long')
    _change(client, uri, 2, fixed)
    assert await _entries(client, uri, 0) == 0
    # An edit elsewhere in the file does not bring it back, and nothing else goes.
    _change(client, uri, 3, fixed + "\n\nSCALE = 2\n")
    assert await _entries(client, uri, 0, timeout=1.0) == 0


async def test_an_unrelated_edit_keeps_the_failures_problem(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "fails_too.py"
    path.write_text(FAILING)
    uri = open_doc(client, path)
    outcome = await click_profile(client, uri, "def scale(x):", path)
    assert outcome["ok"] is False
    assert await _entries(client, uri, 1) == 1
    _change(client, uri, 2, FAILING + "\n\nSCALE = 2\n")  # the function's text unchanged
    assert await _entries(client, uri, 0, timeout=1.5) == 1


async def _report(client: LanguageClient, uri: str, function: str) -> Any:
    return await asyncio.wait_for(
        client.protocol.send_request_async("kernelLens/report", {"uri": uri, "function": function}),
        60,
    )


async def test_the_reports_summary_says_outdated_as_the_lens_does(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A run of a text that changed since (edited here, or restored from the history after a
    reopen of an edited file) is outdated in the Report too, not shown as the current code."""
    source = "".join(
        line for line in FAILING.splitlines(keepends=True) if "raise ValueError" not in line
    )
    path = tmp_path / "ok.py"
    path.write_text(source)
    uri = open_doc(client, path)
    assert (await click_profile(client, uri, "def scale(x):", path))["ok"]
    assert (await _report(client, uri, "scale")).outdated is False
    _change(client, uri, 2, source.replace("y = x * 2", "y = x * 3"))
    assert (await _report(client, uri, "scale")).outdated is True
    # Closed and reopened with the edited text (a restored run of the older text): outdated.
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    uri = open_doc(client, path, source.replace("y = x * 2", "y = x * 3"))
    report = await _report(client, uri, "scale")
    assert report.profile is not None and report.profile.restored
    assert report.outdated is True
