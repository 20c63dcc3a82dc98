"""``kernelLens.checkMemory`` (Check Memory): a function's call under NVIDIA's
``compute-sanitizer`` on a GPU, each report an error on the line it names (a Triton kernel's own
line; a ``load_inline`` kernel's line of the CUDA string), the others on the function's line.

Runs user code: trusted workspaces only, as a cancellable job with progress and the job timeout.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from kernel_lens.analysis.functions import find_function
from kernel_lens.lsp.common import (
    DiagnosticKey,
    document_source,
    driver_fields,
    request_failed,
    require_trusted,
    resolve_target,
    set_diagnostics,
    status,
    uri_to_path,
)
from kernel_lens.lsp.jobs import run_job
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import SanitizerRequest
from kernel_lens.wire.lsp import (
    CMD_CHECK_MEMORY,
    CheckMemoryArgs,
    CheckMemoryCommandResult,
    CommandResult,
)

__all__ = ["SOURCE", "findings_diagnostics", "sanitizer_key", "setup"]

#: The diagnostics' source.
SOURCE = "Kernel Lens (compute-sanitizer)"


def sanitizer_key(function: str) -> DiagnosticKey:
    """The document's diagnostics group of one function's Check Memory."""
    return ("sanitizer", function)


def findings_diagnostics(
    result: dict[str, Any], source: str, fallback_line: int
) -> list[types.Diagnostic]:
    """An error per finding, on the Python line it names, else on ``fallback_line`` (1-based)
    with the file and line the report named."""
    lines = source.splitlines()
    out: list[types.Diagnostic] = []
    for finding in result.get("findings") or []:
        line = finding.get("py_line")
        message = str(finding["message"])
        if not line:
            line = fallback_line
            if finding.get("file"):
                message += f" (at {finding['file']}:{finding.get('line')})"
        line0 = max(int(line) - 1, 0)
        text = lines[line0] if line0 < len(lines) else ""
        out.append(
            types.Diagnostic(
                range=types.Range(
                    types.Position(line0, len(text) - len(text.lstrip())),
                    types.Position(line0, len(text)),
                ),
                message=message,
                severity=types.DiagnosticSeverity.Error,
                source=SOURCE,
                code=str(result.get("tool", "memcheck")),
            )
        )
    return out


def setup(ls: KernelLensServer) -> None:
    """Register the command."""

    @ls.command(CMD_CHECK_MEMORY)
    async def check_memory(
        ls: KernelLensServer, args: CheckMemoryArgs
    ) -> CheckMemoryCommandResult | CommandResult:
        require_trusted(ls)
        try:
            source = document_source(ls, args.uri)
        except ProfileError as err:
            raise request_failed(err) from None
        function = args.function or resolve_target(source, name=None, position=args.position)
        title = f"Check Memory: {function} (compute-sanitizer {args.tool})"
        try:
            result = await run_job(
                ls,
                uri=args.uri,
                qualname=function,
                title=title,
                request=SanitizerRequest(
                    path=uri_to_path(args.uri),
                    text=source,
                    function=function,
                    tool=args.tool,
                    timeout=ls.settings.timeout_seconds,
                    **driver_fields(ls, args.uri, function),
                ),
            )
        except ProfileError as err:
            ls.log(f"{title}: {err}", types.MessageType.Error)
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"Check Memory: {err.message}"
                )
            )
            return {"ok": False, "function": function, "error": err.to_json()}
        status(ls, "idle", title, args.uri)
        info = find_function(source, name=function)
        fallback = info.def_line if info is not None else 1
        diagnostics = findings_diagnostics(result, source, fallback)
        set_diagnostics(ls, args.uri, sanitizer_key(function), diagnostics)
        errors = int(result.get("errors") or 0)
        ls.log(f"{title}: {errors} error(s), {len(diagnostics)} on lines", types.MessageType.Info)
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning if errors else types.MessageType.Info,
                message=f"Check Memory: {function}: {errors} error(s) (compute-sanitizer "
                f"{args.tool}; see Problems)"
                if errors
                else f"Check Memory: {function}: no errors (compute-sanitizer {args.tool})",
            )
        )
        return {"ok": True, "function": function, "errors": errors, "lines": len(diagnostics)}
