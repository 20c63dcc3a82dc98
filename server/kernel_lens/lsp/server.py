"""The server object: pygls ``LanguageServer`` plus Kernel Lens state, and its assembly."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from kernel_lens import __version__
from kernel_lens.agent.client import AgentClient
from kernel_lens.lsp.results import ResultStore
from kernel_lens.lsp.settings import Settings

__all__ = ["KernelLensServer", "create_server"]

logger = logging.getLogger(__name__)


@dataclass
class Job:
    """A running job: cancelling sets ``cancelled``."""

    uri: str
    qualname: str
    token: str
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


class KernelLensServer(LanguageServer):
    """The language server with its settings, results, agent and running jobs."""

    def __init__(self) -> None:
        super().__init__("kernel-lens", __version__)
        self.settings = Settings()
        self.results = ResultStore()
        self.jobs: dict[str, Job] = {}
        #: URI → the syntax error a profile attempt hit (shown as a lens until a good profile).
        self.syntax_errors: dict[str, dict[str, object]] = {}
        #: (uri, kernel, arch, text digest) → the agent's ``asm`` result (all stages).
        self.asm_cache: dict[tuple[str, str, int | None, str], dict[str, Any]] = {}
        #: (uri, function) → the last Nsight Compute result / sweep result.
        self.ncu_results: dict[tuple[str, str], dict[str, Any]] = {}
        self.sweep_results: dict[tuple[str, str], dict[str, Any]] = {}
        #: (uri, kernel) → the last ``asm`` result, for the kernel's lens.
        self.asm_latest: dict[tuple[str, str], dict[str, Any]] = {}
        self._agent: AgentClient | None = None

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

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A line in the client's Kernel Lens output channel."""
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def log_agent_line(self, line: str) -> None:
        """A line the agent (user code included) wrote to stderr."""
        self.log(f"[agent] {line}")


def create_server() -> KernelLensServer:
    """Build the server and register every feature module (one module per feature)."""
    from kernel_lens.lsp import code_lens, commands, documents, generated, hover, report

    server = KernelLensServer()
    features: list[Callable[[KernelLensServer], None]] = [
        documents.setup,
        code_lens.setup,
        hover.setup,
        commands.setup,
        generated.setup,
        report.setup,
    ]
    for setup in features:
        try:
            setup(server)
        except Exception:  # one broken feature must not take the others down
            logger.exception("feature %s failed to set up", setup.__module__)
    return server
