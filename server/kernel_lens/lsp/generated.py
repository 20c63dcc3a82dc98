"""Requests for generated code: ``kernelLens/assembly`` (Triton kernels → TTIR…SASS with line
maps) and ``kernelLens/generatedCode`` (torch.compile's output for a function).

Both run user code (a launcher, or the function under torch.compile), so they go to the agent,
only in a trusted workspace, with the job timeout; a cancelled request stops the agent.
"""

from __future__ import annotations

from typing import Any, cast

from lsprotocol import types

from kernel_lens.lsp.common import (
    DiagnosticKey,
    document_source,
    driver_fields,
    kernel_driver_fields,
    refresh_lenses,
    request_failed,
    require_trusted,
    resolve_target,
    set_diagnostics,
    text_key,
    uri_to_path,
)
from kernel_lens.lsp.jobs import agent_call
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import AsmRequest, InlineRequest, JobRequest, ProfileRequest
from kernel_lens.wire.lsp import (
    REQ_ASSEMBLY,
    REQ_GENERATED_CODE,
    REQ_INLINE,
    AssemblyParams,
    AssemblyResult,
    GeneratedCodeParams,
    GeneratedCodeResult,
    InlineParams,
)
from kernel_lens.wire.results import InlineResult

__all__ = ["setup"]

#: The key of nvcc's errors in the document's diagnostics.
NVCC_KEY: DiagnosticKey = ("nvcc", "")


def _file(ls: KernelLensServer, uri: str) -> tuple[str, str]:
    """``(path, text)`` of a request's document."""
    try:
        return uri_to_path(uri), document_source(ls, uri)
    except ProfileError as err:
        raise request_failed(err) from None


async def _agent_request(ls: KernelLensServer, label: str, request: JobRequest) -> dict[str, Any]:
    """Run one compiler job (under the compile limit); its failure becomes a RequestFailed the
    user reads."""
    try:
        return await agent_call(ls, request, compiler=True)
    except ProfileError as err:
        ls.log(f"{label}: {err}", types.MessageType.Error)
        raise request_failed(err) from None


async def assembly(ls: KernelLensServer, params: AssemblyParams) -> AssemblyResult:
    """Compile one kernel (cached per document text and arch) and return one stage."""
    require_trusted(ls)
    path, source = _file(ls, params.uri)
    kernel = resolve_target(source, name=params.kernel, position=params.position, kind="kernel")
    state = ls.documents(params.uri)
    overrides = dict(sorted((params.overrides or {}).items()))
    # The driver Profile remembers for this file's functions launches the kernel the same way.
    from_driver = kernel_driver_fields(ls, params.uri, kernel)
    key = (
        kernel,
        params.arch,
        text_key(source),
        tuple(overrides.items()),
        from_driver.get("driver"),
        tuple(from_driver.get("argv") or ()),
    )
    result = state.asm.get(key)
    if result is None:
        ls.log(f"assembly of {kernel} (sm_{params.arch or 'device'})", types.MessageType.Info)
        result = await _agent_request(
            ls,
            f"assembly of {kernel}",
            AsmRequest(
                path=path,
                text=source,
                kernel=kernel,
                arch=params.arch,
                overrides=overrides or None,
                **from_driver,
            ),
        )
        # A document closed meanwhile has released ``state``: nothing is kept for it then.
        state.asm.put(key, result)
        state.asm_latest[kernel] = result
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
        "signature": result.get("signature", {}),
        "constexprs": result.get("constexprs", {}),
        "types_from": result.get("types_from", "launch"),
        "types_note": result.get("types_note"),
        "compiled_from": result.get("compiled_from", "ahead_of_time"),
        "compiled_note": result.get("compiled_note"),
        "shared_bytes": result.get("shared_bytes"),
        "num_warps": result.get("num_warps"),
        "num_stages": result.get("num_stages"),
        "autotune": result.get("autotune"),
    }


async def generated_code(ls: KernelLensServer, params: GeneratedCodeParams) -> GeneratedCodeResult:
    """torch.compile the function and return the *compiled* stage's result."""
    require_trusted(ls)
    path, source = _file(ls, params.uri)
    function = resolve_target(source, name=params.function, position=params.position)
    ls.log(f"torch.compile {function}", types.MessageType.Info)
    result = await _agent_request(
        ls,
        f"torch.compile {function}",
        ProfileRequest(
            path=path,
            text=source,
            function=function,
            stages=("compiled",),
            warmup_ms=ls.settings.warmup_ms,
            budget_ms=ls.settings.budget_ms,
            reps=ls.settings.reps,
            # The driver the function's inputs came from (a quick fix's), as its profile uses.
            **driver_fields(ls, params.uri, function),
        ),
    )
    compiled: dict[str, Any] = dict(result["compiled"])
    compiled["function"] = result["function"]
    ls.log(f"{result['function']}: {compiled.get('summary')}", types.MessageType.Info)
    return cast(GeneratedCodeResult, compiled)


async def inline_extension(ls: KernelLensServer, params: InlineParams) -> InlineResult:
    """Build products of the document's ``load_inline`` modules; nvcc errors as diagnostics."""
    require_trusted(ls)
    path, source = _file(ls, params.uri)
    ls.log("load_inline: compiling the CUDA source with nvcc", types.MessageType.Info)
    result = await _agent_request(
        ls,
        "load_inline",
        InlineRequest(path=path, text=source, arch=params.arch, build=params.build),
    )
    lines = source.splitlines()
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
    set_diagnostics(ls, params.uri, NVCC_KEY, diagnostics)
    return cast(InlineResult, result)


def setup(ls: KernelLensServer) -> None:
    """Register the requests."""
    ls.feature(REQ_ASSEMBLY)(assembly)
    ls.feature(REQ_GENERATED_CODE)(generated_code)
    ls.feature(REQ_INLINE)(inline_extension)
