"""*Profile Script (Light)* through the language server (issue 36, item 4): the command and its
lenses before a run, the CPU path with the real light agent (a clear "no CUDA GPU" with
*Profile Script* offered, the server healthy, a following Profile Script right), a light
result's lenses and hovers on every workspace file's lines (from the fake agent: the real one
needs CUDA, tests/gpu/test_gpu_light_lsp.py), labelled light with what it leaves out and the
deep window one click away; a timeout and a cancel leave the next run right; nothing in an
untrusted workspace."""

from __future__ import annotations

import asyncio
import re
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from kernel_lens.analysis.light_text import NO_GPU_HINT
from kernel_lens.wire.lsp import (
    CMD_MORE_ACTIONS,
    CMD_PROFILE,
    CMD_PROFILE_LIGHT,
    CMD_PROFILE_SCRIPT_LIGHT,
    CMD_PROFILE_SCRIPT_WINDOW,
    CMD_SHOW_ERROR,
)
from tests.lsp.client import (
    FAKE_AGENT,
    PROFILE_SCRIPT,
    click_script,
    hover_text,
    initialize,
    lenses,
    open_doc,
    server_config,
    shutdown_if_running,
    titles,
)

OPTIONS = {"timeoutSeconds": 90, "timing": {"warmupMs": 2, "budgetMs": 20, "reps": 0}}
FAKE = {**OPTIONS, "agentCommand": [sys.executable, str(FAKE_AGENT)]}

TRAIN = """\
import torch

from model import layer

x = torch.ones(4)
for _ in range(3):
    y = layer(x)  # light: the step
print(float(y.sum()))  # light: the sum
"""
MODEL = """\
import torch


def layer(x):
    return x * 2  # light: the layer
"""


def _write(tmp_path: Path, text: str = TRAIN) -> Path:
    (tmp_path / "model.py").write_text(MODEL)
    path = tmp_path / "train.py"
    path.write_text(text)
    return path


def _line0(text: str, part: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if part in line)


async def _light(client: LanguageClient, uri: str, timeout: float = 120) -> Any:
    """``kernelLens.profileLight`` as the extension's *Profile Script (Light)* sends it."""
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=CMD_PROFILE_LIGHT, arguments=[{"uri": uri}])
        ),
        timeout,
    )


def _first_row(found: list[types.CodeLens]) -> list[types.Command]:
    return [lens.command for lens in found if lens.command and lens.range.start.line == 0]


@pytest_lsp.fixture(config=server_config())
async def fake(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, FAKE)
    yield
    await shutdown_if_running(lsp_client)


@pytest_lsp.fixture(config=server_config())
async def fake_short(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**FAKE, "timeoutSeconds": 4})
    yield
    await shutdown_if_running(lsp_client)


@pytest_lsp.fixture(config=server_config())
async def real(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await shutdown_if_running(lsp_client)


@pytest_lsp.fixture(config=server_config())
async def untrusted(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "workspaceTrusted": False})
    yield
    await shutdown_if_running(lsp_client)


async def test_light_beside_profile_script_and_in_its_more(
    fake: LanguageClient, tmp_path: Path
) -> None:
    client = fake
    uri = open_doc(client, _write(tmp_path))
    row = _first_row(await lenses(client, uri))
    assert [c.title for c in row][:3] == [PROFILE_SCRIPT, "$(pulse) Light", "More…"], row
    light = row[1]
    assert light.command == CMD_PROFILE_SCRIPT_LIGHT
    assert list(light.arguments or []) == [{"uri": uri}]
    more = row[2]
    assert more.command == CMD_MORE_ACTIONS
    items = more.arguments[0]["items"]  # type: ignore[index]
    assert [i["label"] for i in items] == [
        "$(pulse) Profile Script (Light)",
        "$(search) Deep Trace of a Window…",
    ]
    assert items[0]["command"] == CMD_PROFILE_SCRIPT_LIGHT
    assert items[1]["command"] == CMD_PROFILE_SCRIPT_WINDOW
    assert items[1]["arguments"] == [{"uri": uri}]
    assert "no op names" in items[0]["detail"]


