"""Profile Memory through the language server (pytest-lsp over stdio, the real agent on CPU):
``kernelLens.profile`` with ``memory`` puts each line's bytes on its lens and the peak on the
summary; after it, the row's ``…`` offers Profile Memory again; the peak line's hover lists what
was alive at the peak by line.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.client import (
    OPTIONS,
    hover_text,
    initialize,
    lenses,
    line0_of,
    open_doc,
    server_config,
    titles,
)

MEMORY = Path(__file__).resolve().parents[2] / "kernels" / "memory.py"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def test_profile_memory_puts_bytes_on_the_lines_and_the_peak_in_the_hover(
    client: LanguageClient,
) -> None:
    uri = open_doc(client, MEMORY)
    outcome = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile",
            arguments=[{"uri": uri, "function": "grow", "memory": True}],
        )
    )
    assert outcome["ok"], outcome
    found = await lenses(client, uri)
    cat0 = line0_of(MEMORY, "c = torch.cat([a, b])")
    (cat_title,) = titles(found, cat0)
    assert cat_title.startswith("$(database) CPU +24 MiB · live 48 MiB  |  "), cat_title
    (del_title,) = titles(found, line0_of(MEMORY, "del a"))
    assert del_title == "$(database) CPU \u221216 MiB · live 32 MiB"
    summary = titles(found, line0_of(MEMORY, "def grow"))[0]
    assert f"peak 48 MiB at line {cat0 + 1} · CPU" in summary, summary
    # the function's More… (the script's first line has one too: Profile Script (Light)…)
    def_line = line0_of(MEMORY, "def grow")
    more = next(
        lens
        for lens in found
        if lens.command is not None
        and lens.command.command == "kernelLens.moreActions"
        and lens.range.start.line == def_line
    )
    assert more.command is not None and more.command.arguments is not None
    items = {i["label"]: i for i in more.command.arguments[0]["items"]}
    again = items["$(database) Profile Memory"]
    assert again["command"] == "kernelLens.profile" and again["arguments"][0]["memory"] is True
    text = await hover_text(client, uri, cat0, 10)
    assert text is not None and "**Peak** CPU: **48 MiB**" in text, text
    assert "- 24 MiB from line" in text and "- 8 MiB from line" in text


async def test_the_profile_memory_setting_records_memory_on_a_plain_profile(
    client: LanguageClient,
) -> None:
    uri = open_doc(client, MEMORY)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"kernelLens": {"profileMemory": True}})
    )
    await asyncio.sleep(0.2)
    outcome = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="kernelLens.profile", arguments=[{"uri": uri, "function": "grow"}]
        )
    )
    assert outcome["ok"], outcome
    (del_title,) = titles(await lenses(client, uri), line0_of(MEMORY, "del a"))
    assert del_title == "$(database) CPU \u221216 MiB · live 32 MiB"
