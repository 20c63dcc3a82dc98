"""The report panel's data, Nsight Compute and sweeps on a function, and applying a sweep's best.

``kernelLens/report`` joins what is known of a function: its last profile (timing, lines,
kernels), the timeline of its trace (reduced in this process: the panel stays smooth), the last
Nsight Compute run and the last sweep. ``kernelLens.runNcu`` and ``kernelLens.sweep`` run on the
agent with progress and cancellation; each OPT hint of ncu becomes an information diagnostic on
the Python line that launched the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from lsprotocol import types

from kernel_lens.analysis.lens_text import inputs_args_text, inputs_text
from kernel_lens.analysis.names import short_kernel_name
from kernel_lens.analysis.param_edit import int_parameters, parameter_edits
from kernel_lens.analysis.roofline import with_ncu_roofline
from kernel_lens.history import HistoryError
from kernel_lens.lsp.common import (
    document_source,
    driver_fields,
    failure_message,
    request_failed,
    require_trusted,
    resolve_target,
    server_history,
    set_diagnostics,
    status,
    target_path,
    uri_to_path,
)
from kernel_lens.lsp.jobs import run_job
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.restore import restore_results, restored_result
from kernel_lens.lsp.results import place
from kernel_lens.lsp.traces import report_timeline
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import JobRequest, NcuRequest, SweepRequest
from kernel_lens.wire.lsp import (
    CMD_APPLY_PARAMETER,
    CMD_RUN_NCU,
    CMD_SWEEP,
    NOTIFY_RESULTS_CHANGED,
    NOTIFY_REVEAL,
    REQ_REPORT,
    ApplyParameterArgs,
    ApplyParameterResult,
    CommandResult,
    NcuCommandResult,
    ReportInputs,
    ReportParams,
    ReportResult,
    ResultsChangedParams,
    RevealReportParams,
    RunNcuArgs,
    SweepArgs,
    SweepCommandResult,
    SweepResult,
)
from kernel_lens.wire.results import NcuResult, Profile

__all__ = ["ncu_line_for_kernel", "setup"]


def _same_name(a: str, b: str) -> bool:
    return "".join(a.split()) == "".join(b.split())


def ncu_line_for_kernel(kernel: dict[str, Any], profile: dict[str, Any] | None) -> int | None:
    """The line of an ncu kernel: its NVTX line, else the one profiled line that launched a
    kernel of the same full (demangled) name, else of the same short name — several kernels of
    one template (``vectorized_elementwise_kernel<4, Mul…>`` and ``<4, pow…>``) share a short
    name, and each still lands on its own line."""
    if kernel.get("line"):
        return int(kernel["line"])
    if not profile:
        return None
    names = [n for n in (kernel.get("demangled"), kernel.get("name")) if n]
    launched = [
        (line["line"], k)
        for line in profile.get("lines") or []
        for op in line["ops"]
        for k in op["kernels"]
    ]
    full = {no for no, k in launched if any(_same_name(k["name"], n) for n in names)}
    if full:
        return full.pop() if len(full) == 1 else None
    short = short_kernel_name(names[0] if names else "")
    lines = {no for no, k in launched if k["short_name"] == short}
    return lines.pop() if len(lines) == 1 else None


async def _run(
    ls: KernelLensServer,
    uri: str,
    function: str,
    title: str,
    label: str,
    make_request: Callable[[str, str], JobRequest],
    check: Callable[[dict[str, Any]], object],
) -> tuple[str, dict[str, Any]] | CommandResult:
    """Run a job on ``function`` of ``uri``: ``(source, result)``, or the failed outcome, shown
    as ``label: message`` (``title`` names the job in the progress and the status item).

    ``make_request(path, source)`` builds the request; ``check`` raises when the result cannot be
    used (the job then failed all the same, as ``internal``).
    """
    try:
        source = document_source(ls, uri)
        request = make_request(uri_to_path(uri), source)
        result = await run_job(ls, uri=uri, qualname=function, title=title, request=request)
        try:
            check(result)
        except Exception as exc:
            status(ls, "error", f"{function}: internal", uri)
            raise ProfileError(
                "internal", f"unusable result from the agent: {failure_message(exc)}"
            ) from None
    except ProfileError as err:
        ls.log(f"{title}: {err}", types.MessageType.Error)
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"{label}: {err.message}")
        )
        return {"ok": False, "function": function, "error": err.to_json()}
    status(ls, "idle", title, uri)
    return source, result


def _check_ncu(result: dict[str, Any]) -> None:
    for kernel in result["kernels"]:
        [hint["kind"] for hint in kernel["hints"]]
    str(result["report_path"])


def _check_sweep(result: dict[str, Any]) -> None:
    best = result["sweep"]["best"]
    float(best["median_ms"]), int(best["value"]), str(result["device"])


def _publish_hints(
    ls: KernelLensServer, uri: str, source: str, qualname: str, ncu: dict[str, Any]
) -> int:
    lines = source.splitlines()
    record = ls.documents.get(uri, qualname)
    profile = record.result if record and record.state == "ok" else None
    hints: list[types.Diagnostic] = []
    for k in ncu["kernels"]:
        line = ncu_line_for_kernel(k, profile)
        if line is None or not 1 <= line <= len(lines):
            continue
        # The Report shows each kernel's metrics on its line: the line found from the profile
        # too, not only an NVTX one.
        k["line"] = line
        text = lines[line - 1]
        for hint in (h for h in k["hints"] if h["kind"] == "OPT"):
            gain = (
                f" (est. {hint['speedup_type']} speedup {hint['speedup_pct']:.0f}%)"
                if hint.get("speedup_pct")
                else ""
            )
            hints.append(
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
    set_diagnostics(ls, uri, ("ncu", qualname), hints)
    return len(hints)


def _function_of(ls: KernelLensServer, uri: str, name: str | None, position: Any) -> str:
    """The function a command or request is about (by name, or at the position)."""
    if name:
        return name
    try:
        source = document_source(ls, uri)
    except ProfileError as err:
        raise request_failed(err) from None
    return resolve_target(source, name=None, position=position)


def _inputs_of(profile: dict[str, Any] | None) -> ReportInputs | None:
    """The run's inputs in the words of the hover (``None`` before a run or without any)."""
    if not profile:
        return None
    source = inputs_text(profile.get("inputs"), profile.get("path"))
    if source is None:
        return None
    return {"source": source, "args": inputs_args_text(profile.get("inputs"))}


