"""Profile Kernel Lines (``kernelLens/kernelLines``) through the real server: a recorded report's
source counters on the kernel's own lines (read in the server, no GPU), the previous run's share
beside each line, and on a machine without Nsight Compute or a GPU the reason said."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.conftest import HAS_CUDA
from tests.lsp.client import OPTIONS, ROOT, initialize, open_doc, server_config

KERNEL_FILE = ROOT / "tests" / "data" / "h200" / "triton_fused_kernel.py"
REPORT = ROOT / "tests" / "data" / "h200" / "triton_fused_full.ncu-rep"
KERNEL = "triton_poi_fused_add_mul_relu_0"
VECTOR_ADD = ROOT / "tests" / "data" / "inside" / "tl_vector_add.py"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    yield
    await lsp_client.shutdown_session()


async def request(client: LanguageClient, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(
        client.protocol.send_request_async("kernelLens/kernelLines", params), 300
    )


async def test_a_recorded_report_lands_on_the_kernels_lines(client: LanguageClient) -> None:
    pytest.importorskip("ncu_report")
    uri = open_doc(client, KERNEL_FILE)
    result = await request(client, {"uri": uri, "kernel": KERNEL, "report": str(REPORT)})
    (kernel,) = result.kernels
    assert kernel.kernel == KERNEL and list(kernel.span) == [10, 31]
    top = kernel.lines[0]
    assert top.line == 26 and list(top.helpers) == ["maximum"]
    assert top.text.startswith("71% of samples · long scoreboard (waiting on memory)")
    assert "| 0x00d0 |" in top.hover
    assert sum(r.share_pct for r in kernel.lines) == pytest.approx(100.0, abs=0.01)
    assert kernel.remedy.reason == "long_scoreboard"
    # The same kernel again (after an edit, another BLOCK_SIZE): each line's share before.
    again = await request(client, {"uri": uri, "kernel": KERNEL, "report": str(REPORT)})
    top = again.kernels[0].lines[0]
    assert top.before_pct == pytest.approx(100 * 241 / 341, abs=0.01)
    assert top.text.endswith("· was 71%")


async def test_a_report_without_the_kernel_says_so(client: LanguageClient) -> None:
    pytest.importorskip("ncu_report")
    uri = open_doc(client, KERNEL_FILE)
    with pytest.raises(Exception, match="has no source counters for add_kernel"):
        await request(client, {"uri": uri, "kernel": "add_kernel", "report": str(REPORT)})


@pytest.mark.skipif(HAS_CUDA, reason="runs for real there (tests/gpu/test_kernel_lines_gpu.py)")
async def test_without_a_gpu_profile_kernel_lines_says_why(client: LanguageClient) -> None:
    uri = open_doc(client, VECTOR_ADD)
    with pytest.raises(Exception, match=r"ncu|GPU|CUDA") as err:
        await request(client, {"uri": uri, "kernel": "add_kernel"})
    assert "Traceback" not in str(err.value)
