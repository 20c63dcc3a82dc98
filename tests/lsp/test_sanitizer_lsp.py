"""Check Memory (``kernelLens.checkMemory``) through the real server and agent: on a machine
without compute-sanitizer (or a GPU) it says why, as a failed command with the tool named; the
diagnostics of a result land on the lines its findings name (the result's shape is the agent's,
``agent/stages/sanitizer.py``; a real run is checked on a GPU in tests/gpu/)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from kernel_lens.agent.stages.sanitizer import find_sanitizer
from kernel_lens.lsp.sanitizer import findings_diagnostics
from tests.conftest import HAS_CUDA
from tests.lsp.client import OPTIONS, ROOT, initialize, open_doc, server_config

OOB = ROOT / "kernels" / "triton_oob.py"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    yield
    await lsp_client.shutdown_session()


@pytest.mark.skipif(HAS_CUDA and find_sanitizer() is not None, reason="runs for real there")
async def test_check_memory_without_the_tool_says_why(client: LanguageClient) -> None:
    uri = open_doc(client, OOB)
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.checkMemory", arguments=[{"uri": uri, "function": "shift"}]
            )
        ),
        300,
    )
    assert result["ok"] is False and result["function"] == "shift"
    assert result["error"]["kind"] == "unsupported"
    assert "compute-sanitizer" in result["error"]["message"] or "GPU" in result["error"]["message"]


def test_findings_land_on_their_lines_or_the_functions() -> None:
    source = OOB.read_text()
    result = {
        "tool": "memcheck",
        "findings": [
            {"py_line": 25, "message": "compute-sanitizer: Invalid __global__ read", "file": None},
            {
                "py_line": None,
                "message": "compute-sanitizer: Invalid __global__ write",
                "file": "/tmp/ext/cuda.cu",
                "line": 7,
            },
        ],
    }
    first, second = findings_diagnostics(result, source, fallback_line=30)
    assert first.range.start.line == 24 and first.code == "memcheck"
    assert first.source == "Kernel Lens (compute-sanitizer)"
    assert second.range.start.line == 29
    assert second.message.endswith("(at /tmp/ext/cuda.cu:7)")
