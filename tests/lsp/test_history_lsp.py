"""The optimisation loop through the language server, with the real agent on this machine:
profile, edit the function, profile → the delta on the lenses; Set as Baseline (a click on the
summary lens), edit, profile → the lens names the baseline; the history and compare requests
(answers recorded in tests/data/protocol/ and checked against their declared types)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.answers import ask, capture_answers, record_or_compare
from tests.lsp.client import (
    OPTIONS,
    ROOT,
    click_profile,
    hover_text,
    initialize,
    lenses,
    open_doc,
    server_config,
    titles,
)

DOC = ROOT / "tests" / "data" / "examples" / "history_scale.py"
FAST = DOC.read_text()
SLOW = FAST.replace(
    "    y = x * 2\n",
    "    y = x.mul(2).exp().exp().mul(2).exp()\n    for _ in range(200):\n        y = y + 1\n",
)


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timing": {"warmupMs": 5, "budgetMs": 150, "reps": 0}})
    lsp_client.raw = capture_answers(lsp_client)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def edit(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def line0(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


async def summary(client: LanguageClient, uri: str, text: str) -> types.CodeLens:
    def0 = line0(text, "def scale")
    row = [x for x in await lenses(client, uri) if x.range.start.line == def0 and x.command]
    assert row and row[0].command is not None, titles(await lenses(client, uri))
    return row[0]


@pytest.mark.serial  # reads verdicts of real timings: alone, not beside the parallel workers
async def test_profile_edit_profile_then_baseline(client: LanguageClient) -> None:
    raw = client.raw  # type: ignore[attr-defined]
    uri = open_doc(client, DOC, FAST)
    assert (await click_profile(client, uri, "def scale", DOC))["ok"]
    first = await summary(client, uri, FAST)
    assert first.command is not None
    # The first run has nothing to compare with.
    assert " vs " not in first.command.title and "≈ same" not in first.command.title

    # Edit: much more work on the first line and a loop: slower, with the change on the line.
    edit(client, uri, SLOW, 2)
    assert (await click_profile(client, uri, "def scale", DOC))["ok"]
    slower = await summary(client, uri, SLOW)
    assert slower.command is not None
    assert re.search(r"· (\+\d+(\.\d)?%|×[\d.]+) vs \d", slower.command.title), slower.command.title
    changed = titles(await lenses(client, uri), line0(SLOW, "y = x.mul(2)"))
    assert changed and "1 → 5 ops" in changed[0], changed

    # A click on the summary lens pins nothing (issue 41: a stray click did, silently);
    # Set as Baseline is an explicit action of More… (a toast with Undo on the client), which
    # sends kernelLens/setBaseline: this run (run 2) becomes the baseline.
    assert slower.command.command == ""
    row = [x for x in await lenses(client, uri) if x.range.start.line == line0(SLOW, "def scale")]
    [more] = [x for x in row if x.command and x.command.title == "More…"]
    items = (more.command.arguments or [{}])[0]["items"]  # type: ignore[union-attr]
    [pin] = [i for i in items if i["label"] == "$(pinned) Set as Baseline"]
    assert pin["command"] == "kernelLens.setBaselineAtCursor"
    pinned = await ask(client, raw, "kernelLens/setBaseline", pin["arguments"][0])
    assert pinned["function"] == "scale" and pinned["baseline"]["id"] == "2"
    assert (await summary(client, uri, SLOW)).command.title.count("· $(pinned) baseline ·")  # type: ignore[union-attr]

    # Back to the fast text: the lens compares with the baseline, and says so.
    edit(client, uri, FAST, 3)
    assert (await click_profile(client, uri, "def scale", DOC))["ok"]
    faster = (await summary(client, uri, FAST)).command
    assert faster is not None
    assert re.search(r"· \u2212\d+(\.\d)?% vs baseline \d", faster.title), faster.title
    back = titles(await lenses(client, uri), line0(FAST, "y = x * 2"))
    assert back and "5 → 1 ops" in back[0], back

    history = await ask(client, raw, "kernelLens/history", {"uri": uri, "function": "scale"})
    assert [r["id"] for r in history["runs"]] == ["1", "2", "3"]
    assert history["baseline"] == "2"
    assert history["runs"][0]["verdict"] is None
    assert (
        history["runs"][1]["verdict"]["significant"]
        and history["runs"][1]["text"]
        == (SLOW.splitlines()[line0(SLOW, "# kernel-lens") + 1 : line0(SLOW, "return y + 1") + 1])
    )
    assert history["current_text"] == history["runs"][0]["text"]
    record_or_compare("kernelLens/history", history)

    compared = await ask(
        client,
        raw,
        "kernelLens/compare",
        {"uri": uri, "function": "scale", "before": "baseline", "after": "-1"},
    )
    assert compared["reference"] == "baseline" and compared["reference_id"] == "2"
    assert compared["verdict"]["significant"] and compared["verdict"]["change_pct"] < 0
    assert compared["before"]["id"] == "2" and compared["after"]["id"] == "3"
    record_or_compare("kernelLens/compare", compared)

    position = {"line": line0(FAST, "return y + 1"), "character": 4}
    unpinned = await ask(
        client, raw, "kernelLens/setBaseline", {"uri": uri, "position": position, "run": "1"}
    )
    assert unpinned["baseline"]["id"] == "1"
    record_or_compare("kernelLens/setBaseline", unpinned)
    cleared = await ask(
        client, raw, "kernelLens/setBaseline", {"uri": uri, "function": "scale", "clear": True}
    )
    assert cleared == {"function": "scale", "baseline": None}


async def test_history_requests_explain_what_is_missing(client: LanguageClient) -> None:
    from pygls.exceptions import JsonRpcException

    raw = client.raw  # type: ignore[attr-defined]
    uri = open_doc(client, DOC, FAST)
    empty = await ask(client, raw, "kernelLens/history", {"uri": uri, "function": "scale"})
    assert empty["runs"] == [] and empty["baseline"] is None
    for method, params, message in (
        ("kernelLens/setBaseline", {"uri": uri, "function": "scale"}, "profile scale first"),
        ("kernelLens/compare", {"uri": uri, "function": "scale"}, "scale has no run -2"),
    ):
        try:
            await asyncio.wait_for(client.protocol.send_request_async(method, params), 60)
        except JsonRpcException as exc:
            assert message in str(exc), exc
        else:
            raise AssertionError(f"{method} answered without a history")


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=server_config().server_command,
        # A history folder that cannot be made (a path through /dev/null).
        server_env={**os.environ, "KERNEL_LENS_HISTORY": "/dev/null/history"},
    )
)
async def no_history(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timing": {"warmupMs": 5, "budgetMs": 50, "reps": 0}})
    yield
    await lsp_client.shutdown_session()


async def test_a_history_that_cannot_be_written_costs_the_comparison_not_the_profile(
    no_history: LanguageClient,
) -> None:
    from pygls.exceptions import JsonRpcException

    uri = open_doc(no_history, DOC, FAST)
    assert (await click_profile(no_history, uri, "def scale", DOC))["ok"]
    row = (await summary(no_history, uri, FAST)).command
    assert row is not None and " ±" in row.title and " vs " not in row.title
    assert any("history of scale: not recorded" in m.message for m in no_history.log_messages), [
        m.message for m in no_history.log_messages
    ]
    # Not silently: the user is shown it once (a warning), as well as the log.
    shown = [m.message for m in no_history.messages if "history of scale" in m.message]
    assert len(shown) == 1 and "not recorded" in shown[0], no_history.messages
    try:
        await asyncio.wait_for(
            no_history.protocol.send_request_async(
                "kernelLens/history", {"uri": uri, "function": "scale"}
            ),
            60,
        )
    except JsonRpcException as exc:
        assert "cannot read /dev/null/history/" in str(exc), exc
    else:
        raise AssertionError("kernelLens/history answered from an unreadable history")


LOCKED_HISTORY = Path(tempfile.mkdtemp(prefix="kernel-lens-locked-history-"))


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=server_config().server_command,
        server_env={**os.environ, "KERNEL_LENS_HISTORY": str(LOCKED_HISTORY)},
    )
)
async def locked(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timing": {"warmupMs": 5, "budgetMs": 50, "reps": 0}})
    yield
    await lsp_client.shutdown_session()


@pytest.mark.serial  # bounds the answers behind a locked store (2 s, 10 s)
async def test_a_locked_history_never_holds_the_server(locked: LanguageClient) -> None:
    """Issue 39 item 5: another process holds the store's write lock (a terminal recording a
    run): Set as Baseline says it is locked within seconds, and meanwhile lenses and hovers of
    the document answer at once — the loop is never held by the store."""
    from pygls.exceptions import JsonRpcException

    uri = open_doc(locked, DOC, FAST)
    assert (await click_profile(locked, uri, "def scale", DOC))["ok"]
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\n"
            "print('locked', flush=True)\n"
            "time.sleep(60)\n",
            str(LOCKED_HISTORY / "history.sqlite3"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        pin = asyncio.ensure_future(
            locked.protocol.send_request_async(
                "kernelLens/setBaseline", {"uri": uri, "function": "scale"}
            )
        )
        await asyncio.sleep(0.2)
        asked = time.monotonic()
        text = await hover_text(locked, uri, line0(FAST, "y = x * 2"), 8)
        row = await lenses(locked, uri)
        answered = time.monotonic() - asked
        assert text is not None and row, (text, row)
        assert answered < 2.0, f"the hover and lenses waited {answered:.1f} s behind the store"
        try:
            await asyncio.wait_for(pin, 30)
        except JsonRpcException as exc:
            assert "locked by another process" in str(exc), exc
        else:
            raise AssertionError("Set as Baseline pinned through another process's lock")
        waited = time.monotonic() - started
        assert waited < 10, f"Set as Baseline took {waited:.1f} s to say the store is locked"
    finally:
        holder.kill()
        holder.wait()
    # Once the lock is gone the same action works.
    pinned = await asyncio.wait_for(
        locked.protocol.send_request_async(
            "kernelLens/setBaseline", {"uri": uri, "function": "scale"}
        ),
        30,
    )
    assert pinned is not None and "scale" in str(pinned), pinned
