"""The optimisation loop: every successful profile goes into the function's history and is
compared with a reference run — the pinned baseline, else the previous run — so the lenses show
the change (``−49.8% vs 0.383 ms`` or ``≈ same (±0.4%)``) and what changed per line.

Requests ``kernelLens/history``, ``kernelLens/setBaseline``, ``kernelLens/compare``; the summary
lens's ``kernelLens.setBaseline`` command. The store is :class:`kernel_lens.history.History`;
the statistics are :mod:`kernel_lens.analysis.compare` (the CLI's too).
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from lsprotocol import types

from kernel_lens.analysis.compare import compare_results, compare_timing
from kernel_lens.analysis.functions import SourceSyntaxError, find_functions
from kernel_lens.history import History, HistoryError, entry_summary, record_run
from kernel_lens.lsp.common import (
    RequestFailed,
    document_source,
    is_trusted,
    refresh_lenses,
    request_failed,
    resolve_target,
    server_history,
    target_path,
    uri_to_path,
    workspace_folders,
)
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.results import function_text
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import (
    CMD_SET_BASELINE,
    NOTIFY_RESULTS_CHANGED,
    REQ_COMPARE,
    REQ_HISTORY,
    REQ_SET_BASELINE,
    CompareParams,
    CompareResult,
    HistoryParams,
    HistoryResult,
    HistoryRun,
    ResultsChangedParams,
    SetBaselineParams,
    SetBaselineResult,
)

__all__ = ["record_profile", "setup"]


def _record(
    path: str,
    qualname: str,
    text: list[str],
    source: str,
    result: dict[str, Any],
    roots: list[str],
) -> tuple[str, ...]:
    """Store the run and put its ``comparison`` (and ``history``) into ``result``; what the
    store had to report. Blocking (files, ``git``): run in a thread."""
    recorded = record_run(path, qualname, result, text=text, file_text=source, roots=roots)
    result["history"] = {"id": recorded.entry["id"], "baseline": recorded.baseline_id}
    if recorded.comparison is not None:
        result["comparison"] = recorded.comparison
    return recorded.warnings


def _report(ls: KernelLensServer, message: str, *, key: str) -> None:
    """Log ``message`` and, the first time for ``key``, show it as a warning."""
    ls.log(message, types.MessageType.Warning)
    shown = ls.history_warnings_shown
    if key not in shown:
        shown.add(key)
        warning = types.MessageType.Warning
        text = f"Kernel Lens: {message}"
        ls.window_show_message(types.ShowMessageParams(type=warning, message=text))


async def record_profile(
    ls: KernelLensServer,
    uri: str,
    qualname: str,
    text: list[str],
    result: dict[str, Any],
    source: str | None = None,
) -> None:
    """Record a successful profile of ``qualname`` into its history and compare it with the
    reference run; the raw samples then leave ``result`` (the history keeps them).

    ``text`` and ``source``: the function's lines and the document's text as the job measured
    them (taken when it started; ``source`` ``None``: the document's text now).

    Never raises: a history that cannot be written costs the comparison, not the profile; it is
    logged and shown (once per cause), so runs never silently stop being recorded.
    """
    path = ""
    try:
        if source is None:
            source = document_source(ls, uri)
        path = uri_to_path(uri)
        if not is_trusted(ls):
            return  # an untrusted workspace's history is never written (nothing runs anyway)
        roots = workspace_folders(ls)
        warnings = await asyncio.to_thread(_record, path, qualname, text, source, result, roots)
    except Exception as exc:  # the profile stands without its history
        _report(ls, f"history of {qualname}: not recorded ({exc})", key=f"failed:{path}")
    else:
        for warning in warnings:
            _report(ls, f"history: {warning}", key=warning)
    timing = result.get("timing")
    if isinstance(timing, dict):
        timing.pop("samples_ms", None)


def _target(ls: KernelLensServer, uri: str, name: str | None, position: Any) -> tuple[str, str]:
    """``(path, qualified name)`` of the function a request is about."""
    try:
        source = document_source(ls, uri) if not name else ""
        return target_path(ls, uri), resolve_target(source, name=name, position=position)
    except ProfileError as err:
        raise request_failed(err) from None


def _run_json(entry: dict[str, Any], *, text: bool = False) -> HistoryRun:
    out = entry_summary(entry)
    if text:
        out["text"] = list(entry.get("text") or [])
    return cast(HistoryRun, out)


def _current_text(ls: KernelLensServer, uri: str, qualname: str) -> list[str] | None:
    try:
        source = document_source(ls, uri)
        info = next((f for f in find_functions(source) if f.qualname == qualname), None)
    except (ProfileError, SourceSyntaxError):
        return None
    return None if info is None else function_text(source.splitlines(), info)


def _read_runs(
    history: History, path: str, qualname: str
) -> tuple[list[dict[str, Any]], list[str], str | None]:
    """The store's part of :func:`history_of`: blocking (run in a thread)."""
    entries, unreadable = history.read(path, qualname)
    return entries, unreadable, history.baseline_id(path, qualname)


async def history_of(ls: KernelLensServer, uri: str, path: str, qualname: str) -> HistoryResult:
    """The function's runs, each with its verdict against the run before it (the store read
    in a thread: a locked or slow store never holds the server's loop)."""
    history = server_history(ls, path)
    try:
        entries, unreadable, baseline = await asyncio.to_thread(_read_runs, history, path, qualname)
    except HistoryError as exc:
        raise RequestFailed(message=f"Kernel Lens: {exc}") from None
    for note in history.notes:
        _report(ls, f"history: {note}", key=note)
    runs: list[HistoryRun] = []
    before: dict[str, Any] | None = None
    for entry in entries:
        try:
            run = _run_json(entry, text=True)
            verdict = (
                compare_timing(before.get("timing") or {}, entry.get("timing") or {}).to_json()
                if before is not None and (before.get("timing") or {}).get("median_ms")
                else None
            )
        except Exception as exc:  # a row of another shape: named, the others still listed
            unreadable.append(f"run {entry.get('id')}: not a run ({type(exc).__name__}: {exc})")
            continue
        run["verdict"] = cast(Any, verdict)
        runs.append(run)
        before = entry
    if unreadable:
        ls.log(
            f"history of {qualname}: {len(unreadable)} unreadable runs: " + "; ".join(unreadable),
            types.MessageType.Warning,
        )
    out: HistoryResult = {
        "function": qualname,
        "uri": uri,
        "path": path,
        "baseline": baseline,
        "current_text": _current_text(ls, uri, qualname),
        "runs": runs,
    }
    if unreadable:
        out["unreadable"] = unreadable
    return out


def _pin(history: History, path: str, qualname: str, run: str | None) -> dict[str, Any] | None:
    """The store's part of :func:`set_baseline`: blocking (run in a thread)."""
    try:
        return history.set_baseline(path, qualname, run)
    except HistoryError as exc:
        if "locked" not in str(exc) and not history.entries(path, qualname):
            raise HistoryError(f"profile {qualname} first (its history is empty).") from None
        raise


async def set_baseline(
    ls: KernelLensServer, uri: str, path: str, qualname: str, run: str | None, clear: bool
) -> SetBaselineResult:
    """Pin (or unpin) the baseline; the function's lenses then name it (refused in an
    untrusted workspace, whose history is never written). The write runs in a thread and waits
    at most a few seconds for another process's (issue 39 item 5): a locked store says so."""
    if not is_trusted(ls):
        raise RequestFailed(
            message="Kernel Lens: Set as Baseline writes the history, which an untrusted "
            "workspace never does: trust this workspace first (nothing was changed)."
        )
    history = server_history(ls, path)
    try:
        entry = await asyncio.to_thread(
            _pin, history, path, qualname, None if clear else (run or "-1")
        )
    except HistoryError as exc:
        ls.log(f"{qualname}: baseline not set: {exc}", types.MessageType.Warning)
        raise RequestFailed(message=f"Kernel Lens: {exc}") from None
    record = ls.documents.get(uri, qualname)
    if record is not None and record.result is not None:
        own = record.result.setdefault("history", {})
        own["baseline"] = None if entry is None else str(entry["id"])
    ls.log(
        f"{qualname}: baseline {'unpinned' if entry is None else 'run ' + str(entry['id'])}",
        types.MessageType.Info,
    )
    refresh_lenses(ls)
    ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(uri=uri, function=qualname))
    return {"function": qualname, "baseline": None if entry is None else _run_json(entry)}


