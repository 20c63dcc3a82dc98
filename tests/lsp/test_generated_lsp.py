"""``kernelLens/assembly`` and ``kernelLens/generatedCode`` through the real server and agent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from kernel_lens.agent.stages.inline_ext import find_nvcc
from tests.conftest import HAS_CUDA
from tests.lsp.client import (
    OPTIONS,
    ROOT,
    initialize,
    lenses,
    line0_of,
    module_server_config,
    open_doc,
    server_config,
    titles,
)

TRITON = ROOT / "kernels" / "triton_square.py"
FUSION = ROOT / "kernels" / "fusion.py"


# One server for the module's requests (issue 37): each test asks about its own kernel or file.
# The test that changes the time limits has a server of its own, and so has the untrusted one.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=module_server_config(), scope="module")
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config(), loop_scope="module")
async def own_client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "timeoutSeconds": 300})
    yield
    await lsp_client.shutdown_session()


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), 300)


async def test_assembly_of_a_triton_kernel_and_its_lens(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    kernel0 = line0_of(TRITON, "@triton.jit")
    lens = [x for x in await lenses(client, uri) if x.range.start.line == kernel0]
    assert [x.command.title for x in lens if x.command] == [
        "$(file-binary) Show Assembly",
        "$(symbol-variable) Show Values",
        "$(debug-alt) Debug Kernel",
        "More…",
    ]
    assert lens[0].command is not None
    assert lens[0].command.command == "kernelLens.showAssembly"
    assert list(lens[0].command.arguments or []) == [{"uri": uri, "kernel": "square_kernel"}]
    # `…`: Compare Assembly… of the same kernel and Profile Kernel Lines (the extension's
    # quick pick runs them).
    assert lens[3].command is not None and lens[3].command.command == "kernelLens.moreActions"
    (more,) = lens[3].command.arguments or []
    assert more["function"] == "square_kernel"
    assert [(i["label"], i["command"], i["arguments"]) for i in more["items"]] == [
        (
            "$(diff) Compare Assembly…",
            "kernelLens.compareAssembly",
            [{"uri": uri, "kernel": "square_kernel"}],
        ),
        (
            "$(flame) Profile Kernel Lines",
            "kernelLens.profileKernelLines",
            [{"uri": uri, "kernel": "square_kernel"}],
        ),
    ]

    result = await request(
        client,
        "kernelLens/assembly",
        {"uri": uri, "kernel": "square_kernel", "stage": "ptx", "arch": 90},
    )
    assert result.kernel == "square_kernel" and result.arch == "sm_90"
    assert ".target sm_90a" in result.asm
    load_line = line0_of(TRITON, "tl.load(") + 1
    entry = next(m for m in result.line_map if m.source_line == load_line)
    ptx = result.asm.splitlines()
    assert any("ld.global" in ptx[i - 1] for i in entry.asm_lines)
    assert isinstance(result.registers, int) and result.spills == 0

    # The kernel's lens now carries the numbers, for the arch it was compiled for.
    after = titles(await lenses(client, uri), kernel0)
    assert after[0] == f"$(file-binary) PTX · {result.registers} regs · 0 spills · sm_90"

    sass = await request(
        client,
        "kernelLens/assembly",
        {"uri": uri, "kernel": "square_kernel", "stage": "sass", "arch": 90},
    )
    assert "LDG" in sass.asm and sass.line_map


async def test_assembly_error_is_a_clear_request_failure(client: LanguageClient) -> None:
    src = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(p):\n    pass\n"
    path = Path("/tmp/kernel_lens_lonely_kernel.py")
    path.write_text(src)
    uri = open_doc(client, path, src)
    try:
        await request(client, "kernelLens/assembly", {"uri": uri, "kernel": "k", "stage": "ptx"})
    except JsonRpcException as exc:
        assert "launches k;" in str(exc) and "driver" in str(exc)
    else:
        raise AssertionError("expected a RequestFailed error")


async def test_generated_code_of_the_fusion_example(client: LanguageClient) -> None:
    uri = open_doc(client, FUSION)
    def0 = line0_of(FUSION, "def matmul_relu")
    assert "$(symbol-namespace) Generated Code" in titles(await lenses(client, uri), def0)
    result = await request(
        client, "kernelLens/generatedCode", {"uri": uri, "function": "matmul_relu"}
    )
    assert result.function == "matmul_relu"
    assert result.language == ("triton" if HAS_CUDA else "cpp")
    fused = [k for k in result.kernels if k.kind != "extern"]
    assert len(fused) == 1
    assert fused[0].lines == [def0 + 3, def0 + 4]
    code = result.code.splitlines()
    assert fused[0].name in code[fused[0].call_line - 1]
    assert result.eager.kernels == 3 and result.compiled.kernels == 2
    assert "→ 1 kernel" in result.summary


@pytest_lsp.fixture(config=server_config(), loop_scope="module")
async def untrusted(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, {**OPTIONS, "workspaceTrusted": False})
    yield
    await lsp_client.shutdown_session()


async def test_nothing_compiles_untrusted(untrusted: LanguageClient) -> None:
    uri = open_doc(untrusted, TRITON)
    try:
        await request(
            untrusted,
            "kernelLens/assembly",
            {"uri": uri, "kernel": "square_kernel", "stage": "ptx"},
        )
    except JsonRpcException as exc:
        assert "trust this workspace" in str(exc)
    else:
        raise AssertionError("expected a RequestFailed error")
    assert not any("assembly of" in m.message for m in untrusted.log_messages), (
        "nothing may run untrusted"
    )


async def test_asm_diff_of_an_unknown_kernel_says_which(client: LanguageClient) -> None:
    uri = open_doc(client, TRITON)
    params = {
        "a": {"uri": uri, "kernel": "square_kernel"},
        "b": {"uri": uri, "kernel": "square"},  # the launcher, not a kernel
        "stage": "ptx",
        "arch": 90,
    }
    try:
        await request(client, "kernelLens/asmDiff", params)
    except JsonRpcException as exc:
        assert "not-found: square is no @triton.jit kernel of this file" in str(exc)
    else:
        raise AssertionError("expected a RequestFailed error")


async def test_asm_diff_against_an_earlier_text(client: LanguageClient) -> None:
    """An earlier version (the editor sends git HEAD's text) compared with the buffer now: an
    edit that changes no instruction compares equal once normalised, lines linked to each text."""
    uri = open_doc(client, TRITON)
    text = TRITON.read_text()
    moved = "# a comment line that moves every line below\n" + text
    params = {
        "a": {"uri": uri, "kernel": "square_kernel", "text": moved, "label": "HEAD"},
        "b": {"uri": uri, "kernel": "square_kernel"},
        "stage": "ptx",
        "arch": 90,
    }
    result = await request(client, "kernelLens/asmDiff", params)
    assert result.identical is True
    assert (
        result.a.title
        == "square_kernel · Triton · triton_square.py · BLOCK_SIZE=1024 · HEAD · PTX sm_90"
    )
    # The earlier text's line map is its own: tl.load one line further down.
    load = line0_of(TRITON, "tl.load(") + 1
    assert {e.source_line for e in result.a.normalised.line_map} == {
        e.source_line + 1 for e in result.b.normalised.line_map
    }
    assert load + 1 in {e.source_line for e in result.a.normalised.line_map}


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="nvcc not installed")
async def test_inline_extension_nvcc_error_becomes_a_diagnostic(client: LanguageClient) -> None:
    path = ROOT / "tests" / "data" / "examples" / "inline_typo.py"
    uri = open_doc(client, path)
    call0 = line0_of(path, "return load_inline(")
    assert "$(tools) load_inline: PTX, sources, nvcc" in titles(await lenses(client, uri), call0)
    result = await request(client, "kernelLens/inlineExtension", {"uri": uri})
    assert result.modules[0].ptx is None
    diags = [d for d in client.diagnostics[uri] if d.source == "Kernel Lens (nvcc)"]
    assert diags and diags[0].range.start.line == line0_of(path, "undefined_name;")
    assert 'identifier "undefined_name" is undefined' in diags[0].message


SLOW_IMPORT = (
    "import time\n\nimport torch\nimport triton\nimport triton.language as tl\n\n"
    "time.sleep({sleep})\n\n\n@triton.jit\ndef k(p):\n    tl.store(p, 1.0)\n\n\n"
    "def run(x):\n    k[(1,)](x)\n\n\ndef run_inputs():\n    return (torch.empty(1),)\n"
)


async def _configure(client: LanguageClient, options: dict[str, Any]) -> None:
    """Change the settings and wait until the server has read them (it logs the new limit)."""
    seen = len(client.log_messages)
    client.set_configuration(options, section="kernelLens")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    want = f"timeout {options['timeoutSeconds']:g} s"
    for _ in range(200):
        if any(want in m.message for m in client.log_messages[seen:]):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the server did not log {want!r}")


async def test_compiler_jobs_run_under_the_compile_limit(own_client: LanguageClient) -> None:
    """An nvcc or Triton build is not a hung profile: past ``timeoutSeconds`` it goes on, up to
    ``compileTimeoutSeconds``, and a timeout then names that setting."""
    client = own_client
    path = Path("/tmp/kernel_lens_slow_import_kernel.py")
    await _configure(client, {**OPTIONS, "timeoutSeconds": 2, "compileTimeoutSeconds": 60})
    src = SLOW_IMPORT.format(sleep=4)
    path.write_text(src)
    uri = open_doc(client, path, src)
    params = {"uri": uri, "kernel": "k", "stage": "ptx", "arch": 90}
    result = await request(client, "kernelLens/assembly", params)
    assert result.kernel == "k" and "st.global" in result.asm

    await _configure(client, {**OPTIONS, "timeoutSeconds": 1, "compileTimeoutSeconds": 3})
    # Another kernel body: the compiled one is cached by its source, and would answer at once.
    src = SLOW_IMPORT.format(sleep=30).replace("1.0", "2.0")
    path = path.with_name("kernel_lens_slower_import_kernel.py")
    path.write_text(src)
    uri = open_doc(client, path, src)
    params["uri"] = uri
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "kernelLens/assembly", params)
    assert "no result after 3 s (kernelLens.compileTimeoutSeconds)" in str(caught.value)
