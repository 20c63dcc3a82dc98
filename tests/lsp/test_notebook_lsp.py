"""Jupyter notebooks through LSP notebook-document sync, with the real server and agent (CPU):
lenses on the right cell lines, a function defined in one cell profiled with the inputs of its
call in a later one, Profile Cell, edits and closing, and an untrusted workspace."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import ROOT
from tests.lsp.client import (
    capabilities,
    click,
    hover_text,
    lenses,
    op_title,
    open_notebook,
    titles,
)
from tests.lsp.client import server_config as _server_config

OPTIONS = {"timeoutSeconds": 90, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}
PROFILE_CELL = "$(run-all) Profile Cell"
TRUST = "$(shield) Kernel Lens: trust this workspace to profile"

CELLS: list[tuple[str, str]] = [
    ("code", "import torch\n"),
    ("markdown", "# Scaling\nA *markdown* cell.\n"),
    ("code", "def scale(x):\n    y = x * 3\n    return y.sum()\n"),
    ("code", "%matplotlib inline\na = torch.randn(64, 64)\nb = scale(a)\n"),
]


async def _init(client: LanguageClient, options: dict[str, Any]) -> types.InitializeResult:
    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        del ls, params

    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(),
            root_uri=ROOT.as_uri(),
            initialization_options={"client": "vscode", **options},
        )
    )


@pytest_lsp.fixture(config=_server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await _init(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_server_config())
async def untrusted(lsp_client: LanguageClient) -> Any:
    await _init(lsp_client, {**OPTIONS, "workspaceTrusted": False})
    yield
    await lsp_client.shutdown_session()


def change_cell(client: LanguageClient, path: Path, uri: str, text: str, version: int) -> None:
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(
                uri=path.as_uri(), version=version
            ),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(
                                uri=uri, version=version
                            ),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    ]
                )
            ),
        )
    )


def _find(items: list[types.CodeLens], line0: int, title: str) -> types.CodeLens:
    found = [
        lens
        for lens in items
        if lens.range.start.line == line0 and lens.command and lens.command.title == title
    ]
    assert len(found) == 1, titles(items)
    return found[0]


@pytest_lsp.fixture(config=_server_config())
async def bare(lsp_client: LanguageClient) -> Any:
    yield
    await lsp_client.shutdown_session()


async def test_server_declares_notebook_sync(bare: LanguageClient) -> None:
    caps = (await _init(bare, OPTIONS)).capabilities
    assert caps.notebook_document_sync is not None
    selector = caps.notebook_document_sync.notebook_selector[0]
    assert isinstance(selector, types.NotebookDocumentFilterWithNotebook)
    assert selector.notebook == "jupyter-notebook"
    assert [c.language for c in selector.cells or []] == ["python"]


async def test_lenses_sit_on_the_cells_own_lines(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "lecture.ipynb"
    uris = open_notebook(client, path, CELLS)
    first = await lenses(client, uris[0])
    assert titles(first) == [PROFILE_CELL]
    assert list(first[0].command.arguments or []) == [{"uri": uris[0], "script": True}]  # type: ignore[union-attr]
    assert await lenses(client, uris[1]) == []  # markdown
    third = await lenses(client, uris[2])
    assert titles(third, 0)[:2] == [PROFILE_CELL, "$(play) Profile"], titles(third)
    profile = _find(third, 0, "$(play) Profile")
    assert profile.command is not None and profile.command.arguments
    assert profile.command.arguments[0]["function"] == "scale"
    assert titles(await lenses(client, uris[3])) == [PROFILE_CELL]
    all_titles = [t for u in uris for t in titles(await lenses(client, u))]
    assert not any("Profile Script" in t for t in all_titles)


async def test_function_in_one_cell_profiled_with_its_call_in_a_later_one(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "lecture.ipynb"
    uris = open_notebook(client, path, CELLS)
    profile = _find(await lenses(client, uris[2]), 0, "$(play) Profile")
    outcome = await click(client, profile)
    assert outcome["ok"] is True, outcome
    after = await lenses(client, uris[2])
    summary = titles(after, 0)[1]
    assert summary.startswith("$(watch) ") and "±" in summary and "CPU" in summary, summary
    assert op_title(titles(after, 1)[0]).startswith("aten::mul"), titles(after)
    assert op_title(titles(after, 2)[0]).startswith("aten::sum"), titles(after)
    # Nothing of the function's results spills onto other cells.
    assert titles(await lenses(client, uris[3])) == [PROFILE_CELL]
    text = await hover_text(client, uris[2], 1, 10)
    assert text is not None and "aten::mul" in text, text
    # The inputs are the later cell's call: a 64×64 tensor.
    assert "64, 64" in text or "[64, 64]" in text, text
    # Where they were captured, in the notebook's words: the call's cell and line.
    assert "cell 4, line 3" in text and ".kernel_lens.py" not in text, text

    # From the palette, at the cursor in the cell: the same function.
    outcome = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile",
            arguments=[{"uri": uris[2], "position": {"line": 1, "character": 8}}],
        )
    )
    assert outcome["ok"] is True and outcome["function"] == "scale", outcome

    # Editing the function's cell outdates its result; another cell's edit does not.
    change_cell(client, path, uris[3], CELLS[3][1] + "c = 1\n", 2)
    await asyncio.sleep(0.1)
    assert op_title(titles(await lenses(client, uris[2]), 1)[0]).startswith("aten::mul")
    change_cell(client, path, uris[2], CELLS[2][1].replace("x * 3", "x * 4"), 3)
    await asyncio.sleep(0.1)
    stale = await lenses(client, uris[2])
    assert titles(stale, 0)[1].startswith("$(history) outdated"), titles(stale)
    assert titles(stale, 1) == []


async def test_profile_cell_runs_the_cells_above_and_maps_lines(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "lecture.ipynb"
    uris = open_notebook(client, path, CELLS)
    outcome = await click(client, _find(await lenses(client, uris[3]), 0, PROFILE_CELL))
    assert outcome["ok"] is True, outcome
    after = await lenses(client, uris[3])
    head = titles(after, 0)
    assert (
        head[0].startswith("$(run-all) cell · ") and "wall with the 2 code cells above" in head[0]
    )
    assert "1 IPython line skipped" in head[0]  # %matplotlib inline
    assert "$(refresh) Re-run Cell" in head
    assert titles(after, 1)[0].startswith("aten::randn"), titles(after)
    assert titles(after, 2)[0].startswith("aten::mul"), titles(after)  # scale's ops
    text = await hover_text(client, uris[3], 2, 5)
    assert text is not None and "aten::mul" in text, text
    # The cells above ran but carry no lenses of this run.
    assert titles(await lenses(client, uris[0])) == [PROFILE_CELL]
    assert any("%matplotlib" in m.message for m in client.log_messages)


async def test_a_failing_cell_gets_its_diagnostic_on_its_line(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "broken.ipynb"
    cells = [("code", "x = 1\n"), ("code", "y = x + 1\nraise ValueError('boom in cell')\n")]
    uris = open_notebook(client, path, cells)
    outcome = await click(client, _find(await lenses(client, uris[1]), 0, PROFILE_CELL))
    assert outcome["error"]["kind"] == "runtime", outcome
    for _ in range(50):
        if list(client.diagnostics.get(uris[1], [])):
            break
        await asyncio.sleep(0.05)
    diags = list(client.diagnostics[uris[1]])
    assert [d.range.start.line for d in diags] == [1]
    assert "boom in cell" in diags[0].message
    assert list(client.diagnostics.get(uris[0], [])) == []
    assert titles(await lenses(client, uris[1]), 0)[0].startswith("$(warning) Profile failed")
    assert not any(
        str(u).endswith(".kernel_lens.py") for u in client.diagnostics if client.diagnostics[u]
    )

    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=path.as_uri()),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in uris],
        )
    )
    for _ in range(50):
        if not list(client.diagnostics.get(uris[1], [])):
            break
        await asyncio.sleep(0.05)
    assert list(client.diagnostics[uris[1]]) == []


async def test_untrusted_notebook_runs_nothing(untrusted: LanguageClient, tmp_path: Path) -> None:
    client = untrusted
    path = tmp_path / "lecture.ipynb"
    uris = open_notebook(client, path, CELLS)
    assert titles(await lenses(client, uris[3])) == [TRUST]
    assert TRUST in titles(await lenses(client, uris[2]), 0)
    assert "$(play) Profile" not in titles(await lenses(client, uris[2]))
    outcome = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile", arguments=[{"uri": uris[3], "script": True}]
        )
    )
    assert outcome["error"]["kind"] == "untrusted"
    assert client.progress_reports == {}


async def test_a_cells_first_line_ops_are_named_on_the_summary_row(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The cell's summary and its first line's ops share one row (VS Code draws a line's lenses
    as one): the ops say which line they are of (issue 41)."""
    path = tmp_path / "first_line.ipynb"
    cells = [("code", "import torch\n"), ("code", "a = torch.randn(64)\nb = a * 2\n")]
    uris = open_notebook(client, path, cells)
    outcome = await click(client, _find(await lenses(client, uris[1]), 0, PROFILE_CELL))
    assert outcome["ok"] is True, outcome
    head = titles(await lenses(client, uris[1]), 0)
    assert head[0].startswith("$(run-all) cell · "), head
    assert any(t.startswith("line 1: ") and "aten::randn" in t for t in head), head
    assert titles(await lenses(client, uris[1]), 1)[0].startswith("aten::mul")
