"""Only regular files are read (issue 45 item 4): a FIFO named like a trace, a symlink to
``/dev/zero``, a directory, and a FIFO named like an Nsight Compute report, asked of the real
language server (what the trace view and the NCU view ask), are each refused within a second
with a clean message (no traceback, no server path), and the server keeps answering."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.data.odd_traces import special_files
from tests.lsp.client import OPTIONS, initialize, lsp_command

CACHE = Path(tempfile.mkdtemp(prefix="kernel-lens-special-files-"))


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
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def _refused(client: LanguageClient, method: str, params: dict[str, Any]) -> str:
    start = time.monotonic()
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(client.protocol.send_request_async(method, params), 5)
    assert time.monotonic() - start < 1.0, method
    message = caught.value.message or ""
    assert "Traceback" not in message and "kernel_lens/" not in message, message
    assert "MemoryError" not in message
    return message


@pytest.mark.serial  # "at once": each refusal within 1 s
async def test_special_files_as_traces_are_refused_at_once(
    client: LanguageClient, tmp_path: Path
) -> None:
    for name, path in special_files(tmp_path).items():
        message = await _refused(client, "kernelLens/traceFile", {"path": str(path)})
        assert "not a regular file" in message, (name, message)
        assert str(path) in message
        message = await _refused(
            client,
            "kernelLens/timelineWindow",
            {"path": str(path), "start_us": 0.0, "end_us": 10.0},
        )
        assert "not a regular file" in message, (name, message)
    # still answering: a plain missing file is its own clear message, at once
    message = await _refused(
        client, "kernelLens/traceFile", {"path": str(tmp_path / "gone.pt.trace.json")}
    )
    assert "not found" in message


@pytest.mark.serial  # each refusal within 1 s
async def test_a_fifo_named_like_an_ncu_report_is_refused(
    client: LanguageClient, tmp_path: Path
) -> None:
    for name in ("k.ncu-rep", "k.csv"):
        fifo = tmp_path / name
        os.mkfifo(fifo)
        message = await _refused(client, "kernelLens/ncuFile", {"path": str(fifo)})
        assert "not a regular file" in message, message
