"""``kernelLens.profile`` / ``kernelLens.profileAll``: run a job on the agent with progress,
cancellation, a timeout, diagnostics for failures and lenses for results."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from kernel_lens.agent.errors import ProfileError
from kernel_lens.analysis.functions import SourceSyntaxError, find_function, find_functions
from kernel_lens.lsp.documents import refresh_lenses
from kernel_lens.lsp.jobs import run_job, status
from kernel_lens.lsp.protocol import (
    CMD_PROFILE,
    CMD_PROFILE_ALL,
    NOTIFY_RESULTS_CHANGED,
    ProfileAllArgs,
    ProfileArgs,
    ResultsChangedParams,
)
from kernel_lens.lsp.results import Record, function_text
from kernel_lens.lsp.server import KernelLensServer

__all__ = ["profile_function", "setup"]

DIAGNOSTIC_SOURCE = "Kernel Lens"
SYNTAX_KEY = "<syntax>"


def uri_to_path(uri: str) -> str:
    """The file system path of a ``file:`` URI."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        raise ProfileError("not-found", f"only files on disk can be profiled, not {uri}")
    return unquote(parsed.path)


class Diagnostics:
    """Kernel Lens diagnostics per document, one per failed function."""

    def __init__(self) -> None:
        self.by_uri: dict[str, dict[str, types.Diagnostic]] = {}

    def set(
        self, ls: KernelLensServer, uri: str, qualname: str, diag: types.Diagnostic | None
    ) -> None:
        entries = self.by_uri.setdefault(uri, {})
        if diag is None:
            entries.pop(qualname, None)
        else:
            entries[qualname] = diag
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=list(entries.values()))
        )

    def clear(self, ls: KernelLensServer, uri: str, prefix: str = "<nvcc>") -> None:
        """Drop the diagnostics whose key starts with ``prefix`` and republish."""
        entries = self.by_uri.setdefault(uri, {})
        for key in [k for k in entries if k.startswith(prefix)]:
            del entries[key]
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=list(entries.values()))
        )


DIAGNOSTICS = Diagnostics()


def _error_diagnostic(err: ProfileError, lines: list[str], fallback_line: int) -> types.Diagnostic:
    line1 = err.line or fallback_line
    line0 = max(0, min(line1 - 1, max(len(lines) - 1, 0)))
    text = lines[line0] if line0 < len(lines) else ""
    start = len(text) - len(text.lstrip())
    return types.Diagnostic(
        range=types.Range(
            types.Position(line0, start), types.Position(line0, max(len(text), start))
        ),
        message=f"Profile failed ({err.kind}): {err.message}",
        severity=types.DiagnosticSeverity.Error,
        source=DIAGNOSTIC_SOURCE,
        code=err.kind,
    )


