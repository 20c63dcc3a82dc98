"""Trace files through the language server (issue 12): read once in a child process with
cancellable progress (the spare reader the server keeps waiting, else a new one), kept as columns
in the cache folder (a changed file is read again), gzip opens, a cancel from the progress
notification stops the reading."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import re
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from benchmarks.trace_synth import replicate_trace
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from kernel_lens.analysis.trace_summary import load_trace, summarize_trace
from tests.lsp.client import OPTIONS, ROOT, initialize, lsp_command

H200 = ROOT / "tests" / "data" / "h200" / "matmul_relu_trace.json"
CACHE = Path(tempfile.mkdtemp(prefix="kernel-lens-trace-lsp-"))
COLUMNS = CACHE / "trace-columns"


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=lsp_command(),
        server_env={**os.environ, "KERNEL_LENS_CACHE": str(CACHE), "KERNEL_LENS_TRACE_SPARE": "1"},
    )
)
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    with contextlib.suppress(RuntimeError):  # "Client has been stopped": the test shut it down
        await lsp_client.shutdown_session()


def _write(path: Path, trace: dict[str, Any]) -> None:
    text = json.dumps(trace).encode()
    path.write_bytes(gzip.compress(text) if path.suffix == ".gz" else text)


def _folders(path: Path) -> list[str]:
    """The cache folders of ``path``'s columns (by its hash prefix, so other tests' don't count)."""
    from kernel_lens.lsp.traces import cache_folder

    stat = path.stat()
    prefix = Path(cache_folder(str(path), stat.st_size, stat.st_mtime_ns)).name.split("-")[0]
    return (
        sorted(p for p in os.listdir(COLUMNS) if p.startswith(prefix)) if COLUMNS.exists() else []
    )


def _reading_tokens(client: LanguageClient) -> list[Any]:
    return [
        token
        for token, reports in client.progress_reports.items()
        if reports and getattr(reports[0], "title", "").startswith("Reading ")
    ]


async def test_a_gzipped_trace_opens_with_progress_then_from_the_cache(
    client: LanguageClient, tmp_path: Path
) -> None:
    trace = replicate_trace(load_trace(H200), 20_000)
    path = tmp_path / "step.pt.trace.json.gz"
    _write(path, trace)
    want = summarize_trace(trace).to_json()

    answer = await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(path)})
    assert answer.summary.event_count == want["event_count"]
    assert answer.summary.kernel_calls == want["kernel_calls"]
    assert answer.summary.gpu_busy_us == want["gpu_busy_us"]
    assert answer.timeline.event_count == want["event_count"] and answer.timeline.lanes
    tokens = _reading_tokens(client)
    assert len(tokens) == 1
    reports = client.progress_reports[tokens[0]]
    assert reports[0].cancellable is True and reports[-1].kind == "end"
    percentages = [r.percentage for r in reports if getattr(r, "percentage", None) is not None]
    assert percentages == sorted(percentages) and len(percentages) >= 3
    assert len(_folders(path)) == 1

    # Zooming in and opening it again read no JSON: no further progress.
    span = answer.timeline.span_us
    window = {"path": str(path), "start_us": span * 0.4, "end_us": span * 0.41}
    zoomed = await client.protocol.send_request_async("kernelLens/timelineWindow", window)
    assert list(zoomed.window) == [span * 0.4, span * 0.41]
    again = await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(path)})
    assert again.summary.event_count == want["event_count"]
    assert len(_reading_tokens(client)) == 1


async def test_a_changed_trace_is_read_again(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "step.json"
    _write(path, replicate_trace(load_trace(H200), 2_000))
    first = await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(path)})
    old = _folders(path)
    smaller = replicate_trace(load_trace(H200), 700)
    _write(path, smaller)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))
    second = await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(path)})
    assert second.summary.event_count == summarize_trace(smaller).event_count
    assert second.summary.event_count < first.summary.event_count
    new = _folders(path)
    assert len(new) == 1 and new != old  # the older version's columns are gone


async def test_a_file_that_is_not_a_trace_says_so(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text('{"rows": [1, 2, 3]}')
    with pytest.raises(JsonRpcException, match="traceEvents"):
        await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(path)})
    with pytest.raises(JsonRpcException, match="not found"):
        await client.protocol.send_request_async(
            "kernelLens/traceFile", {"path": str(tmp_path / "gone.json")}
        )


