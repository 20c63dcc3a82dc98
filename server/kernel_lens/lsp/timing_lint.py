"""The timing lint in the editor: diagnostics on the user's own timing code (no execution) and a
"Profile this instead" code action on the function being timed.

The findings come from :func:`kernel_lens.analysis.timing_lint.lint_timing`. They are published
under their own keys (``<lint>…``) in the document's diagnostics, so a profile's error
diagnostics and these never replace each other. The lint runs when a document is opened and,
debounced, when it changes: ``didOpen`` / ``didChange`` are answered by ``lifecycle``, so this
module runs after that handler (pygls keeps one handler per notification); the code action
handler merges its actions with any other module's the same way.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.timing_lint import TimingIssue, lint_timing
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.lsp import CMD_PROFILE

__all__ = ["LINT_KEY", "SOURCE", "code_actions", "lint_diagnostics", "setup"]

logger = logging.getLogger(__name__)

#: The prefix of the lint's diagnostic keys in ``DocumentState.diagnostics``.
LINT_KEY = "<lint>"
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


def lint_diagnostics(source: str) -> list[types.Diagnostic]:
    """The lint's findings in ``source`` as diagnostics (``data``: rule and timed function)."""
    return [
        types.Diagnostic(
            range=_range(issue),
            message=issue.message,
            severity=_SEVERITY[issue.rule],
            source=SOURCE,
            code=issue.rule,
            data={"rule": issue.rule, "function": issue.function},
        )
        for issue in lint_timing(source)
    ]


def _overlaps(a: types.Range, b: types.Range) -> bool:
    a0, a1 = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b0, b1 = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a0 <= b1 and b0 <= a1


def code_actions(uri: str, source: str, where: types.Range) -> list[types.CodeAction]:
    """A "Profile this instead" action per finding at ``where`` that names its function."""
    actions: list[types.CodeAction] = []
    seen: set[str] = set()
    for diag in lint_diagnostics(source):
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


def _publish(ls: KernelLensServer, uri: str) -> None:
    """Lint the open document and publish, merged with its other diagnostics (when changed)."""
    if uri not in ls.workspace.text_documents:
        return
    document = ls.workspace.get_text_document(uri)
    if document.language_id not in (None, "python") and not uri.endswith(".py"):
        return
    found = lint_diagnostics(document.source)
    entries = ls.documents(uri).diagnostics
    old = {k: v for k, v in entries.items() if k.startswith(LINT_KEY)}
    new = {f"{LINT_KEY}{i}": diag for i, diag in enumerate(found)}
    if old == new:
        return
    for key in old:
        del entries[key]
    entries.update(new)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=list(entries.values()))
    )


def _after(ls: KernelLensServer, method: str, handler: Callable[[Any], None]) -> None:
    """Run ``handler(params)`` after the handler another module registered for ``method`` (or
    alone when there is none)."""
    features = ls.protocol.fm.features
    first = features.get(method)
    if first is None:
        ls.feature(method)(handler)
        return

    def then(params: Any) -> None:
        try:
            handler(params)
        except Exception:  # the lint must never break the notification it follows
            logger.exception("timing lint failed")

    if inspect.iscoroutinefunction(first):

        async def both_async(params: Any) -> Any:
            result = await first(params)
            then(params)
            return result

        features[method] = both_async
        return

    def both(params: Any) -> Any:
        result = first(params)
        then(params)
        return result

    features[method] = both


def setup(ls: KernelLensServer) -> None:
    """Register the lint on open and change, and the code action."""
    pending: dict[str, asyncio.TimerHandle] = {}

    def on_open(params: types.DidOpenTextDocumentParams) -> None:
        _publish(ls, params.text_document.uri)

    def on_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            _publish(ls, uri)
            return

        def run() -> None:
            pending.pop(uri, None)
            try:
                _publish(ls, uri)
            except Exception:
                logger.exception("timing lint failed")

        pending[uri] = loop.call_later(DEBOUNCE_S, run)

    def on_close(params: types.DidCloseTextDocumentParams) -> None:
        handle = pending.pop(params.text_document.uri, None)
        if handle is not None:
            handle.cancel()

    _after(ls, types.TEXT_DOCUMENT_DID_OPEN, on_open)
    _after(ls, types.TEXT_DOCUMENT_DID_CHANGE, on_change)
    _after(ls, types.TEXT_DOCUMENT_DID_CLOSE, on_close)

    async def mine(params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        if uri not in ls.workspace.text_documents:
            return []
        return code_actions(uri, ls.workspace.get_text_document(uri).source, params.range)

    features = ls.protocol.fm.features
    other = features.get(types.TEXT_DOCUMENT_CODE_ACTION)
    if other is None:

        @ls.feature(
            types.TEXT_DOCUMENT_CODE_ACTION,
            types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
        )
        async def text_document_code_action(
            params: types.CodeActionParams,
        ) -> list[types.Command | types.CodeAction]:
            return list(await mine(params))

        return

    async def merged(params: types.CodeActionParams) -> list[types.Command | types.CodeAction]:
        theirs = other(params)
        if inspect.isawaitable(theirs):
            theirs = await theirs
        return [*(theirs or []), *await mine(params)]

    features[types.TEXT_DOCUMENT_CODE_ACTION] = merged
