"""Code lenses: ``Profile`` above every function; after a run, the summary and per-line lenses."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from kernel_lens.analysis.functions import (
    FunctionInfo,
    SourceSyntaxError,
    find_functions,
    load_inline_lines,
)
from kernel_lens.analysis.lens_text import error_lens_title, line_lens_title, summary_lens_title
from kernel_lens.analysis.param_edit import int_parameters
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.protocol import (
    CMD_PROFILE,
    CMD_RUN_NCU,
    CMD_SHOW_ASSEMBLY,
    CMD_SHOW_GENERATED_CODE,
    CMD_SHOW_INLINE,
    CMD_SHOW_REPORT,
    CMD_SWEEP,
)
from kernel_lens.lsp.results import Record, place

__all__ = ["document_lenses", "setup"]

TRUST_COMMAND = "workbench.trust.manage"


def _range(line0: int) -> types.Range:
    return types.Range(types.Position(line0, 0), types.Position(line0, 0))


def _lens(
    line0: int, title: str, command: str = "", args: list[Any] | None = None
) -> types.CodeLens:
    return types.CodeLens(
        range=_range(line0), command=types.Command(title=title, command=command, arguments=args)
    )


def _profile_lens(uri: str, info: FunctionInfo, title: str) -> types.CodeLens:
    return _lens(info.first_line - 1, title, CMD_PROFILE, [{"uri": uri, "function": info.qualname}])


def _function_lenses(
    uri: str, info: FunctionInfo, record: Record | None, source: str
) -> list[types.CodeLens]:
    """A function's status lenses and, after a run, its per-line lenses."""
    first0 = info.first_line - 1
    if record is None:
        return [_profile_lens(uri, info, "$(play) Profile")]
    if record.state == "running":
        return [_lens(first0, "$(sync~spin) Profiling…")]
    if record.state in ("error", "cancelled") and record.error is not None:
        title = (
            "$(circle-slash) Profile cancelled"
            if record.state == "cancelled"
            else error_lens_title(record.error)
        )
        return [_lens(first0, title), _profile_lens(uri, info, "$(play) Profile")]
    result = record.result or {}
    placed = place(record, source)
    if placed is None or placed.outdated:
        return [
            _lens(first0, f"$(history) outdated: {summary_lens_title(result)}"),
            _profile_lens(uri, info, "$(refresh) Re-profile"),
        ]
    lenses = [
        _lens(first0, summary_lens_title(result)),
        _profile_lens(uri, info, "$(refresh) Re-profile"),
    ]
    cuda = result.get("device_kind") == "cuda"
    for line in result.get("lines") or []:
        line_title = line_lens_title(line, cuda=cuda)
        if line_title is not None:
            lenses.append(_lens(placed.current_line(line["line"]) - 1, line_title))
    return lenses


def document_lenses(ls: KernelLensServer, uri: str, source: str) -> list[types.CodeLens]:
    """All lenses of one document, from its current text and the stored results."""
    state = ls.documents.peek(uri)
    try:
        functions = find_functions(source)
    except SourceSyntaxError as exc:
        line0 = max((exc.line or 1) - 1, 0)
        failed = state.syntax_error if state is not None else None
        title = (
            error_lens_title({"kind": "syntax", "message": str(exc)})
            if failed is not None
            else f"$(warning) Kernel Lens: syntax error — {exc} — fix it to profile"
        )
        return [_lens(line0, title)]
    records = {r.qualname: r for r in ls.documents.records(uri)}
    lenses: list[types.CodeLens] = []
    for info in functions:
        first0 = info.first_line - 1
        if not ls.settings.workspace_trusted:
            lenses.append(
                _lens(
                    first0, "$(shield) Kernel Lens: trust this workspace to profile", TRUST_COMMAND
                )
            )
            continue
        if info.is_triton_kernel:
            latest = state.asm_latest.get(info.qualname) if state is not None else None
            title = (
                f"$(file-binary) PTX · {latest['registers']} regs · {latest['spills']} spills · "
                f"{latest['arch']}"
                if latest
                else "$(file-binary) Show Assembly"
            )
            lenses.append(
                _lens(first0, title, CMD_SHOW_ASSEMBLY, [{"uri": uri, "kernel": info.qualname}])
            )
            continue
        own = _function_lenses(uri, info, records.get(info.qualname), source)
        # "Generated Code" goes right after the function's own lenses on its first line.
        at = sum(1 for lens in own if lens.range.start.line == first0)
        own.insert(
            at,
            _lens(
                first0,
                "$(symbol-namespace) Generated Code",
                CMD_SHOW_GENERATED_CODE,
                [{"uri": uri, "function": info.qualname}],
            ),
        )
        extra: list[types.CodeLens] = []
        record = records.get(info.qualname)
        if record is not None and record.state == "ok":
            args = [{"uri": uri, "function": info.qualname}]
            extra.append(_lens(first0, "$(graph) Report", CMD_SHOW_REPORT, args))
            extra.append(_lens(first0, "$(pulse) Nsight Compute", CMD_RUN_NCU, args))
        for param in int_parameters(source, info.qualname):
            extra.append(
                _lens(
                    first0,
                    f"$(settings) Sweep {param}",
                    CMD_SWEEP,
                    [{"uri": uri, "function": info.qualname, "param": param}],
                )
            )
        at += 1
        own[at:at] = extra
        lenses.extend(own)
    if ls.settings.workspace_trusted:
        for line in load_inline_lines(source):
            lenses.append(
                _lens(
                    line - 1,
                    "$(tools) load_inline: PTX, sources, nvcc",
                    CMD_SHOW_INLINE,
                    [{"uri": uri, "line": line}],
                )
            )
    return lenses


def setup(ls: KernelLensServer) -> None:
    """Register the code lens handler."""

    @ls.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: KernelLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        doc = ls.workspace.get_text_document(params.text_document.uri)
        return document_lenses(ls, doc.uri, doc.source)
