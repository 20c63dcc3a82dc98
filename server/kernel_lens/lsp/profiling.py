"""``kernelLens.profile`` / ``kernelLens.profileAll``: run a profile job on the agent with
progress, cancellation, a timeout, diagnostics for failures and lenses for results."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.functions import (
    FunctionInfo,
    SourceSyntaxError,
    find_function,
    find_functions,
)
from kernel_lens.analysis.lens_text import line_lens_title, summary_lens_title, trace_text
from kernel_lens.analysis.light_text import LIGHT_NAME
from kernel_lens.analysis.memory_text import oom_lines
from kernel_lens.analysis.scripts import SCRIPT_NAME
from kernel_lens.lsp.common import (
    SYNTAX_KEY,
    DiagnosticKey,
    diagnostic_data,
    document_source,
    driver_fields,
    failure_message,
    refresh_lenses,
    resolve_target,
    set_diagnostic,
    set_diagnostics,
    status,
    uri_to_path,
    workspace_folders,
)
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.history import record_profile
from kernel_lens.lsp.jobs import run_job
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.results import Record, function_text, script_info
from kernel_lens.lsp.state import RunLines
from kernel_lens.run_choices import DriverChoice, RunChoices, quietly, script_arguments
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import DEFAULT_STAGES, ProfileRequest
from kernel_lens.wire.lsp import (
    CMD_PROFILE,
    CMD_PROFILE_ALL,
    NOTIFY_RESULTS_CHANGED,
    ProfileAllArgs,
    ProfileArgs,
    ProfileCommandResult,
    ResultsChangedParams,
)

__all__ = [
    "Profiling",
    "StreamedRecord",
    "ThrottledRefresh",
    "profile",
    "profile_all",
    "profile_function",
    "profile_script",
    "setup",
]

logger = logging.getLogger(__name__)

DIAGNOSTIC_SOURCE = "Kernel Lens"
#: Lenses are refreshed for a streamed part at most this often (seconds).
REFRESH_EVERY_S = 0.1


class ThrottledRefresh:
    """``workspace/codeLens/refresh`` at most every :data:`REFRESH_EVERY_S`: a call within that
    time of the last refresh schedules one at its end (one at most), so the last state is
    always shown."""

    def __init__(self, ls: KernelLensServer, every_s: float = REFRESH_EVERY_S) -> None:
        self.ls = ls
        self.every_s = every_s
        self.last = -1e9
        self.pending: asyncio.TimerHandle | None = None

    def __call__(self) -> None:
        if self.pending is not None:
            return
        wait = self.last + self.every_s - time.monotonic()
        if wait <= 0:
            self._fire()
            return
        try:
            self.pending = asyncio.get_running_loop().call_later(wait, self._fire)
        except RuntimeError:  # no loop (a direct call in a test): now
            self._fire()

    def _fire(self) -> None:
        self.pending = None
        self.last = time.monotonic()
        refresh_lenses(self.ls)

    def cancel(self) -> None:
        """Drop a scheduled refresh (the job's end refreshes anyway)."""
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None


class StreamedRecord:
    """Puts a running job's streamed parts into its document's record (state ``running``,
    with the result so far and the stage) and refreshes the lenses, throttled. A record
    replaced meanwhile (a newer job, a close) is left alone."""

    def __init__(self, ls: KernelLensServer, uri: str, record: Record) -> None:
        self.ls = ls
        self.uri = uri
        self.record = record
        self.refresh = ThrottledRefresh(ls)

    def __call__(self, result: dict[str, Any], final: list[str], stage: str) -> None:
        del final  # the lenses show every part as it is; the end replaces them all
        held = self.ls.documents.get(self.uri, self.record.qualname)
        if held is not self.record:
            return
        record = Record(
            self.record.qualname,
            "running",
            self.record.text,
            self.record.first_line,
            result=result,
            stage=stage,
        )
        self.ls.documents.put(self.uri, record)
        self.record = record
        self.refresh()


def _key(qualname: str) -> DiagnosticKey:
    """The key of a function's (or the ``<script>``'s) failed profile in the diagnostics."""
    return ("profile", qualname)


def _error_diagnostic(err: ProfileError, lines: list[str], fallback_line: int) -> types.Diagnostic:
    line1 = err.line or fallback_line
    line0 = max(0, min(line1 - 1, max(len(lines) - 1, 0)))
    text = lines[line0] if line0 < len(lines) else ""
    start = len(text) - len(text.lstrip())
    return types.Diagnostic(
        range=types.Range(
            types.Position(line0, start), types.Position(line0, max(len(text), start))
        ),
        message=f"Profile failed ({err.kind}): {err.message}"
        + ("\n" + "\n".join(oom_lines(err.memory)) if err.memory else ""),
        severity=types.DiagnosticSeverity.Error,
        source=DIAGNOSTIC_SOURCE,
        code=err.kind,
        data=diagnostic_data(err),
    )


def _graph_break_key(qualname: str) -> DiagnosticKey:
    """The key of a run's torch.compile graph-break diagnostics (issue 33)."""
    return ("graph-break", qualname)


def _graph_break_diagnostics(
    notes: list[Any], lines: list[str], path: str | None = None
) -> list[types.Diagnostic]:
    """A warning on each line where Dynamo broke the graph, with its reason: the notes of
    kind ``graph-break`` of the profiled file (no ``path``), or of ``path`` when given."""
    out: list[types.Diagnostic] = []
    for note in notes:
        if not isinstance(note, dict) or note.get("kind") != "graph-break":
            continue
        if note.get("path") != path or not isinstance(note.get("line"), int):
            continue
        line0 = max(0, min(int(note["line"]) - 1, max(len(lines) - 1, 0)))
        text = lines[line0] if line0 < len(lines) else ""
        start = len(text) - len(text.lstrip())
        out.append(
            types.Diagnostic(
                range=types.Range(
                    types.Position(line0, start), types.Position(line0, max(len(text), start))
                ),
                message=str(note.get("message") or "torch.compile graph break"),
                severity=types.DiagnosticSeverity.Warning,
                source=DIAGNOSTIC_SOURCE,
                code="graph-break",
            )
        )
    return out


def _publish_graph_breaks(
    ls: KernelLensServer, uri: str, qualname: str, lines: list[str], result: dict[str, Any]
) -> None:
    """The run's graph breaks as Problems entries on their lines, in the profiled document and
    in every other open document the run's notes name (replacing that run's earlier ones)."""
    notes = list(result.get("notes") or [])
    set_diagnostics(ls, uri, _graph_break_key(qualname), _graph_break_diagnostics(notes, lines))
    for doc_uri, doc in list(ls.workspace.text_documents.items()):
        if doc_uri == uri or not doc_uri.startswith("file:"):
            continue
        found = _graph_break_diagnostics(notes, doc.lines, doc.path)
        if found or ls.documents.peek(doc_uri) is not None:
            set_diagnostics(ls, doc_uri, _graph_break_key(qualname), found)


def _warn(ls: KernelLensServer, message: str) -> None:
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))


