"""The dispatcher of the LSP messages that several features answer (issue 21 item 4), on a
stand-in for the pygls server: one registration per message, answers joined in the features'
declared order (never the order they were added in), a failing feature logged by name while the
others answer, a claimed document answered by its claimant alone, diagnostics routed, and shared
commands registered once for their owner."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from lsprotocol import types

from kernel_lens.lsp.dispatch import PUBLISH_DIAGNOSTICS, Dispatcher
from kernel_lens.lsp.feature import LanguageFeature

URI = "file:///w/a.py"
CELL = "vscode-notebook-cell:/w/n.ipynb#W0"


class Server:
    """What the dispatcher uses of pygls's server: registrations and the publish call."""

    def __init__(self) -> None:
        self.features: dict[str, Any] = {}
        self.options: dict[str, Any] = {}
        self.commands: dict[str, Any] = {}
        self.published: list[types.PublishDiagnosticsParams] = []

    def feature(self, method: str, options: Any = None) -> Any:
        def register(handler: Any) -> Any:
            assert method not in self.features, f"{method} registered twice"
            self.features[method] = handler
            self.options[method] = options
            return handler

        return register

    def command(self, name: str) -> Any:
        def register(handler: Any) -> Any:
            assert name not in self.commands, f"{name} registered twice"
            self.commands[name] = handler
            return handler

        return register

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.published.append(params)


def _lens(title: str) -> types.CodeLens:
    zero = types.Position(0, 0)
    return types.CodeLens(range=types.Range(zero, zero), command=types.Command(title, ""))


def _lens_params(uri: str = URI) -> types.CodeLensParams:
    return types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))


def _hover_params(uri: str = URI) -> types.HoverParams:
    return types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0)
    )


class First(LanguageFeature):
    name = "first"
    order = 0

    def __init__(self) -> None:
        self.opened: list[str] = []

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self.opened.append(params.text_document.uri)

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        return [_lens("first")]

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        return types.Hover(contents="first")


class Second(LanguageFeature):
    name = "second"
    order = 1

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        return [_lens("second")]


class Broken(LanguageFeature):
    name = "broken"
    order = 0

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        raise RuntimeError("open")

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        raise RuntimeError("lens")

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        raise RuntimeError("hover")


class Cells(LanguageFeature):
    """Claims cells' lenses and hovers, and a virtual script's diagnostics."""

    name = "cells"

    def claims(self, method: str, uri: str) -> bool:
        if method == PUBLISH_DIAGNOSTICS:
            return uri == URI
        return uri == CELL

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        return [_lens("cell")] if params.text_document.uri == CELL else None

    def route_diagnostics(
        self, uri: str, diagnostics: list[types.Diagnostic]
    ) -> dict[str, list[types.Diagnostic]] | None:
        return {CELL: diagnostics}


def _dispatcher(*features: LanguageFeature) -> tuple[Server, Dispatcher]:
    server = Server()
    dispatcher = Dispatcher(server)  # type: ignore[arg-type]
    for feature in features:
        dispatcher.add(feature)
    dispatcher.configure()
    return server, dispatcher


def _titles(lenses: list[types.CodeLens] | None) -> list[str]:
    return [lens.command.title for lens in lenses or [] if lens.command]


def test_each_shared_message_is_registered_once_and_only_when_a_feature_takes_part() -> None:
    server, _ = _dispatcher(First(), Second())
    assert sorted(server.features) == sorted(
        [types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_CODE_LENS, types.TEXT_DOCUMENT_HOVER]
    )
    server, _ = _dispatcher(First(), Second(), Broken(), Cells())
    assert types.TEXT_DOCUMENT_CODE_ACTION not in server.features
    assert types.TEXT_DOCUMENT_DID_CHANGE not in server.features


async def test_answers_are_joined_in_the_declared_order_whatever_the_order_added() -> None:
    for features in ([First(), Second()], [Second(), First()]):
        server, _ = _dispatcher(*features)
        answer = await server.features[types.TEXT_DOCUMENT_CODE_LENS](_lens_params())
        assert _titles(answer) == ["first", "second"]


