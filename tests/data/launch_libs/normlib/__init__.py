"""A library package whose ``__init__`` imports its ops (as real libraries do)."""

from normlib.ops.absolute import rms_norm  # noqa: F401
