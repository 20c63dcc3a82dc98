"""The editor's trace view and ``kernel-lens trace summarize`` accept and refuse the same files
(issue 26 item 5): each odd or hostile file goes to the CLI (its real entry point, ``--json``)
and to the real language server (``kernelLens/traceFile``, what the trace view asks); a file one
of them reads, the other reads too, with the same summary, and a file one refuses the other
refuses with a message, never an internal error."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from kernel_lens.cli import main as cli_main
from tests.data.odd_traces import HOSTILE, write_odd_traces
from tests.lsp.answers import ask, capture_answers
from tests.lsp.client import OPTIONS, initialize, lsp_command

CACHE = Path(tempfile.mkdtemp(prefix="kernel-lens-odd-traces-"))


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=lsp_command(),
        server_env={**os.environ, "KERNEL_LENS_CACHE": str(CACHE), "KERNEL_LENS_TRACE_SPARE": "0"},
    )
)
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    with contextlib.suppress(RuntimeError):
        await lsp_client.shutdown_session()


def _cli(path: Path) -> tuple[str, Any]:
    """``kernel-lens trace summarize PATH --json``: ("ok", summary) or ("refused", message)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["trace", "summarize", str(path), "--json"])
    answer = json.loads(out.getvalue())
    if code == 0:
        return "ok", answer
    assert code == 1 and answer["error"]["kind"] == "trace", answer
    return "refused", answer["error"]["message"]


async def _editor(client: LanguageClient, raw: dict[Any, Any], path: Path) -> tuple[str, Any]:
    try:
        answer = await ask(client, raw, "kernelLens/traceFile", {"path": str(path)})
    except JsonRpcException as exc:
        return "refused", exc.message
    return "ok", answer


async def test_the_editor_and_the_cli_accept_and_refuse_the_same_files(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = write_odd_traces(tmp_path)
    raw = capture_answers(client)
    seen: dict[str, tuple[str, str]] = {}
    for path in paths:
        cli, cli_answer = _cli(path)
        editor, editor_answer = await _editor(client, raw, path)
        seen[path.name] = (cli, editor)
        if cli == "refused":
            # The same reason, in the same words (not an internal error of the server).
            assert editor == "refused", (path.name, editor_answer)
            assert str(editor_answer) == str(cli_answer), path.name
        else:
            assert editor == "ok", (path.name, editor_answer)
            # Valid JSON for the editor (no NaN or Infinity), the CLI's summary.
            json.dumps(editor_answer, allow_nan=False)
            assert editor_answer["summary"] == cli_answer, path.name
    for name in HOSTILE:
        assert seen[name] == ("refused", "refused"), name
    # The set holds both kinds: odd events that are read, files that are refused.
    assert ("ok", "ok") in seen.values() and sum(v == ("ok", "ok") for v in seen.values()) > 10
