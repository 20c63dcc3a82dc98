"""On a CUDA GPU (issue 36, item 4): *Profile Script (Light)* through the language server, as the
editor runs it (``kernelLens.profileLight``): the real light profile (Triton's Proton, in the
agent's child process) of a small training script puts each line's kernel time on it, in the
script and in the workspace module it calls, labelled light; a deep Profile Script after it
replaces it, and a light run after that is right again.

Run on the lent H200; skipped without CUDA.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from kernel_lens.wire.lsp import CMD_PROFILE, CMD_PROFILE_LIGHT, CMD_PROFILE_SCRIPT_WINDOW
from tests.lsp.client import (
    hover_text,
    initialize,
    lenses,
    open_doc,
    server_config,
    shutdown_if_running,
    titles,
)

pytestmark = pytest.mark.gpu

OPTIONS = {"timeoutSeconds": 300, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}
STEPS = 30
TRAIN = f"""\
import torch

from layers import act

w = torch.randn(512, 512, device="cuda", requires_grad=True)
opt = torch.optim.SGD([w], lr=1e-3)
x = torch.randn(256, 512, device="cuda")
for _ in range({STEPS}):
    y = x @ w
    loss = act(y).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
torch.cuda.synchronize()
"""
LAYERS = """\
import torch


def act(y):
    return torch.relu(y) * 2
"""


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await shutdown_if_running(lsp_client)


def _line0(text: str, part: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if part in line)


async def _light(client: LanguageClient, uri: str) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=CMD_PROFILE_LIGHT, arguments=[{"uri": uri}])
        ),
        320,
    )


def _launches(title: str) -> int:
    found = re.search(r" · (\d+) launch(es)? ", title)
    assert found, title
    return int(found.group(1))


async def test_the_light_profile_through_the_server_puts_each_lines_kernels_on_it(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "layers.py").write_text(LAYERS)
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    uri = open_doc(client, path)
    outcome = await _light(client, uri)
    assert outcome["ok"] is True, outcome
    summary = outcome["light"]
    assert summary["files"] == 2 and summary["lines"] >= 4, summary
    assert summary["total_kernel_us"] > 0 and summary["launches"] >= 4 * STEPS, summary
    found = await lenses(client, uri)
    first = titles(found, 0)
    assert first[0].startswith("$(pulse) light · whole run "), first
    assert "$(search) Deep Trace of a Window…" in first
    matmul = titles(found, _line0(TRAIN, "y = x @ w"))
    assert len(matmul) == 1 and matmul[0].startswith("$(pulse) light · "), matmul
    # cuBLAS: one kernel a step (two with a split-K reduce)
    assert _launches(matmul[0]) in (STEPS, 2 * STEPS), matmul
    step = titles(found, _line0(TRAIN, "opt.step()"))
    assert step and _launches(step[0]) >= STEPS, step
    # backward's kernels run on autograd's thread: not on the forward lines (the label says so)
    hover = await hover_text(client, uri, _line0(TRAIN, "y = x @ w"), 8)
    assert hover is not None and "light profile" in hover and "backward" in hover, hover
    assert f"(command:{CMD_PROFILE_SCRIPT_WINDOW}?" in hover
    # the workspace module the run went through: relu and the multiplication on its line
    other_uri = open_doc(client, tmp_path / "layers.py")
    other = await lenses(client, other_uri)
    assert titles(other, 0)[0].startswith("$(pulse) light · from train.py, "), titles(other)
    act = titles(other, _line0(LAYERS, "torch.relu(y) * 2"))
    assert act and _launches(act[0]) >= 2 * STEPS, act
    # The deep profile after it replaces it; a light run after that is right again.
    deep = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=CMD_PROFILE, arguments=[{"uri": uri, "script": True}]
            )
        ),
        320,
    )
    assert deep["ok"] is True, deep
    after = titles(await lenses(client, uri))
    assert not [t for t in after if t.startswith("$(pulse) light · ")], after
    again = await _light(client, uri)
    assert again["ok"] is True, again
    assert again["light"]["files"] == 2 and again["light"]["lines"] >= 4, again
    assert titles(await lenses(client, uri), 0)[0].startswith("$(pulse) light · whole run ")
