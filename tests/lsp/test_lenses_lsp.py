"""Which functions get which lenses, through the language server (real pygls, real agent on CPU).

A file with ``__init__``, input factories, helpers, a Triton kernel and a numba kernel: Profile
only where it means something, Show Assembly only on the Triton kernel, Sweep only for an int
parameter that reaches a kernel launch; ``kernelLens.lenses.showAll`` brings the others back.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from kernel_lens.wire.lsp import (
    CMD_MORE_ACTIONS,
    CMD_PROFILE_SCRIPT_LIGHT,
    CMD_PROFILE_SCRIPT_WINDOW,
)
from tests.conftest import HAS_CUDA
from tests.lsp.client import (
    OPTIONS,
    ROOT,
    click,
    click_profile,
    hover_text,
    initialize,
    lenses,
    line0_of,
    open_doc,
    server_config,
    titles,
)

MIX = ROOT / "tests" / "data" / "examples" / "lens_mix.py"
MLP = ROOT / "tests" / "e2e" / "fixtures" / "mlp.py"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


def _is_script_lens(lens: types.CodeLens) -> bool:
    args = (lens.command.arguments if lens.command else None) or [{}]
    if lens.command and lens.command.command in SCRIPT_COMMANDS:
        return True  # Profile Script (Light)
    if lens.command and lens.command.command == CMD_MORE_ACTIONS:
        # the script's More… (the light profile, a window)
        return all(i.get("command") in SCRIPT_COMMANDS for i in args[0].get("items") or [{}])
    return isinstance(args[0], dict) and bool(args[0].get("script"))


SCRIPT_COMMANDS = (CMD_PROFILE_SCRIPT_LIGHT, CMD_PROFILE_SCRIPT_WINDOW)


def rows(items: list[types.CodeLens], path: Path) -> dict[str, list[str]]:
    """Lens titles by the ``def`` (or decorator) line they sit on, keyed by that line's text."""
    src = path.read_text().splitlines()
    out: dict[str, list[str]] = {}
    for lens in items:
        # The file's own lens (Profile Script, on its first line) is not about a function.
        if lens.command and not _is_script_lens(lens):
            out.setdefault(src[lens.range.start.line].strip(), []).append(lens.command.title)
    return out


async def test_lenses_only_where_they_mean_something(client: LanguageClient) -> None:
    uri = open_doc(client, MIX)
    found = rows(await lenses(client, uri), MIX)
    assert found == {
        "def forward(self, x):": [
            "$(play) Profile",
            "$(symbol-namespace) Generated Code",
            "$(zap) Eager vs Compiled",
        ],
        "@triton.jit": [
            "$(file-binary) Show Assembly",
            "$(symbol-variable) Show Values",
            "$(debug-alt) Debug Kernel",
            "More…",  # Compare Assembly…
        ],
        "def add(x, y, BLOCK=1024, repeat=3):": [
            "$(play) Profile",
            "$(settings) Sweep BLOCK",
            "$(symbol-namespace) Generated Code",
            "More…",  # Eager vs Compiled
        ],
        "def numba_launch(a, threads=128):": [
            "$(play) Profile",
            "$(settings) Sweep threads",
            "$(symbol-namespace) Generated Code",
            "More…",  # Eager vs Compiled
        ],
    }, found
    # No lens at all on __init__, __repr__, the factories, the helpers or numba's @cuda.jit.
    assert sum(len(v) for v in found.values()) == 15