async def test_a_light_result_on_every_workspace_files_lines_labelled_light(
    fake: LanguageClient, tmp_path: Path
) -> None:
    client = fake
    path = _write(tmp_path)
    uri = open_doc(client, path)
    outcome = await _light(client, uri)
    assert outcome["ok"] is True, outcome
    assert outcome["light"]["lines"] == 3 and outcome["light"]["files"] == 2, outcome
    found = await lenses(client, uri)
    row = _first_row(found)
    assert row[0].title == (
        "$(pulse) light · whole run 12.5 s · 2.5 ms of kernels on 3 lines · NVIDIA H200 (recorded)"
    ), row
    window = next(c for c in row if c.command == CMD_PROFILE_SCRIPT_WINDOW)
    assert window.title == "$(search) Deep Trace of a Window…"
    assert list(window.arguments or []) == [{"uri": uri}]
    more = next(c for c in row if c.command == CMD_MORE_ACTIONS)
    labels = [i["label"] for i in more.arguments[0]["items"]]  # type: ignore[index]
    assert labels == ["$(pulse) Re-run Light", "$(run-all) Profile Script"]
    # No deep per-line lens: the lines are the light run's.
    step = _line0(TRAIN, "y = layer(x)")
    at_step = [lens for lens in found if lens.range.start.line == step]
    assert len(at_step) == 1, titles(found)
    lens = at_step[0]
    assert lens.command is not None
    # 700 µs of the 2,500 µs of kernels (the fake gives 100 µs × the line number, 500 µs on no
    # line), over 80 launches
    assert lens.command.title == (
        "$(pulse) light · 700 µs (28%) · 80 launches · ampere_sgemm_128x64_nn +1"
    )
    assert "no ATen op names" in (lens.command.tooltip or "")
    hover = await hover_text(client, uri, step, 6)
    assert hover is not None
    assert hover.startswith("**Kernel Lens · light profile** (whole run, Triton's Proton)")
    assert "`vectorized_elementwise_kernel`" in hover and "| 175 µs | 40 |" in hover
    assert "no ATen op names" in hover and "backward" in hover
    assert f"(command:{CMD_PROFILE_SCRIPT_WINDOW}?" in hover
    assert f"(command:{CMD_PROFILE}?" in hover
    # The other workspace file the run went through: its line, and where it came from.
    model_uri = open_doc(client, tmp_path / "model.py")
    other = await lenses(client, model_uri)
    head = titles(other, 0)
    assert re.fullmatch(r"\$\(pulse\) light · from train\.py, \d\d:\d\d · 1 line", head[0]), head
    assert "$(search) Deep Trace of a Window…" in head
    layer = _line0(MODEL, "return x * 2")
    assert titles(other, layer) == [
        "$(pulse) light · 500 µs (20%) · 80 launches · ampere_sgemm_128x64_nn +1"
    ]
    other_hover = await hover_text(client, model_uri, layer, 12)
    assert other_hover is not None and "from train.py" in other_hover
    assert urllib.parse.quote(uri, safe="") in other_hover  # the window is the script's run's
    # An edit outdates the script's own result (its lines go, the summary says so).
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="#\n" + TRAIN)],
        )
    )
    edited = await lenses(client, uri)
    assert titles(edited, 0)[0].startswith("$(history) outdated: $(pulse) light · "), edited
    assert not [t for t in titles(edited) if t.startswith("$(pulse) light · 7")]


async def test_a_timeout_leaves_the_next_light_run_right(
    fake_short: LanguageClient, tmp_path: Path
) -> None:
    client = fake_short
    hang = tmp_path / "hang"
    hang.mkdir()
    slow = _write(hang, TRAIN + "# fake: hang\n")
    uri = open_doc(client, slow)
    outcome = await _light(client, uri, timeout=60)
    assert outcome["ok"] is False and outcome["error"]["kind"] == "timeout", outcome
    first = titles(await lenses(client, uri), 0)
    assert first[0].startswith("$(warning) Light profile failed: timeout — "), first
    assert PROFILE_SCRIPT in first and "$(pulse) Light" in first
    ok = _write(tmp_path)
    ok_uri = open_doc(client, ok)
    again = await _light(client, ok_uri, timeout=60)
    assert again["ok"] is True, again
    assert titles(await lenses(client, ok_uri), 0)[0].startswith("$(pulse) light · whole run")