def _check_result(result: Any) -> None:
    """Raise if a profile result cannot be shown (its lenses are built once here to be sure).

    Raises:
        TypeError: not a JSON object.
        Exception: whatever building its lens titles raises.
    """
    if not isinstance(result, dict):
        raise TypeError(f"a profile result is a JSON object, not {type(result).__name__}")
    summary_lens_title(result)
    cuda = result.get("device_kind") == "cuda"
    for line in result.get("lines") or []:
        line_lens_title(line, cuda=cuda)
        int(line["line"])


def _failed(
    ls: KernelLensServer,
    uri: str,
    info: FunctionInfo,
    snapshot: list[str],
    lines: list[str],
    err: ProfileError,
) -> ProfileCommandResult:
    """Store and show a failed (or cancelled) job; the function gets its Profile lens back."""
    qualname = info.qualname
    state_name = "cancelled" if err.kind == "cancelled" else "error"
    ls.documents.put(
        uri, Record(qualname, state_name, snapshot, info.first_line, error=err.to_json())
    )
    if state_name == "error":
        set_diagnostic(ls, uri, _key(qualname), _error_diagnostic(err, lines, info.def_line))
        ls.log(f"{qualname}: {err}", types.MessageType.Error)
        if err.traceback:
            ls.log(err.traceback.rstrip())
        if err.kind == "internal":
            status(ls, "error", f"{qualname}: {err.kind}", uri)
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"Kernel Lens: profiling {qualname} failed: {err.message}",
                )
            )
    else:
        set_diagnostic(ls, uri, _key(qualname), None)
        ls.log(f"{qualname}: cancelled", types.MessageType.Info)
    return {"ok": False, "function": qualname, "error": err.to_json()}


