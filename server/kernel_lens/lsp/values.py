"""``kernelLens/values`` (Show Values): a ``@triton.jit`` kernel's launch run under Triton's
interpreter by the agent, each body line's values for a chosen program, and the out-of-bounds
loads and stores of every program as diagnostics on their lines.

The launch is the one Show Assembly and Profile use: the file's launcher function with its
inputs (a directive, a factory, the script's run, or the driver remembered for the launcher by a
quick fix), else the script's own launch. Runs user code: trusted workspaces only, with the job
timeout; a cancelled request stops the agent. The kernel's lens then says which program it shows.
"""

from __future__ import annotations

from typing import Any, cast

from lsprotocol import types

from kernel_lens.analysis.interp_text import kernel_launchers, with_hovers
from kernel_lens.lsp.common import (
    DiagnosticKey,
    document_source,
    driver_fields,
    refresh_lenses,
    request_failed,
    require_trusted,
    resolve_target,
    set_diagnostics,
    uri_to_path,
)
from kernel_lens.lsp.jobs import agent_call
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import ValuesRequest
from kernel_lens.wire.lsp import REQ_VALUES, ValuesParams, ValuesResult

__all__ = ["SOURCE", "diagnostics_for", "setup", "values_key"]

#: The diagnostics' source: says where they were found.
SOURCE = "Kernel Lens (Triton interpreter)"


def values_key(kernel: str) -> DiagnosticKey:
    """The document's diagnostics group of one kernel's interpreter run."""
    return ("interp", kernel)


def _line_range(lines: list[str], line: int) -> types.Range:
    line0 = max(line - 1, 0)
    text = lines[line0] if line0 < len(lines) else ""
    return types.Range(
        types.Position(line0, len(text) - len(text.lstrip())), types.Position(line0, len(text))
    )


def diagnostics_for(result: dict[str, Any], source: str) -> list[types.Diagnostic]:
    """An error on each line with out-of-bounds accesses; a warning where the interpreter
    stopped (a feature it cannot run, an error in the kernel)."""
    lines = source.splitlines()
    out = [
        types.Diagnostic(
            range=_line_range(lines, int(problem["line"])),
            message=str(problem["message"]),
            severity=types.DiagnosticSeverity.Error,
            source=SOURCE,
            code="out-of-bounds",
        )
        for problem in result.get("oob") or []
        if problem.get("line")
    ]
    error = result.get("error")
    if error:
        out.append(
            types.Diagnostic(
                range=_line_range(lines, int(error.get("line") or result.get("def_line") or 1)),
                message=str(error["message"]),
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code="interpreter-stopped",
            )
        )
    return out


def _driver_for(ls: KernelLensServer, uri: str, source: str, kernel: str) -> dict[str, Any]:
    """The driver remembered for one of the kernel's launchers (a quick fix's), if any."""
    for launcher in kernel_launchers(source, kernel):
        fields = driver_fields(ls, uri, launcher)
        if fields:
            return fields
    return {}


async def values(ls: KernelLensServer, params: ValuesParams) -> ValuesResult:
    """Run the kernel's launch under the interpreter; publish its out-of-bounds diagnostics."""
    require_trusted(ls)
    try:
        path, source = uri_to_path(params.uri), document_source(ls, params.uri)
    except ProfileError as err:
        raise request_failed(err) from None
    kernel = resolve_target(source, name=params.kernel, position=params.position, kind="kernel")
    ls.log(f"values of {kernel} (program {params.program}) under Triton's interpreter")
    try:
        result = await agent_call(
            ls,
            ValuesRequest(
                path=path,
                kernel=kernel,
                text=source,
                program=params.program,
                iteration=params.iteration,
                **_driver_for(ls, params.uri, source, kernel),
            ),
        )
    except ProfileError as err:
        ls.log(f"values of {kernel}: {err}", types.MessageType.Error)
        raise request_failed(err) from None
    with_hovers(result)
    set_diagnostics(ls, params.uri, values_key(kernel), diagnostics_for(result, source))
    state = ls.documents.peek(params.uri)
    if state is not None:
        state.values_latest[kernel] = {
            k: result[k] for k in ("kernel", "grid", "pid", "program", "oob", "iteration")
        }
        refresh_lenses(ls)
    return cast(ValuesResult, result)


def setup(ls: KernelLensServer) -> None:
    """Register the request."""
    ls.feature(REQ_VALUES)(values)
