"""One recorded answer per custom request (issue 9 item 3), checked against the declared result
types of ``kernel_lens.wire.lsp`` (``RESULT_TYPES``).

Each test runs the real server (pytest-lsp over stdio), asks one ``kernelLens/*`` request (by
``position`` where the request takes one, so the server's resolution is exercised) and checks the
raw JSON answer against its declared type. The answer is written to
``tests/data/protocol/<method with / replaced by _>.json`` when the file is missing or when
``KERNEL_LENS_RECORD_PROTOCOL=1``; otherwise the recorded file is checked against the same type
and must have the live answer's keys. The extension's TypeScript tests check the same files with
their guards.

Where an answer needs a GPU (Nsight Compute), the agent is the recorded-H200 stand-in
(``fake_agent.py``) for that step only; everything else comes from the real agent on this machine.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from kernel_lens.wire.lsp import RESULT_TYPES
from tests.lsp.answers import (
    PROTOCOL,
    TypeMismatchError,
    ask,
    capture_answers,
    check_type,
    record_or_compare,
)
from tests.lsp.client import (
    FAKE_AGENT,
    OPTIONS,
    ROOT,
    click_profile,
    initialize,
    line0_of,
    module_server_config,
    open_doc,
    server_config,
)

H200 = ROOT / "tests" / "data" / "h200"
TRITON = ROOT / "kernels" / "triton_square.py"
FUSION = ROOT / "kernels" / "fusion.py"
INLINE = ROOT / "kernels" / "inline_square.py"


# One server for the module (issue 37: a server and its agent started once, not per test): each
# test opens its own document and asks one request, so no test depends on another's state. The
# report test changes the agent command at run time and has a server of its own.
in_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=module_server_config(), scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    lsp_client.raw = capture_answers(lsp_client)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config(), loop_scope="module")
async def own_client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    lsp_client.raw = capture_answers(lsp_client)  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def position(path: Path, text: str, column: int = 4) -> dict[str, int]:
    return {"line": line0_of(path, text), "character": column}


def test_the_checker_rejects_what_does_not_match() -> None:
    """The checker is the test's teeth: a wrong answer must fail it."""
    timeline = json.loads(
        (ROOT / "tests" / "data" / "report" / "matmul_relu_timeline.json").read_text()
    )
    check_type(timeline, RESULT_TYPES["kernelLens/timelineWindow"])
    for broken in (
        {k: v for k, v in timeline.items() if k != "lanes"},
        {**timeline, "span_us": "long"},
        {**timeline, "lanes": [{**timeline["lanes"][0], "kind": "tpu"}]},
        {**timeline, "kept": True},
    ):
        with pytest.raises(TypeMismatchError):
            check_type(broken, RESULT_TYPES["kernelLens/timelineWindow"])


