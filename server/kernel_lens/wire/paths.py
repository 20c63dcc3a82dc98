"""Kernel Lens's cache folders: where the agent writes what the editor opens later (traces,
Nsight Compute reports, inductor's code) and where the server keeps what it derives (trace
columns, the run history). The one copy of the cache-root rule, for every process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["CacheDirs", "cache_root"]


def cache_root() -> str:
    """``$KERNEL_LENS_CACHE``, else ``$XDG_CACHE_HOME/kernel-lens``, else
    ``~/.cache/kernel-lens``; absolute, read from the environment at each call (so a change of
    ``KERNEL_LENS_CACHE`` in tests is seen)."""
    base = os.environ.get("KERNEL_LENS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kernel-lens"
    )
    return os.path.abspath(base)


@dataclass(frozen=True)
class CacheDirs:
    """The cache folders under one root.

    Attributes:
        root: the cache root (:func:`cache_root` for :meth:`from_env`).
    """

    root: str

    @classmethod
    def from_env(cls) -> CacheDirs:
        """The folders named by the environment (see :func:`cache_root`)."""
        return cls(cache_root())

    @property
    def traces(self) -> str:
        """Chrome traces of the *trace* stage."""
        return os.path.join(self.root, "traces")

    @property
    def ncu(self) -> str:
        """``.ncu-rep`` reports of the *ncu* stage."""
        return os.path.join(self.root, "ncu")

    @property
    def compiled(self) -> str:
        """inductor's generated modules of the *compiled* stage."""
        return os.path.join(self.root, "compiled")

    @property
    def trace_columns(self) -> str:
        """The language server's columnar cache of trace files."""
        return os.path.join(self.root, "trace-columns")

    @property
    def history(self) -> str:
        """The run history (unless a workspace keeps its own, see :mod:`kernel_lens.history`)."""
        return os.path.join(self.root, "history")
