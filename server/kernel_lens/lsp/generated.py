"""Requests for generated code: ``kernelLens/assembly`` (Triton kernels → TTIR…SASS with line
maps) and ``kernelLens/generatedCode`` (torch.compile's output for a function).

Both run user code (a launcher, or the function under torch.compile), so they go to the agent,
only in a trusted workspace, with the job timeout; a cancelled request stops the agent.
"""

from __future__ import annotations

import hashlib
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from kernel_lens.agent.errors import ProfileError
from kernel_lens.lsp.commands import DIAGNOSTICS as NVCC_DIAGNOSTICS
from kernel_lens.lsp.commands import uri_to_path
from kernel_lens.lsp.documents import refresh_lenses
from kernel_lens.lsp.protocol import (
    REQ_ASSEMBLY,
    REQ_GENERATED_CODE,
    REQ_INLINE,
    AssemblyParams,
    GeneratedCodeParams,
    InlineParams,
    structure,
)
from kernel_lens.lsp.server import KernelLensServer

__all__ = ["RequestFailed", "setup"]


class RequestFailed(JsonRpcException):
    """LSP ``RequestFailed`` (-32803): the message is shown to the user as is."""

    CODE = -32803


def _fail(err: ProfileError) -> RequestFailed:
    where = f" (line {err.line})" if err.line else ""
    return RequestFailed(message=f"{err.kind}: {err.message}{where}")


def text_key(text: str) -> str:
    """A short digest of a document's text: results are cached per text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _trusted(ls: KernelLensServer) -> None:
    if not ls.settings.workspace_trusted:
        raise RequestFailed(
            message="Kernel Lens runs your code to compile it: trust this workspace first."
        )


async def _agent_request(
    ls: KernelLensServer, label: str, uri: str, params: dict[str, Any], method: str
) -> dict[str, Any]:
    """Run one agent job for a request; its failure becomes a RequestFailed the user reads."""
    try:
        return await ls.agent.run(
            {
                "path": uri_to_path(uri),
                "text": ls.workspace.get_text_document(uri).source,
                **params,
            },
            timeout=ls.settings.timeout_seconds,
            method=method,
        )
    except ProfileError as err:
        ls.log(f"{label}: {err}", types.MessageType.Error)
        raise _fail(err) from None


async def assembly(ls: KernelLensServer, raw: Any) -> dict[str, Any]:
    """Compile one kernel (cached per document text and arch) and return one stage."""
    params = structure(AssemblyParams, raw)
    _trusted(ls)
    doc = ls.workspace.get_text_document(params.uri)
    key = (params.uri, params.kernel, params.arch, text_key(doc.source))
    result = ls.asm_cache.get(key)
    if result is None:
        ls.log(
            f"assembly of {params.kernel} (sm_{params.arch or 'device'})", types.MessageType.Info
        )
        result = await _agent_request(
            ls,
            f"assembly of {params.kernel}",
            params.uri,
            {"kernel": params.kernel, "arch": params.arch},
            "asm",
        )
        ls.asm_cache[key] = result
        ls.asm_latest[(params.uri, params.kernel)] = result
        refresh_lenses(ls)
    stage = params.stage
    return {
        "kernel": result["kernel"],
        "stage": stage,
        "arch": result["arch"],
        "asm": result["asm"].get(stage, ""),
        "line_map": result["line_maps"].get(stage, []),
        "registers": result["registers"],
        "spills": result["spills"],
        "launcher": result.get("launcher"),
        "warnings": result.get("warnings", []),
    }


async def generated_code(ls: KernelLensServer, raw: Any) -> dict[str, Any]:
    """torch.compile the function and return the *compiled* stage's result."""
    params = structure(GeneratedCodeParams, raw)
    _trusted(ls)
    ls.log(f"torch.compile {params.function}", types.MessageType.Info)
    result = await _agent_request(
        ls,
        f"torch.compile {params.function}",
        params.uri,
        {
            "function": params.function,
            "stages": ["compiled"],
            "warmup_ms": ls.settings.warmup_ms,
            "budget_ms": ls.settings.budget_ms,
            "reps": ls.settings.reps,
        },
        "profile",
    )
    compiled: dict[str, Any] = dict(result["compiled"])
    compiled["function"] = result["function"]
    ls.log(f"{result['function']}: {compiled.get('summary')}", types.MessageType.Info)
    return compiled


async def inline_extension(ls: KernelLensServer, raw: Any) -> dict[str, Any]:
    """Build products of the document's ``load_inline`` modules; nvcc errors as diagnostics."""
    params = structure(InlineParams, raw)
    _trusted(ls)
    doc = ls.workspace.get_text_document(params.uri)
    ls.log("load_inline: compiling the CUDA source with nvcc", types.MessageType.Info)
    result = await _agent_request(
        ls, "load_inline", params.uri, {"arch": params.arch, "build": params.build}, "inline"
    )
    lines = doc.source.splitlines()
    diagnostics: list[types.Diagnostic] = []
    for module in result["modules"]:
        for problem in module["errors"]:
            line0 = max((problem.get("line") or module["call_line"]) - 1, 0)
            text = lines[line0] if line0 < len(lines) else ""
            diagnostics.append(
                types.Diagnostic(
                    range=types.Range(
                        types.Position(line0, len(text) - len(text.lstrip())),
                        types.Position(line0, len(text)),
                    ),
                    message=f"nvcc: {problem['message']}",
                    severity=types.DiagnosticSeverity.Error
                    if problem["severity"] == "error"
                    else types.DiagnosticSeverity.Warning,
                    source="Kernel Lens (nvcc)",
                )
            )
        if module.get("build_log"):
            ls.log(module["build_log"].rstrip())
    NVCC_DIAGNOSTICS.clear(ls, params.uri)
    for i, diag in enumerate(diagnostics):
        NVCC_DIAGNOSTICS.set(ls, params.uri, f"<nvcc>{i}", diag)
    return result


def setup(ls: KernelLensServer) -> None:
    """Register the requests."""
    ls.feature(REQ_ASSEMBLY)(assembly)
    ls.feature(REQ_GENERATED_CODE)(generated_code)
    ls.feature(REQ_INLINE)(inline_extension)