@in_module_loop
async def test_functions(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    answer = await ask(client, client.raw, "kernelLens/functions", {"uri": uri})  # type: ignore[attr-defined]
    assert answer["functions"] == [
        {
            "name": "square_kernel",
            "line": line0_of(TRITON, "def square_kernel"),
            "kind": "triton_kernel",
        },
        {"name": "square", "line": line0_of(TRITON, "def square(x"), "kind": "function"},
        {"name": "square_small", "line": line0_of(TRITON, "def square_small"), "kind": "function"},
    ]
    record_or_compare("kernelLens/functions", answer)


@in_module_loop
async def test_assembly_by_position(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    params = {"uri": uri, "position": position(TRITON, "tl.load("), "stage": "ptx", "arch": 90}
    answer = await ask(client, client.raw, "kernelLens/assembly", params)  # type: ignore[attr-defined]
    assert answer["kernel"] == "square_kernel" and answer["arch"] == "sm_90"
    assert ".target sm_90a" in answer["asm"]
    record_or_compare("kernelLens/assembly", answer)


@in_module_loop
async def test_asm_diff_of_two_block_sizes(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    params = {
        "a": {"uri": uri, "kernel": "square_kernel", "overrides": {"BLOCK_SIZE": "64"}},
        "b": {"uri": uri, "kernel": "square_kernel"},
        "stage": "ptx",
        "arch": 90,
    }
    answer = await ask(client, client.raw, "kernelLens/asmDiff", params)  # type: ignore[attr-defined]
    assert answer["a"]["title"].startswith(
        "square_kernel · Triton · triton_square.py · BLOCK_SIZE=64"
    )
    assert answer["verdict"].startswith("B loads 128 bits per thread per instruction, A 32")
    assert answer["a"]["normalised"]["text"].startswith("// A: square_kernel")
    record_or_compare("kernelLens/asmDiff", answer)


@in_module_loop
async def test_positions_outside_say_where_to_put_the_cursor(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    outside = position(TRITON, "DEVICE = ", 0)
    with pytest.raises(JsonRpcException) as exc:
        await ask(client, client.raw, "kernelLens/assembly", {"uri": uri, "position": outside})  # type: ignore[attr-defined]
    assert (
        f"put the cursor in a @triton.jit kernel (line {outside['line'] + 1} is not in one)"
        in str(exc.value)
    )
    with pytest.raises(JsonRpcException) as exc:
        await ask(
            client,
            client.raw,
            "kernelLens/report",
            {"uri": uri, "position": position(TRITON, "tl.load(")},
        )  # type: ignore[attr-defined]
    assert "square_kernel is a @triton.jit kernel" in str(exc.value)
    with pytest.raises(JsonRpcException) as exc:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.profile", arguments=[{"uri": uri, "position": outside}]
            )
        )
    assert "put the cursor in a function that launches kernels" in str(exc.value)


@in_module_loop
async def test_generated_code_by_position(client: LanguageClient) -> None:
    uri = open_doc(client, FUSION)
    params = {"uri": uri, "position": position(FUSION, "def matmul_relu", 8)}
    answer = await ask(client, client.raw, "kernelLens/generatedCode", params)  # type: ignore[attr-defined]
    assert answer["function"] == "matmul_relu"
    record_or_compare("kernelLens/generatedCode", answer)


@in_module_loop
async def test_inline_extension(client: LanguageClient) -> None:
    from kernel_lens.agent.stages.inline_ext import find_nvcc

    if find_nvcc() is None:
        path = PROTOCOL / "kernelLens_inlineExtension.json"
        if not path.exists():
            pytest.skip("nvcc not installed and no recorded answer")
        check_type(json.loads(path.read_text()), RESULT_TYPES["kernelLens/inlineExtension"])
        return
    uri = open_doc(client, INLINE)
    answer = await ask(client, client.raw, "kernelLens/inlineExtension", {"uri": uri})  # type: ignore[attr-defined]
    assert answer["modules"] and answer["modules"][0]["ptx"]
    record_or_compare("kernelLens/inlineExtension", answer)


@in_module_loop
async def test_trace_file_and_window(client: LanguageClient) -> None:
    path = str(H200 / "matmul_relu_trace.json")
    trace = await ask(client, client.raw, "kernelLens/traceFile", {"path": path})  # type: ignore[attr-defined]
    assert trace["summary"]["device"] == "NVIDIA H200"
    record_or_compare("kernelLens/traceFile", trace)
    span = trace["timeline"]["span_us"]
    window = await ask(
        client, client.raw, "kernelLens/timelineWindow",  # type: ignore[attr-defined]
        {"path": path, "start_us": span * 0.8, "end_us": span * 0.95},
    )  # fmt: skip
    assert window["window"] == [span * 0.8, span * 0.95]
    record_or_compare("kernelLens/timelineWindow", window)


@in_module_loop
async def test_ncu_file(client: LanguageClient) -> None:
    pytest.importorskip("ncu_report")
    path = str(H200 / "triton_square_small.ncu-rep")
    answer = await ask(client, client.raw, "kernelLens/ncuFile", {"path": path})  # type: ignore[attr-defined]
    assert answer["reader"] == "ncu_report" and answer["kernels"][0]["name"] == "square_kernel"
    record_or_compare("kernelLens/ncuFile", answer)


@in_module_loop
async def test_report_with_profile_sweep_and_recorded_ncu(own_client: LanguageClient) -> None:
    """The report of ``square``: profile and sweep by the real agent, then Nsight Compute by the
    recorded-H200 stand-in (the agent command changes at run time, as a user's setting can)."""
    client = own_client
    uri = open_doc(client, TRITON)
    assert (await click_profile(client, uri, "def square(x", TRITON))["ok"]
    sweep = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.sweep",
                arguments=[
                    {
                        "uri": uri,
                        "position": position(TRITON, "grid = "),
                        "param": "BLOCK_SIZE",
                        "values": [256, 1024],
                    }
                ],
            )
        ),
        300,
    )
    assert sweep["ok"] and sweep["function"] == "square", sweep
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"kernelLens": {"agentCommand": [sys.executable, str(FAKE_AGENT)]}}
        )
    )
    ncu = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.runNcu",
                arguments=[{"uri": uri, "position": position(TRITON, "grid = ")}],
            )
        ),
        300,
    )
    assert ncu["ok"] and ncu["function"] == "square", ncu
    params = {"uri": uri, "position": position(TRITON, "return out")}
    answer = await ask(client, client.raw, "kernelLens/report", params)  # type: ignore[attr-defined]
    assert answer["function"] == "square"
    assert answer["profile"] and answer["timeline"] and answer["sweep"] and answer["ncu"]
    assert [r["value"] for r in answer["sweep"]["rows"]] == [256, 1024]
    assert answer["int_parameters"] == {"BLOCK_SIZE": 1024}
    # Where the profiled run's inputs came from, in the hover's words.
    assert answer["inputs"]["source"] == "directive, line 30", answer["inputs"]
    assert answer["inputs"]["args"] and answer["inputs"]["args"][0].startswith("x: Tensor float32")
    record_or_compare("kernelLens/report", answer)