def _two_runs(
    history: History, path: str, qualname: str, before: str, after: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    return history.get(path, qualname, before), history.get(path, qualname, after)


async def compare_runs(
    ls: KernelLensServer, path: str, qualname: str, before: str, after: str
) -> CompareResult:
    """Two runs of the history compared (ids, ``-1``, ``-2``…, ``baseline``)."""
    history = server_history(ls, path)
    try:
        a, b = await asyncio.to_thread(_two_runs, history, path, qualname, before, after)
    except HistoryError as exc:
        raise RequestFailed(message=f"Kernel Lens: {exc}") from None
    label = "baseline" if before == "baseline" else f"run {a['id']}"
    comparison = compare_results(a, b, reference=label, reference_id=str(a["id"]))
    return cast(
        CompareResult,
        {"function": qualname, "before": _run_json(a), "after": _run_json(b), **comparison},
    )


def setup(ls: KernelLensServer) -> None:
    """Register the history requests and the Set as Baseline command."""

    @ls.feature(REQ_HISTORY)
    async def history(ls: KernelLensServer, params: HistoryParams) -> HistoryResult:
        path, qualname = _target(ls, params.uri, params.function, params.position)
        return await history_of(ls, params.uri, path, qualname)

    @ls.feature(REQ_SET_BASELINE)
    async def set_baseline_request(
        ls: KernelLensServer, params: SetBaselineParams
    ) -> SetBaselineResult:
        path, qualname = _target(ls, params.uri, params.function, params.position)
        return await set_baseline(ls, params.uri, path, qualname, params.run, params.clear)

    @ls.command(CMD_SET_BASELINE)
    async def set_baseline_command(
        ls: KernelLensServer, args: SetBaselineParams
    ) -> SetBaselineResult:
        path, qualname = _target(ls, args.uri, args.function, args.position)
        return await set_baseline(ls, args.uri, path, qualname, args.run, args.clear)

    @ls.feature(REQ_COMPARE)
    async def compare(ls: KernelLensServer, params: CompareParams) -> CompareResult:
        path, qualname = _target(ls, params.uri, params.function, params.position)
        return await compare_runs(ls, path, qualname, params.before, params.after)
