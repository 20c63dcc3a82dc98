"""The report panel's data, Nsight Compute and sweeps on a function, and applying a sweep's best.

``kernelLens/report`` joins what is known of a function: its last profile (timing, lines,
kernels), the timeline of its trace (reduced in this process: the panel stays smooth), the last
Nsight Compute run and the last sweep. ``kernelLens.runNcu`` and ``kernelLens.sweep`` run on the
agent with progress and cancellation; each OPT hint of ncu becomes an information diagnostic on
the Python line that launched the kernel.
"""

from __future__ import annotations

import os
from typing import Any

from lsprotocol import types

from kernel_lens.agent.errors import ProfileError
from kernel_lens.analysis.names import short_kernel_name
from kernel_lens.analysis.param_edit import int_parameters, parameter_edits
from kernel_lens.lsp.commands import DIAGNOSTICS, uri_to_path
from kernel_lens.lsp.generated import RequestFailed, _trusted
from kernel_lens.lsp.jobs import run_job, status
from kernel_lens.lsp.protocol import (
    CMD_APPLY_PARAMETER,
    CMD_RUN_NCU,
    CMD_SWEEP,
    NOTIFY_RESULTS_CHANGED,
    NOTIFY_REVEAL,
    REQ_NCU_FILE,
    REQ_REPORT,
    REQ_TIMELINE_WINDOW,
    REQ_TRACE_FILE,
    ApplyParameterArgs,
    NcuArgs,
    ReportParams,
    ResultsChangedParams,
    RevealParams,
    SweepArgs,
    TimelineWindowParams,
    TraceFileParams,
    structure,
)
from kernel_lens.lsp.server import KernelLensServer

__all__ = ["ncu_line_for_kernel", "setup"]


def ncu_line_for_kernel(kernel: dict[str, Any], profile: dict[str, Any] | None) -> int | None:
    """The line of an ncu kernel: its NVTX line, else the profiled line whose kernel has the
    same short name (when exactly one line has it)."""
    if kernel.get("line"):
        return int(kernel["line"])
    if not profile:
        return None
    short = short_kernel_name(kernel.get("demangled") or kernel.get("name") or "")
    lines = {
        line["line"]
        for line in profile.get("lines") or []
        for op in line["ops"]
        for k in op["kernels"]
        if k["short_name"] == short
    }
    return lines.pop() if len(lines) == 1 else None


