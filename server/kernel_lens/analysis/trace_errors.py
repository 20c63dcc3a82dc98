"""The trace readers' one error, on its own: the language server imports it at start-up, and
the modules that read traces import numpy and pandas (≈0.3 s), which it needs only once a trace
is opened."""

from __future__ import annotations

__all__ = ["TraceError"]


class TraceError(ValueError):
    """A trace file that is missing, is not JSON, or is not a Chrome trace."""