def _trusted_source(ls: KernelLensServer, uri: str) -> tuple[str, str] | ProfileCommandResult:
    """The document's text and path, or the failed outcome (untrusted workspace, unreadable
    document) already shown to the user."""
    if not ls.settings.workspace_trusted:
        message = "Kernel Lens runs your code: trust this workspace first (nothing was run)."
        _warn(ls, message)
        return {"ok": False, "error": {"kind": "untrusted", "message": message}}
    try:
        return document_source(ls, uri), uri_to_path(uri)
    except ProfileError as missing:
        _warn(ls, f"Kernel Lens: {missing.message}")
        return {"ok": False, "error": missing.to_json()}


async def _run_checked(
    ls: KernelLensServer,
    uri: str,
    info: FunctionInfo,
    snapshot: list[str],
    lines: list[str],
    title: str,
    request: ProfileRequest,
    streamed: StreamedRecord | None = None,
) -> dict[str, Any]:
    """Run the job; its usable result, or (as ``{"failed": outcome}``) the failure stored and
    shown by :func:`_failed`. ``streamed`` shows the parts the job sends before its end."""
    try:
        result = await run_job(
            ls, uri=uri, qualname=info.qualname, title=title, request=request, on_partial=streamed
        )
        _check_result(result)
    except ProfileError as err:
        return {"failed": _failed(ls, uri, info, snapshot, lines, err)}
    except Exception as exc:  # a result the server cannot use: the job failed all the same
        unusable = ProfileError(
            "internal", f"unusable result from the agent: {failure_message(exc)}"
        )
        return {"failed": _failed(ls, uri, info, snapshot, lines, unusable)}
    finally:
        if streamed is not None:
            streamed.refresh.cancel()
    return {"result": result}


def _syntax_failure(
    ls: KernelLensServer, uri: str, path: str, lines: list[str], exc: SourceSyntaxError
) -> ProfileCommandResult:
    """The buffer does not parse, so no function can be found (the agent would say the same):
    a diagnostic, the document's syntax error for its lenses, and the error outcome."""
    syntax = ProfileError("syntax", str(exc), exc.line)
    set_diagnostic(ls, uri, SYNTAX_KEY, _error_diagnostic(syntax, lines, 1))
    ls.documents(uri).syntax_error = syntax.to_json()
    ls.log(f"profile: syntax error in {path}: {exc}", types.MessageType.Error)
    status(ls, "error", f"syntax error (line {exc.line})", uri)
    refresh_lenses(ls)
    return {"ok": False, "error": syntax.to_json()}


def _store_profile(
    ls: KernelLensServer,
    uri: str,
    path: str,
    info: FunctionInfo,
    snapshot: list[str],
    lines: list[str],
    result: dict[str, Any],
) -> ProfileCommandResult:
    """Keep a function's successful profile (its record, the lines it gave other files, its
    inputs, its graph breaks as diagnostics) and say it in the log and the status."""
    qualname = info.qualname
    ls.documents.put(uri, Record(qualname, "ok", snapshot, info.first_line, result=result))
    _keep_run_lines(ls, path, result, function=qualname)
    inputs = result.get("inputs")
    if isinstance(inputs, dict) and inputs.get("args"):
        ls.documents(uri).inputs[qualname] = inputs
    set_diagnostic(ls, uri, _key(qualname), None)
    _publish_graph_breaks(ls, uri, qualname, lines, result)
    timing = result.get("timing") or {}
    summary = (
        f"{qualname}: {timing.get('median_ms', 0):.4f} ms median "
        f"±{timing.get('spread_pct', 0):.1f}%"
        f" on {result.get('device')}; {trace_text(result)}"
    )
    ls.log(summary, types.MessageType.Info)
    status(ls, "idle", summary, uri)
    return {"ok": True, "function": qualname, "timing": timing}


