"""Report panel data, sweeps with the best applied as an edit, Nsight Compute without a GPU."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import HAS_CUDA
from tests.lsp.client import (
    OPTIONS,
    ROOT,
    click_profile,
    initialize,
    lenses,
    line0_of,
    open_doc,
    server_config,
)

SQUARE = ROOT / "kernels" / "square.py"
TRITON = ROOT / "kernels" / "triton_square.py"
DATA = ROOT / "tests" / "data" / "h200"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    lsp_client.applied_edits = []  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(
        ls: LanguageClient, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        ls.applied_edits.append(params)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    yield
    await lsp_client.shutdown_session()


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), 300)


async def test_report_after_a_profile_has_timeline_lanes(client: LanguageClient) -> None:
    uri = open_doc(client, SQUARE)
    assert (await click_profile(client, uri, "def square_three_ways", SQUARE))["ok"]
    def0 = line0_of(SQUARE, "def square_three_ways")
    row = [x.command for x in await lenses(client, uri) if x.range.start.line == def0 and x.command]
    # The row is short: summary, Re-profile, Report, and the rest behind "…".
    assert [c.title for c in row[2:]] == ["$(graph) Report", "More…"]
    more = row[3].arguments[0]  # type: ignore[index]
    assert row[3].command == "kernelLens.moreActions" and more["function"] == "square_three_ways"
    labels = [item["label"] for item in more["items"]]
    assert labels == [
        "$(symbol-namespace) Generated Code",
        "$(pulse) Nsight Compute",
        "$(shield) Check Memory",
        "$(database) Profile Memory",
        "$(zap) Eager vs Compiled",
        "$(pinned) Set as Baseline",
    ]
    ncu = more["items"][1]
    if HAS_CUDA:
        assert ncu["command"] == "kernelLens.runNcu"
    else:  # offered with its reason, not as a click that fails
        assert ncu["disabled"] == "needs an NVIDIA GPU: this function ran on the CPU"
        assert more["items"][2]["disabled"] == ncu["disabled"]  # Check Memory, likewise
    report = await request(
        client, "kernelLens/report", {"uri": uri, "function": "square_three_ways"}
    )
    assert report.profile.function == "square_three_ways"
    lanes = report.timeline.lanes
    cpu = next(
        lane
        for lane in lanes
        if lane.kind == "cpu" and any(e.name.startswith("src:") for e in lane.events)
    )
    lines = {e.line for e in cpu.events if e.name.startswith("aten::")}
    assert lines == {def0 + 2, def0 + 3, def0 + 4}
    assert report.ncu is None and report.sweep is None


async def test_sweep_lens_then_apply_the_best_as_an_edit(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    def0 = line0_of(TRITON, "def square(x")
    wanted = "$(settings) Sweep BLOCK_SIZE"
    sweep_lens = next(
        x for x in await lenses(client, uri)
        if x.range.start.line == def0 and x.command and x.command.title == wanted
    )  # fmt: skip
    assert sweep_lens.command is not None
    args = dict(sweep_lens.command.arguments[0])  # type: ignore[index]
    args["values"] = [256, 1024, 4096]
    reveal = client.protocol.wait_for_notification_async("kernelLens/revealReport")
    outcome = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="kernelLens.sweep", arguments=[args])
        ),
        300,
    )
    assert outcome["ok"] and [r["value"] for r in outcome["rows"]] == [256, 1024, 4096]
    note = await asyncio.wait_for(reveal, 10)
    assert (note.function, note.tab) == ("square", "sweep")
    report = await request(client, "kernelLens/report", {"uri": uri, "function": "square"})
    assert report.sweep.best.value == outcome["best"]["value"]

    applied = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.applyParameter",
            arguments=[{"uri": uri, "function": "square", "param": "BLOCK_SIZE", "value": 512}],
        )
    )
    assert applied == {"ok": True, "edits": 2}
    (edit,) = client.applied_edits  # type: ignore[attr-defined]
    changes = edit.edit.changes[uri]
    src = TRITON.read_text().splitlines()
    for change in changes:
        line = src[change.range.start.line]
        old = line[change.range.start.character : change.range.end.character]
        assert old == "1024" and change.new_text == "512"
    assert {c.range.start.line for c in changes} == {def0, def0 - 1}


async def test_ncu_without_a_gpu_says_so(client: LanguageClient) -> None:
    if HAS_CUDA:
        pytest.skip("this machine has a GPU: tests/gpu/test_gpu_ncu_sweep.py runs ncu on it")
    from kernel_lens.traces.ncu_files import find_ncu

    uri = open_doc(client, SQUARE)
    outcome = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.runNcu", arguments=[{"uri": uri, "function": "square_mul"}]
            )
        ),
        300,
    )
    # With or without ncu installed, a machine without a GPU says that it has none.
    assert outcome["ok"] is False and outcome["error"]["kind"] in ("unsupported", "runtime")
    assert "this machine has none (torch sees no CUDA)" in outcome["error"]["message"]
    if find_ncu() is None:
        assert outcome["error"]["kind"] == "unsupported"
        assert "Nsight Compute (ncu) was not found" in outcome["error"]["message"]


async def test_trace_and_ncu_files_open_as_views(client: LanguageClient) -> None:
    trace = await request(
        client, "kernelLens/traceFile", {"path": str(DATA / "matmul_relu_trace.json")}
    )
    assert trace.summary.device == "NVIDIA H200"
    assert [lane.kind for lane in trace.timeline.lanes][-1] == "gpu"
    ncu = await request(
        client, "kernelLens/ncuFile", {"path": str(DATA / "triton_fused_details.csv")}
    )
    assert ncu.kernels[0].name == "triton_poi_fused_add_mul_relu_0"
    try:
        await request(client, "kernelLens/traceFile", {"path": "/nonexistent.json"})
    except Exception as exc:
        assert "nonexistent.json" in str(exc)
    else:
        raise AssertionError("expected an error")


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute not installed")
async def test_ncu_hints_land_on_the_launching_line(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    outcome = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.runNcu", arguments=[{"uri": uri, "function": "square_small"}]
            )
        ),
        600,
    )
    assert outcome["ok"], outcome
    line0 = line0_of(TRITON, "return square(x, BLOCK_SIZE=1024)")
    hints = [d for d in client.diagnostics[uri] if d.source == "Nsight Compute"]
    assert hints and {d.range.start.line for d in hints} == {line0}
    assert any("Small Grid" in d.message for d in hints)
    report = await request(client, "kernelLens/report", {"uri": uri, "function": "square_small"})
    assert report.ncu.kernels[0].name == "square_kernel"


async def test_timeline_window_gives_detail_when_zoomed(client: LanguageClient) -> None:
    path = str(DATA / "matmul_relu_trace.json")
    overview = await request(client, "kernelLens/traceFile", {"path": path})
    span = overview.timeline.span_us
    gpu = await request(
        client, "kernelLens/timelineWindow",
        {"path": path, "start_us": span * 0.8, "end_us": span * 0.95},
    )  # fmt: skip
    assert list(gpu.window) == [span * 0.8, span * 0.95]
    kernels = [e for lane in gpu.lanes if lane.kind == "gpu" for e in lane.events]
    assert [e.line for e in kernels] == [10, 11, 11]