async def profile_function(
    ls: KernelLensServer, uri: str, *, function: str | None, line0: int | None
) -> dict[str, Any]:
    """Profile one function of the open document ``uri`` and store the outcome.

    Returns a small JSON summary (``{"ok": true, …}`` or ``{"ok": false, "error": …}``).
    """
    doc = ls.workspace.get_text_document(uri)
    source = doc.source
    lines = source.splitlines()
    if not ls.settings.workspace_trusted:
        message = "Kernel Lens runs your code: trust this workspace first (nothing was run)."
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )
        return {"ok": False, "error": {"kind": "untrusted", "message": message}}
    try:
        info = find_function(source, name=function, line=None if line0 is None else line0 + 1)
    except SourceSyntaxError as exc:
        # The buffer does not parse, so no function can be found (the agent would say the same).
        err = ProfileError("syntax", str(exc), exc.line)
        DIAGNOSTICS.set(ls, uri, SYNTAX_KEY, _error_diagnostic(err, lines, 1))
        ls.syntax_errors[uri] = err.to_json()
        ls.log(f"profile: syntax error in {uri_to_path(uri)}: {exc}", types.MessageType.Error)
        status(ls, "error", f"syntax error (line {exc.line})", uri)
        refresh_lenses(ls)
        return {"ok": False, "error": err.to_json()}
    if ls.syntax_errors.pop(uri, None) is not None:
        DIAGNOSTICS.set(ls, uri, SYNTAX_KEY, None)
    if info is None:
        what = (
            f"no function {function!r}" if function else f"no function at line {(line0 or 0) + 1}"
        )
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=f"Kernel Lens: {what}")
        )
        return {"ok": False, "error": {"kind": "not-found", "message": what}}

    qualname = info.qualname
    snapshot = function_text(lines, info)
    ls.results.put(uri, Record(qualname, "running", snapshot, info.first_line))
    refresh_lenses(ls)
    ls.log(f"profile {qualname} ({uri_to_path(uri)}:{info.def_line})", types.MessageType.Info)
    params = {
        "path": uri_to_path(uri),
        "text": source,
        "function": qualname,
        "warmup_ms": ls.settings.warmup_ms,
        "budget_ms": ls.settings.budget_ms,
        "reps": ls.settings.reps,
        "keep_samples": False,
    }
    outcome: dict[str, Any]
    try:
        result = await run_job(
            ls, uri=uri, qualname=qualname, title=f"Profiling {qualname}", params=params
        )
        ls.results.put(uri, Record(qualname, "ok", snapshot, info.first_line, result=result))
        DIAGNOSTICS.set(ls, uri, qualname, None)
        timing = result.get("timing") or {}
        summary = (
            f"{qualname}: {timing.get('median_ms', 0):.4f} ms median "
            f"±{timing.get('spread_pct', 0):.1f}%"
            f" on {result.get('device')}; trace {result.get('trace_path')}"
        )
        ls.log(summary, types.MessageType.Info)
        status(ls, "idle", summary, uri)
        outcome = {"ok": True, "function": qualname, "timing": timing}
    except ProfileError as err:
        state = "cancelled" if err.kind == "cancelled" else "error"
        ls.results.put(uri, Record(qualname, state, snapshot, info.first_line, error=err.to_json()))
        if state == "error":
            DIAGNOSTICS.set(ls, uri, qualname, _error_diagnostic(err, lines, info.def_line))
            ls.log(f"{qualname}: {err}", types.MessageType.Error)
            if err.traceback:
                ls.log(err.traceback.rstrip())
        else:
            DIAGNOSTICS.set(ls, uri, qualname, None)
            ls.log(f"{qualname}: cancelled", types.MessageType.Info)
        outcome = {"ok": False, "error": err.to_json()}
    refresh_lenses(ls)
    ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(uri=uri, function=qualname))
    return outcome


def setup(ls: KernelLensServer) -> None:
    """Register the commands and the progress-cancel handler."""

    @ls.command(CMD_PROFILE)
    async def profile(ls: KernelLensServer, args: ProfileArgs) -> dict[str, Any]:
        return await profile_function(ls, args.uri, function=args.function, line0=args.line)

    @ls.command(CMD_PROFILE_ALL)
    async def profile_all(ls: KernelLensServer, args: ProfileAllArgs) -> list[dict[str, Any]]:
        doc = ls.workspace.get_text_document(args.uri)
        try:
            names = [f.qualname for f in find_functions(doc.source)]
        except SourceSyntaxError as exc:
            return [await profile_function(ls, args.uri, function=None, line0=(exc.line or 1) - 1)]
        outcomes = []
        for name in names:
            outcome = await profile_function(ls, args.uri, function=name, line0=None)
            outcomes.append(outcome)
            if (outcome.get("error") or {}).get("kind") in ("cancelled", "untrusted"):
                break
        return outcomes

    @ls.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel(ls: KernelLensServer, params: types.WorkDoneProgressCancelParams) -> None:
        job = ls.jobs.get(str(params.token))
        if job is not None:
            ls.log(f"cancel requested for {job.qualname}", types.MessageType.Info)
            job.cancelled.set()

    @ls.feature(types.SHUTDOWN)
    async def shutdown(ls: KernelLensServer, params: None) -> None:
        await ls.agent.kill()
