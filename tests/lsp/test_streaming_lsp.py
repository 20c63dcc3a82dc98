"""A profile streams its result (issue 28 item 1): the per-line lenses show while the summary
still says it is timing, they keep their places, and the final lenses are those of the same
result not streamed.

One test runs the real agent on the CPU (a function whose timing runs its whole budget, so the
intermediate state lasts); the other replays a recorded H200 result through the stand-in agent,
which holds the job between its partial and its end until the test says go (deterministic), with
an unwritable history so that no comparison makes two runs' lenses differ.
"""

from __future__ import annotations

import asyncio
import os
import sys
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
    initialize,
    lenses,
    line0_of,
    lsp_command,
    open_doc,
    server_config,
)

SPIN = "$(sync~spin) "

NOISY = """\
import random
import time

import torch


# kernel-lens: inputs = (torch.ones(64),)
def noisy(x):
    y = x * x
    time.sleep(random.random() * 0.002)
    return y + 1
"""


def _rows(items: list[types.CodeLens]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for lens in items:
        if lens.command is not None:
            out.setdefault(lens.range.start.line, []).append(lens.command.title)
    return out


async def _watch_until(
    client: LanguageClient, uri: str, job: asyncio.Future[Any], seen: list[dict[int, list[str]]]
) -> None:
    """Ask for the lenses every 50 ms until ``job`` ends, keeping each distinct answer."""
    while not job.done():
        rows = _rows(await lenses(client, uri))
        if not seen or seen[-1] != rows:
            seen.append(rows)
        await asyncio.sleep(0.05)


@pytest_lsp.fixture(config=server_config())
async def slow_timing(lsp_client: LanguageClient) -> Any:
    await initialize(
        lsp_client,
        {**OPTIONS, "timing": {"warmupMs": 5, "budgetMs": 1500, "reps": 0}},
    )
    yield
    await lsp_client.shutdown_session()


async def test_a_real_profile_shows_its_lines_while_it_times(
    slow_timing: LanguageClient, tmp_path: Path
) -> None:
    client = slow_timing
    path = tmp_path / "noisy.py"
    path.write_text(NOISY)
    uri = open_doc(client, path)
    def0 = line0_of(path, "def noisy")
    mul0 = line0_of(path, "y = x * x")
    job = asyncio.ensure_future(click_profile(client, uri, "def noisy", path))
    seen: list[dict[int, list[str]]] = []
    await asyncio.wait_for(_watch_until(client, uri, job, seen), 180)
    outcome = await job
    assert outcome["ok"] is True, outcome
    final = _rows(await lenses(client, uri))
    # Some state before the end had the lines' ops while the summary still said "timing…".
    streamed = [
        rows
        for rows in seen
        if len(rows.get(def0, [])) == 1
        and rows[def0][0].startswith(SPIN)
        and "timing…" in rows[def0][0]
        and any("aten::mul" in t for t in rows.get(mul0, []))
    ]
    assert streamed, seen
    # One summary lens on the row while it ran (replaced, never added to); the lines kept
    # their places; the end shows no spinner, the whole timing and the same lines.
    for rows in seen:
        assert sum(t.startswith(SPIN) for t in rows.get(def0, [])) <= 1, rows
    lines = {k for k in streamed[-1] if k != def0}
    assert lines and lines <= set(final), (streamed[-1], final)
    assert final[def0][0].startswith("$(watch) ") and not any(SPIN in t for t in final[def0])
    # A timing that runs its budget says so … (converging states carried the interval).
    assert any("CI ±" in rows[def0][0] for rows in seen if rows.get(def0)), seen


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=lsp_command(),
        server_env={**os.environ, "KERNEL_LENS_HISTORY": "/dev/null/history"},
    )
)
async def gated(lsp_client: LanguageClient, tmp_path_factory: Any) -> Any:
    gate = tmp_path_factory.mktemp("gate")
    lsp_client.gate = gate  # type: ignore[attr-defined]
    command = [sys.executable, str(FAKE_AGENT), "--stream", str(gate)]
    await initialize(lsp_client, {**OPTIONS, "agentCommand": command})
    yield
    await lsp_client.shutdown_session()


async def _until(client: LanguageClient, uri: str, ok: Any, seconds: float = 60) -> Any:
    for _ in range(int(seconds / 0.05)):
        rows = _rows(await lenses(client, uri))
        if ok(rows):
            return rows
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {_rows(await lenses(client, uri))}")


async def test_streamed_lenses_end_as_the_same_result_not_streamed(gated: LanguageClient) -> None:
    client = gated
    gate: Path = client.gate  # type: ignore[attr-defined]
    uri = open_doc(client, SQUARE)
    def0 = line0_of(SQUARE, "def square_three_ways")
    square0 = line0_of(SQUARE, "a = torch.square(x)")
    job = asyncio.ensure_future(click_profile(client, uri, "def square_three_ways", SQUARE))
    # The agent holds the job after its partial: the lines are there, the summary runs.
    during = await _until(
        client, uri, lambda rows: any("aten::square" in t for t in rows.get(square0, []))
    )
    assert not job.done()
    assert len(during[def0]) == 1 and during[def0][0].startswith(SPIN), during[def0]
    assert "timing…" in during[def0][0] and "kernel" in during[def0][0], during[def0]
    (gate / "go").touch()
    assert (await asyncio.wait_for(job, 60))["ok"] is True
    streamed = await lenses(client, uri)
    assert {k for k in during if k != def0} <= set(_rows(streamed))
    # The same recorded result again, this time not streamed: the very same lenses.
    (gate / "plain").touch()
    assert (await click_profile(client, uri, "def square_three_ways", SQUARE))["ok"] is True
    plain = await lenses(client, uri)
    assert [(x.range, x.command) for x in streamed] == [(x.range, x.command) for x in plain]
