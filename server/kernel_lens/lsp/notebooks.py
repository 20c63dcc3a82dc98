"""Jupyter notebooks in the editor: the same lenses, hovers and diagnostics on code cells.

The client syncs a notebook through LSP notebook-document sync: its cells arrive as text
documents (``vscode-notebook-cell:…``) and the notebook as their order. The agent cannot see
the live Jupyter kernel, so a notebook is profiled as a **virtual script**: its code cells in
order, IPython magics and shell lines neutralised with a note
(:mod:`kernel_lens.analysis.notebook_script`), kept as an open text document under
``<folder>/<name>.kernel_lens.py`` (never written to disk; the agent gets its text). Everything
the server does for a ``.py`` file then works on it unchanged — ``Profile`` on a function
defined in a cell (inputs captured from the notebook's own run up to the function's first call,
in whatever later cell), results, staleness, Report, history — and this module maps its lines
to the cells' and back:

* lenses: the script's lenses that fall in a cell, moved to the cell's lines, plus
  ``Profile Cell`` above each code cell: the cells above and that cell run once, as a script,
  each line tagged; the cell's own lines get the per-line lenses, its first line the time its
  lines took and that of the cells above;
* hovers: a Profile Cell run's line from that run, else asked of the script at the mapped
  position;
* diagnostics: published for the script are split onto the cells they belong to.

Nothing runs in an untrusted workspace.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from kernel_lens.analysis.lens_text import (
    error_lens_title,
    hover_markdown,
    line_lens_title,
    trace_text,
)
from kernel_lens.analysis.notebook_script import Cell, NotebookScript, build_script, virtual_path
from kernel_lens.lsp.code_lens import document_lenses
from kernel_lens.lsp.common import (
    DiagnosticKey,
    diagnostic_data,
    failure_message,
    refresh_lenses,
    set_diagnostic,
    status,
)
from kernel_lens.lsp.dispatch import PUBLISH_DIAGNOSTICS
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.jobs import run_job
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.state import CellRun, NotebookState, NotebookStates
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import ProfileRequest
from kernel_lens.wire.lsp import (
    CMD_MORE_ACTIONS,
    CMD_PROFILE,
    CMD_PROFILE_ALL,
    CMD_PROFILE_SCRIPT_LIGHT,
    CMD_PROFILE_SCRIPT_WINDOW,
    Position,
    ProfileAllArgs,
    ProfileArgs,
    ProfileCommandResult,
)

__all__ = ["CELL_KEY", "NotebookStates", "Notebooks", "cell_lenses", "setup", "sync_notebook"]

logger = logging.getLogger(__name__)

#: The source of a Profile Cell failure's diagnostic key (the cell's URI is the key).
CELL_KEY = "cell"
PROFILE_CELL = "$(run-all) Profile Cell"
TRUST_TITLE = "$(shield) Kernel Lens: trust this workspace to profile"
TRUST_COMMAND = "workbench.trust.manage"


def states(ls: KernelLensServer) -> NotebookStates:
    """The server's notebooks (``ls.notebooks``)."""
    return ls.notebooks


def _virtual_uri(ls: KernelLensServer, notebook_uri: str) -> str:
    parsed = urlparse(notebook_uri)
    if parsed.scheme == "file":
        path = unquote(parsed.path)
    else:
        name = os.path.basename(unquote(parsed.path)) or "notebook.ipynb"
        path = os.path.join(ls.settings.workspace_root or os.getcwd(), name)
    return "file://" + virtual_path(path)


def _code_cells(ls: KernelLensServer, notebook: types.NotebookDocument) -> list[Cell]:
    cells: list[Cell] = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        # pygls keys documents by their unquoted URI (cell URIs carry %3D).
        doc = ls.workspace.text_documents.get(unquote(cell.document))
        if doc is None or (doc.language_id or "python") != "python":
            continue
        cells.append(Cell(cell.document, doc.source, number))
    return cells


