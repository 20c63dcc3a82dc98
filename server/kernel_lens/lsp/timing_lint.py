"""The timing lint in the editor: diagnostics on the user's own timing code (no execution) and a
"Profile this instead" code action on the function being timed.

The findings come from :func:`kernel_lens.analysis.timing_lint.lint_timing`. They are published
under their own key (:data:`LINT_KEY`) in the document's diagnostics, so a profile's error
diagnostics and these never replace each other. The lint runs when a document is opened and,
debounced, when it changes; its code actions join the quick fixes'. Both through the
dispatcher's fan-out of ``didOpen`` / ``didChange`` / ``didClose`` / ``codeAction``
(:mod:`kernel_lens.lsp.dispatch`), as every other feature's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from lsprotocol import types

from kernel_lens.analysis.timing_lint import TimingIssue, lint_timing
from kernel_lens.lsp.common import DiagnosticKey, set_diagnostics
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.lsp import CMD_PROFILE

__all__ = ["LINT_KEY", "SOURCE", "TimingLint", "code_actions", "lint_diagnostics", "setup"]

logger = logging.getLogger(__name__)

#: The key of the lint's diagnostics in ``DocumentState.diagnostics``.
LINT_KEY: DiagnosticKey = ("lint", "")
#: The diagnostics' ``source``.
SOURCE = "Kernel Lens"
#: Seconds after the last change before the lint runs again.
DEBOUNCE_S = 0.3
#: Title of the code action (the function's name follows it).
ACTION_TITLE = "Profile this instead"

_SEVERITY = {
    "no-sync": types.DiagnosticSeverity.Warning,
    "elapsed-before-sync": types.DiagnosticSeverity.Warning,
    "no-warmup": types.DiagnosticSeverity.Information,
    "no-l2-flush": types.DiagnosticSeverity.Information,
}


def _range(issue: TimingIssue) -> types.Range:
    return types.Range(
        types.Position(issue.line - 1, issue.col),
        types.Position(issue.end_line - 1, issue.end_col),
    )


def lint_diagnostics(
    source: str, issues: Sequence[TimingIssue] | None = None
) -> list[types.Diagnostic]:
    """The lint's findings in ``source`` as diagnostics (``data``: rule and timed function).

    ``issues``: the findings already made (from the document's one parse), else linted here.
    """
    return [
        types.Diagnostic(
            range=_range(issue),
            message=issue.message,
            severity=_SEVERITY[issue.rule],
            source=SOURCE,
            code=issue.rule,
            data={"rule": issue.rule, "function": issue.function},
        )
        for issue in (lint_timing(source) if issues is None else issues)
    ]


def _overlaps(a: types.Range, b: types.Range) -> bool:
    a0, a1 = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b0, b1 = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a0 <= b1 and b0 <= a1


def code_actions(
    uri: str, source: str, where: types.Range, issues: Sequence[TimingIssue] | None = None
) -> list[types.CodeAction]:
    """A "Profile this instead" action per finding at ``where`` that names its function."""
    actions: list[types.CodeAction] = []
    seen: set[str] = set()
    for diag in lint_diagnostics(source, issues):
        data = diag.data if isinstance(diag.data, dict) else {}
        function = data.get("function")
        if not function or not _overlaps(diag.range, where) or function in seen:
            continue
        seen.add(function)
        actions.append(
            types.CodeAction(
                title=f"{ACTION_TITLE} ({function})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                command=types.Command(
                    title=f"{ACTION_TITLE} ({function})",
                    command=CMD_PROFILE,
                    arguments=[{"uri": uri, "function": function}],
                ),
            )
        )
    return actions


async def _publish(ls: KernelLensServer, uri: str) -> None:
    """Lint the open document (from its one parse, off the loop when it is big) and publish,
    with its other diagnostics (when changed)."""
    if uri not in ls.workspace.text_documents:
        return
    document = ls.workspace.get_text_document(uri)
    if document.language_id not in (None, "python") and not uri.endswith(".py"):
        return
    source = document.source
    issues = await ls.models.lint(ls, uri, source)
    if uri not in ls.workspace.text_documents or document.source is not source:
        return  # closed or changed meanwhile: the next lint publishes
    found = lint_diagnostics(source, issues)
    if ls.documents(uri).diagnostics.get(LINT_KEY, []) == found:
        return
    set_diagnostics(ls, uri, LINT_KEY, found)


def _start(ls: KernelLensServer, uri: str) -> None:
    task = asyncio.ensure_future(_publish(ls, uri))

    def done(f: asyncio.Future[None]) -> None:
        if not f.cancelled() and f.exception() is not None:
            logger.error("timing lint failed", exc_info=f.exception())

    task.add_done_callback(done)


class TimingLint(LanguageFeature):
    """The lint on open and (debounced) on change, and its "Profile this instead" actions."""

    name = "timing_lint"
    #: Its suggestions go after the quick fixes of errors.
    order = 1

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls
        self._pending: dict[str, asyncio.TimerHandle] = {}

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        _start(self.ls, params.text_document.uri)

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()

        def run() -> None:
            self._pending.pop(uri, None)
            _start(self.ls, uri)

        self._pending[uri] = loop.call_later(DEBOUNCE_S, run)

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        handle = self._pending.pop(params.text_document.uri, None)
        if handle is not None:
            handle.cancel()

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        ls = self.ls
        uri = params.text_document.uri
        if uri not in ls.workspace.text_documents:
            return []
        source = ls.workspace.get_text_document(uri).source
        # The findings of this version's lint, when it has run (never a parse per request).
        issues = ls.models.lint_ready(ls, uri, source)
        if issues is None:
            return []
        return code_actions(uri, source, params.range, issues)


def setup(ls: KernelLensServer) -> None:
    """Take part in ``didOpen``, ``didChange``, ``didClose`` and ``codeAction``."""
    ls.dispatcher.add(TimingLint(ls))
