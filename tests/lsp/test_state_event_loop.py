"""The event loop stays free (issue 9 item 5): while a heavy request is in flight, lenses and
hovers answer first; and a closed document's state is released (issue 9 item 1)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.client import (
    FAKE_AGENT,
    OPTIONS,
    SQUARE,
    click_profile,
    hover_text,
    initialize,
    lenses,
    line0_of,
    lsp_command,
    open_doc,
    server_config,
    titles,
)

#: Pairs of events (a CPU op and its kernel) in the synthetic trace: a few seconds to reduce.
EVENTS = 60_000
#: Kernels in the synthetic Nsight Compute table (6 metric rows each): a few seconds to read.
NCU_KERNELS = 5_000


def write_big_trace(path: Path, pairs: int = EVENTS) -> None:
    """A Chrome trace with ``pairs`` CPU ops and as many kernels, each 1-2 µs apart."""
    events: list[dict[str, Any]] = []
    for i in range(pairs):
        events.append(
            {"ph": "X", "cat": "cpu_op", "name": f"aten::op{i % 50}", "pid": 1, "tid": 1,
             "ts": i * 2.0, "dur": 1.5, "args": {}}
        )  # fmt: skip
        events.append(
            {"ph": "X", "cat": "kernel", "name": f"kernel_{i % 30}", "pid": 0, "tid": 7,
             "ts": i * 2.0 + 0.5, "dur": 1.0, "args": {"stream": 7}}
        )  # fmt: skip
    path.write_text(json.dumps({"traceEvents": events}))


@pytest_lsp.fixture(config=server_config())
async def recorded(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "agentCommand": [sys.executable, str(FAKE_AGENT)]})
    yield
    await lsp_client.shutdown_session()


#: Every read of the history for restored results takes this long longer (issue 28 item 5).
HISTORY_DELAY_S = 1.0


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=lsp_command(),
        # Its own history (the config is made at import, before the per-test one is set).
        server_env={
            **os.environ,
            "KERNEL_LENS_TEST_HISTORY_DELAY_S": str(HISTORY_DELAY_S),
            "KERNEL_LENS_HISTORY": tempfile.mkdtemp(prefix="kernel-lens-history-"),
        },
    )
)
async def slow_history(lsp_client: LanguageClient) -> Any:
    """The recorded agent, and a history whose every read for restored results is delayed:
    the first lens answer after a (re)open must hold them all the same."""
    await initialize(lsp_client, {**OPTIONS, "agentCommand": [sys.executable, str(FAKE_AGENT)]})
    yield
    await lsp_client.shutdown_session()


def write_big_ncu_csv(path: Path, kernels: int = NCU_KERNELS) -> None:
    """An ncu ``--csv --page details`` table of ``kernels`` kernels, 6 metric rows each."""
    header = (
        '"ID","Kernel Name","Grid Size","Block Size","Section Name","Metric Name",'
        '"Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description"'
    )
    rows = [header]
    for k in range(kernels):
        for metric, unit, value in [
            ("Duration", "usecond", "4.16"),
            ("Memory Throughput", "%", "24.86"),
            ("DRAM Throughput", "%", "20.1"),
            ("Compute (SM) Throughput", "%", "4.09"),
            ("Registers Per Thread", "register/thread", "16"),
            ("Waves Per SM", "", "1.94"),
        ]:
            rows.append(
                f'"{k}","kernel_{k % 7}","(1024, 1, 1)","(128, 1, 1)","SpeedOfLight",'
                f'"{metric}","{unit}","{value}","","",""'
            )
    path.write_text("\n".join(rows) + "\n")


async def _slow_then_fast(
    client: LanguageClient, method: str, params: dict[str, Any]
) -> tuple[list[types.CodeLens], str | None, bool, Any]:
    """Send a heavy request, then ask for lenses and a hover while it runs.

    Returns the lenses, the hover, whether both answered before the heavy request, and its
    answer.
    """
    uri = open_doc(client, SQUARE)
    def0 = line0_of(SQUARE, "def square_three_ways")
    slow = asyncio.ensure_future(client.protocol.send_request_async(method, params))
    await asyncio.sleep(0.2)  # the heavy request is written before the lens request
    items = await asyncio.wait_for(lenses(client, uri), 60)
    hover = await asyncio.wait_for(hover_text(client, uri, def0 + 3, 9), 60)
    first = not slow.done()
    answer = await asyncio.wait_for(slow, 300)
    assert titles(items, def0)[0] == "$(play) Profile"
    assert hover is not None and "not profiled yet" in hover
    return items, hover, first, answer


async def test_lenses_and_hovers_answer_while_a_big_trace_is_reduced(
    recorded: LanguageClient, tmp_path: Path
) -> None:
    trace = tmp_path / "big_trace.json"
    write_big_trace(trace)
    *_, first, answer = await _slow_then_fast(
        recorded, "kernelLens/traceFile", {"path": str(trace)}
    )
    assert answer.timeline.event_count == 2 * EVENTS
    assert first, "the lens and the hover waited for the trace: the event loop was blocked"


async def test_a_zoomed_window_does_not_block_the_lenses(
    recorded: LanguageClient, tmp_path: Path
) -> None:
    trace = tmp_path / "big_trace.json"
    write_big_trace(trace)
    window = {"path": str(trace), "start_us": 0, "end_us": 1000}
    *_, first, answer = await _slow_then_fast(recorded, "kernelLens/timelineWindow", window)
    assert list(answer.window) == [0, 1000]
    assert first, "the lens and the hover waited for the window: the event loop was blocked"


async def test_a_big_ncu_file_does_not_block_the_lenses(
    recorded: LanguageClient, tmp_path: Path
) -> None:
    table = tmp_path / "big_details.csv"
    write_big_ncu_csv(table)
    *_, first, answer = await _slow_then_fast(recorded, "kernelLens/ncuFile", {"path": str(table)})
    assert len(answer.kernels) == NCU_KERNELS and answer.kernels[0].duration_us == 4.16
    assert first, "the lens and the hover waited for the ncu file: the event loop was blocked"


async def test_closing_a_document_releases_its_results_and_diagnostics(
    slow_history: LanguageClient,
) -> None:
    # Under a delayed history read (not by timing): the first lens answer after the reopen
    # holds the restored result all the same (it failed once under load, issue 28 item 5).
    client = slow_history
    uri = open_doc(client, SQUARE)
    broken = SQUARE.read_text().replace("def square_mul(x):", "def square_mul(x)")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)],
        )
    )
    outcome = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile", arguments=[{"uri": uri, "function": "square_mul"}]
        )
    )
    assert outcome["error"]["kind"] == "syntax" and list(client.diagnostics[uri])

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    for _ in range(100):
        if not list(client.diagnostics[uri]):
            break
        await asyncio.sleep(0.05)
    assert list(client.diagnostics[uri]) == []

    # Reopened: no result survives (a fresh Profile lens), then a profile works again.
    uri = open_doc(client, SQUARE)
    def0 = line0_of(SQUARE, "def square_three_ways")
    assert titles(await lenses(client, uri), def0)[0] == "$(play) Profile"
    assert (await click_profile(client, uri, "def square_three_ways", SQUARE))["ok"] is True
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    uri = open_doc(client, SQUARE)
    # The server's own copy of the result went with the close; what comes back on reopen is the
    # run history's (issue 16: results survive a close and reopen), marked as such.
    refreshes = client.lens_refreshes  # type: ignore[attr-defined]
    row = titles(await lenses(client, uri), def0)
    assert (
        row[0].startswith("$(history) $(watch) ")
        and row[1].removesuffix(" longer") == "$(refresh) Re-profile"
    ), row
    # It waited for the read: no refresh was needed to bring the result in.
    assert client.lens_refreshes == refreshes  # type: ignore[attr-defined]


async def test_a_reopen_and_close_before_the_history_is_read_keeps_nothing(
    slow_history: LanguageClient,
) -> None:
    """A document closed while its history is being read gets nothing from that read; opened
    again, its first lens answer has the restored result."""
    client = slow_history
    uri = open_doc(client, SQUARE)
    def0 = line0_of(SQUARE, "def square_mul")
    assert (await click_profile(client, uri, "def square_mul", SQUARE))["ok"] is True
    close = types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    client.text_document_did_close(close)
    open_doc(client, SQUARE)  # the read starts …
    client.text_document_did_close(close)  # … and its document is gone before it ends
    uri = open_doc(client, SQUARE)
    row = titles(await lenses(client, uri), def0)
    assert row[0].startswith("$(history) $(watch) "), row


async def _agents_started(marker: Path, at_least: int, seconds: float = 30.0) -> int:
    for _ in range(int(seconds / 0.1)):
        count = len(marker.read_text().splitlines()) if marker.exists() else 0
        if count >= at_least:
            return count
        await asyncio.sleep(0.1)
    return len(marker.read_text().splitlines()) if marker.exists() else 0


async def _start_watched(client: LanguageClient, tmp: Path, *, trusted: bool) -> Path:
    marker = tmp / "started"
    command = [sys.executable, str(FAKE_AGENT), "--started", str(marker)]
    await initialize(client, {**OPTIONS, "workspaceTrusted": trusted, "agentCommand": command})
    return marker


@pytest_lsp.fixture(config=server_config())
async def watched_untrusted(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:
    lsp_client.marker = await _start_watched(  # type: ignore[attr-defined]
        lsp_client, tmp_path_factory.mktemp("agents"), trusted=False
    )
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config())
async def watched_trusted(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:
    lsp_client.marker = await _start_watched(  # type: ignore[attr-defined]
        lsp_client, tmp_path_factory.mktemp("agents"), trusted=True
    )
    yield
    await lsp_client.shutdown_session()


async def test_opening_a_python_file_warms_an_agent(watched_trusted: LanguageClient) -> None:
    client = watched_trusted
    marker: Path = client.marker  # type: ignore[attr-defined]
    await asyncio.sleep(0.5)
    assert not marker.exists(), "an agent started before any Python file was opened"
    open_doc(client, SQUARE)
    assert await _agents_started(marker, 1) >= 1, "no agent was warmed ahead of the click"


async def test_trust_granted_warms_an_agent_and_untrusted_runs_none(
    watched_untrusted: LanguageClient,
) -> None:
    client = watched_untrusted
    marker: Path = client.marker  # type: ignore[attr-defined]
    open_doc(client, SQUARE)
    await asyncio.sleep(1.0)
    assert not marker.exists(), "an agent started in an untrusted workspace"
    client.protocol.notify("kernelLens/setTrusted", {"trusted": True})
    assert await _agents_started(marker, 1) >= 1, "trust granted: no agent was warmed"