async def test_a_failing_feature_is_logged_by_name_and_the_others_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first = First()
    server, _ = _dispatcher(Broken(), first, Second())
    with caplog.at_level(logging.ERROR, logger="kernel_lens.lsp.dispatch"):
        lenses = await server.features[types.TEXT_DOCUMENT_CODE_LENS](_lens_params())
        hover = await server.features[types.TEXT_DOCUMENT_HOVER](_hover_params())
        server.features[types.TEXT_DOCUMENT_DID_OPEN](
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=URI, language_id="python", version=1, text=""
                )
            )
        )
    assert _titles(lenses) == ["first", "second"]
    assert hover is not None and hover.contents == "first"
    assert first.opened == [URI]
    failed = sorted(r.getMessage() for r in caplog.records)
    assert failed == [
        "broken failed in textDocument/codeLens",
        "broken failed in textDocument/didOpen",
        "broken failed in textDocument/hover",
    ]


async def test_a_claimed_document_is_answered_by_its_claimant_alone() -> None:
    server, dispatcher = _dispatcher(First(), Second(), Cells())
    handler = server.features[types.TEXT_DOCUMENT_CODE_LENS]
    assert _titles(await handler(_lens_params(CELL))) == ["cell"]
    # The claimant has no hover: nobody else answers for its document.
    assert await server.features[types.TEXT_DOCUMENT_HOVER](_hover_params(CELL)) is None
    # Unclaimed documents: every feature, the claimant's hook included (it answers none).
    assert _titles(await handler(_lens_params())) == ["first", "second"]
    # A claimant asking about the document it routed to skips the claims.
    assert _titles(await dispatcher.code_lens(_lens_params(CELL), routed=False)) == [
        "cell",  # order 0, "cells" < "first"
        "first",
        "second",
    ]


def test_diagnostics_of_a_claimed_document_are_published_where_it_routes_them() -> None:
    server, dispatcher = _dispatcher(Cells())
    diag = types.Diagnostic(
        range=types.Range(types.Position(0, 0), types.Position(0, 1)), message="m"
    )
    dispatcher.publish_diagnostics(URI, [diag])
    dispatcher.publish_diagnostics("file:///w/other.py", [])
    dispatcher.publish_diagnostics(URI, [], routed=False)
    assert [(p.uri, len(p.diagnostics)) for p in server.published] == [
        (CELL, 1),
        ("file:///w/other.py", 0),
        (URI, 0),
    ]


class Owner(LanguageFeature):
    name = "owner"
    commands = {"kl.run": types.TextDocumentIdentifier}

    async def execute_command(self, command: str, args: Any) -> Any:
        return {"owner": args.uri}


class Router(LanguageFeature):
    name = "router"

    def claims(self, method: str, uri: str) -> bool:
        return method == "kl.run" and uri == CELL

    async def execute_command(self, command: str, args: Any) -> Any:
        routed = types.TextDocumentIdentifier(uri=URI)
        return {"router": await self.dispatcher.execute_command(command, routed, routed=False)}

    dispatcher: Dispatcher


async def test_a_shared_command_is_registered_once_for_its_owner_and_routed_by_claims() -> None:
    router = Router()
    server, dispatcher = _dispatcher(router, Owner())
    router.dispatcher = dispatcher
    handler = server.commands["kl.run"]
    # pygls structures the argument by the handler's annotation: the owner's declared type.
    assert handler.__annotations__["args"] is types.TextDocumentIdentifier
    assert await handler(types.TextDocumentIdentifier(uri=URI)) == {"owner": URI}
    assert await handler(types.TextDocumentIdentifier(uri=CELL)) == {"router": {"owner": URI}}
    unconfigured = Dispatcher(Server())  # type: ignore[arg-type]
    unconfigured.add(Owner())
    with pytest.raises(ValueError, match="owned by owner"):
        unconfigured.add(Owner())


def test_features_cannot_be_added_once_the_messages_are_registered() -> None:
    _, dispatcher = _dispatcher(First())
    with pytest.raises(ValueError, match="after the LSP messages"):
        dispatcher.add(Second())


def test_async_notification_hooks_are_scheduled_and_their_failures_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done: list[str] = []

    class Later(LanguageFeature):
        name = "later"

        async def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
            done.append(params.text_document.uri)
            raise RuntimeError("close")

    async def run() -> None:
        server, _ = _dispatcher(Later())
        server.features[types.TEXT_DOCUMENT_DID_CLOSE](
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI))
        )
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    with caplog.at_level(logging.ERROR, logger="kernel_lens.lsp.dispatch"):
        asyncio.run(run())
    assert done == [URI]
    assert [r.getMessage() for r in caplog.records] == ["later failed in textDocument/didClose"]
