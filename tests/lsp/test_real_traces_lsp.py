"""The language server's trace view reads every real trace of ``tests/data/real_traces`` right
(issue 49): ``kernelLens/traceFile`` (what the editor's trace view asks) gives the totals counted
independently from each file's JSON (``totals.json``), and the timeline has the lanes of each
device: the 2021 schema's GPU streams, an MTIA device named MTIA."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.answers import ask, capture_answers
from tests.lsp.client import OPTIONS, initialize, lsp_command
from tests.traces import REAL_TRACES as DATA
from tests.traces import TOTALS, check_totals

CACHE = Path(tempfile.mkdtemp(prefix="kernel-lens-real-traces-"))


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


async def test_the_trace_view_gives_the_independent_totals(client: LanguageClient) -> None:
    raw = capture_answers(client)
    for name, want in sorted(TOTALS.items()):
        answer = await ask(client, raw, "kernelLens/traceFile", {"path": str(DATA / name)})
        summary = answer["summary"]
        check_totals(summary, want, all_kernels=False)  # the view keeps the top 20 kernels
        lanes = {lane["kind"]: lane for lane in answer["timeline"]["lanes"]}
        if want["kernel_calls"]:
            assert "gpu" in lanes, name
        if name.startswith("kineto_2021"):
            assert {"cpu", "runtime", "gpu"} <= set(lanes), name
        if want["device_kind"] == "MTIA":
            assert lanes["runtime"]["title"] == "MTIA runtime"
            assert lanes["gpu"]["title"].startswith("MTIA 17 · stream ")
    # a second reading of each comes from the cache folder: the same numbers
    again = await ask(client, raw, "kernelLens/traceFile", {"path": str(DATA / name)})
    check_totals(again["summary"], TOTALS[name], all_kernels=False)
