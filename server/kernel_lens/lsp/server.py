"""The server's assembly: :func:`create_server` builds the server object and registers every
feature module, listed here (the one place that knows them all)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from kernel_lens.lsp import (
    code_lens,
    file_views,
    generated,
    history,
    hover,
    lifecycle,
    notebooks,
    outline,
    profiling,
    quick_fix,
    report,
    timing_lint,
)
from kernel_lens.lsp.language_server import KernelLensServer

__all__ = ["FEATURES", "KernelLensServer", "create_server"]

logger = logging.getLogger(__name__)

#: Every feature module's ``setup``, in registration order.
FEATURES: list[Callable[[KernelLensServer], None]] = [
    lifecycle.setup,
    code_lens.setup,
    hover.setup,
    outline.setup,
    profiling.setup,
    generated.setup,
    report.setup,
    file_views.setup,
    history.setup,
    quick_fix.setup,  # before timing_lint, which merges into its codeAction handler
    notebooks.setup,  # after code_lens, hover and profiling, whose handlers it routes cells from
    timing_lint.setup,  # last: it follows lifecycle's didOpen/didChange handlers
]


def create_server() -> KernelLensServer:
    """Build the server and register every feature module (one module per feature)."""
    server = KernelLensServer()
    for setup in FEATURES:
        try:
            setup(server)
        except Exception:  # one broken feature must not take the others down
            logger.exception("feature %s failed to set up", setup.__module__)
    return server