def sync_notebook(ls: KernelLensServer, notebook_uri: str) -> NotebookState | None:
    """Rebuild the notebook's virtual script from its cells and keep it open as a document."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return None
    registry = states(ls)
    state = registry.by_notebook.get(notebook_uri)
    if state is None:
        state = NotebookState(notebook_uri, _virtual_uri(ls, notebook_uri))
        registry.by_notebook[notebook_uri] = state
        registry.by_virtual[state.virtual_uri] = state
    script = build_script(_code_cells(ls, notebook))
    if state.script is None or state.script.text != script.text:
        state.version += 1
        ls.workspace.put_text_document(
            types.TextDocumentItem(
                uri=state.virtual_uri, language_id="python", version=state.version, text=script.text
            )
        )
    state.script = script
    # A deleted cell's run goes with it.
    state.runs = {uri: run for uri, run in state.runs.items() if script.index_of(uri) is not None}
    return state


def _state_of_cell(ls: KernelLensServer, cell_uri: str) -> NotebookState | None:
    notebook = ls.workspace.get_notebook_document(cell_uri=cell_uri)
    if notebook is None:
        return None
    return sync_notebook(ls, notebook.uri)


def _lens(
    line0: int, title: str, command: str = "", args: list[Any] | None = None
) -> types.CodeLens:
    return types.CodeLens(
        range=types.Range(types.Position(line0, 0), types.Position(line0, 0)),
        command=types.Command(title=title, command=command, arguments=args),
    )


def _is_script_lens(lens: types.CodeLens) -> bool:
    args = lens.command.arguments if lens.command else None
    if lens.command is not None and lens.command.command in _SCRIPT_COMMANDS:
        return True  # Profile Script (Light), a window: the virtual script's, not a cell's
    if lens.command is not None and lens.command.command == CMD_MORE_ACTIONS and args:
        items = args[0].get("items") if isinstance(args[0], dict) else None  # type: ignore[index]
        return isinstance(items, list) and bool(items) and all(map(_is_script_action, items))
    return bool(args) and isinstance(args[0], dict) and bool(args[0].get("script"))  # type: ignore[index]


#: The commands of the whole script's lenses besides Profile Script's own.
_SCRIPT_COMMANDS = (CMD_PROFILE_SCRIPT_LIGHT, CMD_PROFILE_SCRIPT_WINDOW)


def _is_script_action(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if item.get("command") in _SCRIPT_COMMANDS:
        return True
    args = item.get("arguments") or [{}]
    return isinstance(args[0], dict) and bool(args[0].get("script"))


def _cell_own_ms(result: dict[str, Any], script: NotebookScript, index: int) -> float:
    first, last = script.cell_range(index)
    return (
        sum(
            float(line.get("cpu_us") or 0.0)
            for line in result.get("lines") or []
            if first <= int(line["line"]) <= last
        )
        / 1000.0
    )


def _duration(ms: float) -> str:
    """``0.42 ms``, ``12.3 ms``, ``1.20 s``."""
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    return f"{ms:.3g} ms" if ms < 100 else f"{ms:.0f} ms"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _run_title(run: CellRun, script: NotebookScript, index: int) -> str:
    """``cell · 0.4 ms its lines · 4.1 ms wall with the 2 code cells above, one run (under the
    profiler) · 1 IPython line skipped``."""
    result = run.result or {}
    wall_ms = 1000.0 * float((result.get("script") or {}).get("wall_s") or 0.0)
    own_ms = _cell_own_ms(result, script, index)
    above = (
        f"{_duration(wall_ms)} wall"
        if index == 0
        else f"{_duration(wall_ms)} wall with the {_plural(index, 'code cell')} above"
    )
    skipped = f" · {_plural(run.skipped, 'IPython line')} skipped" if run.skipped else ""
    return (
        f"$(run-all) cell · {_duration(own_ms)} its lines · {above}, one run (under the "
        f"profiler){skipped}"
    )


def _cell_row(
    ls: KernelLensServer, state: NotebookState, cell_uri: str, index: int
) -> list[types.CodeLens]:
    """``Profile Cell`` and, after a run, its summary and per-line lenses (cell lines, 0-based)."""
    assert state.script is not None
    script = state.script
    args: list[Any] = [{"uri": cell_uri, "script": True}]
    if not ls.settings.workspace_trusted:
        return [_lens(0, TRUST_TITLE, TRUST_COMMAND)]
    run = state.runs.get(cell_uri)
    profile = _lens(0, PROFILE_CELL, CMD_PROFILE, args)
    if run is None:
        return [profile]
    if run.state == "running":
        return [_lens(0, "$(sync~spin) Running the cells above and this one…")]
    if run.state != "ok" or run.result is None:
        title = (
            error_lens_title(run.error)
            if run.state == "error" and run.error is not None
            else "$(circle-slash) Cell run cancelled"
        )
        return [_lens(0, title), profile]
    if run.text != script.upto(index):
        return [_lens(0, "$(history) outdated: a cell up to this one changed"), profile]
    rerun = _lens(0, "$(refresh) Re-run Cell", CMD_PROFILE, args)
    lenses = [_lens(0, _run_title(run, script, index)), rerun]
    cuda = run.result.get("device_kind") == "cuda"
    first, last = script.cell_range(index)
    for line in run.result.get("lines") or []:
        number = int(line["line"])
        if not first <= number <= last:
            continue
        line_title = line_lens_title(line, cuda=cuda)
        if line_title is not None:
            if number == first:
                # The cell's first line shares the row of the cell's summary: named, so that
                # its ops do not read as the cell's.
                line_title = f"line 1: {line_title}"
            lenses.append(_lens(number - first, line_title))
    return lenses


def cell_lenses(ls: KernelLensServer, cell_uri: str) -> list[types.CodeLens]:
    """The lenses of one code cell: its ``Profile Cell`` row, then the virtual script's lenses
    that fall in it (functions' rows and per-line results), on the cell's lines."""
    state = _state_of_cell(ls, cell_uri)
    if state is None or state.script is None:
        return []
    script = state.script
    index = script.index_of(cell_uri)
    if index is None:
        return []
    lenses = _cell_row(ls, state, cell_uri, index)
    for lens in document_lenses(ls, state.virtual_uri, script.text):
        if _is_script_lens(lens):
            continue  # the notebook's "Profile Script" is each cell's Profile Cell
        where = script.to_cell(lens.range.start.line + 1)
        if where is None or where[0] != cell_uri:
            continue
        line0 = where[1] - 1
        lens.range = types.Range(types.Position(line0, 0), types.Position(line0, 0))
        lenses.append(lens)
    return lenses


def _cell_run_hover(
    ls: KernelLensServer,
    state: NotebookState,
    cell_uri: str,
    line: int,
    position: types.Position,
) -> str | None:
    """A line's ops and kernels from its cell's last Profile Cell run (still current)."""
    script = state.script
    run = state.runs.get(cell_uri)
    if script is None or run is None or run.state != "ok" or run.result is None:
        return None
    index = script.index_of(cell_uri)
    if index is None or run.text != script.upto(index):
        return None
    if not any(int(item["line"]) == line for item in run.result.get("lines") or []):
        return None
    doc = ls.workspace.text_documents.get(unquote(cell_uri))
    word = doc.word_at_position(position) or None if doc is not None else None
    return hover_markdown(run.result, line, word=word)


def _to_script_args(ls: KernelLensServer, args: ProfileArgs) -> ProfileArgs:
    """A cell's ``kernelLens.profile`` arguments (a function by name, line or cursor position)
    on the notebook's virtual script."""
    state = _state_of_cell(ls, args.uri)
    if state is None or state.script is None:
        return args

    def line0(cell_line0: int) -> int | None:
        found = state.script.to_script(args.uri, cell_line0 + 1) if state.script else None
        return None if found is None else found - 1

    position = args.position
    if position is not None:
        mapped = line0(position.line)
        position = None if mapped is None else Position(mapped, position.character)
    line = None if args.line is None else line0(args.line)
    return ProfileArgs(
        uri=state.virtual_uri, function=args.function, line=line, position=position, script=False
    )


def cell_places(state: NotebookState, text: str) -> str:
    """``text`` with each ``<name>.kernel_lens.py:<line>`` (where inputs were captured, say)
    written as the notebook's ``cell 4, line 3``."""
    script = state.script
    if script is None:
        return text
    name = re.escape(os.path.basename(unquote(urlparse(state.virtual_uri).path)))

    def place(match: re.Match[str]) -> str:
        return script.describe(int(match.group(1))) or match.group(0)

    return re.sub(rf"{name}:(\d+)", place, text)


def _map_diagnostics(
    script: NotebookScript, diagnostics: list[types.Diagnostic]
) -> dict[str, list[types.Diagnostic]]:
    """The script's diagnostics by cell, on the cells' lines (a range spanning cells is cut at
    the end of its first line)."""
    out: dict[str, list[types.Diagnostic]] = {cell.uri: [] for cell in script.cells}
    for diag in diagnostics:
        start = script.to_cell(diag.range.start.line + 1)
        if start is None:
            continue
        end = script.to_cell(diag.range.end.line + 1)
        uri, line = start
        end_pos = (
            types.Position(end[1] - 1, diag.range.end.character)
            if end is not None and end[0] == uri
            else types.Position(line - 1, max(diag.range.start.character, 10_000))
        )
        out[uri].append(
            types.Diagnostic(
                range=types.Range(types.Position(line - 1, diag.range.start.character), end_pos),
                message=diag.message,
                severity=diag.severity,
                source=diag.source,
                code=diag.code,
                data=diag.data,
            )
        )
    return out


async def profile_cell(ls: KernelLensServer, cell_uri: str) -> ProfileCommandResult:
    """Run the notebook's code cells up to and including ``cell_uri`` once, as a script, each
    line profiled; store the result on the cell."""
    if not ls.settings.workspace_trusted:
        message = "Kernel Lens runs your code: trust this workspace first (nothing was run)."
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )
        return {"ok": False, "error": {"kind": "untrusted", "message": message}}
    state = _state_of_cell(ls, cell_uri)
    script = state.script if state is not None else None
    index = script.index_of(cell_uri) if script is not None else None
    if state is None or script is None or index is None:
        message = "Kernel Lens: this cell is not a Python code cell of an open notebook"
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )
        return {"ok": False, "error": {"kind": "not-found", "message": message}}
    text = script.upto(index)
    first, last = script.cell_range(index)
    skipped = [n for n in script.notes if n[0] <= index]
    number = script.cell_number(index)
    for cell_index, cell_line, message in skipped:
        where = f"cell {script.cell_number(cell_index)}, line {cell_line}"
        ls.log(f"{where}: {message}", types.MessageType.Info)
    state.runs[cell_uri] = CellRun("running", text, skipped=len(skipped))
    refresh_lenses(ls)
    path = unquote(urlparse(state.virtual_uri).path)
    # The cell's own lines are tagged: a call into a function of a cell above stays on the
    # calling line of the cell profiled (its lenses show what the cell costs).
    request = ProfileRequest(path=path, text=text, script=True, only_lines=(first, last))
    key: DiagnosticKey = (CELL_KEY, cell_uri)
    outcome: ProfileCommandResult
    try:
        result = await run_job(
            ls,
            uri=state.virtual_uri,
            qualname=f"cell {number}",
            title=f"Running the code cells up to cell {number} of {os.path.basename(path)}",
            request=request,
        )
        if not isinstance(result, dict):
            raise TypeError("a profile result is a JSON object")
    except ProfileError as err:
        kind = "cancelled" if err.kind == "cancelled" else "error"
        state.runs[cell_uri] = CellRun(kind, text, error=err.to_json(), skipped=len(skipped))
        if kind == "error":
            set_diagnostic(ls, state.virtual_uri, key, _diagnostic(err, text, first))
            ls.log(f"cell {number}: {err}", types.MessageType.Error)
        outcome = {"ok": False, "error": err.to_json()}
    except Exception as exc:  # a result the server cannot use
        unusable = ProfileError(
            "internal", f"unusable result from the agent: {failure_message(exc)}"
        )
        state.runs[cell_uri] = CellRun("error", text, error=unusable.to_json())
        outcome = {"ok": False, "error": unusable.to_json()}
    else:
        state.runs[cell_uri] = CellRun("ok", text, result=result, skipped=len(skipped))
        set_diagnostic(ls, state.virtual_uri, key, None)
        summary = (
            f"cell {number}: one run of the code cells up to it on {result.get('device')}; "
            f"{trace_text(result)}"
        )
        ls.log(summary, types.MessageType.Info)
        status(ls, "idle", summary, cell_uri)
        outcome = {"ok": True, "function": f"cell {number}", "lines": [first, last]}
    refresh_lenses(ls)
    return outcome


