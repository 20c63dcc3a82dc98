"""The columnar cache of trace files: one folder per file version (its path, size and mtime)
under ``$KERNEL_LENS_CACHE/trace-columns``, holding a `TraceStore`'s columns as ``.npy`` files
(read back memory-mapped: little resident memory however big the trace) and a ``meta.json``
(lanes, strings, the summary) written last, as the mark of a complete folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from typing import TYPE_CHECKING

from kernel_lens.wire.paths import CacheDirs, atomic_write

# numpy and pandas are imported by the first save or load, not with this module: the language
# server imports it at start-up and needs them only once a trace is opened.
if TYPE_CHECKING:
    from kernel_lens.analysis.trace_store import TraceStore

__all__ = [
    "FORMAT",
    "cache_folder",
    "load_store",
    "remove_older",
    "save_store",
    "trace_cache_root",
]

#: Version of the saved layout; a folder saved with another is rebuilt.
FORMAT = 2


def trace_cache_root() -> str:
    """Where trace columns are kept: ``trace-columns`` in the cache folder
    (:class:`~kernel_lens.wire.paths.CacheDirs`)."""
    return CacheDirs.from_env().trace_columns


def _path_key(path: str) -> str:
    return hashlib.sha1(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()[:20]


def cache_folder(path: str, size: int, mtime_ns: int) -> str:
    """The folder of the columns of ``path`` at this size and mtime."""
    return os.path.join(trace_cache_root(), f"{_path_key(path)}-{size}-{mtime_ns}-v{FORMAT}")


def remove_older(path: str, keep: str) -> None:
    """Remove the folders of other versions of ``path`` (and unfinished ones)."""
    root, prefix = trace_cache_root(), _path_key(path) + "-"
    with contextlib.suppress(OSError):
        for entry in os.listdir(root):
            full = os.path.join(root, entry)
            if entry.startswith(prefix) and full != keep:
                shutil.rmtree(full, ignore_errors=True)


def save_store(store: TraceStore, folder: str) -> None:
    """Write ``store`` to ``folder`` (created; ``meta.json`` written last, as the mark of a
    complete folder)."""
    import numpy as np

    from kernel_lens.analysis.trace_store import ARRAYS

    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "segments.npy"), store.segments)
    for field in ARRAYS:
        np.save(os.path.join(folder, f"{field}.npy"), getattr(store, field))
    meta = {
        "format": FORMAT,
        "span_us": store.span_us,
        "event_count": store.event_count,
        "lanes": list(store.lanes),
        "strings": list(store.strings),
        "cats": list(store.cats),
        "summary": store.summary,
        "origin_us": store.origin_us,
    }
    atomic_write(os.path.join(folder, "meta.json"), json.dumps(meta))


def load_store(folder: str) -> TraceStore | None:
    """A store saved by `save_store` (columns memory-mapped), or None when the folder is missing,
    incomplete or of another format."""
    import numpy as np

    from kernel_lens.analysis.trace_store import ARRAYS, TraceStore

    try:
        with open(os.path.join(folder, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        # no origin: written before the ranks' alignment needed it; read the trace again
        if meta.get("format") != FORMAT or "origin_us" not in meta:
            return None
        arrays = {
            field: np.load(os.path.join(folder, f"{field}.npy"), mmap_mode="r")
            for field in ("segments", *ARRAYS)
        }
    except (OSError, ValueError):
        return None
    return TraceStore(
        span_us=float(meta["span_us"]),
        event_count=int(meta["event_count"]),
        lanes=tuple(meta["lanes"]),
        strings=tuple(meta["strings"]),
        cats=tuple(meta["cats"]),
        summary=meta["summary"],
        origin_us=float(meta["origin_us"]),
        **arrays,
    )
