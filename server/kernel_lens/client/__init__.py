"""The parent side of the agent (the language server's and the CLI's): start agent processes
and keep a warm spare, run one job with progress, timeout and cancel
(:mod:`~kernel_lens.client.pool`), one process's life (:mod:`~kernel_lens.client.process`), and
what a crashed or stuck agent left behind (:mod:`~kernel_lens.client.faults`). The messages and
their framing are :mod:`kernel_lens.wire.envelope`'s.

Standard library and :mod:`kernel_lens.wire` only: it runs in the server's interpreter, never
imports torch, and is imported by :mod:`kernel_lens.lsp` and :mod:`kernel_lens.cli` — which import
nothing of the agent's.
"""

from kernel_lens.client.faults import (
    StackFrame,
    describe_exit,
    failing_frame,
    fault_frames,
    where_text,
)
from kernel_lens.client.pool import AgentClient

__all__ = [
    "AgentClient",
    "StackFrame",
    "describe_exit",
    "failing_frame",
    "fault_frames",
    "where_text",
]
