"""The server's life and the documents': start-up options, configuration pulls, workspace trust,
opened/changed/closed documents (warming the agent, dropping a closed document's state),
cancel from the progress notification, and shutdown."""

from __future__ import annotations

import asyncio
from urllib.parse import unquote, urlparse

from lsprotocol import types

from kernel_lens import early_agent
from kernel_lens.lsp.common import (
    SYNTAX_KEY,
    clear_diagnostics,
    is_trusted,
    refresh_lenses,
    set_diagnostic,
)
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.results import place
from kernel_lens.lsp.state import DocumentState
from kernel_lens.lsp.traces import start_spare_reader, stop_spare_reader
from kernel_lens.wire.lsp import NOTIFY_SET_TRUSTED, SetTrustedParams

__all__ = ["Documents", "pull_configuration", "setup"]


async def pull_configuration(ls: KernelLensServer) -> None:
    """Read the ``kernelLens`` section (runtime settings) from the client."""
    caps = ls.client_capabilities.workspace
    if not (caps and caps.configuration):
        return
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="kernelLens")])
        )
    except Exception as exc:  # an old client or a slow one: keep the current settings
        ls.log(f"could not read settings: {exc}", types.MessageType.Warning)
        return
    section = values[0] if values else None
    if isinstance(section, dict):
        ls.settings.update(section)


def prewarm(ls: KernelLensServer) -> None:
    """Have a warm agent ready for the first click (only where code may run)."""
    if not is_trusted(ls):
        return
    try:
        ls.agent.prewarm()
    except Exception as exc:  # warming is a head start, never a reason to fail
        ls.log(f"could not warm the agent: {exc}", types.MessageType.Warning)


class Documents(LanguageFeature):
    """Opened, changed and closed documents: a Python document warms the agent; an edit that
    makes the text parse again drops the syntax error a profile found; a closed document's
    state and diagnostics go."""

    name = "lifecycle"

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        if params.text_document.language_id == "python":
            prewarm(self.ls)

    async def document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        ls = self.ls
        uri = params.text_document.uri
        state = ls.documents.peek(uri)
        if state is None:
            return
        if any(key[0] == "profile" for key in state.diagnostics):
            await self._drop_outdated_failures(uri, state)
        if state.syntax_error is None:
            return
        # A syntax error found by a profile goes away as soon as the text parses again (the
        # version's one parse, off the loop when the file is big).
        model = await ls.models.get(ls, uri, ls.workspace.get_text_document(uri).source)
        if model.syntax_error is not None or ls.documents.peek(uri) is not state:
            return
        state.syntax_error = None
        set_diagnostic(ls, uri, SYNTAX_KEY, None)
        refresh_lenses(ls)

    async def _drop_outdated_failures(self, uri: str, state: DocumentState) -> None:
        """A failed profile's Problems entry goes with the text it was about: once the
        function (a script: the file) is edited or reverted away from what failed, the entry
        is dropped (its lens still says what the last run hit, until the next run)."""
        ls = self.ls
        source = ls.workspace.get_text_document(uri).source
        model = await ls.models.get(ls, uri, source)
        if ls.documents.peek(uri) is not state:
            return
        for key in [k for k in state.diagnostics if k[0] == "profile"]:
            record = ls.documents.get(uri, key[1])
            if record is None or record.state != "error":
                continue
            placed = place(record, source, model)
            if placed is None or placed.outdated:
                set_diagnostic(ls, uri, key, None)

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        ls = self.ls
        uri = params.text_document.uri
        state = ls.documents.release(uri)
        ls.models.forget(uri)
        if state is not None and state.diagnostics:
            clear_diagnostics(ls, uri)


def setup(ls: KernelLensServer) -> None:
    """Register the lifecycle handlers, and the documents' part in the shared messages."""
    ls.dispatcher.add(Documents(ls))

    @ls.feature(types.INITIALIZE)
    def initialize(ls: KernelLensServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            ls.settings.update(options)
        folders = params.workspace_folders or []
        root = folders[0].uri if folders else params.root_uri
        if root and root.startswith("file:"):
            ls.settings.workspace_root = unquote(urlparse(root).path)
        # An agent started with the server (the client asked for it) is kept only where the
        # settings would have started one: a trusted workspace, the default local agent.
        if not (ls.settings.workspace_trusted and ls.settings.agent_command_is_default):
            early_agent.discard()

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: KernelLensServer, params: types.InitializedParams) -> None:
        await pull_configuration(ls)
        trust = "trusted" if ls.settings.workspace_trusted else "untrusted (nothing runs)"
        ls.log(
            f"Kernel Lens server ready; agent: {' '.join(ls.settings.agent_command)}; "
            f"workspace {trust}; timeout {ls.settings.timeout_seconds:g} s",
            types.MessageType.Info,
        )
        if early_agent.pending():
            prewarm(ls)  # the agent started with the server becomes the spare
        # A trace reader waiting for the first big trace (after the start-up's own work).
        asyncio.ensure_future(start_spare_reader(ls, delay_s=2.0))

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: KernelLensServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("kernelLens"), dict):
            ls.settings.update(settings["kernelLens"])
        else:
            await pull_configuration(ls)
        ls.log(
            f"settings changed; timeout {ls.settings.timeout_seconds:g} s, compile timeout "
            f"{ls.settings.compile_timeout_seconds:g} s",
            types.MessageType.Info,
        )
        refresh_lenses(ls)  # kernelLens.lenses.showAll changes which lenses there are

    @ls.feature(NOTIFY_SET_TRUSTED)
    def set_trusted(ls: KernelLensServer, params: SetTrustedParams) -> None:
        ls.settings.workspace_trusted = bool(params.trusted)
        ls.log(f"workspace trusted: {ls.settings.workspace_trusted}", types.MessageType.Info)
        refresh_lenses(ls)
        prewarm(ls)

    @ls.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel(ls: KernelLensServer, params: types.WorkDoneProgressCancelParams) -> None:
        job = ls.jobs.get(str(params.token))
        if job is not None:
            ls.log(f"cancel requested for {job.qualname}", types.MessageType.Info)
            job.cancelled.set()

    @ls.feature(types.SHUTDOWN)
    async def shutdown(ls: KernelLensServer, params: None) -> None:
        early_agent.discard()
        ls.models.shutdown()
        await stop_spare_reader(ls)
        await ls.agent.kill()
