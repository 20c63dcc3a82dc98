"""Every job on a clean interpreter, on a CUDA machine (issue 14): GPU memory held by one job is
gone for the next, and the agents run on fresh, warm spares (no fork template where CUDA is).

Marked ``gpu``: skipped without CUDA (run on the device machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.lsp.client import click, initialize, lenses, open_doc, server_config, titles

OPTIONS = {"timeoutSeconds": 60, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}

GPU_USER = """\
import torch


# kernel-lens: inputs = (torch.ones(1024, device="cuda"),)
def holds_gpu_memory(x):
    torch._kl_leak = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")  # 2 GiB kept
    return x * 2


# kernel-lens: inputs = (torch.ones(1024, device="cuda"),)
def after_the_leak(x):
    assert not hasattr(torch, "_kl_leak"), "a monkeypatched attribute survived"
    assert torch.cuda.memory_allocated() < (1 << 30), torch.cuda.memory_allocated()
    return torch.relu(x)
"""


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.gpu
async def test_gpu_memory_does_not_survive_its_job(
    client: LanguageClient,
    tmp_path: Path,
) -> None:
    path = tmp_path / "gpu_user.py"
    path.write_text(GPU_USER)
    uri = open_doc(client, path)
    lines = GPU_USER.splitlines()

    async def run(def_text: str) -> dict[str, Any]:
        found = [
            lens
            for lens in await lenses(client, uri)
            if lens.range.start.line == lines.index(def_text)
            and lens.command
            and lens.command.command == "kernelLens.profile"
        ]
        assert found, titles(await lenses(client, uri))
        outcome: dict[str, Any] = await click(client, found[0])
        return outcome

    assert (await run("def holds_gpu_memory(x):"))["ok"] is True
    after = await run("def after_the_leak(x):")
    assert after["ok"] is True, after
    relu_line = lines.index("    return torch.relu(x)")
    assert any("aten::relu" in t for t in titles(await lenses(client, uri), relu_line))
