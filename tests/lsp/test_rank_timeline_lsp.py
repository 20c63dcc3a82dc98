"""The Report of a distributed step (issue 27 item 3), through a real language server: after
*Profile on 2 ranks*, ``kernelLens/report``'s timeline has one lane group per rank, aligned on
the ranks' first collective, the straggler marked and the skew at each collective; a zoomed
``kernelLens/timelineWindow`` with the ranks answers every rank's lanes at its shift.

The agent is ``fake_agent.py --distributed``: it answers the job with a recorded 2-rank gloo run
of ``kernels/allreduce_step.py::step`` (tests/data/distributed/report/: the merged result and the
ranks' traces; rank 1 sleeps 20 ms before each all_reduce), so the test needs no torchrun on this
2-core machine; the server, its trace reading and the merge are the real ones. The torchrun path
itself is tests/lsp/test_distributed_lsp.py's."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from kernel_lens.wire.lsp import RESULT_TYPES, Timeline
from tests.conftest import KERNELS
from tests.lsp.answers import check_type
from tests.lsp.client import (
    FAKE_AGENT,
    ROOT,
    click,
    initialize,
    lenses,
    line0_of,
    open_doc,
    server_config,
)

STEP = KERNELS / "allreduce_step.py"
DATA = ROOT / "tests" / "data" / "distributed" / "report"
OPTIONS = {
    "timeoutSeconds": 60,
    "timing": {"warmupMs": 0, "budgetMs": 50, "reps": 3},
    "distributed": {"nprocPerNode": 2},
    "agentCommand": [sys.executable, str(FAKE_AGENT), "--distributed"],
}


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


def _plain(value: Any) -> Any:
    """pygls' namedtuples as plain JSON-like data."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return _plain(await asyncio.wait_for(client.protocol.send_request_async(method, params), 60))


async def test_report_timeline_of_a_distributed_step_has_a_lane_group_per_rank(
    client: LanguageClient,
) -> None:
    uri = open_doc(client, STEP)
    def0 = line0_of(STEP, "def step(x, w):")
    ranks_lens = next(
        lens
        for lens in await lenses(client, uri)
        if lens.range.start.line == def0 and lens.command
        and lens.command.title == "$(server-process) Profile on 2 ranks"
    )  # fmt: skip
    assert (await click(client, ranks_lens))["ok"]
    report = await request(client, "kernelLens/report", {"uri": uri, "function": "step"})
    timeline = report["timeline"]
    check_type(timeline, Timeline)  # the wire's type, rank groups included
    paths = [str(DATA / f"step-rank{r}.json") for r in (0, 1)]
    assert [(lane["id"], lane["title"], lane["rank"]) for lane in timeline["lanes"]] == [
        ("rank0/cpu-30961-30961", "CPU thread 30961", 0),
        ("rank0/cpu-30961-31024", "CPU thread 31024 · gloo collectives", 0),
        ("rank0/cpu-30961-31025", "CPU thread 31025 · gloo collectives", 0),
        ("rank1/cpu-30962-30962", "CPU thread 30962", 1),
        ("rank1/cpu-30962-31022", "CPU thread 31022 · gloo collectives", 1),
        ("rank1/cpu-30962-31023", "CPU thread 31023 · gloo collectives", 1),
    ]
    # rank 1 (asleep 20 ms) reached its first all_reduce 20.4 ms later after its trace's start
    # than rank 0: rank 0 is drawn 20.4 ms later, and both first all_reduces start together
    assert [
        (g["rank"], g["path"], g["shift_us"], g["first_collective_us"], g["straggler"],
         g["wait_us"])
        for g in timeline["ranks"]
    ] == [
        (0, paths[0], 20413.085, 973.879, False, 43438.475),
        (1, paths[1], 0.0, 21386.964, True, 0.0),
    ]  # fmt: skip
    recorded = json.loads((DATA / "step-result.json").read_text())["distributed"]
    assert [(c["index"], c["name"], c["line"], c["skew_us"]) for c in timeline["collectives"]] == [
        (c["index"], c["name"], c["line"], c["skew_us"]) for c in recorded["collectives"]
    ]
    assert timeline["collectives"][0]["starts"] == [21386.964, 21386.964]
    assert timeline["collectives"][1]["starts"] == [48473.674, 47954.729]
    first_gloo = [
        min(e["start"] for e in lane["events"] if e["name"] == "gloo:all_reduce")
        for lane in timeline["lanes"]
        if lane["id"] in ("rank0/cpu-30961-31025", "rank1/cpu-30962-31023")
    ]
    assert first_gloo == [pytest.approx(21386.964, abs=1e-3)] * 2  # shifts are to the ns
    assert timeline["path"] == paths[0] and timeline["span_us"] == 72027.047

    # zoomed in around the first all_reduce: every rank's lanes, at the same shifts
    window = await request(
        client,
        "kernelLens/timelineWindow",
        {
            "path": paths[0],
            "start_us": 21000.0,
            "end_us": 23000.0,
            "ranks": [{"path": g["path"], "shift_us": g["shift_us"]} for g in timeline["ranks"]],
        },
    )
    check_type(window, RESULT_TYPES["kernelLens/timelineWindow"])
    assert window["window"] == [21000.0, 23000.0]
    assert {lane["rank"] for lane in window["lanes"]} == {0, 1}
    starts = sorted(
        (lane["rank"], round(e["start"], 3))
        for lane in window["lanes"]
        for e in lane["events"]
        if e["name"] == "gloo:all_reduce"
    )
    assert starts == [(0, 21386.964), (1, 21386.964)]
    events = [e for lane in window["lanes"] for e in lane["events"]]
    assert all(e["start"] <= 23000.0 and e["start"] + e["dur"] >= 21000.0 for e in events)
