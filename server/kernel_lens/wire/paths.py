"""Kernel Lens's cache folders: where the agent writes what the editor opens later (traces,
Nsight Compute reports, inductor's code) and where the server keeps what it derives (trace
columns, the run history). The one copy of the cache-root rule, for every process.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from dataclasses import dataclass

__all__ = [
    "MAX_NAME_BYTES",
    "CacheDirs",
    "atomic_write",
    "cache_root",
    "remove_quietly",
    "short_name",
    "temp_beside",
    "write_failure",
]

#: The longest file name Kernel Lens makes, in bytes: well under the 255 of common file systems,
#: so a temporary name beside it (and a tool's own ``.tmp`` suffix) still fits.
MAX_NAME_BYTES = 200


def short_name(name: str, limit: int = MAX_NAME_BYTES) -> str:
    """``name`` if it is at most ``limit`` bytes in UTF-8; else its start cut on a character
    boundary, a hash of the whole and its extension (``<start>-<hash12><ext>``), so two long
    names never meet."""
    if len(name.encode("utf-8")) <= limit:
        return name
    stem, ext = os.path.splitext(name)
    if len(ext.encode("utf-8")) > 16:
        stem, ext = name, ""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    room = limit - len(ext.encode("utf-8")) - len(digest) - 1
    start = stem.encode("utf-8", "surrogatepass")[: max(room, 0)].decode("utf-8", "ignore")
    return f"{start}-{digest}{ext}"


def temp_beside(path: str) -> str:
    """A fresh temporary name in ``path``'s folder (so an :func:`os.replace` onto ``path`` is
    atomic): ``.<name>.<random>.tmp``, its name bounded like :func:`short_name`'s."""
    folder, name = os.path.split(path)
    stem = short_name(name, MAX_NAME_BYTES - 14)
    return os.path.join(folder, f".{stem}.{uuid.uuid4().hex[:8]}.tmp")


def remove_quietly(*paths: str) -> None:
    """Remove files that may or may not exist (a temporary file after a failure)."""
    for path in paths:
        with contextlib.suppress(OSError):
            os.remove(path)


def atomic_write(path: str, data: bytes | str) -> None:
    """Write ``data`` to ``path`` all at once: into a temporary file in the same folder, flushed,
    then :func:`os.replace`; on any failure the temporary file is removed and ``path`` is as it
    was.

    Raises:
        OSError: the file cannot be written (a full disk, a folder that is a file…).
    """
    tmp = temp_beside(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(tmp, "xb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise


def write_failure(exc: BaseException) -> str:
    """A short reason a write failed, for ``trace not saved: <why>`` (``disk full``, ``… is not
    a folder``), never a traceback."""
    import errno

    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno == errno.ENOSPC:
            return f"disk full{where}"
        if exc.errno == errno.ENOTDIR:
            return f"a path on the way is a file, not a folder{where}"
        if exc.errno == errno.ENAMETOOLONG:
            return f"file name too long{where}"
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return f"not writable{where}"
        return f"{exc.strerror or exc}{where}"
    return f"{type(exc).__name__}: {exc}"


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