async def profile_function(
    ls: KernelLensServer,
    uri: str,
    *,
    function: str | None,
    line0: int | None,
    backward: bool = False,
    memory: bool = False,
    budget_scale: float | None = None,
    driver: dict[str, Any] | None = None,
    nproc_per_node: int = 0,
    compare_compiled: bool = False,
    packages: list[str] | None = None,
) -> ProfileCommandResult:
    """Profile one function of the document ``uri`` and store the outcome (``compare_compiled``:
    with the function also compiled, per line eager against compiled; ``packages``: attributed
    inside these installed packages too, added to ``kernelLens.attributeInPackages``).

    Returns a small JSON summary (``{"ok": true, "function": …}`` or ``{"ok": false, "error":
    …}``); a failure of any kind ends with an error outcome and a Profile lens to click again.
    """
    opened = _trusted_source(ls, uri)
    if isinstance(opened, dict):
        return opened
    source, path = opened
    lines = source.splitlines()
    state = ls.documents(uri)
    try:
        info = find_function(source, name=function, line=None if line0 is None else line0 + 1)
    except SourceSyntaxError as exc:
        return _syntax_failure(ls, uri, path, lines, exc)
    if state.syntax_error is not None:
        state.syntax_error = None
        set_diagnostic(ls, uri, SYNTAX_KEY, None)
    if info is None:
        what = (
            f"no function {function!r}" if function else f"no function at line {(line0 or 0) + 1}"
        )
        _warn(ls, f"Kernel Lens: {what}")
        return {"ok": False, "error": {"kind": "not-found", "message": what}}

    qualname = info.qualname
    # A driver chosen for this function (a quick fix, the picker) is kept per workspace; later
    # runs use it, with the driver script's arguments as they are set then.
    if driver is not None and driver.get("driver"):
        remember_driver(ls, path, qualname, driver)
    from_driver = driver_fields(ls, uri, qualname)
    snapshot = function_text(lines, info)
    running = Record(qualname, "running", snapshot, info.first_line)
    ls.documents.put(uri, running)
    refresh_lenses(ls)
    # The lines, then the timing as it converges, shown as they come (issue 28).
    streamed = StreamedRecord(ls, uri, running)
    memory = memory or ls.settings.profile_memory == "on"
    with_bwd = (" with backward" if backward else "") + (" with memory" if memory else "")
    budget_ms = ls.settings.budget_ms
    if budget_scale is not None and budget_scale > 1:
        budget_ms *= min(float(budget_scale), 20.0)  # *Re-profile longer*, for this run only
        with_bwd += f", timing budget {budget_ms:g} ms"
    if nproc_per_node > 0:
        with_bwd += f" on {nproc_per_node} ranks (torchrun)"
    if compare_compiled:
        with_bwd += ", eager vs torch.compile"
    ls.log(f"profile{with_bwd} {qualname} ({path}:{info.def_line})", types.MessageType.Info)
    request = ProfileRequest(
        path=path,
        text=source,
        function=qualname,
        warmup_ms=ls.settings.warmup_ms,
        budget_ms=budget_ms,
        reps=ls.settings.reps,
        keep_samples=True,  # for the history's comparisons; dropped from the record after
        backward=backward,
        **from_driver,
        memory=memory,
        memory_auto=ls.settings.profile_memory == "auto",
        nproc_per_node=nproc_per_node,
        stages=(*DEFAULT_STAGES, "compare_compiled") if compare_compiled else DEFAULT_STAGES,
        packages=attributed_packages(ls, packages),
    )
    outcome: ProfileCommandResult
    ran = await _run_checked(
        ls, uri, info, snapshot, lines, f"Profiling {qualname}", request, streamed
    )
    if "failed" in ran:
        outcome = ran["failed"]
        _annotate_failure(
            ls, uri, qualname, script=None if from_driver else path, driver=from_driver
        )
    else:
        result = ran["result"]
        # Into the function's history, compared with the previous run or the baseline.
        await record_profile(ls, uri, qualname, snapshot, result, source)
        outcome = _store_profile(ls, uri, path, info, snapshot, lines, result)
        if budget_scale is not None and budget_scale > 1:
            _why_still_noisy(ls, qualname, result, budget_ms)
    refresh_lenses(ls)
    ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(uri=uri, function=qualname))
    return outcome


