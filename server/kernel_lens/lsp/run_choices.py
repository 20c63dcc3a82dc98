"""A script's arguments and a function's driver, chosen once and kept per workspace
(:mod:`kernel_lens.run_choices`): the commands the ``args:`` lens, the driver lens, the quick
fixes, the failure dialog and the palette end in.

``kernelLens.setScriptArguments`` / ``kernelLens.scriptArgumentsOf`` (a script's ``sys.argv[1:]``
for every run of it: as itself, in a Window, as a driver, from the CLI) and
``kernelLens.driverChoices`` / ``kernelLens.setDriver`` (pick, change or clear the driver a
function takes its inputs from). A failed run's error is given the fields its actions need
(:func:`annotate_error`): the arguments of the script that failed on its arguments or on a
device it was not given, and the driver that ran.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from kernel_lens import run_choices
from kernel_lens.analysis.drivers import find_drivers, launch_configs
from kernel_lens.analysis.regular_files import read_regular
from kernel_lens.analysis.script_args import argv_reader, cpu_arguments, reader_form
from kernel_lens.lsp.common import (
    document_source,
    refresh_lenses,
    resolve_target,
    uri_to_path,
    workspace_folders,
)
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import (
    CMD_CHOOSE_DRIVER,
    CMD_DRIVER_CHOICES,
    CMD_SCRIPT_ARGUMENTS,
    CMD_SCRIPT_ARGUMENTS_OF,
    CMD_SET_DRIVER,
    CMD_SET_SCRIPT_ARGUMENTS,
    CommandResult,
    DriverCandidate,
    DriverChoices,
    DriverQuery,
    ScriptArgumentsInfo,
    ScriptArgumentsQuery,
    SetDriverArgs,
    SetScriptArgumentsArgs,
)

__all__ = [
    "annotate_error",
    "driver_labels",
    "driver_lens",
    "driver_shown",
    "placed_driver_lenses",
    "script_args_lens",
    "script_argv",
    "setup",
]

#: A script's text read for its reader, at most.
_MAX_SCRIPT = 4 << 20
_NEEDS_DEVICE = (
    "Torch not compiled with CUDA",
    "needs an NVIDIA GPU",
    "Found no NVIDIA driver",
    "No CUDA GPUs are available",
    "CUDA is not available",
    "no CUDA",
)


def _roots(ls: KernelLensServer) -> list[str]:
    return workspace_folders(ls)


def script_argv(ls: KernelLensServer, path: str) -> tuple[list[str], str | None]:
    """The arguments of every run of the script ``path`` and where they come from (see
    :func:`kernel_lens.run_choices.script_arguments`)."""
    return run_choices.script_arguments(path, _roots(ls))


def driver_shown(ls: KernelLensServer, path: str, function: str) -> str | None:
    """The chosen driver of a function as shown (``bench_synth.py --device=cpu``), if any."""
    roots = _roots(ls)
    fields = run_choices.driver_fields(path, function, roots)
    if not fields:
        return None
    choice = run_choices.RunChoices.for_path(path, roots).driver(path, function)
    return run_choices.driver_label(fields, choice)


def _script_text(ls: KernelLensServer, path: str) -> str:
    """The script's text: the editor's buffer when it is open, else the file."""
    for doc in list(ls.workspace.text_documents.values()):
        try:
            if uri_to_path(doc.uri) == path:
                return str(doc.source)
        except ProfileError:
            continue
    try:
        return read_regular(path, _MAX_SCRIPT).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def _uri(path: str) -> str:
    from pathlib import Path

    return Path(path).as_uri()


def annotate_error(
    ls: KernelLensServer,
    error: Any,
    *,
    uri: str,
    function: str | None,
    script: str | None,
    driver: dict[str, Any] | None = None,
) -> None:
    """Add to a failed run's ``error`` what its actions need: ``arguments`` (the script to give
    arguments to — the driver, else the file — its current ones and, after a failure on a
    device it was not given, the CPU ones) when the script exited on its arguments or needs a
    device; ``driver_choice`` (the function, and the driver as shown) on a function's failure,
    so the dialog and Ctrl+. offer to change it."""
    message = str(error.get("message", ""))
    ran = str(driver["driver"]) if driver and driver.get("driver") else script
    if function is not None:
        shown = None
        if driver and driver.get("driver"):
            shown = run_choices.driver_label(driver)
        error["driver_choice"] = {"uri": uri, "function": function, "shown": shown}
    if not ran:
        return
    on_arguments = "needs command-line arguments" in message
    on_device = any(m in message for m in _NEEDS_DEVICE)
    if not (on_arguments or on_device):
        return
    text = _script_text(ls, ran)
    reader = argv_reader(text)
    if reader is None and not on_arguments:
        return
    argv = list(driver.get("argv") or []) if driver else script_argv(ls, ran)[0]
    cpu = cpu_arguments(text, argv) if on_device else None
    if on_device and cpu is None:
        return  # nothing to give: the GPU machine is the way (the dialog's own action)
    then = {"uri": uri, "function": function} if function is not None and driver else None
    error["arguments"] = {
        "uri": _uri(ran),
        "name": os.path.basename(ran),
        "argv": argv,
        "suggested": cpu,
        "then": then,
        "launch": bool(driver and driver.get("config")),
    }


def _set_script_arguments(ls: KernelLensServer, args: SetScriptArgumentsArgs) -> CommandResult:
    try:
        path = uri_to_path(args.uri)
    except ProfileError as err:
        return {"ok": False, "message": err.message}
    argv = None if args.argv is None else [str(a) for a in args.argv]
    store = run_choices.RunChoices.for_path(path, _roots(ls))
    failed = run_choices.quietly(store.set_script_args, path, argv)
    if failed is not None:
        message = f"Kernel Lens: the arguments of {os.path.basename(path)} were not kept ({failed})"
        ls.log(message)
        return {"ok": False, "message": message}
    shown = "none" if argv is None else " ".join(argv) or "(no arguments)"
    ls.log(f"arguments of {path}: {shown}")
    refresh_lenses(ls)
    return {"ok": True}


def _script_arguments_of(ls: KernelLensServer, args: ScriptArgumentsQuery) -> ScriptArgumentsInfo:
    try:
        path = uri_to_path(args.uri)
    except ProfileError:
        return {"ok": False, "argv": [], "source": None, "reader": None, "form": "", "cpu": None}
    argv, source = script_argv(ls, path)
    text = _script_text(ls, path)
    reader = argv_reader(text)
    return {
        "ok": True,
        "argv": argv,
        "source": source,
        "reader": reader,
        "form": reader_form(reader),
        "cpu": cpu_arguments(text, argv),
    }


def _function(ls: KernelLensServer, args: DriverQuery) -> str:
    source = document_source(ls, args.uri)
    return resolve_target(source, name=args.function, position=args.position)


def _driver_choices(ls: KernelLensServer, args: DriverQuery) -> DriverChoices:
    try:
        path = uri_to_path(args.uri)
        function = _function(ls, args)
    except ProfileError as err:
        return {
            "ok": False,
            "function": "",
            "current": None,
            "candidates": [],
            "message": err.message,
        }
    except Exception as exc:  # RequestFailed: no function there
        return {"ok": False, "function": "", "current": None, "candidates": [], "message": str(exc)}
    roots = _roots(ls)
    root = next((r for r in roots if path.startswith(r.rstrip("/") + "/")), None)
    folder = root or os.path.dirname(path)
    current = driver_shown(ls, path, function)
    choice = run_choices.RunChoices.for_path(path, roots).driver(path, function)
    candidates: list[DriverCandidate] = []
    for config in launch_configs(folder):
        if config.program == path:
            continue
        words = " ".join([os.path.basename(config.program), *config.args])
        candidates.append(
            {
                "label": f"launch configuration “{config.name}”",
                "detail": words,
                "kind": "launch",
                "driver": config.program,
                "config": config.name,
            }
        )
    for found in find_drivers(folder, path):
        argv, source = script_argv(ls, found.path)
        name = os.path.basename(found.path)
        detail = found.label
        if source and source != "set":
            detail += f" · arguments of {source}"
        candidates.append(
            {
                "label": " ".join([name, *argv]),
                "detail": detail,
                "kind": "script",
                "driver": found.path,
                "config": None,
            }
        )
    own: DriverCandidate = {
        "label": "Its own inputs",
        "detail": "the inputs directive, a <name>_inputs() factory or the file's own run",
        "kind": "none",
        "driver": None,
        "config": None,
    }
    if choice is not None:
        # the chosen one first, then the way back to the function's own inputs
        chosen = [
            c
            for c in candidates
            if c["driver"] == choice.driver and (c["config"] or None) == (choice.config or None)
        ]
        rest = [c for c in candidates if c not in chosen]
        candidates = [*chosen, own, *rest]
    else:
        candidates.append(own)
    return {"ok": True, "function": function, "current": current, "candidates": candidates}


def _set_driver(ls: KernelLensServer, args: SetDriverArgs) -> CommandResult:
    try:
        path = uri_to_path(args.uri)
    except ProfileError as err:
        return {"ok": False, "message": err.message}
    roots = _roots(ls)
    choice: run_choices.DriverChoice | None = None
    if args.kind in ("script", "launch") and args.driver:
        driver = os.path.abspath(args.driver)
        if args.kind == "launch":
            root = next((r for r in roots if path.startswith(r.rstrip("/") + "/")), None)
            found = [
                c
                for c in launch_configs(root or os.path.dirname(path))
                if c.name == args.config and c.program == driver
            ]
            if not found:
                return {"ok": False, "message": f"no launch configuration “{args.config}”"}
            config = found[0]
            choice = run_choices.DriverChoice(
                "launch",
                driver,
                tuple(config.args),
                config.name,
                config.cwd,
                tuple(sorted(config.env.items())),
            )
        else:
            choice = run_choices.DriverChoice("script", driver)
    store = run_choices.RunChoices.for_path(path, roots)
    failed = run_choices.quietly(store.set_driver, path, args.function, choice)
    if failed is not None:
        return {"ok": False, "message": f"Kernel Lens: the driver was not kept ({failed})"}
    state = ls.documents.peek(args.uri)
    if state is not None:
        state.drivers.pop(args.function, None)
    shown = driver_shown(ls, path, args.function) if choice is not None else "its own inputs"
    ls.log(f"inputs of {args.function} ({path}): {shown}")
    refresh_lenses(ls)
    return {"ok": True, "function": args.function}


class RunChoicesFeature(LanguageFeature):
    """The owner of the arguments and driver commands."""

    name = "run_choices"
    commands = {
        CMD_SET_SCRIPT_ARGUMENTS: SetScriptArgumentsArgs,
        CMD_SCRIPT_ARGUMENTS_OF: ScriptArgumentsQuery,
        CMD_DRIVER_CHOICES: DriverQuery,
        CMD_SET_DRIVER: SetDriverArgs,
    }

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    async def execute_command(self, command: str, args: Any) -> Any:
        import asyncio

        # Reading the workspace's scripts and launch.json goes off the event loop; a choice is
        # one small write, made here so its log and lens refresh stay on the loop.
        if command == CMD_SET_SCRIPT_ARGUMENTS:
            return _set_script_arguments(self.ls, args)
        if command == CMD_SCRIPT_ARGUMENTS_OF:
            return await asyncio.to_thread(_script_arguments_of, self.ls, args)
        if command == CMD_DRIVER_CHOICES:
            return await asyncio.to_thread(_driver_choices, self.ls, args)
        return _set_driver(self.ls, args)


def setup(ls: KernelLensServer) -> None:
    """Own the arguments and driver commands."""
    ls.dispatcher.add(RunChoicesFeature(ls))


#: The most of a driver or of a script's arguments a lens shows (the hover has all of it).
LENS_CHARS = 40


def _clip(text: str) -> str:
    return text if len(text) <= LENS_CHARS else text[: LENS_CHARS - 1] + "…"


def _at(line0: int) -> types.Range:
    return types.Range(
        start=types.Position(line=line0, character=0), end=types.Position(line=line0, character=0)
    )


def driver_labels(ls: KernelLensServer, uri: str) -> dict[str, str]:
    """Each function of ``uri`` that has a driver -> the driver as shown (one read of the
    store per lens answer)."""
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return {}
    roots = _roots(ls)
    chosen = run_choices.RunChoices.for_path(path, roots).drivers_of(path)
    out: dict[str, str] = {}
    for function, choice in chosen.items():
        fields = run_choices.driver_fields(path, function, roots)
        if fields:
            out[function] = run_choices.driver_label(fields, choice)
    return out


def driver_lens(uri: str, function: str, line0: int, shown: str | None) -> list[types.CodeLens]:
    """``→ inputs from bench_synth.py --device=cpu`` on a function with a driver; its click
    changes or clears it."""
    if not shown:
        return []
    return [
        types.CodeLens(
            range=_at(line0),
            command=types.Command(
                title=f"$(arrow-right) inputs from {_clip(shown)}",
                command=CMD_CHOOSE_DRIVER,
                arguments=[{"uri": uri, "function": function}],
                tooltip=f"Inputs from a run of {shown}: click to change or clear the driver",
            ),
        )
    ]


def placed_driver_lenses(
    row: list[types.CodeLens], driver: list[types.CodeLens], *, failed: bool
) -> list[types.CodeLens]:
    """A function's lenses with its driver lens: first on a failed row (the driver is what to
    change, and the clipped error would push it off the right edge), else right after the
    summary — what the run was, before what to do next — so it stays on screen at 1280 px."""
    if failed or not row:
        return [*driver, *row]
    return [row[0], *driver, *row[1:]]


def script_args_lens(
    ls: KernelLensServer, uri: str, failed: Mapping[str, Any] | None
) -> list[types.CodeLens]:
    """The script's ``args:`` lens: its arguments once given (in the editor, the CLI or a
    launch configuration), *Arguments…* after it exited on its arguments or failed on a device
    it was not given (prefilled with the CPU ones); nothing otherwise."""
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return []
    argv, source = script_argv(ls, path)
    wanted = failed.get("arguments") if failed is not None else None
    on_arguments = failed is not None and "needs command-line arguments" in str(
        failed.get("message")
    )
    if not argv and source is None and not wanted and not on_arguments:
        return []
    suggested = wanted.get("suggested") if isinstance(wanted, Mapping) else None
    shown = " ".join(argv)
    if suggested:
        title = "$(terminal) Arguments… (CPU)"
    elif argv:
        title = f"$(terminal) args: {_clip(shown)}"
    else:
        title = "$(terminal) Arguments…"
    where = f" (from {source})" if source and source != "set" else ""
    return [
        types.CodeLens(
            range=_at(0),
            command=types.Command(
                title=title,
                command=CMD_SCRIPT_ARGUMENTS,
                arguments=[{"uri": uri, "argv": argv, "suggested": suggested}],
                tooltip=f"sys.argv[1:] of every run of this script{where}: {shown or 'none'}",
            ),
        )
    ]
