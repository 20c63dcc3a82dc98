"""``kernelLens.profileLight``: *Profile Script (Light)* (issue 36) — the script run once as
``__main__`` under Triton's Proton in the user's interpreter (the agent's ``light`` job, in a
process of its own), every workspace line's GPU kernel time for the whole run.

The result is the document's ``<light>`` record (its lenses and hovers:
``analysis/light_text.py``, shown by ``code_lens`` and ``hover``) and, for the workspace's other
files the run touched, their lines (``ls.run_lines``, ``mode="light"``). One whole-run result per
script is on the lines: a light run replaces the deep one's (*Profile Script*) and the deep
one replaces it (``profiling.profile_script``). Like every job: trusted workspaces only,
progress, the time limit, cancel.
"""

from __future__ import annotations

import time
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.light_text import LIGHT_NAME, NO_GPU_HINT
from kernel_lens.analysis.scripts import SCRIPT_NAME
from kernel_lens.lsp.common import refresh_lenses, set_diagnostic, status, workspace_folders
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.jobs import run_job
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.profiling import _error_diagnostic, _trusted_source
from kernel_lens.lsp.results import Record
from kernel_lens.lsp.state import RunLines
from kernel_lens.run_choices import RunChoices, quietly, script_arguments
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import LightRequest
from kernel_lens.wire.lsp import (
    CMD_PROFILE_LIGHT,
    NOTIFY_RESULTS_CHANGED,
    LightRunSummary,
    ProfileCommandResult,
    ProfileLightArgs,
    ResultsChangedParams,
)

__all__ = ["LightProfile", "profile_light", "setup"]


def _key() -> tuple[str, str]:
    return ("profile", LIGHT_NAME)


def _keep_light_lines(ls: KernelLensServer, path: str, result: dict[str, Any]) -> None:
    """The other files' lines of the run, kept for their lenses and hovers (a file this run
    did not touch loses what an earlier whole run of this script gave it)."""
    stamp = time.strftime("%H:%M")
    files = result.get("files") or {}
    for other, held in list(ls.run_lines.items()):
        if held.run_path == path and held.function is None and other not in files:
            del ls.run_lines[other]
    for other, rows in files.items():
        if other == path or not rows:
            continue
        ls.run_lines[str(other)] = RunLines(
            path, stamp, list(rows), "cuda", mode="light", light=_summary_fields(result)
        )


def _summary_fields(result: dict[str, Any]) -> dict[str, Any]:
    """What another file's lenses and hover need of the whole run (not the other files' rows)."""
    keep = ("path", "device", "total_kernel_us", "other_us", "launches", "label", "wall_s")
    return {k: result.get(k) for k in keep}


def _summary(result: dict[str, Any]) -> LightRunSummary:
    files = result.get("files") or {}
    return {
        "wall_s": float(result.get("wall_s") or 0.0),
        "total_kernel_us": float(result.get("total_kernel_us") or 0.0),
        "other_us": float(result.get("other_us") or 0.0),
        "launches": int(result.get("launches") or 0),
        "lines": sum(len(rows) for rows in files.values()),
        "files": sum(1 for rows in files.values() if rows),
    }


def _check(result: Any) -> dict[str, Any]:
    """The result as the lenses read it.

    Raises:
        TypeError, ValueError, KeyError: a result the server cannot show.
    """
    if not isinstance(result, dict) or result.get("mode") != "light":
        raise TypeError("not a light profile result")
    for rows in (result.get("files") or {}).values():
        for row in rows:
            int(row["line"])
            float(row["kernel_us"])
            str(row["source"])
    return result


def _failed(
    ls: KernelLensServer, uri: str, lines: list[str], err: ProfileError, name: str
) -> ProfileCommandResult:
    """A failed (or cancelled) light run: its record (the first line's lens says why), in the
    log; a failure of the script itself also in Problems, on its line."""
    state = "cancelled" if err.kind == "cancelled" else "error"
    error = err.to_json()
    if err.kind == "unsupported" and "no CUDA GPU" in err.message:
        error["message"] = f"{err.message}. {NO_GPU_HINT}"
        # not a failure of the code or the tool: said where it was asked, the status stays calm
        status(ls, "idle", f"{name}: the light profile needs a CUDA GPU", uri)
    ls.documents.put(uri, Record(LIGHT_NAME, state, lines, 1, error=error))
    if state == "error" and err.kind not in ("unsupported", "timeout", "internal"):
        set_diagnostic(ls, uri, _key(), _error_diagnostic(err, lines, 1))
    else:
        set_diagnostic(ls, uri, _key(), None)
    level = types.MessageType.Info if state == "cancelled" else types.MessageType.Warning
    ls.log(f"{name} (light): {err.kind}: {error['message']}", level)
    if err.traceback:
        ls.log(err.traceback.rstrip())
    return {"ok": False, "function": LIGHT_NAME, "error": error}