async def profile_script(
    ls: KernelLensServer,
    uri: str,
    argv: list[str] | None = None,
    *,
    skip: int = 0,
    steps: int | None = None,
    after_s: float | None = None,
    packages: list[str] | None = None,
) -> ProfileCommandResult:
    """Run the whole document once as ``__main__`` with each module-level line profiled
    (``packages``: attributed inside these installed packages too, for this run).

    A window (``skip``/``steps``/``after_s``, see :class:`~kernel_lens.wire.lsp.ProfileArgs`)
    profiles part of a long run only. The result is stored as the ``<script>`` record: its
    summary lens on the first line says the wall time of that one run (never a median), its
    per-line lenses sit on the module-level lines, and any edit of the file outdates it.
    """
    opened = _trusted_source(ls, uri)
    if isinstance(opened, dict):
        return opened
    source, path = opened
    lines = source.splitlines()
    info = script_info(lines)
    ls.documents.put(uri, Record(SCRIPT_NAME, "running", lines, 1))
    refresh_lenses(ls)
    ls.log(f"profile script {path} (one run as __main__)", types.MessageType.Info)
    # The workspace folder, when the script is in it (else the agent's default: the script's
    # git checkout, or its folder).
    root = ls.settings.workspace_root
    workspace = [root] if root and path.startswith(root.rstrip("/") + "/") else []
    if argv is not None:
        # kept per workspace for every run of this script (as itself, a Window, a driver, the CLI)
        failed = quietly(
            RunChoices.for_path(path, workspace_folders(ls)).set_script_args, path, argv
        )
        if failed is not None:
            ls.log(f"the arguments of {path} were not kept ({failed})", types.MessageType.Warning)
    script_argv, _ = script_arguments(path, workspace_folders(ls))
    if argv is not None:
        script_argv = list(argv)
    request = ProfileRequest(
        path=path,
        text=source,
        script=True,
        workspace=workspace,
        argv=script_argv,
        skip=max(0, skip),
        steps=steps,
        after_s=None if after_s is None else max(0.0, float(after_s)),
        packages=attributed_packages(ls, packages),
    )
    name = path.rsplit("/", 1)[-1]
    outcome: ProfileCommandResult
    ran = await _run_checked(ls, uri, info, lines, lines, f"Running {name} as a script", request)
    if "failed" in ran:
        outcome = ran["failed"]
        _annotate_failure(ls, uri, SCRIPT_NAME, script=path, driver=None)
    else:
        result = ran["result"]
        # One whole-run result per script on its lines: a light run's goes (its other files'
        # lines are replaced or dropped by _keep_run_lines, as an earlier deep run's are).
        if ls.documents(uri).records.pop(LIGHT_NAME, None) is not None:
            set_diagnostic(ls, uri, _key(LIGHT_NAME), None)
        ls.documents.put(uri, Record(SCRIPT_NAME, "ok", lines, 1, result=result))
        _keep_run_lines(ls, path, result)
        set_diagnostic(ls, uri, _key(SCRIPT_NAME), None)
        _publish_graph_breaks(ls, uri, SCRIPT_NAME, lines, result)
        script = result.get("script") or {}
        summary = (
            f"{name}: {float(script.get('wall_s') or 0):.3f} s wall, one run as __main__ "
            f"(under the profiler) on {result.get('device')}; {trace_text(result)}"
        )
        for note in result.get("notes") or []:
            ls.log(f"{name}:{note.get('line')}: {note.get('message')}", types.MessageType.Info)
        ls.log(summary, types.MessageType.Info)
        status(ls, "idle", summary, uri)
        outcome = {"ok": True, "function": SCRIPT_NAME, "script": script}
    refresh_lenses(ls)
    ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(uri=uri, function=SCRIPT_NAME))
    return outcome


