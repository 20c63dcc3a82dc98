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


def _free_bytes(folder: str) -> int:
    """Bytes free to this user in ``folder`` (or the nearest existing folder above it); 0 when
    it cannot be told."""
    probe = os.path.abspath(folder)
    while probe and not os.path.isdir(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return 0
        probe = parent
    try:
        stats = os.statvfs(probe)
    except (OSError, AttributeError):
        return 0
    return int(stats.f_bavail) * int(stats.f_frsize)


def _copy_into(trace_file: str, final: str) -> None:
    """The exported file into the cache as ``final``: moved when on the same file system, else
    copied beside it and renamed (atomic either way); the temporary copy removed on failure."""
    try:
        os.replace(trace_file, final)
        return
    except OSError as exc:
        import errno

        if exc.errno != errno.EXDEV:
            raise
    import shutil

    tmp = temp_beside(final)
    try:
        shutil.copyfile(trace_file, tmp)
        os.replace(tmp, final)
    finally:
        remove_quietly(tmp)


def save_trace(
    export: Callable[[str], None],
    folder: str,
    name: str,
    *,
    transform: Callable[[dict[str, Any]], object] | None = None,
) -> SavedTrace:
    """Export a trace with ``export(path)`` (``prof.export_chrome_trace``) into ``folder`` as
    ``name`` (shortened and hashed when longer than the file system takes), atomically.

    ``export`` is called **once**: torch's profiler saves a trace only once (a second call
    raises ``Trace is already saved``). So the profiler writes where there is room — beside
    the final name when the cache folder can take a file and has at least as much free space
    as the system's temporary folder, else into a private temporary folder — and the file is
    then moved (or copied) into the cache; when the cache cannot take it, the trace is read
    from the temporary file and the profile keeps it (``trace not saved: <why>``).

    Args:
        export: writes the Chrome trace JSON to the path it is given.
        folder: the cache folder of traces (made if missing).
        name: the file's name, ``.json``.
        transform: changes the loaded trace in place, truthy when it did (the saved file is
            then the changed trace).

    Raises:
        ProfileError: ``internal`` when the profiler could not write the trace anywhere
            (never ``runtime``: it is not the user's function that failed).
    """
    final = os.path.join(folder, short_name(name))
    beside = temp_beside(final)
    why: str | None = None
    in_cache = False
    try:
        os.makedirs(folder, exist_ok=True)
        # Made first, so a folder that cannot take a file says so, not the exporter's log.
        with open(beside, "xb"):
            pass
        in_cache = _free_bytes(folder) >= _free_bytes(tempfile.gettempdir())
        if not in_cache:
            why = f"disk full ({folder})" if _free_bytes(folder) == 0 else None
    except OSError as exc:
        why = write_failure(exc)
    finally:
        remove_quietly(beside)
    with tempfile.TemporaryDirectory(prefix="kernel-lens-trace-") as spare:
        target = beside if in_cache else os.path.join(spare, "trace.json")
        try:
            try:
                export(target)
                trace = _load(target)
            except OSError as exc:
                raise ProfileError(
                    "internal",
                    f"Kernel Lens could not write the profiler's trace ({write_failure(exc)}): "
                    "free some disk space or set KERNEL_LENS_CACHE",
                ) from None
            except _NotWrittenError:
                where = os.path.dirname(target)
                raise ProfileError(
                    "internal",
                    f"Kernel Lens could not write the profiler's trace ({_torn(where)}): free "
                    "some disk space or set KERNEL_LENS_CACHE",
                ) from None
            changed = transform(trace) if transform is not None else False
            if why is not None:
                return SavedTrace(trace, None, f"trace not saved: {why}")
            try:
                if changed:
                    with open(target, "w", encoding="utf-8") as fh:
                        json.dump(trace, fh)
                _copy_into(target, final)
            except OSError as exc:
                return SavedTrace(trace, None, f"trace not saved: {write_failure(exc)}")
            except ValueError as exc:  # a trace json cannot write back (never expected)
                return SavedTrace(trace, None, f"trace not saved: {exc}")
            return SavedTrace(trace, final, None)
        finally:
            remove_quietly(target, target + ".tmp")
