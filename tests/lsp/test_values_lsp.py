"""Show Values through the real server and agent: ``kernelLens/values`` on a kernel (the launch
under Triton's interpreter), the kernel's lenses before and after, the hover Markdown of a
line, and an out-of-bounds load as an error on its line."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.lsp.client import (
    OPTIONS,
    ROOT,
    initialize,
    lenses,
    line0_of,
    open_doc,
    server_config,
    titles,
)

INSIDE = ROOT / "kernels" / "triton_inside.py"
OOB = ROOT / "kernels" / "triton_oob.py"


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    yield
    await lsp_client.shutdown_session()


async def request(client: LanguageClient, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(
        client.protocol.send_request_async("kernelLens/values", params), 300
    )


async def test_values_of_the_last_program_and_the_kernels_lenses(client: LanguageClient) -> None:
    uri = open_doc(client, INSIDE)
    kernel0 = line0_of(INSIDE, "def scale_kernel") - 1  # its @triton.jit line
    before = [x for x in await lenses(client, uri) if x.range.start.line == kernel0]
    by_title = {x.command.title: x.command for x in before if x.command}
    assert list(by_title) == [
        "$(file-binary) Show Assembly",
        "$(symbol-variable) Show Values",
        "$(debug-alt) Debug Kernel",
        "More…",  # Compare Assembly…
    ]
    show = by_title["$(symbol-variable) Show Values"]
    assert show.command == "kernelLens.showValues"
    assert list(show.arguments or []) == [{"uri": uri, "kernel": "scale_kernel"}]
    assert by_title["$(debug-alt) Debug Kernel"].command == "kernelLens.debugKernel"

    result = await request(client, {"uri": uri, "kernel": "scale_kernel", "program": "last"})
    assert result.kernel == "scale_kernel" and list(result.pid) == [3, 0, 0]
    assert list(result.grid) == [4, 1, 1] and result.interpreter is True
    mask_line = line0_of(INSIDE, "mask = offs < n") + 1
    row = next(r for r in result.lines if r.line == mask_line)
    assert row.values[0].text == "mask: bool[1024] · 24 lanes masked"
    # the hover: where it ran, the program, the whole block with its masked lanes marked
    assert "Triton interpreter" in row.hover and "program (3, 0, 0) of grid 4 × 1 × 1" in row.hover
    load_row = next(r for r in result.lines if r.line == mask_line + 1)
    assert "masked lanes · (by `mask`)" in load_row.hover and "heat map" in load_row.hover
    assert " [1016]" in load_row.hover and load_row.hover.count("·") >= 2 * 24
    # the lens now says which program it shows, and opens the picker
    after = [x for x in await lenses(client, uri) if x.range.start.line == kernel0]
    assert (
        titles(after, kernel0)[1]
        == "$(symbol-variable) Values: program (3, 0, 0) of 4 × 1 × 1 · interpreter"
    )
    assert after[1].command is not None
    assert list(after[1].command.arguments or []) == [
        {"uri": uri, "kernel": "scale_kernel", "pick": True}
    ]


async def test_out_of_bounds_load_is_an_error_on_its_line(client: LanguageClient) -> None:
    uri = open_doc(client, OOB)
    result = await request(client, {"uri": uri, "kernel": "shift_kernel"})
    load0 = line0_of(OOB, "x = tl.load(in_ptr + offs + 1)")
    assert [p.line for p in result.oob] == [load0 + 1]
    for _ in range(50):
        if client.diagnostics.get(uri):
            break
        await asyncio.sleep(0.1)
    [diagnostic] = [d for d in client.diagnostics[uri] if d.code == "out-of-bounds"]
    assert diagnostic.range.start.line == load0
    assert diagnostic.source == "Kernel Lens (Triton interpreter)"
    assert "program (3, 0, 0) lane 1023 reads offset 4096, past its end" in diagnostic.message
    title = titles(await lenses(client, uri), line0_of(OOB, "def shift_kernel") - 1)[1]
    assert title.endswith("· $(warning) 1 out of bounds")


@pytest_lsp.fixture(config=server_config())
async def untrusted(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "workspaceTrusted": False})
    yield
    await lsp_client.shutdown_session()


async def test_a_values_request_runs_nothing_in_an_untrusted_workspace(
    untrusted: LanguageClient, tmp_path: Any
) -> None:
    """Show Values runs the kernel's launcher: a forged request in Restricted Mode is refused
    where every job passes (``agent_call``), and the file's code never runs."""
    marker = tmp_path / "ran"
    source = INSIDE.read_text().replace(
        "import os\n", f"import os\nopen({str(marker)!r}, 'w').close()\n", 1
    )
    assert str(marker) in source
    path = tmp_path / "inside.py"
    path.write_text(source)
    uri = open_doc(untrusted, path, source)
    from pygls.exceptions import JsonRpcException

    try:
        result = await request(untrusted, {"uri": uri, "kernel": "scale_kernel"})
    except JsonRpcException as exc:
        text = str(exc)
    else:
        text = str(result)
    assert "trust this workspace" in text, text
    assert not marker.exists()