def _why_still_noisy(
    ls: KernelLensServer, qualname: str, result: dict[str, Any], budget_ms: float
) -> None:
    """After *Re-profile longer*: when the comparison still cannot tell, say why (the run's
    drift, a busy machine, the spread) where the user looks, not only in the lens."""
    verdict = (result.get("comparison") or {}).get("verdict") or {}
    if verdict.get("kind") not in ("ambiguous", "untested"):
        return
    message = (
        f"Kernel Lens: {qualname} measured for {budget_ms / 1000:g} s and it is still "
        f"{verdict.get('text')}: a quieter machine (or the GPU machine), or fewer other jobs, "
        "would tell it; a longer budget would not."
    )
    ls.log(message, types.MessageType.Info)
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=message))


def remember_driver(ls: KernelLensServer, path: str, function: str, driver: dict[str, Any]) -> None:
    """Keep the driver a profile was asked to use (``argv`` ``None``: a workspace script, whose
    arguments are its own; else a launch configuration's, named ``config``)."""
    program = os.path.abspath(str(driver["driver"]))
    if driver.get("argv") is None and not driver.get("cwd") and not driver.get("env"):
        choice = DriverChoice("script", program)
    else:
        env = tuple(sorted((str(k), str(v)) for k, v in (driver.get("env") or {}).items()))
        choice = DriverChoice(
            "launch",
            program,
            tuple(str(a) for a in driver.get("argv") or ()),
            driver.get("config"),
            driver.get("cwd"),
            env,
        )
    store = RunChoices.for_path(path, workspace_folders(ls))
    failed = quietly(store.set_driver, path, function, choice)
    if failed is not None:
        ls.log(f"the driver of {function} was not kept ({failed})", types.MessageType.Warning)


def _annotate_failure(
    ls: KernelLensServer,
    uri: str,
    qualname: str,
    *,
    script: str | None,
    driver: dict[str, Any] | None,
) -> None:
    """Give a stored failure what its actions need (the arguments of the script that failed on
    them or on a device, the driver to change); see :func:`run_choices.annotate_error`."""
    from kernel_lens.lsp.run_choices import annotate_error

    record = ls.documents.get(uri, qualname)
    if record is None or record.error is None:
        return
    function = None if qualname == SCRIPT_NAME else qualname
    try:
        annotate_error(ls, record.error, uri=uri, function=function, script=script, driver=driver)
    except Exception:  # the failure is shown all the same, without these actions
        logger.exception("annotating a failure")
    refresh_lenses(ls)


def attributed_packages(ls: KernelLensServer, extra: list[str] | None) -> list[str]:
    """The packages a run is attributed inside: ``kernelLens.attributeInPackages``, then the
    ones this run adds (*Attribute inside transformers*), top-level names only."""
    from kernel_lens.lsp.settings import package_names

    return package_names([*ls.settings.attribute_in_packages, *(extra or [])])