async def test_show_all_setting_brings_every_lens_back(client: LanguageClient) -> None:
    uri = open_doc(client, MIX)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"kernelLens": {"lenses": {"showAll": True}}})
    )
    await asyncio.sleep(0.2)
    found = rows(await lenses(client, uri), MIX)
    # Every function but the Triton kernel has a Profile lens (numba's kernel too, when asked).
    profiled = [line for line, t in found.items() if "$(play) Profile" in t]
    assert len(profiled) == 11, found
    assert found["@triton.jit"] == [
        "$(file-binary) Show Assembly",
        "$(symbol-variable) Show Values",
        "$(debug-alt) Debug Kernel",
        "More…",
    ]
    assert "$(settings) Sweep dim" in found["def __init__(self, dim=32, hidden=64):"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"kernelLens": {"lenses": {"showAll": False}}})
    )
    await asyncio.sleep(0.2)
    # The rows that mean something: Eager vs Compiled beside Generated Code, or behind More…
    # where a sweep takes its place
    found = rows(await lenses(client, uri), MIX)
    assert sum(len(v) for v in found.values()) == 15, found
    assert found["def forward(self, x):"][-1] == "$(zap) Eager vs Compiled", found


async def test_module_file_profile_all_skips_factories(client: LanguageClient) -> None:
    uri = open_doc(client, MLP)
    before = rows(await lenses(client, uri), MLP)
    assert sorted(before) == ["def forward(self, x):", "def train_step(model, x):"], before
    outcomes = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="kernelLens.profileAll", arguments=[{"uri": uri}])
        ),
        240,
    )
    # Only the functions with a Profile lens ran: no input factory, no __init__, no helper.
    assert [o.get("function") for o in outcomes] == ["MLP.forward", "train_step"], outcomes
    assert all(o["ok"] for o in outcomes), outcomes
    after = await lenses(client, uri)
    step0 = line0_of(MLP, "def train_step")
    row = titles(after, step0)
    # "Re-profile longer" when the machine is busy (a noisy timing): the same place.
    row[1] = row[1].removesuffix(" longer")
    assert row[0].startswith("$(watch) ") and row[1:] == [
        "$(refresh) Re-profile",
        "$(graph) Report",
        "More…",
    ], row
    # A CPU line reads as its share of the measured median.
    loss0 = line0_of(MLP, "loss = model(x)")
    assert any(" of " in t and "%" in t for t in titles(after, loss0)), titles(after, loss0)


async def test_profiled_function_keeps_its_lens(client: LanguageClient) -> None:
    """A function the heuristics skip keeps its row once it was profiled (here at the cursor)."""
    uri = open_doc(client, MLP)
    line0 = line0_of(MLP, 'return f"loss')
    outcome = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.profile",
                arguments=[{"uri": uri, "position": {"line": line0, "character": 4}}],
            )
        ),
        240,
    )
    assert outcome["function"] == "_fmt" and outcome["ok"], outcome
    row = titles(await lenses(client, uri), line0_of(MLP, "def _fmt"))
    assert row[0].startswith("$(watch) ") and row[1].startswith("$(refresh) Re-profile"), row


async def _report(client: LanguageClient, uri: str, function: str) -> Any:
    return await asyncio.wait_for(
        client.protocol.send_request_async("kernelLens/report", {"uri": uri, "function": function}),
        60,
    )


async def test_results_survive_close_and_reopen_from_the_history(client: LanguageClient) -> None:
    """Closed and reopened (as after a restart: a fresh document state), a profiled function
    shows its last run from the history, marked; outdated once its text changes."""
    square = ROOT / "kernels" / "square.py"
    uri = open_doc(client, square)
    def0 = line0_of(square, "def square_mul")
    assert (await click_profile(client, uri, "def square_mul", square))["ok"]
    before = titles(await lenses(client, uri), def0)
    live = await _report(client, uri, "square_mul")
    assert live.timeline is not None
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    uri = open_doc(client, square)
    # Its Report, asked before any lens (as the panel restored after Reload Window asks), has
    # the run's timeline while the trace file is in the cache, and the same share on lines.
    report = await _report(client, uri, "square_mul")
    assert report.profile is not None and report.profile.restored
    assert report.timeline is not None
    assert getattr(report.profile, "accounting", None) == getattr(live.profile, "accounting", None)
    row = titles(await lenses(client, uri), def0)
    # The same run: its median, now marked as coming from the history.
    median = before[0].split(" ±")[0]  # "$(watch) 0.139 ms"
    assert row[0].startswith(f"$(history) {median} ±"), (before, row)
    assert row[1].startswith("$(refresh) Re-profile"), row
    assert "aten::mul" in titles(await lenses(client, uri), def0 + 1)[0]
    # Edited: the restored result is outdated, as a result of this session would be.
    edited = square.read_text().replace("return x * x", "return x * x * 1")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    assert titles(await lenses(client, uri), def0)[0].startswith("$(history) outdated: ")


