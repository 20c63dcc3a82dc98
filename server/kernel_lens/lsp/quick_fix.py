"""Quick fix for an ``inputs`` error that carries a suggested directive (the script never called
the function, or exited or raised first; the diagnostic's ``data``): insert the directive above
the function, as the first line of the comment block the directive is read from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.functions import NotInFunctionError, SourceSyntaxError, function_at
from kernel_lens.analysis.inputs_directive import directive_from_inputs
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer

__all__ = ["QuickFixes", "inputs_quick_fixes", "setup"]

TITLE = "Add an inputs directive above the def"
TITLE_EARLIER = "Add an inputs directive above the def (shapes of the last run's inputs)"


def inputs_quick_fixes(
    uri: str,
    source: str,
    diagnostics: list[types.Diagnostic],
    earlier: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[types.CodeAction]:
    """One action per Kernel Lens ``inputs`` diagnostic that suggests a directive.

    ``earlier``: the inputs of each function's last good run; when the function has some that
    can be rebuilt, the directive makes values of their shapes, dtypes and devices instead of
    the placeholder built from the parameter names.
    """
    actions: list[types.CodeAction] = []
    lines = source.splitlines()
    for diag in diagnostics:
        if diag.source != "Kernel Lens":
            continue
        directive = _suggested_directive(diag)
        if directive is None:
            continue
        try:
            info = function_at(source, diag.range.start.line)
        except (SourceSyntaxError, NotInFunctionError):
            continue
        if info.inputs_expr is not None:
            continue  # a directive is there already (the diagnostic is stale)
        title = TITLE
        rebuilt = directive_from_inputs((earlier or {}).get(info.qualname))
        if rebuilt is not None:
            directive, title = rebuilt, TITLE_EARLIER
        def_text = lines[info.def_line - 1] if info.def_line <= len(lines) else ""
        indent = def_text[: len(def_text) - len(def_text.lstrip())]
        at = types.Position(line=info.first_line - 1, character=0)
        edit = types.TextEdit(
            range=types.Range(start=at, end=at), new_text=f"{indent}{directive}\n"
        )
        actions.append(
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                is_preferred=True,
                edit=types.WorkspaceEdit(changes={uri: [edit]}),
            )
        )
    return actions


def _suggested_directive(diag: types.Diagnostic) -> str | None:
    """The directive an ``inputs`` diagnostic suggests (``data``: ``wire.lsp.DiagnosticData``)."""
    data = diag.data
    directive = data.get("suggested_directive") if isinstance(data, dict) else None
    return directive if isinstance(directive, str) else None


class QuickFixes(LanguageFeature):
    """``textDocument/codeAction``: the inputs directive for an ``inputs`` diagnostic."""

    name = "quick_fix"
    #: Fixes of an error go before the timing lint's suggestions.
    order = 0

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        ls = self.ls
        uri = params.text_document.uri
        if uri not in ls.workspace.text_documents:
            return []
        source = ls.workspace.get_text_document(uri).source
        state = ls.documents.peek(uri)
        earlier = state.inputs if state is not None else None
        return inputs_quick_fixes(uri, source, list(params.context.diagnostics), earlier)


def setup(ls: KernelLensServer) -> None:
    """Take part in ``textDocument/codeAction``."""
    ls.dispatcher.add(QuickFixes(ls))
