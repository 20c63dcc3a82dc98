"""Lifecycle and settings: initialize options, configuration pulls, trust, closed documents."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from kernel_lens.lsp.protocol import NOTIFY_SET_TRUSTED
from kernel_lens.lsp.server import KernelLensServer

__all__ = ["refresh_lenses", "setup"]


def refresh_lenses(ls: KernelLensServer) -> None:
    """Ask the client to re-request code lenses (when it supports it)."""
    caps = ls.client_capabilities.workspace
    if caps and caps.code_lens and caps.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)


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


def setup(ls: KernelLensServer) -> None:
    """Register the lifecycle handlers."""

    @ls.feature(types.INITIALIZE)
    def initialize(ls: KernelLensServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            ls.settings.update(options)
        folders = params.workspace_folders or []
        root = folders[0].uri if folders else params.root_uri
        if root and root.startswith("file:"):
            from urllib.parse import unquote, urlparse

            ls.settings.workspace_root = unquote(urlparse(root).path)

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: KernelLensServer, params: types.InitializedParams) -> None:
        await pull_configuration(ls)
        trust = "trusted" if ls.settings.workspace_trusted else "untrusted (nothing runs)"
        ls.log(
            f"Kernel Lens server ready; agent: {' '.join(ls.settings.agent_command)}; "
            f"workspace {trust}; timeout {ls.settings.timeout_seconds:g} s",
            types.MessageType.Info,
        )

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: KernelLensServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("kernelLens"), dict):
            ls.settings.update(settings["kernelLens"])
        else:
            await pull_configuration(ls)

    @ls.feature(NOTIFY_SET_TRUSTED)
    def set_trusted(ls: KernelLensServer, params: Any) -> None:
        ls.settings.workspace_trusted = bool(getattr(params, "trusted", False))
        ls.log(f"workspace trusted: {ls.settings.workspace_trusted}", types.MessageType.Info)
        refresh_lenses(ls)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KernelLensServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri not in ls.syntax_errors:
            return
        # A syntax error found by a profile goes away as soon as the text parses again.
        import ast

        try:
            ast.parse(ls.workspace.get_text_document(uri).source)
        except SyntaxError:
            return
        from kernel_lens.lsp.commands import DIAGNOSTICS, SYNTAX_KEY

        ls.syntax_errors.pop(uri, None)
        DIAGNOSTICS.set(ls, uri, SYNTAX_KEY, None)
        refresh_lenses(ls)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KernelLensServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.results.forget(params.text_document.uri)
