"""Targets the extension made, not ones it was handed (issue 45): the real server refuses
``kernelLens.profile``, ``runNcu``, ``sweep`` and the requests that read or compile a file when
the URI is not a ``file:`` one inside a workspace folder (nor an open document): a clear error,
and nothing of the file runs (a marker it would write stays absent)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.client import OPTIONS, initialize, module_server_config

# One server for the module (issue 37): every test asks about a file of its own tmp_path and
# each refusal leaves the server as it was; 11 tests, one server start instead of 11.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=module_server_config(), scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)  # trusted, the workspace is the repository
    yield
    with contextlib.suppress(RuntimeError):
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)


def _outside(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    script = tmp_path / "evil.py"
    script.write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n\n\ndef f(n: int = 4):\n    return n\n"
    )
    return script, marker


async def _command(client: LanguageClient, command: str, args: dict[str, Any]) -> Any:
    params = types.ExecuteCommandParams(command=command, arguments=[args])
    return await asyncio.wait_for(client.workspace_execute_command_async(params), 30)


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("kernelLens.profile", {}),
        ("kernelLens.runNcu", {}),
        ("kernelLens.sweep", {"param": "n", "values": [1, 2]}),
    ],
)
async def test_a_command_on_a_file_outside_the_workspace_runs_nothing(
    client: LanguageClient, tmp_path: Path, command: str, extra: dict[str, Any]
) -> None:
    script, marker = _outside(tmp_path)
    answer = await _command(client, command, {"uri": script.as_uri(), "function": "f", **extra})
    answer = answer if isinstance(answer, dict) else answer._asdict()
    assert answer["ok"] is False
    error = answer["error"]
    error = error if isinstance(error, dict) else error._asdict()
    assert error["kind"] == "not-found"
    assert "outside" in error["message"] and str(script) in error["message"]
    assert not marker.exists()


async def test_a_command_by_position_outside_the_workspace_is_a_clear_error(
    client: LanguageClient, tmp_path: Path
) -> None:
    script, marker = _outside(tmp_path)
    position = {"line": 3, "character": 4}
    for command in ("kernelLens.runNcu", "kernelLens.sweep"):
        args = {"uri": script.as_uri(), "position": position, "param": "n"}
        with pytest.raises(JsonRpcException) as caught:
            await _command(client, command, args)
        assert "outside" in (caught.value.message or "")
    assert not marker.exists()


@pytest.mark.parametrize(
    "method", ["kernelLens/generatedCode", "kernelLens/history", "kernelLens/report"]
)
async def test_a_request_on_a_file_outside_the_workspace_is_refused(
    client: LanguageClient, tmp_path: Path, method: str
) -> None:
    script, marker = _outside(tmp_path)
    params = {"uri": script.as_uri(), "position": {"line": 3, "character": 4}}
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(client.protocol.send_request_async(method, params), 30)
    assert "outside" in (caught.value.message or "")
    assert not marker.exists()


@pytest.mark.parametrize(
    "uri",
    ["http://evil.example/x.py", "file://evil.example/share/x.py", "untitled:Untitled-1"],
)
async def test_a_uri_that_is_not_a_local_file_is_refused(client: LanguageClient, uri: str) -> None:
    answer = await _command(client, "kernelLens.profile", {"uri": uri, "function": "f"})
    answer = answer if isinstance(answer, dict) else answer._asdict()
    assert answer["ok"] is False


async def test_an_open_document_outside_the_workspace_is_the_users_choice(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The history of an open document outside the folders is answered (it was chosen)."""
    script, _ = _outside(tmp_path)
    uri = script.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=script.read_text()
            )
        )
    )
    answer = await asyncio.wait_for(
        client.protocol.send_request_async("kernelLens/history", {"uri": uri, "function": "f"}), 30
    )
    assert answer is not None