def _last_run(ls: KernelLensServer, uri: str, function: str) -> dict[str, Any] | None:
    """``function``'s last run from the history, restored as the lenses restore it."""
    try:
        path = target_path(ls, uri)
        entries = server_history(ls, path).entries(path, function)
    except (HistoryError, ProfileError, OSError, ValueError) as exc:
        ls.log(f"report of {function}: the history could not be read: {exc}")
        return None
    return restored_result(entries[-1]) if entries else None


async def report(ls: KernelLensServer, params: ReportParams) -> ReportResult:
    """``kernelLens/report``: a function's profile, timeline, Nsight Compute and sweep."""
    function = _function_of(ls, params.uri, params.function, params.position)
    if ls.documents.get(params.uri, function) is None:
        try:
            restore_results(ls, params.uri, document_source(ls, params.uri))
        except ProfileError:
            pass  # not an open document: nothing to restore into
    record = ls.documents.get(params.uri, function)
    profile = record.result if record and record.state == "ok" else None
    if record is None:
        # The panel restored after *Reload Window* may ask before its document is open:
        # the function's last run from the history, as the lenses will show it.
        profile = _last_run(ls, params.uri, function)
    state = ls.documents.peek(params.uri)
    try:
        int_params = int_parameters(document_source(ls, params.uri), function)
    except (SyntaxError, ProfileError):
        int_params = {}
    timeline = await report_timeline(ls, profile) if profile else None
    ncu = state.ncu.get(function) if state else None
    outdated = False
    if profile is not None and record is not None:
        # As the lens: a run of a text that changed since (edited, or a restored run of
        # an older version of the file) is outdated, its source lines the run's.
        try:
            placed = place(record, document_source(ls, params.uri))
            outdated = placed is None or placed.outdated
        except ProfileError:
            pass
    return {
        "outdated": outdated,
        "function": function,
        "uri": params.uri,
        "int_parameters": int_params,
        # where Nsight Compute ran, its bytes and FLOPs place the kernels (issue 25)
        "profile": cast(Profile, with_ncu_roofline(profile, ncu)),
        "timeline": timeline,
        "ncu": cast(NcuResult, ncu),
        "sweep": cast(SweepResult, state.sweeps.get(function)) if state else None,
        "inputs": _inputs_of(profile),
    }


