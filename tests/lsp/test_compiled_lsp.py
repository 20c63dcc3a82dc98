"""A torch.compile'd model's script through the language server with the real agent (issue 33,
CPU): Inductor's kernels in lenses on the ``Block.forward`` lines they fused (a fused kernel on
each of its lines), the hover naming the graph's nodes, the compilation its own figure on the
call line, and Dynamo's graph break a warning in Problems on the line that caused it."""

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
from tests.lsp.client import (
    click_script,
    hover_text,
    initialize,
    lenses,
    line0_of,
    open_doc,
    titles,
)
from tests.lsp.client import server_config as _server_config

OPTIONS = {"timeoutSeconds": 600, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="the CPU's C++ kernels (GPU: tests/gpu)")


@pytest_lsp.fixture(config=_server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def _diagnostics(client: LanguageClient, uri: str, code: str) -> list[types.Diagnostic]:
    for _ in range(100):
        found = [d for d in client.diagnostics.get(uri, []) if d.code == code]
        if found:
            return found
        await asyncio.sleep(0.05)
    return []


async def test_compiled_script_lenses_hover_and_graph_break(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "compiled_step.py"
    shutil.copy(KERNELS / "compiled_step.py", path)
    uri = open_doc(client, path)
    outcome = await click_script(client, uri)
    assert outcome["ok"] is True, outcome
    after = await lenses(client, uri)

    # The fused gelu kernel is on both lines it fused from, named the same way.
    gelu, affine = line0_of(path, "h = F.gelu(h)"), line0_of(path, "h = h * 2.0 + 1.0")
    assert any("fused with line" in t and "cpp_fused" in t for t in titles(after, gelu)), titles(
        after
    )
    assert any("cpp_fused" in t for t in titles(after, affine)), titles(after)
    # Not on the def line, and the call line says the compilation apart.
    assert not any("cpp_fused" in t for t in titles(after, line0_of(path, "def forward")))
    call = titles(after, line0_of(path, "out = model(x)"))
    assert any("compiled in" in t for t in call), call
    assert not any("cpp_fused" in t for t in call), call

    text = await hover_text(client, uri, gelu, 10)
    assert text is not None and "nodes" in text and "graph" in text, text

    # The graph break: a warning with Dynamo's reason on the data-dependent `if`.
    found = await _diagnostics(client, uri, "graph-break")
    assert [d.range.start.line for d in found] == [line0_of(path, "if out.abs().max() > 1e6")]
    assert found[0].severity == types.DiagnosticSeverity.Warning
    assert found[0].message.startswith("torch.compile graph break: "), found[0].message