def _diagnostic(err: ProfileError, text: str, fallback_line: int) -> types.Diagnostic:
    lines = text.splitlines()
    line1 = err.line or fallback_line
    line0 = max(0, min(line1 - 1, max(len(lines) - 1, 0)))
    source = lines[line0] if line0 < len(lines) else ""
    start = len(source) - len(source.lstrip())
    return types.Diagnostic(
        range=types.Range(
            types.Position(line0, start), types.Position(line0, max(start, len(source)))
        ),
        message=f"Profile failed ({err.kind}): {err.message}",
        severity=types.DiagnosticSeverity.Error,
        source="Kernel Lens",
        code=err.kind,
        data=diagnostic_data(err),
    )


def _close(ls: KernelLensServer, notebook_uri: str, cell_uris: list[str]) -> None:
    registry = states(ls)
    state = registry.by_notebook.pop(notebook_uri, None)
    if state is None:
        return
    registry.by_virtual.pop(state.virtual_uri, None)
    ls.documents.release(state.virtual_uri)
    ls.workspace.remove_text_document(state.virtual_uri)
    for uri in cell_uris:
        ls.dispatcher.publish_diagnostics(uri, [])


#: What a notebook answers for its cells alone (everything else of a cell is a text document's).
_CELL_METHODS = frozenset(
    {types.TEXT_DOCUMENT_CODE_LENS, types.TEXT_DOCUMENT_HOVER, CMD_PROFILE, CMD_PROFILE_ALL}
)