@in_module_loop
async def test_values_by_position(client: LanguageClient) -> None:
    inside = ROOT / "kernels" / "triton_inside.py"
    uri = open_doc(client, inside)
    params = {
        "uri": uri,
        "position": position(inside, "acc += tl.dot(a, b)", 8),
        "program": "last",
        "iteration": "last",
    }
    answer = await ask(client, client.raw, "kernelLens/values", params)  # type: ignore[attr-defined]
    assert answer["kernel"] == "matmul_kernel" and answer["pid"] == [2, 1, 0]
    record_or_compare("kernelLens/values", answer)


def test_every_custom_request_has_a_recorded_answer() -> None:
    missing = [m for m in RESULT_TYPES if not (PROTOCOL / f"{m.replace('/', '_')}.json").exists()]
    assert missing == []
    for method, result_type in RESULT_TYPES.items():
        check_type(
            json.loads((PROTOCOL / f"{method.replace('/', '_')}.json").read_text()), result_type
        )


@in_module_loop
async def test_kernel_lines_from_a_recorded_report(client: LanguageClient) -> None:
    """Profile Kernel Lines read from a recorded H200 report (no GPU): the strided Triton
    kernel's source counters on its lines."""
    pytest.importorskip("ncu_report")
    kernel_file = ROOT / "tests" / "data" / "inside" / "tl_strided.py"
    report = ROOT / "tests" / "data" / "inside" / "h200" / "tl_strided.ncu-rep"
    uri = open_doc(client, kernel_file)
    params = {"uri": uri, "kernel": "strided_sum_kernel", "report": str(report)}
    answer = await ask(client, client.raw, "kernelLens/kernelLines", params)  # type: ignore[attr-defined]
    (kernel,) = answer["kernels"]
    assert kernel["kernel"] == "strided_sum_kernel" and kernel["samples"] == 11815
    record_or_compare("kernelLens/kernelLines", answer)
