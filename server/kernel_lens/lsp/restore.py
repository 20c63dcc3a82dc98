"""The last runs of an open document's functions, restored from the history (issue 28): read
in a thread at ``didOpen`` (or at the first request that needs them), given to each function
without a record, marked ``restored`` with the run's time; the lenses wait for them, bounded
(``code_lens``), and the report reads them before any lens was asked (``report``)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.document_model import DocumentModel
from kernel_lens.history import History, HistoryError
from kernel_lens.lsp.common import refresh_lenses, server_history, uri_to_path
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.results import Record
from kernel_lens.lsp.state import DocumentState
from kernel_lens.wire.errors import ProfileError

__all__ = [
    "HISTORY_DELAY_ENV",
    "RESTORE_WAIT_S",
    "restore_results",
    "restored_result",
    "start_restore",
]


#: Seconds the first lens answer after an open waits for the document's last runs from the
#: history; past that it answers without them and the lenses are refreshed once they are in.
RESTORE_WAIT_S = 5.0
#: Seconds to delay each reading of the history for restored results (tests: it pins that the
#: first lens answer after an open holds them however slow the read, not by timing).
HISTORY_DELAY_ENV = "KERNEL_LENS_TEST_HISTORY_DELAY_S"


def restored_result(entry: dict[str, Any]) -> dict[str, Any]:
    """A profile result rebuilt from a history entry, marked ``restored`` with the run's time."""
    result = {
        k: v
        for k, v in entry.items()
        if k not in ("id", "time", "text", "file_hash", "git", "versions", "inputs")
    }
    result["restored"] = entry.get("time")
    if entry.get("id") is not None:
        # its run id, so pinning it (Set as Baseline) marks this lens as the baseline
        result["history"] = {**(result.get("history") or {}), "id": str(entry["id"])}
    return result


def _profile_names(model: DocumentModel) -> list[str] | None:
    """The functions of the model's text with a Profile lens (``None``: it does not parse)."""
    if model.syntax_error is not None:
        return None
    return [t.info.qualname for t in model.targets if t.role == "profile"]


def _last_runs(path: str, names: list[str], history: History) -> dict[str, dict[str, Any]]:
    """Each function's last run in ``history`` (blocking: files, ``git``; a thread's work)."""
    delay = float(os.environ.get(HISTORY_DELAY_ENV) or 0.0)
    if delay > 0:
        time.sleep(delay)
    found: dict[str, dict[str, Any]] = {}
    # One read for which have runs (most have none: a big file's 45 000), then each of those.
    stored = history.with_runs(path, names) if names else set()
    for name in names:
        if name not in stored:
            continue
        entries = history.entries(path, name)
        if entries:
            found[name] = entries[-1]
    return found


def _apply_restored(state: DocumentState, found: dict[str, dict[str, Any]]) -> bool:
    """Give each function without a record its last run (``place`` marks it outdated when the
    function's text has changed since); whether any was given."""
    given = False
    for name, last in found.items():
        if name in state.records:  # a run started or ended meanwhile: it stands
            continue
        state.records[name] = Record(
            name,
            "ok",
            [str(x) for x in last.get("text") or []],
            int(last.get("first_line") or 1),
            result=restored_result(last),
        )
        given = True
    return given


async def _restore(ls: KernelLensServer, uri: str, state: DocumentState) -> None:
    """Read the document's last runs in a thread, into ``state`` if it is still the document's
    (a close meanwhile drops them); refresh the lenses when an answer did not wait for them."""
    try:
        source = ls.workspace.get_text_document(uri).source
        # the document's one parse (a big file's in the worker: never the loop's time)
        names = _profile_names(await ls.models.get(ls, uri, source))
        if names is None:
            state.restore = None  # tried again at the next lens request, once it parses
            return
        path = uri_to_path(uri)
        found = await asyncio.to_thread(_last_runs, path, names, server_history(ls, path))
    except (HistoryError, ProfileError, OSError, ValueError, TypeError) as exc:
        # A history that cannot be read costs the restored results, never the lenses.
        ls.log(f"results of {uri} not restored from the history: {exc}", types.MessageType.Warning)
        return
    if ls.documents.peek(uri) is not state:
        return
    if _apply_restored(state, found) and state.lens_waited_out:
        refresh_lenses(ls)


def start_restore(ls: KernelLensServer, uri: str) -> asyncio.Future[None] | None:
    """Start reading an open document's last runs from the history (once per document state:
    a close releases it, a reopen reads again); the reading, or ``None`` for a document that
    is not open."""
    if uri not in ls.workspace.text_documents:
        return None
    state = ls.documents(uri)
    if state.restore is None:
        state.restore = asyncio.ensure_future(_restore(ls, uri, state))
    return state.restore


def restore_results(ls: KernelLensServer, uri: str, source: str) -> None:
    """The document's results from the history, now (blocking), for a request that reads them
    before any lens was asked (the Report panel restored after *Reload Window* asks first)."""
    if uri not in ls.workspace.text_documents:
        return
    state = ls.documents(uri)
    if state.restore is not None and state.restore.done():
        return
    names = _profile_names(ls.models.now(ls, uri, source))
    if names is None:
        return
    try:
        path = uri_to_path(uri)
        _apply_restored(state, _last_runs(path, names, server_history(ls, path)))
    except (HistoryError, ProfileError, OSError, ValueError, TypeError) as exc:
        ls.log(f"results of {uri} not restored from the history: {exc}", types.MessageType.Warning)