async def test_cancel_from_the_progress_stops_the_reading(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "big.json"
    _write(path, replicate_trace(load_trace(H200), 300_000))
    request = asyncio.ensure_future(
        client.protocol.send_request_async("kernelLens/traceFile", {"path": str(path)})
    )
    for _ in range(600):
        if _reading_tokens(client):
            break
        await asyncio.sleep(0.05)
    (token,) = _reading_tokens(client)
    client.protocol.notify(
        types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=token)
    )
    with pytest.raises(JsonRpcException, match="cancelled"):
        await asyncio.wait_for(request, 120)
    assert _folders(path) == []  # nothing half-written is left


def _reader_logs(client: LanguageClient) -> list[tuple[int, str]]:
    """(pid, what) of the server's "trace reader" log lines, in order."""
    found = []
    for message in client.log_messages:
        if m := re.match(r"trace reader (\d+): (.*)", message.message):
            found.append((int(m.group(1)), m.group(2)))
    return found


async def _wait_for_spare(client: LanguageClient, after: int = 0) -> int:
    for _ in range(400):
        started = [pid for pid, what in _reader_logs(client)[after:] if "spare started" in what]
        if started:
            return started[-1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no spare reader was started: {_reader_logs(client)}")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_a_spare_reader_waits_reads_the_next_trace_and_is_replaced(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The server keeps a reader process waiting (Python started, numpy/pandas/msgspec
    imported) so a big trace's reading starts at once; each reading takes the spare and a new
    one is started after it; a spare that died is replaced by a reader started then; the spare
    goes with the server."""
    spare = await _wait_for_spare(client)
    assert _alive(spare)
    trace = replicate_trace(load_trace(H200), 12_000)
    first = tmp_path / "first.json"
    _write(first, trace)
    assert first.stat().st_size > 2_000_000  # read in a child, not in the server's thread
    answer = await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(first)})
    assert answer.summary.event_count == summarize_trace(trace).event_count
    assert (spare, "the spare, waiting since start-up or the last trace") in _reader_logs(client)
    assert not _alive(spare)  # one trace per reader: its memory goes back with it

    # The next spare, started after that reading; killed on purpose, then a new reader reads.
    seen = len(_reader_logs(client))
    second_spare = await _wait_for_spare(client, after=seen - 1)
    assert second_spare != spare
    # ... and at once a trace to read (the server may not have seen it end yet).
    os.kill(second_spare, signal.SIGKILL)
    second = tmp_path / "second.json"
    smaller = replicate_trace(load_trace(H200), 9_000)
    _write(second, smaller)
    answer = await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(second)})
    assert answer.summary.event_count == summarize_trace(smaller).event_count
    assert any("started now" in what for _, what in _reader_logs(client)[seen:])

    last = await _wait_for_spare(client, after=seen + 1)
    await client.shutdown_session()
    for _ in range(100):
        if not _alive(last):
            break
        await asyncio.sleep(0.05)
    assert not _alive(last)


async def test_lenses_and_hovers_answer_while_a_big_trace_is_read(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The reading runs in another process: a lens or hover request sent while a big trace
    is read is answered before the trace is (it used to wait for the whole parse)."""
    path = tmp_path / "busy.json"
    _write(path, replicate_trace(load_trace(H200), 200_000))
    source = ROOT / "kernels" / "square.py"
    uri = source.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=source.read_text()
            )
        )
    )
    order: list[str] = []

    async def trace() -> None:
        await client.protocol.send_request_async("kernelLens/traceFile", {"path": str(path)})
        order.append("trace")

    reading = asyncio.ensure_future(trace())
    for _ in range(600):  # until the reading is under way
        if _reading_tokens(client):
            break
        await asyncio.sleep(0.05)
    assert _reading_tokens(client)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    order.append("lenses")
    hover = await client.text_document_hover_async(
        types.HoverParams(
            types.TextDocumentIdentifier(uri=uri), types.Position(line=0, character=1)
        )
    )
    order.append("hover")
    await asyncio.wait_for(reading, 120)
    assert lenses and any(lens.command and "Profile" in lens.command.title for lens in lenses)
    assert hover is None or hover.contents is not None
    assert order == ["lenses", "hover", "trace"]
