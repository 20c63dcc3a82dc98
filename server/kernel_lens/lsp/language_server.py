"""The server object: pygls ``LanguageServer`` plus what Kernel Lens holds (settings, the
document store, caches, the agent, the running jobs and the dispatcher of the LSP messages that
several features answer). Feature modules receive it; the assembly is
:func:`kernel_lens.lsp.server.create_server`."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from kernel_lens import __version__
from kernel_lens.analysis.safe_text import link_safe
from kernel_lens.client import AgentClient
from kernel_lens.lsp.convert import RawJson, server_converter
from kernel_lens.lsp.dispatch import Dispatcher
from kernel_lens.lsp.models import DocumentModels
from kernel_lens.lsp.settings import Settings
from kernel_lens.lsp.state import DocumentStore, Job, RunLines, TraceCaches

__all__ = ["KernelLensProtocol", "KernelLensServer"]


class KernelLensProtocol(LanguageServerProtocol):
    """pygls's protocol, answering a request that comes after ``shutdown`` as the LSP says.

    pygls 2.1.1 drops every message after ``shutdown`` but ``exit`` without a word, so a client
    that still asks waits for ever. The specification: "If a server receives requests after a
    shutdown request those requests should error with ``InvalidRequest``" (-32600);
    notifications after it are dropped (``exit`` still ends the server).
    """

    def handle_message(self, message: Any) -> None:
        if (
            self._shutdown
            and getattr(message, "method", None) not in (None, types.EXIT)
            and getattr(message, "id", None) is not None
        ):
            error = JsonRpcInvalidRequest(
                f"the server is shutting down: {message.method} after shutdown"
            )
            self._send_response(message.id, error=error.to_response_error())
            return
        super().handle_message(message)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """A :class:`~kernel_lens.lsp.convert.RawJson` result goes out as the JSON text it is
        (a big file's lenses: no walk of tens of thousands of objects on the event loop)."""
        if error is not None or not isinstance(result, RawJson):
            super()._send_response(msg_id, result, error)
            return
        self._result_types.pop(msg_id, None)
        if self.writer is None:
            return
        # Encoded once (a big file's lenses are tens of MB: each copy costs).
        data = f'{{"jsonrpc": "2.0", "id": {json.dumps(msg_id)}, "result": {result}}}'.encode(
            self.CHARSET
        )
        if self._include_headers:
            header = (
                f"Content-Length: {len(data)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            data = header.encode(self.CHARSET) + data
        written = self.writer.write(data)
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)


class KernelLensServer(LanguageServer):
    """The language server with its settings, documents, caches, agent and running jobs."""

    def __init__(self) -> None:
        super().__init__(
            "kernel-lens",
            __version__,
            # Jupyter notebooks' Python cells (kernel_lens.lsp.notebooks); pygls declares it to
            # clients that support notebook sync.
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithNotebook(
                        cells=[types.NotebookCellLanguage(language="python")],
                        notebook="jupyter-notebook",
                    )
                ]
            ),
            converter_factory=server_converter,
            protocol_cls=KernelLensProtocol,
        )
        self.settings = Settings()
        #: One state object per document; ``didClose`` releases it.
        self.documents = DocumentStore()
        #: Each document version parsed once (lenses, hovers, diagnostics), off the loop.
        self.models = DocumentModels()
        #: Trace files read for the report and the trace viewer (bounded).
        self.traces = TraceCaches()
        #: Path → the lines a whole run of another file gave it (the last such run; kept on
        #: the server, not the document, so a file opened after the run shows them).
        self.run_lines: dict[str, RunLines] = {}
        #: the folders of the packages runs were attributed inside, by name: a file under one
        #: (outside the workspace folders) shows results only, nothing runs from it
        self.package_roots: dict[str, str] = {}
        #: Progress token → running job (for cancel from the progress notification).
        self.jobs: dict[str, Job] = {}
        self._agent: AgentClient | None = None
        #: The one registration of each LSP message that several features answer.
        self.dispatcher = Dispatcher(self)

    @property
    def agent(self) -> AgentClient:
        """The agent client for the current ``agent_command`` (recreated when it changes)."""
        if self._agent is None or self._agent.argv_prefix != self.settings.agent_command:
            old = self._agent
            self._agent = AgentClient(
                self.settings.agent_command,
                self.log_agent_line,
                local=self.settings.agent_command_is_default,
                cwd=self.settings.workspace_root,
            )
            if old is not None and old.running:
                asyncio.ensure_future(old.kill())
        return self._agent

    def window_show_message(self, params: types.ShowMessageParams) -> None:
        """``window/showMessage``, whatever a feature put in it (a file name, a stored string):
        no ``[text](target)`` link can form in the notification (issue 45 item 3; the
        extension neutralises it again)."""
        super().window_show_message(
            types.ShowMessageParams(type=params.type, message=link_safe(params.message))
        )

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A line in the client's Kernel Lens output channel."""
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def log_agent_line(self, line: str) -> None:
        """A line the agent (user code included) wrote to stderr."""
        self.log(f"[agent] {line}")