def _keep_run_lines(
    ls: KernelLensServer, path: str, result: dict[str, Any], *, function: str | None = None
) -> None:
    """The other files' lines of a run (``files``: the workspace's others, and the named
    packages'), kept for their lenses; a file this run did not touch keeps what an earlier run
    of *another* script (or function) gave it, and loses what an earlier one of this did."""
    import time

    stamp = time.strftime("%H:%M")
    files = result.get("files") or {}
    raw_packages = result.get("packages")
    roots = dict(raw_packages) if isinstance(raw_packages, dict) else {}
    for other, held in list(ls.run_lines.items()):
        if held.run_path == path and held.function == function and other not in files:
            del ls.run_lines[other]
    for other, rows in files.items():
        if isinstance(rows, list) and rows:
            package = next(
                (
                    str(name)
                    for name, root in roots.items()
                    if str(other) == root or str(other).startswith(str(root).rstrip("/") + "/")
                ),
                None,
            )
            ls.run_lines[str(other)] = RunLines(
                path,
                stamp,
                rows,
                str(result.get("device_kind") or "cpu"),
                function=function,
                package=package,
                packages=[str(n) for n in roots],
            )
            if package is not None:
                ls.package_roots[str(package)] = str(roots[package])


async def profile(ls: KernelLensServer, args: ProfileArgs) -> ProfileCommandResult:
    """``kernelLens.profile``: a function (by name, line or cursor position) or the script."""
    if args.script:
        return await profile_script(
            ls,
            args.uri,
            args.argv,
            skip=args.skip,
            steps=args.steps,
            after_s=args.after_s,
            packages=args.packages,
        )
    function = args.function
    if function is None and args.position is not None:
        try:
            source = document_source(ls, args.uri)
        except ProfileError as err:
            _warn(ls, f"Kernel Lens: {err.message}")
            return {"ok": False, "error": err.to_json()}
        try:
            find_functions(source)
        except SourceSyntaxError:
            # Shown as a profile's syntax error is: a diagnostic and a lens.
            return await profile_function(ls, args.uri, function=None, line0=args.position.line)
        function = resolve_target(source, name=None, position=args.position)
    driver = None
    if args.driver:
        # arguments given with a driver are a launch configuration's; without, the script's own
        driver = {"driver": args.driver, "argv": None if args.argv is None else list(args.argv),
                  "cwd": args.cwd, "env": dict(args.env or {}),
                  "config": args.driver_config}  # fmt: skip
    return await profile_function(
        ls,
        args.uri,
        function=function,
        line0=args.line,
        backward=args.backward,
        memory=args.memory,
        budget_scale=args.budget_scale,
        driver=driver,
        nproc_per_node=args.nproc_per_node,
        compare_compiled=args.compare_compiled,
        packages=args.packages,
    )


async def profile_all(ls: KernelLensServer, args: ProfileAllArgs) -> list[ProfileCommandResult]:
    """``kernelLens.profileAll``: every function of the document that has a Profile lens."""
    try:
        source = document_source(ls, args.uri)
    except ProfileError as err:
        _warn(ls, f"Kernel Lens: {err.message}")
        return [{"ok": False, "error": err.to_json()}]
    try:
        # What has a Profile lens: no input factories, __init__, kernels or helpers.
        model = await ls.models.get(ls, args.uri, source)
        model.check()
        names = [t.info.qualname for t in model.targets if t.role == "profile"]
    except SourceSyntaxError as exc:
        return [await profile_function(ls, args.uri, function=None, line0=(exc.line or 1) - 1)]
    outcomes = []
    for name in names:
        outcome = await profile_function(ls, args.uri, function=name, line0=None)
        outcomes.append(outcome)
        error = outcome.get("error")
        if error is not None and error["kind"] in ("cancelled", "untrusted"):
            break
    return outcomes


class Profiling(LanguageFeature):
    """The owner of ``kernelLens.profile`` / ``kernelLens.profileAll`` (a notebook cell's go to
    its notebook first: the dispatcher asks which feature claims the argument's document)."""

    name = "profiling"
    commands = {CMD_PROFILE: ProfileArgs, CMD_PROFILE_ALL: ProfileAllArgs}

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    async def execute_command(self, command: str, args: Any) -> Any:
        if command == CMD_PROFILE_ALL:
            return await profile_all(self.ls, args)
        return await profile(self.ls, args)


def setup(ls: KernelLensServer) -> None:
    """Own the profile commands."""
    ls.dispatcher.add(Profiling(ls))
