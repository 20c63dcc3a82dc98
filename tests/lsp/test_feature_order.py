"""The order of ``FEATURES`` does not matter (issue 21 item 4): servers whose feature modules
are set up as listed, reversed and shuffled give the same answers to the messages several
features share — lenses, hovers, code actions (quick fix and lint joined), diagnostics (a
notebook script's routed onto its cells), and Profile commands on cells (routed to the
notebook) — and advertise the same capabilities.

Each server runs ``tests/lsp/ordered_server.py`` with the recorded-H200 stand-in agent and a
history of its own, so that no run compares with another's.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.client import (
    FAKE_AGENT,
    OPTIONS,
    ROOT,
    capabilities,
    click,
    lenses,
    open_doc,
    open_notebook,
)

ORDERED = Path(__file__).with_name("ordered_server.py")
SQUARE = ROOT / "kernels" / "square.py"
NAIVE = ROOT / "tests" / "data" / "examples" / "nosetup" / "naive_timing.py"
#: Not on disk: the notebook's cells come with its didOpen.
NOTEBOOK = ROOT / "kernels" / "feature_order_check.ipynb"
CELLS: list[tuple[str, str]] = [
    ("code", "import torch\n"),
    ("code", "def scale(x):\n    y = x * 3\n    return y.sum()\n"),
    ("code", "def broken(x):\n    return x + 1\n"),
    ("code", "a = torch.randn(8)\nb = scale(a)\nc = broken(a)\n"),
]
#: An ``inputs`` error's diagnostic, as a profile publishes it, for the quick fix to answer.
DIRECTIVE = "# kernel-lens: inputs = (torch.randn(1024),)  # x"
INPUTS_MESSAGE = (
    "Profile failed (inputs): the script ran to its end without calling timed; add this "
    f"directive above the def: {DIRECTIVE}"
)
CONVERTER = get_converter()


def _json(value: Any) -> Any:
    return CONVERTER.unstructure(value)


async def _until(check: Any, what: str) -> Any:
    for _ in range(200):
        found = check()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {what}")


async def _hover(client: LanguageClient, uri: str, line0: int, col: int) -> Any:
    return _json(
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line0, character=col),
            )
        )
    )


def _line0(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


def _profile_lens(items: list[types.CodeLens], line0: int) -> types.CodeLens:
    """The Profile lens of the function on ``line0`` (not a cell's Profile Cell)."""
    return next(
        lens
        for lens in items
        if lens.range.start.line == line0
        and lens.command
        and lens.command.command == "kernelLens.profile"
        and (lens.command.arguments or [{}])[0].get("function")
    )


async def _scenario(client: LanguageClient) -> dict[str, Any]:
    """The answers of one server, as JSON."""
    out: dict[str, Any] = {}
    init = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(),
            root_uri=ROOT.as_uri(),
            initialization_options={
                **OPTIONS,
                "client": "vscode",
                "agentCommand": [sys.executable, str(FAKE_AGENT), "--bad", "broken=odd-kind"],
            },
        )
    )
    caps = _json(init.capabilities)
    caps["executeCommandProvider"]["commands"].sort()
    out["capabilities"] = caps

    # A file: its lenses and hovers before and after a profile.
    square = open_doc(client, SQUARE)
    text = SQUARE.read_text()
    def0, body0 = _line0(text, "def square_three_ways"), _line0(text, "c = x**2")
    before = await lenses(client, square)
    out["square lenses"] = _json(before)
    out["square hover"] = await _hover(client, square, body0, 9)
    out["square profile"] = await click(client, _profile_lens(before, def0))
    out["square lenses after"] = _json(await lenses(client, square))
    out["square hover after"] = await _hover(client, square, body0, 9)

    # The timing lint's diagnostics, and code actions the quick fix and the lint both give.
    naive = open_doc(client, NAIVE)
    lint = await _until(lambda: list(client.diagnostics.get(naive, [])), "lint diagnostic")
    out["naive diagnostics"] = _json(lint)
    inputs = types.Diagnostic(
        range=types.Range(lint[0].range.start, lint[0].range.start),
        message=INPUTS_MESSAGE,
        severity=types.DiagnosticSeverity.Error,
        source="Kernel Lens",
        code="inputs",
        data={"suggested_directive": DIRECTIVE},
    )
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=naive),
            range=lint[0].range,
            context=types.CodeActionContext(diagnostics=[inputs, *lint]),
        )
    )
    out["naive actions"] = _json(actions)

    # A notebook: cells' lenses and hovers, Profile on a cell, a failure's diagnostic routed
    # from the virtual script to its cell, Profile Cell.
    cells = open_notebook(client, NOTEBOOK, CELLS)
    out["cell lenses"] = [_json(await lenses(client, uri)) for uri in cells]
    out["cell hover"] = await _hover(client, cells[1], 1, 9)
    scale = await lenses(client, cells[1])
    out["cell profile"] = await click(client, _profile_lens(scale, 0))
    out["cell hover after"] = await _hover(client, cells[1], 1, 9)
    broken = await lenses(client, cells[2])
    out["cell failure"] = await click(client, _profile_lens(broken, 0))
    out["cell diagnostics"] = _json(
        await _until(lambda: list(client.diagnostics.get(cells[2], [])), "cell diagnostic")
    )
    last = await lenses(client, cells[3])
    run_cell = next(
        lens
        for lens in last
        if lens.command
        and list(lens.command.arguments or []) == [{"uri": cells[3], "script": True}]
    )
    out["profile cell"] = await click(client, run_cell)
    out["cell lenses after"] = [_json(await lenses(client, uri)) for uri in cells]
    out["published on"] = sorted(str(uri) for uri, d in client.diagnostics.items() if d)
    return out


async def _answers(order: str, history: Path) -> dict[str, Any]:
    env = {**os.environ, "KERNEL_LENS_HISTORY": str(history)}
    config = ClientServerConfig(
        server_command=[sys.executable, str(ORDERED), order], server_env=env
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        del ls, params

    try:
        return await _scenario(client)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_the_order_of_the_features_changes_no_answer(tmp_path: Path) -> None:
    listed = await _answers("listed", tmp_path / "listed")
    assert listed["naive actions"] and listed["cell diagnostics"], listed
    # Both features' code actions, the quick fix's first.
    titles = [a["title"] for a in listed["naive actions"]]
    assert titles[0].startswith("Add an inputs directive"), titles
    assert any(t.startswith("Profile this instead") for t in titles[1:]), titles
    # The virtual script's diagnostics went to its cell, never out under the script's name.
    assert not any(uri.endswith(".kernel_lens.py") for uri in listed["published on"])
    for order in ("reversed", "3", "11"):
        other = await _answers(order, tmp_path / order)
        for key, answer in listed.items():
            assert other[key] == answer, (order, key)
