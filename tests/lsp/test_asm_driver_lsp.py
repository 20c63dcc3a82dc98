"""Show Assembly uses the driver Profile remembers (issues 34 and 44): once a function of a
library file was profiled from a driver, the assembly of a kernel of that file comes from the
driver's launch — its dtypes — where the file's own launcher would give others (real server,
real agent, CPU)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import HAS_CUDA, ROOT
from tests.lsp.client import initialize, open_doc, server_config

OPTIONS = {"timeoutSeconds": 240, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 3}}

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="CPU: the interpreter's launches")


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def _assembly(client: LanguageClient, uri: str, kernel: str) -> Any:
    return await asyncio.wait_for(
        client.protocol.send_request_async(
            "kernelLens/assembly", {"uri": uri, "kernel": kernel, "stage": "ptx", "arch": 90}
        ),
        240,
    )


async def test_show_assembly_takes_the_launch_of_the_remembered_driver(
    client: LanguageClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "launch_libs", ws)
    ops = ws / "normlib" / "ops" / "relative.py"
    uri = open_doc(client, ops)

    # The file's own launcher (apply, its apply_inputs(): fp16) before any driver.
    own = await _assembly(client, uri, "scale_kernel")
    assert own.launcher == "apply" and own.signature.in_ptr == "*fp16"

    profiled = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile",
            arguments=[
                {
                    "uri": uri,
                    "function": "apply",
                    "driver": str(ws / "drive.py"),
                    "argv": ["--fp32"],
                }
            ],
        )
    )
    assert profiled["ok"] is True, profiled

    driven = await _assembly(client, uri, "scale_kernel")
    assert driven.launcher == "drive.py"
    assert driven.signature.in_ptr == "*fp32" and driven.signature.factor == "fp32"
    assert driven.types_from == "launch"
