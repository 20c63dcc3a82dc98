"""Whole scripts through the language server with the real agent (issue 10 item 5): a
``Profile Script`` lens on the first line of a file with module-level work; after the one run,
its wall time (labelled, never a median) and the ops on each module-level line, in lenses and
hovers; any edit outdates it; a failing script gets a diagnostic on the line that raised."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import ROOT
from tests.lsp.client import (
    PROFILE_SCRIPT,
    click_script,
    hover_text,
    initialize,
    lenses,
    line0_of,
    module_server_config,
    op_title,
    open_doc,
    titles,
)
from tests.lsp.client import server_config as _server_config

OPTIONS = {"timeoutSeconds": 90, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}
SCRIPTS = ROOT / "tests" / "data" / "examples" / "scripts"


# One server for the module (issue 37): each test works on its own copies in its tmp_path. The
# cancel test cancels the first progress its client saw, so it has a client and server of its own.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=module_server_config(), scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_server_config(), loop_scope="module")
async def own_client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


def copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    shutil.copy(SCRIPTS / name, path)
    return path


async def test_profile_script_lens_then_wall_time_and_ops_on_module_lines(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = copy(tmp_path, "lecture_like.py")
    uri = open_doc(client, path)
    outcome = await click_script(client, uri)
    assert outcome["ok"] is True, outcome
    assert (tmp_path / "runs.txt").read_text() == "ran\n"  # one run
    after = await lenses(client, uri)
    first = titles(after, 0)
    assert first[0].startswith("$(run-all) script · ") and "wall, one run" in first[0], first
    assert "median" not in first[0] and "±" not in first[0]
    assert "$(refresh) Re-run Script" in first
    square = line0_of(path, "c = torch.square(b)")
    # A CPU line's part of the run's op time first (issue 41), then its ops.
    assert re.match(r"^(<1|\d+)% of the ops' time · ", titles(after, square)[0]), titles(after)
    assert op_title(titles(after, square)[0]).startswith("aten::square"), titles(after)
    # Deep: the multiplications are on the function's own line, not on the calling line.
    loop = line0_of(path, "d = square_3(c)")
    assert titles(after, loop) == []
    body = line0_of(path, "return a * a * a")
    assert op_title(titles(after, body)[0]).startswith("aten::mul"), titles(after)
    text = await hover_text(client, uri, body, 8)
    assert text is not None and "`aten::mul`" in text, text
    assert "6 calls" in text  # 2 multiplications × 3 loop turns, in the one run
    assert "script's one run as `__main__`" in text

    # Any edit of the file outdates the run: no per-line lens left on a line.
    edited = path.read_text().replace("for _ in range(3):", "for _ in range(4):")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    stale = await lenses(client, uri)
    assert titles(stale, 0)[0].startswith("$(history) outdated: $(run-all) script")
    assert titles(stale, square) == []
    stale_hover = await hover_text(client, uri, body, 8)
    assert stale_hover is None or "aten::mul" not in stale_hover  # the function's own offer


async def test_a_library_file_has_no_profile_script_lens(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "lib.py"
    path.write_text(
        '"""Only definitions."""\n\nimport torch\n\nSCALE = 2.0\n\n\n'
        "def scale(x):\n    return x * SCALE\n"
    )
    uri = open_doc(client, path)
    assert PROFILE_SCRIPT not in titles(await lenses(client, uri))


async def test_a_failing_script_gets_a_diagnostic_on_the_line_that_raised(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = copy(tmp_path, "raises.py")
    uri = open_doc(client, path)
    outcome = await click_script(client, uri)
    assert outcome["ok"] is False and outcome["error"]["kind"] == "runtime", outcome
    raised = line0_of(path, "y = x @ torch.randn(3, 3)")
    [diag] = [d for d in client.diagnostics[uri] if d.range.start.line == raised]
    assert "the script raised RuntimeError" in diag.message
    first = titles(await lenses(client, uri), 0)
    assert first[0].startswith("$(warning) Profile failed: runtime — the script raised"), first
    assert PROFILE_SCRIPT in first  # click again after fixing it


async def test_another_workspace_files_lines_carry_the_run_they_came_from(
    client: LanguageClient, tmp_path: Path
) -> None:
    """Profile Script on a main()-shaped script whose helper lives in another file: open the
    helper after the run and its lines have their lenses, labelled with the run."""
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "examples" / "deep", ws)
    script, helper = ws / "main_shaped.py", ws / "pkg" / "helpers.py"
    uri = open_doc(client, script)
    outcome = await click_script(client, uri)
    assert outcome["ok"] is True, outcome
    inside = line0_of(script, "y = torch.relu(x @ x)")
    inside_titles = titles(await lenses(client, uri), inside)
    assert any(op_title(t).startswith("aten::matmul") for t in inside_titles)
    helper_uri = open_doc(client, helper)
    found = await lenses(client, helper_uri)
    head = titles(found, 0)
    assert head and head[0].startswith("$(run-all) from main_shaped.py, "), titles(found)
    assert "· 2 lines" in head[0]
    centered = line0_of(helper, "centered = x - x.mean()")
    [lens] = [x for x in found if x.range.start.line == centered]
    assert lens.command is not None and "aten::" in lens.command.title
    assert lens.command.tooltip is not None and "from main_shaped.py" in lens.command.tooltip
    text = await hover_text(client, helper_uri, centered, 6)
    assert text is not None and text.startswith("*from main_shaped.py, "), text
    assert "`aten::sub`" in text or "`aten::mean`" in text, text
    # Editing a line withdraws its lens (never shifted onto another line).
    edited = helper.read_text().replace("centered = x - x.mean()", "centered = x - x.mean(0)")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=helper_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    after = await lenses(client, helper_uri)
    assert titles(after, centered) == []
    assert "(1 edited since)" in titles(after, 0)[0]


async def test_a_cancelled_script_run_keeps_the_part_that_ran(
    own_client: LanguageClient, tmp_path: Path
) -> None:
    """Cancel from the progress notification stops a whole-script run at its next line and
    keeps what was profiled, labelled partial; the progress said where the run was."""
    client = own_client
    import asyncio
    import re

    path = copy(tmp_path, "forever.py")
    uri = open_doc(client, path)
    task = asyncio.ensure_future(click_script(client, uri))
    seen: list[str] = []
    for _ in range(400):
        seen = [
            str(getattr(v, "message", "") or "")
            for values in list(client.progress_reports.values())
            for v in list(values)
        ]
        if any(re.match(r"line \d+ of forever\.py · [2-9] s", m) for m in seen):
            break
        await asyncio.sleep(0.05)
    assert any(re.match(r"line \d+ of forever\.py · [2-9] s", m) for m in seen), seen
    token = next(iter(list(client.progress_reports)))
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    outcome = await asyncio.wait_for(task, 60)
    assert outcome["ok"] is True, outcome
    first = titles(await lenses(client, uri), 0)
    assert first[0].startswith("$(warning) partial: the first ") and "cancelled" in first[0], first
    row = titles(await lenses(client, uri), line0_of(path, "y = torch.ones(1000)"))
    assert any("aten::ones" in t for t in row), row
