"""``textDocument/codeLens``: the lenses of a Python document, only where they mean something
(``analysis/lens_targets.py`` decides where).

The rows themselves — which lenses a function, a line, a kernel or the script's run gets, their
order, titles and arguments — are :mod:`kernel_lens.analysis.lens_rows` (pure); their LSP objects
and JSON templates are :mod:`kernel_lens.lsp.lens_json`. This module answers the request: it
reads the document's model, records and settings, restores the last runs from the history,
places each result on the current text, and answers a big file from rows made ahead.

File-level lenses (e.g. profiling the whole script) go on the first line, from
:func:`_file_lenses`, before the functions' rows.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

from lsprotocol import types

from kernel_lens.analysis.def_scan import last_line
from kernel_lens.analysis.document_model import DocumentModel
from kernel_lens.analysis.functions import FunctionInfo, SourceSyntaxError
from kernel_lens.analysis.lens_rows import (
    MAX_ROW_ACTIONS,
    TRUST_COMMAND,
    TRUST_TITLE,
    Lens,
    before_run_row,
    error_row,
    inside_lenses,
    kernel_row,
    line_lenses,
    profile_lens,
    ranks_lens,
    result_row,
    running_row,
    script_line_lenses,
)
from kernel_lens.analysis.lens_rows import more_actions as row_actions
from kernel_lens.analysis.lens_targets import LensRole, LensTarget
from kernel_lens.analysis.lens_text import error_lens_title, line_lens_title, summary_lens_title
from kernel_lens.analysis.light_text import (
    LIGHT_NAME,
    light_before_run,
    light_error_row,
    light_file_lenses,
    light_head_title,
    light_summary_title,
    script_more,
)
from kernel_lens.analysis.scripts import SCRIPT_NAME, script_summary_title
from kernel_lens.lsp.common import package_file, refresh_lenses, uri_to_path
from kernel_lens.lsp.convert import RawJson, raw_json_list
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.lens_json import code_lens, code_lenses, first_rows, row_json, rows_ahead
from kernel_lens.lsp.models import LENS_WAIT_S, FirstLenses, LensRows
from kernel_lens.lsp.restore import RESTORE_WAIT_S, start_restore
from kernel_lens.lsp.results import Placed, Record, place
from kernel_lens.lsp.run_choices import (
    driver_labels,
    driver_lens,
    placed_driver_lenses,
    script_args_lens,
)
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import CMD_PROFILE, CMD_SHOW_INLINE, DEFAULT_BUDGET_MS

__all__ = [
    "MAX_ROW_ACTIONS",
    "TRUST_COMMAND",
    "TRUST_TITLE",
    "CodeLenses",
    "document_lenses",
    "document_lenses_json",
    "first_lenses_json",
    "first_rows",
    "more_actions",
    "reading_lens",
    "row_json",
    "rows_ahead",
    "setup",
]


def _lens(
    line0: int, title: str, command: str = "", args: list[Any] | None = None
) -> types.CodeLens:
    return code_lens(Lens(line0, title, command, args))


def _ok_result(record: Record | None) -> dict[str, Any] | None:
    """The result of a successful run (``None``: no record, or not a success)."""
    if record is None or record.state != "ok":
        return None
    return dict(record.result or {})


def more_actions(
    uri: str, target: LensTarget, record: Record | None, *, ncu_ok: bool | None = None
) -> list[dict[str, Any]]:
    """A function's actions in the order they are offered, the first ones on its row
    (:func:`kernel_lens.analysis.lens_rows.more_actions` of its last successful run)."""
    return row_actions(uri, target, _ok_result(record), ncu_ok=ncu_ok)


def _function_lenses(
    uri: str,
    target: LensTarget,
    record: Record | None,
    source: str,
    *,
    budget_ms: float = DEFAULT_BUDGET_MS,
    nproc: int = 0,
    model: DocumentModel | None = None,
) -> list[types.CodeLens]:
    """A function's row and, after a run, its per-line lenses (``nproc``: the file calls
    ``init_process_group``, and the row offers *Profile on N ranks*)."""
    info = target.info
    first0 = info.first_line - 1
    ranks = [ranks_lens(uri, info, nproc)] if nproc > 0 else []
    if record is None:
        return code_lenses(before_run_row(uri, target, ranks))
    if record.state == "running":
        return _running_lenses(record, source, first0, model)
    if record.state == "cancelled":
        return code_lenses(
            [
                Lens(first0, "$(circle-slash) Profile cancelled"),
                profile_lens(uri, info, "$(play) Profile"),
            ]
        )
    if record.state == "error" and record.error is not None:
        return code_lenses(error_row(uri, info, record.error))
    result = record.result or {}
    placed = place(record, source, model)
    if placed is None or placed.outdated:
        return code_lenses(
            [
                Lens(first0, f"$(history) outdated: {summary_lens_title(result)}"),
                profile_lens(uri, info, "$(refresh) Re-profile"),
            ]
        )
    cuda = result.get("device_kind") == "cuda"
    row = result_row(uri, target, result, budget_ms=budget_ms, ranks=ranks)
    lines = line_lenses(result, placed.current_line, cuda, uri, record.qualname)
    return code_lenses(row + lines)


def _line_lenses(
    result: dict[str, Any],
    placed: Placed,
    cuda: bool,
    uri: str | None = None,
    function: str | None = None,
) -> list[types.CodeLens]:
    """A result's per-line lenses, placed on the current text (see
    :func:`kernel_lens.analysis.lens_rows.line_lenses`)."""
    return code_lenses(line_lenses(result, placed.current_line, cuda, uri, function))


def _running_lenses(
    record: Record, source: str, first0: int, model: DocumentModel | None = None
) -> list[types.CodeLens]:
    """A running profile: one summary lens on the function's row (replaced as the job streams
    its result, never added to), and the per-line lenses as soon as its lines are known, on the
    lines they will keep (issue 28)."""
    result = record.result
    if not result:
        return code_lenses(running_row(first0, None, "", None))
    placed = place(record, source, model)  # the parsed text: never parsed again here
    # edited while it runs: the lines wait for the end
    at = None if placed is None or placed.outdated else placed.current_line
    return code_lenses(running_row(first0, result, record.stage or "", at))


def _kernel_lenses(ls: KernelLensServer, uri: str, info: FunctionInfo) -> list[types.CodeLens]:
    """``Show Assembly``, ``Show Values`` and ``Debug Kernel`` above a Triton kernel (the last
    two under Triton's interpreter; the lenses say what each showed last), and ``…`` with
    *Compare Assembly…* (this kernel against another, or itself at another BLOCK_SIZE)."""
    state = ls.documents.peek(uri)
    values = state.values_latest.get(info.qualname) if state is not None else None
    latest = state.asm_latest.get(info.qualname) if state is not None else None
    return code_lenses(kernel_row(uri, info, values, latest))


def _file_lenses(
    ls: KernelLensServer, uri: str, source: str, model: DocumentModel
) -> list[types.CodeLens]:
    """Lenses about the whole file, on its first line: ``Profile Script`` on a file with
    module-level work (issue 10); after a run, the script's wall time and its per-line lenses
    on the module-level lines."""
    if model.syntax_error is not None:
        return []
    record = ls.documents.get(uri, SCRIPT_NAME)
    light = ls.documents.get(uri, LIGHT_NAME)
    if record is None and light is None and not model.module_work:
        return []
    args: list[Any] = [{"uri": uri, "script": True}]
    run = _lens(0, "$(run-all) Profile Script", CMD_PROFILE, args)
    # The script's arguments: shown once given (the editor, the CLI, a launch configuration);
    # offered after it exited on its arguments or failed on a device it was not given.
    failed = record.error if record is not None and record.state == "error" else None
    extra = script_args_lens(ls, uri, failed)
    # A failed or cancelled light run keeps the deep run's result on the lines, its own
    # failure said first; otherwise the later of the two whole-run results is the one shown.
    kept = (
        light is not None
        and light.state in ("error", "cancelled")
        and record is not None
        and record.state == "ok"
        and record.result is not None
    )
    if light is not None and not kept and (record is None or record.state != "running"):
        return _light_lenses(uri, source, light, run, extra)
    note = _light_failure(uri, light) if kept and light is not None else []
    if record is None:
        return [run, *code_lenses(light_before_run(uri, _file_name(uri))), *extra]
    if record.state == "running":
        return [_lens(0, "$(sync~spin) Running the script…")]
    # the light profile and the deep trace of a window, beside (Re-)Profile Script
    more = code_lens(script_more(uri, _file_name(uri)))
    if record.state in ("error", "cancelled") or record.result is None:
        title = (
            error_lens_title(record.error)
            if record.state == "error" and record.error is not None
            else "$(circle-slash) Script run cancelled"
        )
        return [_lens(0, title), run, more, *extra]
    result = record.result
    placed = place(record, source)
    rerun = _lens(0, "$(refresh) Re-run Script", CMD_PROFILE, args)
    if placed is None or placed.outdated:
        return [*note, _lens(0, f"$(history) outdated: {script_summary_title(result)}"), rerun]
    lenses = [*note, _lens(0, script_summary_title(result)), rerun, more, *extra]
    return lenses + code_lenses(script_line_lenses(result, uri))


def _file_name(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]


def _light_failure(uri: str, light: Record) -> list[types.CodeLens]:
    """The first-line lens of a light run that failed or was cancelled, put before a deep
    run's result that it leaves in place."""
    if light.state == "cancelled":
        return [_lens(0, "$(circle-slash) Light run cancelled")]
    why, _again = code_lenses(light_error_row(uri, _file_name(uri), light.error or {}))
    return [why]


def _light_lenses(
    uri: str,
    source: str,
    light: Record,
    run: types.CodeLens,
    extra: list[types.CodeLens],
) -> list[types.CodeLens]:
    """The script's first line and lines after *Profile Script (Light)*: running, failed (why,
    and *Profile Script* beside it), or its result: the light summary, the deep trace of a
    window, ``More…``, each line's kernel time (the lines only while the text is the one that
    ran)."""
    name = _file_name(uri)
    if light.state == "running":
        return [_lens(0, "$(sync~spin) Running the script under the light profile…")]
    if light.state == "cancelled":
        again = light_before_run(uri, name)
        return [_lens(0, "$(circle-slash) Light run cancelled"), run, *code_lenses(again), *extra]
    if light.state == "error" or light.result is None:
        why, light_again = code_lenses(light_error_row(uri, name, light.error or {}))
        return [why, run, light_again, *extra]
    result = light.result
    current = source.splitlines()
    if current != light.text:
        rerun = code_lenses(light_before_run(uri, name))
        return [_lens(0, f"$(history) outdated: {light_summary_title(result)}"), *rerun, run]
    try:
        path = uri_to_path(uri)
    except ProfileError:
        path = ""
    rows = (result.get("files") or {}).get(path) or []
    found = light_file_lenses(result, rows, current, run_uri=uri, head=light_summary_title(result))
    return code_lenses(found) + extra


def _run_lines_lenses(ls: KernelLensServer, uri: str, source: str) -> list[types.CodeLens]:
    """A workspace file's lines from a whole run of another script (``model.py`` after
    *Profile Script* on ``bench.py``): a first-line lens naming the run, then a lens on each line
    whose text is still the one that ran (an edited line loses its lens, never shifts it)."""
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return []
    held = ls.run_lines.get(path)
    if held is None:
        return []
    current = source.splitlines()
    if held.mode == "light":
        # another file's lines from a light run of a script (*Profile Script (Light)*)
        kept = sum(
            1
            for r in held.rows
            if 1 <= int(r.get("line") or 0) <= len(current)
            and current[int(r["line"]) - 1].strip() == r.get("source")
        )
        script = held.run_path.rsplit("/", 1)[-1]
        head = light_head_title(script, kept, held.stamp, len(held.rows) - kept)
        found = light_file_lenses(
            held.light or {}, held.rows, current, run_uri="file://" + held.run_path, head=head
        )
        return code_lenses(found)
    cuda = held.device_kind == "cuda"
    lenses: list[types.CodeLens] = []
    kept = 0
    run_uri = "file://" + held.run_path
    what = "a whole-script run" if held.function is None else f"a profile of {held.function}"
    for row in held.rows:
        no = int(row.get("line") or 0)
        if not 1 <= no <= len(current) or current[no - 1].strip() != row.get("source"):
            continue
        title = line_lens_title(row, cuda=cuda)
        if title is None:
            continue
        kept += 1
        lenses.append(code_lens(Lens(no - 1, title, tooltip=f"{held.label} ({what})")))
        found = inside_lenses(no - 1, row, run_uri, held.function, held.packages)
        lenses.extend(code_lenses(found))
    gone = len(held.rows) - kept
    head = f"$(run-all) {held.label} · {kept} line{'s' if kept != 1 else ''}"
    if held.package is not None:
        # An installed package's file: results only (the lens re-runs the workspace's file).
        head = f"$(package) {held.package} (read-only) · {head[len('$(run-all) ') :]}"
    if gone:
        head += f" ({gone} edited since)"
    again: dict[str, Any] = {"uri": run_uri}
    if held.function is None:
        again["script"] = True
    else:
        again["function"] = held.function
    if held.packages:
        again["packages"] = list(held.packages)
    summary = _lens(0, head, CMD_PROFILE, [again])
    assert summary.command is not None
    summary.command.tooltip = (
        f"Re-run {held.run_path} as a script"
        if held.function is None
        else f"Profile {held.function} of {held.run_path} again"
    )
    return [summary, *lenses]


def _package_lenses(ls: KernelLensServer, uri: str) -> list[types.CodeLens] | None:
    """An installed package's file (Go to Definition into ``transformers``): only the lines of
    the runs started from the workspace, never a lens that runs it; ``None`` for any other
    document."""
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return None
    if package_file(ls, path) is None:
        return None
    doc = ls.workspace.get_text_document(uri)
    return _run_lines_lenses(ls, uri, doc.source)


#: A run of a document's lenses: objects, or a row made ahead (``(line0, JSON text)``).
_Piece = list[types.CodeLens] | tuple[int, str]


def document_lenses(
    ls: KernelLensServer, uri: str, source: str, model: DocumentModel | None = None
) -> list[types.CodeLens]:
    """All lenses of one document, from its current text and the stored results.

    ``model``: the text parsed (:mod:`kernel_lens.lsp.models`); made here when not given.
    """
    lenses: list[types.CodeLens] = []
    for piece in _lens_pieces(ls, uri, source, model, None):
        assert isinstance(piece, list)  # rows made ahead only where they were given
        lenses.extend(piece)
    return lenses


def document_lenses_json(
    ls: KernelLensServer, uri: str, source: str, model: DocumentModel, rows: LensRows
) -> RawJson:
    """:func:`document_lenses` as JSON text, with the rows of the functions that have no
    result taken from ``rows`` (made in the document worker, serialised there): a big file's
    answer costs the loop a join, not tens of thousands of objects."""
    unstructure = ls.converter.unstructure
    parts: list[str] = []
    for piece in _lens_pieces(ls, uri, source, model, rows):
        if isinstance(piece, tuple):
            if piece[1]:
                parts.append(piece[1])
        else:
            parts.extend(json.dumps(unstructure(lens)) for lens in piece)
    return raw_json_list(parts)


def _first_with_results(
    ls: KernelLensServer, uri: str, source: str, first: FirstLenses, records: dict[str, Record]
) -> list[str]:
    """The first answer's rows of a document with results: the scan's rows, and the rows of
    the functions with results made here, placed on a model of the scanned functions that
    have results (their last line where ``ast`` would end them: trailing blank and comment
    lines aside)."""
    unstructure = ls.converter.unstructure
    code = first.code

    def info_of(f: tuple[int, str, int, int, int, bool, str]) -> FunctionInfo:
        line, qualname, def_line, def_start, end, is_method, _ = f
        last = last_line(code, def_line, def_start, end)
        return FunctionInfo(
            qualname, def_line, line, last, def_line + 1, (), is_method, None, None, 0
        )

    named: dict[str, FunctionInfo] = {}
    for f in first.functions:
        if f[1] in records and f[1] not in named:
            named[f[1]] = info_of(f)  # the first def of a name, as the full model finds it
    model = DocumentModel(
        functions=tuple(named.values()),
        targets=tuple(LensTarget(i, "profile", "") for i in named.values()),
    )
    parts: list[str] = []
    for f, row in zip(first.functions, first.function_rows, strict=True):
        line, qualname, def_line, _, _, is_method, role = f
        record = records.get(qualname)
        if role == "kernel":
            info = FunctionInfo(qualname, def_line, line, line, line, (), is_method, None, None, 0)
            parts.extend(json.dumps(unstructure(x)) for x in _kernel_lenses(ls, uri, info))
        elif record is None:
            if row:
                parts.append(row)
        else:
            lenses = _function_lenses(
                uri,
                LensTarget(info_of(f), cast(LensRole, role), ""),
                record,
                source,
                budget_ms=ls.settings.budget_ms,
                model=model,
            )
            parts.append(row_json(lenses, unstructure))
    return parts


def first_lenses_json(
    ls: KernelLensServer, uri: str, source: str, first: FirstLenses
) -> RawJson | None:
    """A big document's lenses before its tree is made, from the scan of its text (its
    functions' rows where the scan is sure of them; the rest come with the full model, which
    only adds: see :mod:`kernel_lens.analysis.def_scan`); a function with a result gets its
    result's row, placed on the scanned function. ``None`` where the rows need the model: a
    distributed script (its rows offer *Profile on N ranks*), results in an untrusted
    workspace, a trust changed since the scan."""
    if first.process_group and ls.settings.ranks() > 0:
        return None
    trusted = bool(ls.settings.workspace_trusted)
    if trusted != first.trusted:
        return None  # the workspace's trust changed since the rows were made
    unstructure = ls.converter.unstructure
    records = {r.qualname: r for r in ls.documents.records(uri) if r.qualname != SCRIPT_NAME}
    script = ls.documents.get(uri, SCRIPT_NAME)
    if (records or script is not None) and trusted:
        first.answered_results = True
        file_lenses = _file_lenses(ls, uri, source, DocumentModel())
        held = [json.dumps(unstructure(lens)) for lens in file_lenses]
        held += _first_with_results(ls, uri, source, first, records)
        taken = {lens.range.start.line for lens in file_lenses}
        taken.update(f[0] - 1 for f in first.functions if f[6] != "none" or f[1] in records)
        for i, lens in enumerate(_run_lines_lenses(ls, uri, source)):
            if i == 0 or lens.range.start.line not in taken:
                held.append(json.dumps(unstructure(lens)))
        return raw_json_list(held)
    if records or script is not None:
        return None  # untrusted: the model answers
    parts: list[str] = [first.rows]
    occupied: set[int] = set()
    if trusted:
        for line, qualname, role in first.targets:
            occupied.add(line - 1)
            if role == "kernel":
                info = FunctionInfo(qualname, line, line, line, line, (), False, None, None, 0)
                parts.extend(json.dumps(unstructure(x)) for x in _kernel_lenses(ls, uri, info))
    else:
        occupied.update(line - 1 for line, _, _ in first.targets)
    for i, lens in enumerate(_run_lines_lenses(ls, uri, source)):
        if i == 0 or lens.range.start.line not in occupied:
            parts.append(json.dumps(unstructure(lens)))
    return raw_json_list(parts)


def _lens_pieces(
    ls: KernelLensServer,
    uri: str,
    source: str,
    model: DocumentModel | None,
    rows: LensRows | None,
) -> list[_Piece]:
    state = ls.documents.peek(uri)
    if model is None:
        model = ls.models.now(ls, uri, source)
    try:
        model.check()
        targets = model.targets
    except SourceSyntaxError as exc:
        line0 = max((exc.line or 1) - 1, 0)
        failed = state.syntax_error if state is not None else None
        title = (
            error_lens_title({"kind": "syntax", "message": str(exc)})
            if failed is not None
            else f"$(warning) Kernel Lens: syntax error — {exc} — fix it to profile"
        )
        return [[_lens(line0, title)]]
    records = {r.qualname: r for r in ls.documents.records(uri)}
    trusted = ls.settings.workspace_trusted
    pieces: list[_Piece] = [_file_lenses(ls, uri, source, model)] if trusted else []
    occupied: set[int] = set()
    # A distributed script (it calls init_process_group): Profile on N ranks on its functions.
    nproc = ls.settings.ranks() if model.process_group else 0
    chosen = driver_labels(ls, uri) if trusted else {}  # each function's driver, as shown
    for i, target in enumerate(targets):
        info = target.info
        record = records.get(info.qualname)
        # A function that was profiled keeps its lenses whatever the heuristics say.
        if target.role == "none" and record is None:
            continue
        line0 = info.first_line - 1
        if rows is not None and record is None and nproc == 0 and info.qualname not in chosen:
            # (rows made ahead in the worker have no Profile on N ranks lens)
            ahead = rows.trusted[i] if trusted else rows.untrusted[i]
            if ahead is not None:
                pieces.append((line0, ahead))
                occupied.add(line0)
                continue
        if not trusted:
            pieces.append([_lens(line0, TRUST_TITLE, TRUST_COMMAND)])
        elif target.role == "kernel":
            pieces.append(_kernel_lenses(ls, uri, info))
        else:
            pieces.append(
                placed_driver_lenses(
                    _function_lenses(
                        uri,
                        target,
                        record,
                        source,
                        budget_ms=ls.settings.budget_ms,
                        nproc=nproc,
                        model=model,
                    ),
                    driver_lens(uri, info.qualname, line0, chosen.get(info.qualname)),
                    failed=record is not None and record.state == "error",
                )
            )
    # Another script's whole run last: its line lenses only where this file's own results
    # (a function profiled here, from a driver or not) put none — never two rows on a line.
    occupied.update(
        lens.range.start.line for piece in pieces if isinstance(piece, list) for lens in piece
    )
    run_lines: list[types.CodeLens] = []
    for i, lens in enumerate(_run_lines_lenses(ls, uri, source)):
        if i == 0 or lens.range.start.line not in occupied:
            run_lines.append(lens)
    pieces.append(run_lines)
    if trusted:
        pieces.append(
            [
                _lens(
                    line - 1,
                    "$(tools) load_inline: PTX, sources, nvcc",
                    CMD_SHOW_INLINE,
                    [{"uri": uri, "line": line}],
                )
                for line in model.load_inline
            ]
        )
    return pieces


class CodeLenses(LanguageFeature):
    """The lenses of a Python document (see :func:`document_lenses`)."""

    name = "code_lens"

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        if params.text_document.language_id != "python":
            return
        ls = self.ls
        uri = params.text_document.uri
        doc = ls.workspace.text_documents.get(uri)
        if doc is not None and len(doc.source) > ls.models.inline_chars:
            # A big file's first lenses: the scan of its text starts now (its full model
            # after it), while the editor gets to its first lens request.
            scan = asyncio.ensure_future(ls.models.first(ls, uri, doc.source))
            scan.add_done_callback(lambda f: f.cancelled() or f.exception())  # the request's
        # The last runs from the history, read while the editor gets to its first lens request.
        start_restore(ls, uri)

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens] | RawJson:
        ls = self.ls
        uri = params.text_document.uri
        read_only = _package_lenses(ls, uri)
        if read_only is not None:
            return read_only
        # The first answer after an open holds the restored results (issue 28): it waits for
        # them (bounded; past that the lenses are refreshed once they are in).
        reading = start_restore(ls, uri)
        doc = ls.workspace.get_text_document(uri)
        source = doc.source
        if reading is not None and not reading.done():
            # A big file still being read answers at once (its restore waits for that reading
            # too): its lenses are refreshed when the results are in.
            parsed = (
                ls.models.ready(ls, doc.uri, source) is not None
                or len(source) <= ls.models.inline_chars
            )
            try:
                if not parsed:
                    raise asyncio.TimeoutError
                await asyncio.wait_for(asyncio.shield(reading), RESTORE_WAIT_S)
            except asyncio.TimeoutError:
                state = ls.documents.peek(uri)
                if state is not None:
                    state.lens_waited_out = True
        model = ls.models.ready(ls, doc.uri, source)
        if model is None:
            waiting = asyncio.ensure_future(ls.models.get(ls, doc.uri, source))
            if len(source) > ls.models.inline_chars:
                # A big file: its functions' rows from the scan of its text now, the tree's
                # lenses when the worker has made it (a refresh, if they differ).
                answer = await self._first_answer(uri, source, waiting)
                if answer is not None:
                    return answer
                model = ls.models.ready(ls, doc.uri, source)
        if model is None:
            try:
                model = await asyncio.wait_for(asyncio.shield(waiting), LENS_WAIT_S)
            except TimeoutError:
                # A big file still being read: say so now, and bring the lenses when it is read.
                def ready(f: asyncio.Future[DocumentModel]) -> None:
                    if not f.cancelled() and f.exception() is None:
                        refresh_lenses(ls)

                waiting.add_done_callback(ready)
                return [reading_lens(source)]
        rows = ls.models.rows(ls, doc.uri, source)
        if rows is not None:
            return document_lenses_json(ls, doc.uri, source, model, rows)
        return document_lenses(ls, doc.uri, source, model)

    async def _first_answer(
        self, uri: str, source: str, waiting: asyncio.Future[DocumentModel]
    ) -> RawJson | None:
        """The answer from the scan of a big file's text (``None``: the model must answer)."""
        ls = self.ls
        try:
            first = await ls.models.first(ls, uri, source)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return None  # the scan of an older version, or of a closed document
        except Exception as exc:  # a scan that failed costs its answer, never the lenses
            ls.log(f"the scan of {uri} failed: {exc!r}", types.MessageType.Warning)
            return None
        if first is None or ls.models.ready(ls, uri, source) is not None:
            return None  # no scan, or the model came first
        answer = first_lenses_json(ls, uri, source, first)
        if answer is not None and not first.refresh_armed:
            first.refresh_armed = True

            def ready(f: asyncio.Future[DocumentModel]) -> None:
                if (
                    not f.cancelled()
                    and f.exception() is None
                    and not first.same_lenses(f.result())
                ):
                    refresh_lenses(ls)

            waiting.add_done_callback(ready)
        return answer


def reading_lens(source: str) -> types.CodeLens:
    """The one lens of a document whose functions are still being found (a big file)."""
    lines = source.count("\n") + 1
    return _lens(0, f"$(sync~spin) Kernel Lens: reading {lines:,} lines…")


def setup(ls: KernelLensServer) -> None:
    """Take part in ``textDocument/codeLens``."""
    ls.dispatcher.add(CodeLenses(ls))
    ls.models.rows_ahead = rows_ahead  # a big document's rows are made in the worker
    # and its first rows from the scan of its text, in a thread
    ls.models.first_rows = lambda uri, targets, trusted: first_rows(
        uri, targets, trusted, ls.converter.unstructure
    )