async def profile_light(
    ls: KernelLensServer, uri: str, argv: list[str] | None = None
) -> ProfileCommandResult:
    """Run the document ``uri`` once under Proton (the light profile) with the script's
    arguments (``argv``: set them for every run of it first) and store the outcome."""
    opened = _trusted_source(ls, uri)
    if isinstance(opened, dict):
        return opened
    source, path = opened
    lines = source.splitlines()
    name = path.rsplit("/", 1)[-1]
    folders = workspace_folders(ls)
    if argv is not None:
        failed = quietly(RunChoices.for_path(path, folders).set_script_args, path, argv)
        if failed is not None:
            ls.log(f"the arguments of {path} were not kept ({failed})", types.MessageType.Warning)
    script_argv = list(argv) if argv is not None else script_arguments(path, folders)[0]
    root = ls.settings.workspace_root
    workspace = [root] if root and path.startswith(root.rstrip("/") + "/") else []
    ls.documents.put(uri, Record(LIGHT_NAME, "running", lines, 1))
    refresh_lenses(ls)
    ls.log(f"light profile of {path} (one run as __main__ under Triton's Proton)")
    request = LightRequest(
        path=path,
        text=source,
        argv=script_argv,
        workspace=workspace,
        timeout=float(ls.settings.timeout_seconds),
    )
    outcome: ProfileCommandResult
    try:
        result = _check(
            await run_job(
                ls,
                uri=uri,
                qualname=LIGHT_NAME,
                title=f"Running {name} under the light profile",
                request=request,
            )
        )
    except ProfileError as err:
        outcome = _failed(ls, uri, lines, err, name)
    except Exception as exc:  # a result the server cannot use: the job failed all the same
        unusable = ProfileError("internal", f"unusable light profile result: {exc!r}")
        outcome = _failed(ls, uri, lines, unusable, name)
    else:
        # One whole-run result per script on its lines: the deep run's goes.
        state = ls.documents(uri)
        state.records.pop(SCRIPT_NAME, None)
        set_diagnostic(ls, uri, ("profile", SCRIPT_NAME), None)
        ls.documents.put(uri, Record(LIGHT_NAME, "ok", lines, 1, result=result))
        set_diagnostic(ls, uri, _key(), None)
        _keep_light_lines(ls, path, result)
        summary = _summary(result)
        text = (
            f"{name}: light profile, {summary['wall_s']:.3f} s wall, "
            f"{summary['total_kernel_us'] / 1e3:.3f} ms of kernels on {summary['lines']} lines "
            f"({summary['other_us'] / 1e3:.3f} ms on none: backward, library threads) on "
            f"{result.get('device')}; Proton's profile {result.get('profile_path')} "
            f"({result.get('stored_bytes')} bytes)"
        )
        ls.log(text, types.MessageType.Info)
        status(ls, "idle", text, uri)
        outcome = {"ok": True, "function": LIGHT_NAME, "light": summary}
    refresh_lenses(ls)
    ls.protocol.notify(NOTIFY_RESULTS_CHANGED, ResultsChangedParams(uri=uri, function=LIGHT_NAME))
    return outcome


class LightProfile(LanguageFeature):
    """The owner of ``kernelLens.profileLight``."""

    name = "light"
    commands = {CMD_PROFILE_LIGHT: ProfileLightArgs}

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    async def execute_command(self, command: str, args: Any) -> Any:
        del command
        return await profile_light(self.ls, args.uri, args.argv)


def setup(ls: KernelLensServer) -> None:
    """Own the light profile's command."""
    ls.dispatcher.add(LightProfile(ls))
