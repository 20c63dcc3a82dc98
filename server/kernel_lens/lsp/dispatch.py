"""The one registration of each LSP message that several features answer, fanned out to the
features' hooks (:class:`~kernel_lens.lsp.feature.LanguageFeature`): esbonio's
``_configure_lsp_methods`` / ``call_features`` / ``gather_results`` shape.

The server owns one :class:`Dispatcher` (``ls.dispatcher``). Feature modules add their hook
objects to it in their ``setup``; :func:`kernel_lens.lsp.server.create_server` then calls
:meth:`Dispatcher.configure`, which registers with pygls each shared message that some feature
takes part in: ``textDocument/didOpen``, ``didChange``, ``didClose``, ``codeLens``, ``hover`` and
``codeAction``. Commands that features share (a notebook cell's Profile goes to its notebook)
are registered once, when their owner is added. Diagnostics are published through
:meth:`Dispatcher.publish_diagnostics`.

Features are always visited in (``order``, ``name``) order, never in the order they were
added, and a feature's exception is logged with its name while the others still answer.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from kernel_lens.lsp.convert import RawJson, raw_json_list
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.protocol import converter_of

__all__ = ["PUBLISH_DIAGNOSTICS", "Dispatcher"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The method a feature :meth:`~LanguageFeature.claims` to route a document's diagnostics.
PUBLISH_DIAGNOSTICS = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS

#: Hook name → the LSP message it answers, for the messages :meth:`Dispatcher.configure`
#: registers (each only when some feature overrides its hook).
_HOOKS = {
    "document_open": types.TEXT_DOCUMENT_DID_OPEN,
    "document_change": types.TEXT_DOCUMENT_DID_CHANGE,
    "document_close": types.TEXT_DOCUMENT_DID_CLOSE,
    "code_lens": types.TEXT_DOCUMENT_CODE_LENS,
    "hover": types.TEXT_DOCUMENT_HOVER,
    "code_action": types.TEXT_DOCUMENT_CODE_ACTION,
}
#: Registration options of the shared requests that have some.
_OPTIONS: dict[str, Any] = {
    types.TEXT_DOCUMENT_CODE_ACTION: types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix]
    ),
}


def _overrides(feature: LanguageFeature, hook: str) -> bool:
    return getattr(type(feature), hook) is not getattr(LanguageFeature, hook)


class Dispatcher:
    """The shared LSP messages of one server, fanned out to its features.

    Args:
        server: the pygls server the messages are registered with and published through.
    """

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._features: list[LanguageFeature] = []
        self._owners: dict[str, LanguageFeature] = {}
        self._configured = False

    @property
    def features(self) -> list[LanguageFeature]:
        """The features, in the order every fan-out visits them: (``order``, ``name``)."""
        return sorted(self._features, key=lambda f: (f.order, f.name))

    def add(self, feature: LanguageFeature) -> None:
        """Add a feature's hooks; register the commands it owns (once each).

        Raises:
            ValueError: another feature owns one of its commands, or the messages were
                registered already (:meth:`configure`).
        """
        if self._configured:
            raise ValueError(f"{feature.name}: added after the LSP messages were registered")
        for command, args_type in feature.commands.items():
            owner = self._owners.get(command)
            if owner is not None:
                raise ValueError(f"{command} is owned by {owner.name}, not {feature.name}")
            self._owners[command] = feature
            self._server.command(command)(self._command_handler(command, args_type))
        self._features.append(feature)

    def configure(self) -> None:
        """Register each shared LSP message that some feature takes part in, once."""
        if self._configured:
            return
        self._configured = True
        for hook, method in _HOOKS.items():
            if not any(_overrides(f, hook) for f in self._features):
                continue
            self._server.feature(method, _OPTIONS.get(method))(_plain(getattr(self, f"_on_{hook}")))

    def _claimant(self, method: str, uri: str | None) -> LanguageFeature | None:
        if uri is None:
            return None
        for feature in self.features:
            try:
                if feature.claims(method, uri):
                    return feature
            except Exception:
                logger.exception("%s: claims(%s) failed", feature.name, method)
        return None

    def _taking_part(
        self, hook: str, method: str, uri: str | None, routed: bool
    ) -> list[LanguageFeature]:
        """The features whose ``hook`` answers ``method`` for ``uri``: the claimant alone when
        one claims the document (and ``routed``), else every feature that has the hook."""
        claimant = self._claimant(method, uri) if routed else None
        if claimant is not None:
            return [claimant] if _overrides(claimant, hook) else []
        return [f for f in self.features if _overrides(f, hook)]

    def _notify(self, hook: str, method: str, params: Any) -> None:
        """Run every feature's ``hook``; an ``async`` one is scheduled, its failure logged."""
        for feature in self._taking_part(hook, method, None, routed=False):
            try:
                result = getattr(feature, hook)(params)
            except Exception:
                logger.exception("%s failed in %s", feature.name, method)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                task.add_done_callback(_log_failure(feature, method))

    async def _answers(
        self,
        hook: str,
        method: str,
        uri: str | None,
        call: Callable[[LanguageFeature], Any],
        *,
        routed: bool,
    ) -> list[Any]:
        """Each taking-part feature's answer (``None`` left out; a failure logged, left out)."""
        answers: list[Any] = []
        for feature in self._taking_part(hook, method, uri, routed):
            try:
                answer = call(feature)
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception:
                logger.exception("%s failed in %s", feature.name, method)
                continue
            if answer is not None:
                answers.append(answer)
        return answers

    # The shared notifications: every feature's hook runs.

    def _on_document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._notify("document_open", types.TEXT_DOCUMENT_DID_OPEN, params)

    def _on_document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._notify("document_change", types.TEXT_DOCUMENT_DID_CHANGE, params)

    def _on_document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._notify("document_close", types.TEXT_DOCUMENT_DID_CLOSE, params)

    # The shared requests.

    async def _on_code_lens(
        self, params: types.CodeLensParams
    ) -> list[types.CodeLens] | RawJson | None:
        answer = await self.code_lens(params)
        adapters = self._adapters(types.TEXT_DOCUMENT_CODE_LENS)
        if answer is None or not adapters:
            return answer
        converter = converter_of(self._server)
        lenses = (
            converter.structure(json.loads(answer), list[types.CodeLens])
            if isinstance(answer, RawJson)
            else answer
        )
        for feature in adapters:
            try:
                lenses = feature.adapt_code_lens(lenses)
            except Exception:
                logger.exception("%s failed adapting %s", feature.name, "codeLens")
        return lenses

    async def _on_hover(self, params: types.HoverParams) -> types.Hover | None:
        answer = await self.hover(params)
        if answer is None:
            return None
        for feature in self._adapters(types.TEXT_DOCUMENT_HOVER):
            try:
                answer = feature.adapt_hover(answer)
            except Exception:
                logger.exception("%s failed adapting %s", feature.name, "hover")
        return answer

    def _adapters(self, method: str) -> list[LanguageFeature]:
        """The features that rewrite the joined answer of ``method`` for this client."""
        found = []
        for feature in self.features:
            try:
                if feature.adapting(method):
                    found.append(feature)
            except Exception:
                logger.exception("%s: adapting(%s) failed", feature.name, method)
        return found

    async def _on_code_action(
        self, params: types.CodeActionParams
    ) -> list[types.Command | types.CodeAction] | None:
        return await self.code_action(params)

    async def code_lens(
        self, params: types.CodeLensParams, *, routed: bool = True
    ) -> list[types.CodeLens] | RawJson | None:
        """Every feature's lenses for the document, joined (``None`` when none gave any); JSON
        text when a feature answered with JSON text (a big file's lenses)."""
        uri = params.text_document.uri
        answers = await self._answers(
            "code_lens",
            types.TEXT_DOCUMENT_CODE_LENS,
            uri,
            lambda f: f.code_lens(params),
            routed=routed,
        )
        if not answers:
            return None
        if len(answers) == 1 and isinstance(answers[0], RawJson):
            return answers[0]  # a big file's lenses: not copied again
        if any(isinstance(answer, RawJson) for answer in answers):
            unstructure = converter_of(self._server).unstructure
            return raw_json_list(
                [
                    answer[1:-1]
                    if isinstance(answer, RawJson)
                    else ",".join(json.dumps(unstructure(lens)) for lens in answer)
                    for answer in answers
                ]
            )
        return [lens for answer in answers for lens in answer]

    async def hover(self, params: types.HoverParams, *, routed: bool = True) -> types.Hover | None:
        """The hover of the feature that has one (``routed=False``: no feature's claim on the
        document counts, for a feature that asks about the document it routed to)."""
        uri = params.text_document.uri
        answers = await self._answers(
            "hover", types.TEXT_DOCUMENT_HOVER, uri, lambda f: f.hover(params), routed=routed
        )
        return answers[0] if answers else None

    async def code_action(
        self, params: types.CodeActionParams, *, routed: bool = True
    ) -> list[types.Command | types.CodeAction] | None:
        """Every feature's code actions for the range, joined (``None`` when none gave any)."""
        uri = params.text_document.uri
        answers = await self._answers(
            "code_action",
            types.TEXT_DOCUMENT_CODE_ACTION,
            uri,
            lambda f: f.code_action(params),
            routed=routed,
        )
        if not answers:
            return None
        return [action for answer in answers for action in answer]

    def publish_diagnostics(
        self, uri: str, diagnostics: list[types.Diagnostic], *, routed: bool = True
    ) -> None:
        """Publish a document's diagnostics, or the claimant's routing of them (a notebook's
        virtual script: onto its cells)."""
        claimant = self._claimant(PUBLISH_DIAGNOSTICS, uri) if routed else None
        routes: dict[str, list[types.Diagnostic]] | None = None
        if claimant is not None:
            try:
                routes = claimant.route_diagnostics(uri, diagnostics)
            except Exception:
                logger.exception("%s failed in %s", claimant.name, PUBLISH_DIAGNOSTICS)
        for target, items in (routes or {uri: diagnostics}).items():
            self._server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=target, diagnostics=items)
            )

    async def execute_command(self, command: str, args: Any, *, routed: bool = True) -> Any:
        """Run a shared command: the claimant's for the argument's document, else its owner's.
        Its exceptions are the command's (a ``RequestFailed`` is the user's message).

        Raises:
            KeyError: no feature owns ``command``.
        """
        uri = getattr(args, "uri", None)
        claimant = (
            self._claimant(command, uri if isinstance(uri, str) else None) if routed else None
        )
        feature = claimant or self._owners[command]
        result = feature.execute_command(command, args)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _command_handler(self, command: str, args_type: type) -> Callable[..., Awaitable[Any]]:
        """A pygls command handler for ``command`` whose argument pygls structures into
        ``args_type`` (read from its annotations, as for a feature's own ``@ls.command``)."""

        async def execute(args: Any) -> Any:
            return await self.execute_command(command, args)

        execute.__annotations__ = {"args": args_type, "return": Any}
        execute.__name__ = execute.__qualname__ = f"execute_{command.replace('.', '_')}"
        return execute


def _plain(bound: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``bound`` as a plain function (pygls marks its handlers with attributes, which a bound
    method cannot take), ``async`` when it is."""
    if inspect.iscoroutinefunction(bound):

        async def handle_async(params: Any) -> Any:
            return await bound(params)

        return handle_async

    def handle(params: Any) -> Any:
        return bound(params)

    return handle


def _log_failure(feature: LanguageFeature, method: str) -> Callable[[asyncio.Future[Any]], None]:
    def done(task: asyncio.Future[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            logger.error("%s failed in %s", feature.name, method, exc_info=task.exception())

    return done