async def test_hover_offers_profile_only_where_the_lenses_do(client: LanguageClient) -> None:
    uri = open_doc(client, MLP)
    init_body = line0_of(MLP, "self.fc1 = nn.Linear")
    assert await hover_text(client, uri, init_body, 12) is None
    forward_body = line0_of(MLP, "h = torch.relu")
    offer = await hover_text(client, uri, forward_body, 12)
    assert offer is not None and "not profiled yet" in offer and "MLP.forward" in offer


@pytest.mark.skipif(HAS_CUDA, reason="the interpreter runs Triton kernels only without a GPU")
async def test_more_after_an_interpreter_run_says_what_cannot_work(client: LanguageClient) -> None:
    triton_file = ROOT / "kernels" / "triton_square.py"
    uri = open_doc(client, triton_file)
    assert (await click_profile(client, uri, "def square(x", triton_file))["ok"]
    def0 = line0_of(triton_file, "def square(x")
    row = [x.command for x in await lenses(client, uri) if x.range.start.line == def0 and x.command]
    assert "Triton interpreter" in row[0].title, row[0].title
    more = row[-1]
    assert more.title == "More…"
    items = {i["label"]: i for i in more.arguments[0]["items"]}  # type: ignore[index]
    assert items["$(settings) Sweep BLOCK_SIZE"]["command"] == "kernelLens.sweep"
    assert "interpreter" in items["$(symbol-namespace) Generated Code"]["disabled"]
    assert "NVIDIA GPU" in items["$(pulse) Nsight Compute"]["disabled"]


JITTERY = """\
import time

import torch

_calls = [0]


def jittery(x):
    _calls[0] += 1
    time.sleep(0.001 if _calls[0] % 2 else 0.008)
    return x * 2


def jittery_inputs():
    return (torch.ones(8),)
"""


async def test_a_noisy_timing_offers_re_profile_longer(
    client: LanguageClient, tmp_path: Path
) -> None:
    """A timing too unstable to read says what would help, and Re-profile longer runs with
    four times the timing budget (this run only)."""
    path = tmp_path / "jittery.py"
    path.write_text(JITTERY)
    uri = open_doc(client, path)
    assert (await click_profile(client, uri, "def jittery", path))["ok"]
    def0 = line0_of(path, "def jittery")
    row = [x for x in await lenses(client, uri) if x.range.start.line == def0 and x.command]
    longer = next(x for x in row if x.command and "Re-profile longer" in x.command.title)
    assert longer.command is not None and longer.command.tooltip is not None
    tip = longer.command.tooltip
    assert isinstance(tip, str) and ("unstable" in tip or "busy" in tip), tip
    budget_ms = OPTIONS["timing"]["budgetMs"] * 4
    assert f"4× the timing budget, {budget_ms:g} ms" in tip and "timing.budgetMs" in tip
    args = (longer.command.arguments or [{}])[0]
    assert args["budget_scale"] == 4 and args["function"] == "jittery"
    budget = OPTIONS["timing"]["budgetMs"] * 4
    seen = len(client.log_messages)
    assert (await click(client, longer))["ok"]
    assert any(f"timing budget {budget:g} ms" in m.message for m in client.log_messages[seen:]), [
        m.message for m in client.log_messages[seen:]
    ]