async def test_a_cancel_leaves_the_next_light_run_right(
    fake: LanguageClient, tmp_path: Path
) -> None:
    client = fake
    hang = tmp_path / "hang"
    hang.mkdir()
    uri = open_doc(client, _write(hang, TRAIN + "# fake: hang\n"))
    task = asyncio.ensure_future(_light(client, uri, timeout=60))
    for _ in range(200):
        if client.progress_reports:
            break
        await asyncio.sleep(0.05)
    token = next(iter(list(client.progress_reports)))
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    outcome = await task
    assert outcome["ok"] is False and outcome["error"]["kind"] == "cancelled", outcome
    first = titles(await lenses(client, uri), 0)
    assert first[0] == "$(circle-slash) Light run cancelled", first
    ok_uri = open_doc(client, _write(tmp_path))
    again = await _light(client, ok_uri, timeout=60)
    assert again["ok"] is True, again


async def test_without_cuda_the_light_profile_says_so_and_profile_script_still_runs(
    real: LanguageClient, tmp_path: Path
) -> None:
    """The real light agent on this CPU machine: ``unsupported: … no CUDA GPU`` reaches the
    client with *Profile Script* offered; the server stays healthy and the deep run works."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is here: tests/gpu/test_gpu_light_lsp.py runs the light profile")
    client = real
    path = _write(tmp_path, "import torch\n\nx = torch.ones(4)\ny = (x * 2).sum()\n")
    uri = open_doc(client, path)
    outcome = await _light(client, uri)
    assert outcome["ok"] is False, outcome
    error = outcome["error"]
    assert error["kind"] == "unsupported", error
    assert "no CUDA GPU" in error["message"] and NO_GPU_HINT in error["message"], error
    row = _first_row(await lenses(client, uri))
    assert row[0].title == (
        "$(warning) Light profile: needs a CUDA GPU (none here) · Profile Script works"
    ), row
    assert row[0].command == CMD_SHOW_ERROR
    detail = row[0].arguments[0]  # type: ignore[index]
    assert detail["function"] == "train.py (light)"
    assert detail["actions"][0] == {
        "label": "Profile Script Instead",
        "command": CMD_PROFILE,
        "arguments": [{"uri": uri, "script": True}],
    }
    assert PROFILE_SCRIPT in [c.title for c in row]
    # Not a problem of the code: nothing in Problems.
    assert not client.diagnostics.get(uri), client.diagnostics.get(uri)
    # The server is healthy: Profile Script (the deep profile) runs, and its result replaces.
    deep = await click_script(client, uri)
    assert deep["ok"] is True, deep
    after = titles(await lenses(client, uri), 0)
    assert after[0].startswith("$(run-all) script · ") and "wall, one run" in after[0], after
    assert not [t for t in after if "Light profile" in t], after
    line = _line0(path.read_text(), "y = (x * 2).sum()")
    deep_line = titles(await lenses(client, uri), line)
    assert any("aten::" in t for t in deep_line), deep_line
    # and the light profile's answer is the same again (the agent restarts cleanly)
    second = await _light(client, uri)
    assert second["error"]["kind"] == "unsupported", second
    # A failed light run leaves the deep run's result on the lines, its failure said first.
    kept = await lenses(client, uri)
    first = titles(kept, 0)
    assert first[0].startswith("$(warning) Light profile: needs a CUDA GPU"), first
    assert first[1] == after[0], (first, after)
    assert titles(kept, line) == deep_line, (titles(kept, line), deep_line)


async def test_nothing_runs_untrusted(untrusted: LanguageClient, tmp_path: Path) -> None:
    client = untrusted
    uri = open_doc(client, _write(tmp_path))
    found = await lenses(client, uri)
    assert not [t for t in titles(found) if "Light" in t or "Profile Script" in t], titles(found)
    outcome = await _light(client, uri)
    assert outcome["ok"] is False and outcome["error"]["kind"] == "untrusted", outcome
    assert not (tmp_path / "out").exists()
