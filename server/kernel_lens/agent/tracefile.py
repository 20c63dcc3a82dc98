"""Saving the profiler's Chrome trace into the cache: Kernel Lens's own write, whose failure
(a full disk, a cache path that is a file, a name too long) never fails the profile nor is blamed
on the user's function.

The trace is exported to a temporary file beside its final name (the name shortened and hashed
when long) and moved into place with :func:`os.replace`; the temporary files (the profiler's own
``.tmp`` too) are removed on any failure. When the cache cannot take it, the trace is exported
to a private temporary folder only to be read, then removed: the profile keeps its ops and
summary, ``trace_path`` is ``None`` and ``trace_error`` says ``trace not saved: <why>``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.paths import remove_quietly, short_name, temp_beside, write_failure

__all__ = ["RANK_ENV", "SavedTrace", "rank_suffix", "save_trace"]

#: Set by the rank entry (:mod:`kernel_lens.agent.rank`) to the rank under ``torchrun``.
RANK_ENV = "KERNEL_LENS_RANK"


def rank_suffix() -> str:
    """``-rank0`` in a rank of a distributed profile, else empty: the ranks' traces are named
    apart (the profiler's default ``hostname_pid`` names overwrite each other)."""
    rank = os.environ.get(RANK_ENV)
    return f"-rank{rank}" if rank else ""


@dataclass(frozen=True)
class SavedTrace:
    """A trace, loaded, and where it was saved.

    Attributes:
        trace: the Chrome trace.
        path: the file in the cache (``None``: not saved).
        error: ``trace not saved: <why>`` when it was not saved, else ``None``.
    """

    trace: dict[str, Any]
    path: str | None
    error: str | None


class _NotWrittenError(Exception):
    """The exporter returned without writing a readable trace."""


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            trace = json.load(fh)
    except (ValueError, UnicodeDecodeError) as exc:  # empty or cut short: the exporter failed
        raise _NotWrittenError(str(exc)) from None
    if not isinstance(trace, dict):
        raise _NotWrittenError("not a Chrome trace object")
    return trace


def _torn(folder: str) -> str:
    """Why the exporter wrote nothing readable (it logs its errors rather than raising)."""
    try:
        stats = os.statvfs(folder)
        if stats.f_bavail == 0:
            return f"disk full ({folder})"
    except (OSError, AttributeError):
        pass
    return f"the profiler could not write it in {folder}"


def save_trace(
    export: Callable[[str], None],
    folder: str,
    name: str,
    *,
    transform: Callable[[dict[str, Any]], object] | None = None,
) -> SavedTrace:
    """Export a trace with ``export(path)`` (``prof.export_chrome_trace``) into ``folder`` as
    ``name`` (shortened and hashed when longer than the file system takes), atomically.

    Args:
        export: writes the Chrome trace JSON to the path it is given.
        folder: the cache folder of traces (made if missing).
        name: the file's name, ``.json``.
        transform: changes the loaded trace in place, truthy when it did (the saved file is
            then the changed trace).

    Raises:
        ProfileError: ``internal`` when the trace cannot even be written to a temporary folder
            (never ``runtime``: it is not the user's function that failed).
    """
    final = os.path.join(folder, short_name(name))
    tmp = temp_beside(final)
    try:
        os.makedirs(folder, exist_ok=True)
        # Made first, so a folder that cannot take a file says so, not the exporter's log.
        with open(tmp, "xb"):
            pass
        export(tmp)
        trace = _load(tmp)
        if transform is not None and transform(trace):
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(trace, fh)
        os.replace(tmp, final)
        return SavedTrace(trace, final, None)
    except OSError as exc:
        why = write_failure(exc)
    except _NotWrittenError:
        why = _torn(folder)
    finally:
        remove_quietly(tmp, tmp + ".tmp")
    try:
        with tempfile.TemporaryDirectory(prefix="kernel-lens-trace-") as spare:
            path = os.path.join(spare, "trace.json")
            export(path)
            trace = _load(path)
    except (OSError, _NotWrittenError) as exc:
        other = write_failure(exc) if isinstance(exc, OSError) else str(exc)
        raise ProfileError(
            "internal",
            f"Kernel Lens could not write the profiler's trace ({why}), nor to a temporary "
            f"folder ({other}): free some disk space or set KERNEL_LENS_CACHE",
        ) from None
    if transform is not None:
        transform(trace)
    return SavedTrace(trace, None, f"trace not saved: {why}")
