"""The server object: pygls ``LanguageServer`` plus what Kernel Lens holds (settings, the
document store, caches, the agent, the running jobs and the dispatcher of the LSP messages that
several features answer). Feature modules receive it; the assembly is
:func:`kernel_lens.lsp.server.create_server`."""

from __future__ import annotations

import asyncio

import cattrs
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from kernel_lens import __version__
from kernel_lens.analysis.safe_text import link_safe
from kernel_lens.client import AgentClient
from kernel_lens.lsp.convert import server_converter
from kernel_lens.lsp.dispatch import Dispatcher
from kernel_lens.lsp.models import DocumentModels
from kernel_lens.lsp.protocol import KernelLensProtocol, converter_of
from kernel_lens.lsp.settings import Settings
from kernel_lens.lsp.state import DocumentStore, Job, NotebookStates, RunLines, TraceCaches

__all__ = ["KernelLensProtocol", "KernelLensServer"]


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
        #: The open notebooks and their virtual scripts (``lsp/notebooks.py``).
        self.notebooks = NotebookStates()
        #: The history's warnings already shown in a message (each once; all are logged).
        self.history_warnings_shown: set[str] = set()
        self._agent: AgentClient | None = None
        #: The one registration of each LSP message that several features answer.
        self.dispatcher = Dispatcher(self)

    @property
    def converter(self) -> cattrs.Converter:
        """The cattrs converter pygls structures and unstructures messages with (esbonio's
        ``converter`` property): a lens made ahead is unstructured as pygls would send it."""
        return converter_of(self)

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