async def run_ncu(ls: KernelLensServer, args: RunNcuArgs) -> NcuCommandResult | CommandResult:
    """``kernelLens.runNcu``: Nsight Compute on a function, its hints on the lines."""
    require_trusted(ls)
    function = _function_of(ls, args.uri, args.function, args.position)
    ls.log(f"Nsight Compute ({args.set}) on {function}", types.MessageType.Info)
    timeout = ls.settings.timeout_seconds
    ran = await _run(
        ls, args.uri, function, f"Nsight Compute: {function}", "Nsight Compute",
        lambda path, text: NcuRequest(
            path=path, text=text, function=function, set=args.set, timeout=timeout,
            **driver_fields(ls, args.uri, function),
        ),
        _check_ncu,
    )  # fmt: skip
    if isinstance(ran, dict):
        return ran
    source, result = ran
    ls.documents(args.uri).ncu[function] = result
    hints = _publish_hints(ls, args.uri, source, function, result)
    ls.log(
        f"Nsight Compute: {len(result['kernels'])} kernels, {hints} hints on lines; "
        f"report {result['report_path']}",
        types.MessageType.Info,
    )
    ls.protocol.notify(NOTIFY_REVEAL, RevealReportParams(args.uri, function, "ncu"))
    ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(args.uri, function))
    return {
        "ok": True,
        "function": function,
        "kernels": len(result["kernels"]),
        "hints": hints,
        "report_path": result["report_path"],
    }


async def sweep(ls: KernelLensServer, args: SweepArgs) -> SweepCommandResult | CommandResult:
    """``kernelLens.sweep``: time a function over values of an int parameter."""
    require_trusted(ls)
    function = _function_of(ls, args.uri, args.function, args.position)
    settings = ls.settings
    ran = await _run(
        ls, args.uri, function, f"Sweep {args.param} of {function}", f"Sweep {args.param}",
        lambda path, text: SweepRequest(
            path=path, text=text, function=function, param=args.param,
            values=list(args.values or []), warmup_ms=settings.warmup_ms,
            budget_ms=min(settings.budget_ms, 200.0), reps=settings.reps,
            **driver_fields(ls, args.uri, function),
        ),
        _check_sweep,
    )  # fmt: skip
    if isinstance(ran, dict):
        return ran
    result = ran[1]
    data = {**result["sweep"], "device": result["device"]}
    ls.documents(args.uri).sweeps[function] = data
    best = data["best"]
    ls.log(
        f"sweep {args.param} of {function}: best {best['value']} ({best['median_ms']:.4f} ms)",
        types.MessageType.Info,
    )
    ls.protocol.notify(NOTIFY_REVEAL, RevealReportParams(args.uri, function, "sweep"))
    # The agent's sweep, as the report keeps it (``SweepResult``), with ok and the function.
    return cast(SweepCommandResult, {"ok": True, "function": function, **data})


async def apply_parameter(ls: KernelLensServer, args: ApplyParameterArgs) -> ApplyParameterResult:
    """``kernelLens.applyParameter``: write a swept value into the parameter's default."""
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
    state = ls.documents.peek(args.uri)
    sweep = state.sweeps.get(args.function) if state is not None else None
    if response.applied and sweep is not None and sweep.get("param") == args.param:
        sweep["current"] = args.value
    ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(args.uri, args.function))
    return {"ok": bool(response.applied), "edits": len(text_edits)}


def setup(ls: KernelLensServer) -> None:
    """Register the report request and the Nsight Compute, sweep and apply commands."""
    ls.feature(REQ_REPORT)(report)
    ls.command(CMD_RUN_NCU)(run_ncu)
    ls.command(CMD_SWEEP)(sweep)
    ls.command(CMD_APPLY_PARAMETER)(apply_parameter)