async def _job(
    ls: KernelLensServer, uri: str, qualname: str, title: str, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    result = await run_job(
        ls, uri=uri, qualname=qualname, title=title, params=params, method=method
    )
    status(ls, "idle", title, uri)
    return result


def _publish_hints(ls: KernelLensServer, uri: str, qualname: str, ncu: dict[str, Any]) -> int:
    doc = ls.workspace.get_text_document(uri)
    lines = doc.source.splitlines()
    record = ls.results.get(uri, qualname)
    profile = record.result if record and record.state == "ok" else None
    DIAGNOSTICS.clear(ls, uri, prefix=f"<ncu:{qualname}>")
    count = 0
    for k in ncu["kernels"]:
        line = ncu_line_for_kernel(k, profile)
        if line is None or not 1 <= line <= len(lines):
            continue
        text = lines[line - 1]
        for i, hint in enumerate(h for h in k["hints"] if h["kind"] == "OPT"):
            gain = (
                f" (est. {hint['speedup_type']} speedup {hint['speedup_pct']:.0f}%)"
                if hint.get("speedup_pct")
                else ""
            )
            DIAGNOSTICS.set(
                ls,
                uri,
                f"<ncu:{qualname}>{k['id']}:{i}",
                types.Diagnostic(
                    range=types.Range(
                        types.Position(line - 1, len(text) - len(text.lstrip())),
                        types.Position(line - 1, len(text)),
                    ),
                    message=f"{short_kernel_name(k['demangled'])}: {hint['title']}{gain} — "
                    f"{hint['message']}",
                    severity=types.DiagnosticSeverity.Information,
                    source="Nsight Compute",
                    code=hint["rule"],
                ),
            )
            count += 1
    return count


_TRACES: dict[str, tuple[float, dict[str, Any]]] = {}


def _load_cached(path: str) -> dict[str, Any]:
    """A loaded trace, kept for the few most recent files (zooming re-reads the same one)."""
    from kernel_lens.analysis.trace_summary import load_trace

    mtime = os.path.getmtime(path)
    cached = _TRACES.get(path)
    if cached is None or cached[0] != mtime:
        if len(_TRACES) >= 4:
            _TRACES.pop(next(iter(_TRACES)))
        _TRACES[path] = (mtime, load_trace(path))
    return _TRACES[path][1]


_OVERVIEWS: dict[str, tuple[float, dict[str, Any]]] = {}


def _timeline_of(path: str | None) -> dict[str, Any] | None:
    """The overview timeline of a trace file, cached per file and modification time."""
    if not path or not os.path.isfile(path):
        return None
    from kernel_lens.analysis.timeline import build_timeline

    mtime = os.path.getmtime(path)
    cached = _OVERVIEWS.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    timeline = build_timeline(_load_cached(path))
    timeline["path"] = path
    if len(_OVERVIEWS) >= 8:
        _OVERVIEWS.pop(next(iter(_OVERVIEWS)))
    _OVERVIEWS[path] = (mtime, timeline)
    return timeline


def setup(ls: KernelLensServer) -> None:
    """Register the report request, the trace/ncu file requests and the three commands."""

    @ls.feature(REQ_REPORT)
    def report(ls: KernelLensServer, raw: Any) -> dict[str, Any]:
        params = structure(ReportParams, raw)
        record = ls.results.get(params.uri, params.function)
        profile = record.result if record and record.state == "ok" else None
        key = (params.uri, params.function)
        doc = ls.workspace.get_text_document(params.uri)
        try:
            int_params = int_parameters(doc.source, params.function)
        except SyntaxError:
            int_params = {}
        return {
            "function": params.function,
            "uri": params.uri,
            "int_parameters": int_params,
            "profile": profile,
            "timeline": _timeline_of(profile.get("trace_path")) if profile else None,
            "ncu": ls.ncu_results.get(key),
            "sweep": ls.sweep_results.get(key),
        }

    @ls.feature(REQ_TRACE_FILE)
    def trace_file(ls: KernelLensServer, raw: Any) -> dict[str, Any]:
        from kernel_lens.analysis.trace_summary import TraceError, load_trace, summarize_trace

        params = structure(TraceFileParams, raw)
        try:
            trace = load_trace(params.path)
        except TraceError as exc:
            raise RequestFailed(message=str(exc)) from None
        from kernel_lens.analysis.timeline import build_timeline

        timeline = build_timeline(trace)
        timeline["path"] = params.path
        return {
            "path": params.path,
            "timeline": timeline,
            "summary": summarize_trace(trace).to_json(),
        }

    @ls.feature(REQ_TIMELINE_WINDOW)
    def timeline_window(ls: KernelLensServer, raw: Any) -> dict[str, Any]:
        from kernel_lens.analysis.timeline import build_timeline
        from kernel_lens.analysis.trace_summary import TraceError

        params = structure(TimelineWindowParams, raw)
        try:
            trace = _load_cached(params.path)
        except (TraceError, OSError) as exc:
            raise RequestFailed(message=str(exc)) from None
        timeline = build_timeline(trace, window=(params.start_us, params.end_us))
        timeline["path"] = params.path
        return timeline

    @ls.feature(REQ_NCU_FILE)
    def ncu_file(ls: KernelLensServer, raw: Any) -> dict[str, Any]:
        from kernel_lens.analysis.ncu import NcuError, read_ncu_file

        params = structure(TraceFileParams, raw)
        try:
            kernels, reader = read_ncu_file(params.path)
        except NcuError as exc:
            raise RequestFailed(message=str(exc)) from None
        return {
            "report_path": params.path,
            "reader": reader,
            "kernels": [k.to_json() for k in kernels],
        }

    @ls.command(CMD_RUN_NCU)
    async def run_ncu(ls: KernelLensServer, args: NcuArgs) -> dict[str, Any]:
        _trusted(ls)
        doc = ls.workspace.get_text_document(args.uri)
        ls.log(f"Nsight Compute ({args.set}) on {args.function}", types.MessageType.Info)
        try:
            result = await _job(
                ls, args.uri, args.function, f"Nsight Compute: {args.function}", "ncu",
                {"path": uri_to_path(args.uri), "text": doc.source, "function": args.function,
                 "set": args.set, "timeout": ls.settings.timeout_seconds},
            )  # fmt: skip
        except ProfileError as err:
            ls.log(f"Nsight Compute on {args.function}: {err}", types.MessageType.Error)
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"Nsight Compute: {err.message}"
                )
            )
            return {"ok": False, "error": err.to_json()}
        ls.ncu_results[(args.uri, args.function)] = result
        hints = _publish_hints(ls, args.uri, args.function, result)
        ls.log(
            f"Nsight Compute: {len(result['kernels'])} kernels, {hints} hints on lines; "
            f"report {result['report_path']}",
            types.MessageType.Info,
        )
        ls.protocol.notify(NOTIFY_REVEAL, RevealParams(args.uri, args.function, "ncu"))
        ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(args.uri, args.function))
        return {
            "ok": True,
            "kernels": len(result["kernels"]),
            "hints": hints,
            "report_path": result["report_path"],
        }

    @ls.command(CMD_SWEEP)
    async def sweep(ls: KernelLensServer, args: SweepArgs) -> dict[str, Any]:
        _trusted(ls)
        doc = ls.workspace.get_text_document(args.uri)
        try:
            result = await _job(
                ls, args.uri, args.function, f"Sweep {args.param} of {args.function}", "profile",
                {"path": uri_to_path(args.uri), "text": doc.source, "function": args.function,
                 "stages": ["sweep"], "warmup_ms": ls.settings.warmup_ms,
                 "budget_ms": min(ls.settings.budget_ms, 200.0), "reps": ls.settings.reps,
                 "extra": {"sweep_param": args.param, "sweep_values": args.values or []}},
            )  # fmt: skip
        except ProfileError as err:
            ls.log(f"sweep {args.param}: {err}", types.MessageType.Error)
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"Sweep {args.param}: {err.message}"
                )
            )
            return {"ok": False, "error": err.to_json()}
        data = {**result["sweep"], "device": result["device"]}
        ls.sweep_results[(args.uri, args.function)] = data
        best = data["best"]
        ls.log(
            f"sweep {args.param} of {args.function}: best {best['value']} "
            f"({best['median_ms']:.4f} ms)",
            types.MessageType.Info,
        )
        ls.protocol.notify(NOTIFY_REVEAL, RevealParams(args.uri, args.function, "sweep"))
        return {"ok": True, **data}

    @ls.command(CMD_APPLY_PARAMETER)
    async def apply_parameter(ls: KernelLensServer, args: ApplyParameterArgs) -> dict[str, Any]:
        doc = ls.workspace.get_text_document(args.uri)
        edits = parameter_edits(doc.source, args.function, args.param, args.value)
        if not edits:
            message = f"{args.param} of {args.function} has no integer literal default to change"
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            )
            return {"ok": False, "message": message}
        text_edits = [
            types.TextEdit(
                range=types.Range(types.Position(e.line, e.start), types.Position(e.line, e.end)),
                new_text=e.text,
            )
            for e in edits
        ]
        response = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(
                label=f"Kernel Lens: {args.param} = {args.value}",
                edit=types.WorkspaceEdit(changes={args.uri: text_edits}),
            )
        )
        sweep = ls.sweep_results.get((args.uri, args.function))
        if response.applied and sweep is not None and sweep.get("param") == args.param:
            sweep["current"] = args.value
        ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(args.uri, args.function))
        return {"ok": bool(response.applied), "edits": len(text_edits)}