class Notebooks(LanguageFeature):
    """The cells' lenses, hovers and Profile commands (claimed from the other features: a cell
    is answered from its notebook's virtual script), and the script's diagnostics, published
    on the cells they belong to."""

    name = "notebooks"

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    def _is_cell(self, uri: str) -> bool:
        return self.ls.workspace.get_notebook_document(cell_uri=uri) is not None

    def claims(self, method: str, uri: str) -> bool:
        if method == PUBLISH_DIAGNOSTICS:
            state = states(self.ls).by_virtual.get(uri)
            return state is not None and state.script is not None
        return method in _CELL_METHODS and self._is_cell(uri)

    def route_diagnostics(
        self, uri: str, diagnostics: list[types.Diagnostic]
    ) -> dict[str, list[types.Diagnostic]] | None:
        state = states(self.ls).by_virtual.get(uri)
        if state is None or state.script is None:
            return None
        return _map_diagnostics(state.script, diagnostics)

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        uri = params.text_document.uri
        return cell_lenses(self.ls, uri) if self._is_cell(uri) else None

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        ls = self.ls
        uri = params.text_document.uri
        if not self._is_cell(uri):
            return None
        state = _state_of_cell(ls, uri)
        line = (
            state.script.to_script(uri, params.position.line + 1)
            if state is not None and state.script is not None
            else None
        )
        if state is None or state.script is None or line is None:
            return None
        text = _cell_run_hover(ls, state, uri, line, params.position)
        if text is not None:
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
            )
        # Asked of the script at the mapped position, as any document's hover.
        result = await ls.dispatcher.hover(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=state.virtual_uri),
                position=types.Position(line - 1, params.position.character),
            ),
            routed=False,
        )
        if isinstance(result, types.Hover):
            result.range = None  # a script range means nothing in the cell
            mapped = _state_of_cell(ls, uri)
            if mapped is not None and isinstance(result.contents, types.MarkupContent):
                result.contents.value = cell_places(mapped, result.contents.value)
        return result

    async def execute_command(self, command: str, args: Any) -> Any:
        ls = self.ls
        if command == CMD_PROFILE_ALL:
            # Every function of the notebook: the same as on its virtual script.
            state = _state_of_cell(ls, args.uri)
            if state is not None:
                args = ProfileAllArgs(uri=state.virtual_uri)
            return await ls.dispatcher.execute_command(command, args, routed=False)
        if args.script:
            return await profile_cell(ls, args.uri)
        return await ls.dispatcher.execute_command(command, _to_script_args(ls, args), routed=False)


def setup(ls: KernelLensServer) -> None:
    """Register notebook sync; route cells' lenses, hovers, diagnostics and Profile Cell."""
    ls.dispatcher.add(Notebooks(ls))

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open(ls: KernelLensServer, params: types.DidOpenNotebookDocumentParams) -> None:
        sync_notebook(ls, params.notebook_document.uri)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change(ls: KernelLensServer, params: types.DidChangeNotebookDocumentParams) -> None:
        sync_notebook(ls, params.notebook_document.uri)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close(ls: KernelLensServer, params: types.DidCloseNotebookDocumentParams) -> None:
        _close(ls, params.notebook_document.uri, [c.uri for c in params.cell_text_documents])
