"""Kernel Lens's cache folders on the agent side: where traces, ncu reports and inductor's code
go. A leaf: the engine, the runner and the magic take the folders from here."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["CacheDirs"]


@dataclass(frozen=True)
class CacheDirs:
    """Where Kernel Lens writes what the editor opens later: traces, ncu reports, inductor code.

    Attributes:
        root: ``$KERNEL_LENS_CACHE``, else ``$XDG_CACHE_HOME/kernel-lens`` (``~/.cache/…``).
    """

    root: str

    @classmethod
    def from_env(cls) -> CacheDirs:
        """The folders named by the environment (see :attr:`root`)."""
        base = os.environ.get("KERNEL_LENS_CACHE") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kernel-lens"
        )
        return cls(os.path.abspath(base))

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
