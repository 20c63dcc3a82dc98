"""``kernelLens/asmDiff``: two kernels' PTX or SASS, each compiled by the agent (a Triton kernel
ahead of time, a load_inline CUDA kernel through nvcc), normalised and summarised by
:mod:`kernel_lens.analysis.asm_diff` for the editor's diff view.

It runs user code (a kernel's launcher, the load_inline module's namespace), so only in a trusted
workspace, one side after the other on the agent, each under the compile limit.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from kernel_lens.analysis.asm_diff import Side, compare, inline_side, target_kind, triton_side
from kernel_lens.lsp.common import document_source, request_failed, require_trusted, target_path
from kernel_lens.lsp.jobs import agent_call
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import AsmRequest, InlineRequest
from kernel_lens.wire.lsp import REQ_ASM_DIFF, AsmDiffParams, AsmDiffResult, AsmDiffTarget

__all__ = ["asm_diff", "setup"]


async def _side(ls: KernelLensServer, target: AsmDiffTarget, stage: str, arch: int | None) -> Side:
    """Compile one side and cut it to its kernel.

    Raises:
        ProfileError: the compile's failure, or no such kernel.
    """
    path = target_path(ls, target.uri, "compile")
    source = target.text if target.text is not None else document_source(ls, target.uri)
    kind = target_kind(source, target.kernel)
    if kind is None:
        raise ProfileError(
            "not-found",
            f"{target.kernel} is no @triton.jit kernel of this file, and the file calls no "
            "load_inline",
        )
    ls.log(f"asm diff: compiling {target.kernel} ({kind}) to {stage}", types.MessageType.Info)
    if kind == "triton":
        result: dict[str, Any] = await agent_call(
            ls,
            AsmRequest(
                path=path,
                text=source,
                kernel=target.kernel,
                arch=arch,
                stage=stage,
                overrides=dict(target.overrides) if target.overrides else None,
            ),
            compiler=True,
        )
        picks = ", ".join(f"{k}={v}" for k, v in (target.overrides or {}).items() if
                          k not in (result.get("constexprs") or {}))  # fmt: skip
        label = ", ".join(x for x in (picks, target.label or "") if x) or None
        return triton_side(result, path, stage, label)
    result = await agent_call(
        ls,
        InlineRequest(path=path, text=source, arch=arch or 90, sass=stage == "sass"),
        compiler=True,
    )
    try:
        return inline_side(result, path, target.kernel, stage, target.label)
    except ValueError as exc:
        raise ProfileError("not-found", str(exc)) from None


async def asm_diff(ls: KernelLensServer, params: AsmDiffParams) -> AsmDiffResult:
    """Both sides compiled, normalised, summarised; their documents for the diff editor."""
    require_trusted(ls)
    try:
        a = await _side(ls, params.a, params.stage, params.arch)
        b = await _side(ls, params.b, params.stage, params.arch)
    except ProfileError as err:
        ls.log(f"asm diff: {err}", types.MessageType.Error)
        raise request_failed(err) from None
    result = compare(a, b, params.stage)
    ls.log(f"asm diff: {a.title} vs {b.title}: {result['verdict']}", types.MessageType.Info)
    return result


def setup(ls: KernelLensServer) -> None:
    """Register the request."""
    ls.feature(REQ_ASM_DIFF)(asm_diff)
