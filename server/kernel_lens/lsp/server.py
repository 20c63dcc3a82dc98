"""The server's assembly: :func:`create_server` builds the server object, sets up every feature
module, listed here (the one place that knows them all), then registers the LSP messages that
several features answer, once each (:meth:`~kernel_lens.lsp.dispatch.Dispatcher.configure`).

The order of :data:`FEATURES` does not matter: no feature wraps another's handler, and the
dispatcher visits features in their own declared order (``tests/lsp/test_feature_order.py``
sets them up reversed and shuffled and gets the same answers)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from kernel_lens.lsp import (
    asm_diff,
    code_lens,
    editors,
    file_views,
    generated,
    history,
    hover,
    kernel_lines,
    lifecycle,
    light,
    notebooks,
    outline,
    profiling,
    quick_fix,
    report,
    run_choices,
    sanitizer,
    timing_lint,
    values,
)
from kernel_lens.lsp.language_server import KernelLensServer

__all__ = ["FEATURES", "KernelLensServer", "create_server"]

logger = logging.getLogger(__name__)

#: Every feature module's ``setup`` (in any order).
FEATURES: list[Callable[[KernelLensServer], None]] = [
    lifecycle.setup,
    code_lens.setup,
    editors.setup,
    hover.setup,
    outline.setup,
    profiling.setup,
    generated.setup,
    asm_diff.setup,
    report.setup,
    file_views.setup,
    history.setup,
    quick_fix.setup,
    notebooks.setup,
    timing_lint.setup,
    values.setup,
    sanitizer.setup,
    run_choices.setup,
    kernel_lines.setup,
    light.setup,
]


def create_server(
    features: Sequence[Callable[[KernelLensServer], None]] = FEATURES,
) -> KernelLensServer:
    """Build the server, set up every feature module (one module per feature) and register
    the shared LSP messages.

    Args:
        features: the feature modules' ``setup`` functions (default: :data:`FEATURES`).
    """
    server = KernelLensServer()
    for setup in features:
        try:
            setup(server)
        except Exception:  # one broken feature must not take the others down
            logger.exception("feature %s failed to set up", setup.__module__)
    server.dispatcher.configure()
    return server
