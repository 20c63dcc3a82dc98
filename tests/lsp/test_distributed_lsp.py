"""*Profile on N ranks* through the language server (real pygls, a real agent, torchrun with two
CPU ranks on gloo): the lens on a file that calls init_process_group, and, after a click, the
collective on its line with its overlap, the slowest rank and the skew; the hover lists every
rank. A file that never calls init_process_group gets no such lens."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.conftest import KERNELS
from tests.lsp.client import (
    click,
    hover_text,
    initialize,
    lenses,
    line0_of,
    open_doc,
    server_config,
    titles,
)

STEP = KERNELS / "allreduce_step.py"
OPTIONS = {
    "timeoutSeconds": 150,
    "timing": {"warmupMs": 0, "budgetMs": 50, "reps": 3},
    "distributed": {"nprocPerNode": 2},
}


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.timeout(240)
async def test_profile_on_two_ranks_puts_the_all_reduce_on_its_line(
    client: LanguageClient,
) -> None:
    uri = open_doc(client, STEP)
    def0 = line0_of(STEP, "def step(x, w):")
    found = [
        lens
        for lens in await lenses(client, uri)
        if lens.range.start.line == def0 and lens.command
        and lens.command.title == "$(server-process) Profile on 2 ranks"
    ]  # fmt: skip
    assert found, titles(await lenses(client, uri), def0)
    assert found[0].command is not None
    assert list(found[0].command.arguments or []) == [
        {"uri": uri, "function": "step", "nproc_per_node": 2}
    ]
    outcome = await click(client, found[0])
    assert outcome.get("ok"), outcome
    ar0 = line0_of(STEP, "dist.all_reduce(y)")
    line = titles(await lenses(client, uri), ar0)
    assert any("all_reduce" in t and "overlapped" in t and "rank 0" in t for t in line), line
    hover = await hover_text(client, uri, ar0, 8) or ""
    assert "| 0" in hover and "| 1" in hover and "2 ranks · CPU (gloo)" in hover, hover
    # the row still offers it, for the next run
    assert "$(server-process) Profile on 2 ranks" in titles(await lenses(client, uri), def0)


async def test_no_ranks_lens_without_init_process_group(client: LanguageClient) -> None:
    path = KERNELS / "square.py"
    uri = open_doc(client, path)
    assert not any("ranks" in t for t in titles(await lenses(client, uri)))
