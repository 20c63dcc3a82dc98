"""*Eager vs Compiled* through the language server with the real agent (issue 33 item 4, CPU).

The action is in ``gelu_chain``'s ``…``; clicking it profiles the function eager and compiled:
the fused lines' lenses say what compilation changed, the summary the compiled median and the
speed-up, and the hover lists the eager ops against the compiled kernel.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.conftest import HAS_CUDA, KERNELS
from tests.lsp.client import hover_text, initialize, lenses, line0_of, open_doc, titles
from tests.lsp.client import server_config as _server_config

OPTIONS = {"timeoutSeconds": 600, "timing": {"warmupMs": 2, "budgetMs": 50, "reps": 0}}

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="the CPU's C++ kernels (GPU: tests/gpu)")


@pytest_lsp.fixture(config=_server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


def _offered(found: list[types.CodeLens]) -> dict[str, dict[str, Any]]:
    """The actions offered: on the rows, and in their ``…`` quick picks."""
    out: dict[str, dict[str, Any]] = {}
    for lens in found:
        command = lens.command
        if command is None:
            continue
        if command.command == "kernelLens.moreActions":
            out.update({i["label"]: i for i in (command.arguments or [{}])[0]["items"]})
        else:
            out[command.title] = {"command": command.command, "arguments": command.arguments}
    return out


async def test_eager_vs_compiled_action_lenses_and_hover(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "eager_vs_compiled.py"
    shutil.copy(KERNELS / "eager_vs_compiled.py", path)
    uri = open_doc(client, path)
    # On the row beside Generated Code (no sweep here), or in its "…" when the row is full.
    action = _offered(await lenses(client, uri))["$(zap) Eager vs Compiled"]
    assert action["command"] == "kernelLens.profile"
    assert action["arguments"][0]["compare_compiled"] is True
    outcome = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=action["command"], arguments=action["arguments"])
        ),
        timeout=600,
    )
    assert outcome["ok"] is True, outcome
    after = await lenses(client, uri)

    first0, tanh0 = line0_of(path, "y = x * 0.5"), line0_of(path, "torch.tanh")
    head = [t for t in titles(after, first0) if t.startswith("$(zap) compiled: ")]
    assert len(head) == 1 and "ops fused into 1" in head[0] and " on lines " in head[0], titles(
        after, first0
    )
    fused = [t for t in titles(after, tanh0) if t.startswith("$(zap) compiled: ")]
    assert fused == [
        f"$(zap) compiled: fused with line {first0 + 1} (was " + fused[0].split("(was ")[1]
    ]
    summary = titles(after, line0_of(path, "def gelu_chain"))[0]
    assert " · compiled " in summary and " · ×" in summary, summary
    assert "$(zap) Eager vs Compiled" in _offered(after)  # again, from the row's "…"

    text = await hover_text(client, uri, tanh0, 10)
    assert text is not None and "**Eager vs compiled**" in text, text
    assert "`aten::tanh`" in text and "`cpp_fused_" in text
    assert f"counted on line {first0 + 1}" in text
