"""Quick fixes for an ``inputs`` error that carries a suggested directive (the script never called
the function, or exited or raised first; the diagnostic's ``data``): insert the directive above
the function, as the first line of the comment block the directive is read from; or take the
inputs from a driver — a workspace script that imports the module (found statically, the import
chain in the title) or a Python launch configuration of ``.vscode/launch.json`` (its program,
args, cwd, env and envFile) — which profiles the function from that driver's run (remembered
per function)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.drivers import find_drivers, launch_configs
from kernel_lens.analysis.error_actions import error_actions
from kernel_lens.analysis.functions import NotInFunctionError, SourceSyntaxError, function_at
from kernel_lens.analysis.inputs_directive import directive_from_inputs
from kernel_lens.lsp.common import uri_to_path
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import (
    CMD_CHOOSE_DRIVER,
    CMD_PROFILE,
    CMD_SCRIPT_ARGUMENTS,
    CMD_SET_DRIVER,
)

__all__ = [
    "MAX_DRIVERS",
    "QuickFixes",
    "driver_quick_fixes",
    "inputs_quick_fixes",
    "run_choice_fixes",
    "setup",
]

#: Driver quick fixes offered at most (scripts and launch configurations together).
MAX_DRIVERS = 6

TITLE = "Add an inputs directive above the def"
TITLE_EARLIER = "Add an inputs directive above the def (shapes of the last run's inputs)"


def inputs_quick_fixes(
    uri: str,
    source: str,
    diagnostics: list[types.Diagnostic],
    earlier: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[types.CodeAction]:
    """One action per Kernel Lens ``inputs`` diagnostic that suggests a directive.

    ``earlier``: the inputs of each function's last good run; when the function has some that
    can be rebuilt, the directive makes values of their shapes, dtypes and devices instead of
    the placeholder built from the parameter names.
    """
    actions: list[types.CodeAction] = []
    lines = source.splitlines()
    for diag in diagnostics:
        if diag.source != "Kernel Lens":
            continue
        directive = _suggested_directive(diag)
        if directive is None:
            continue
        try:
            info = function_at(source, diag.range.start.line)
        except (SourceSyntaxError, NotInFunctionError):
            continue
        if info.inputs_expr is not None:
            continue  # a directive is there already (the diagnostic is stale)
        title = TITLE
        rebuilt = directive_from_inputs((earlier or {}).get(info.qualname))
        if rebuilt is not None:
            directive, title = rebuilt, TITLE_EARLIER
        def_text = lines[info.def_line - 1] if info.def_line <= len(lines) else ""
        indent = def_text[: len(def_text) - len(def_text.lstrip())]
        at = types.Position(line=info.first_line - 1, character=0)
        edit = types.TextEdit(
            range=types.Range(start=at, end=at), new_text=f"{indent}{directive}\n"
        )
        actions.append(
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                is_preferred=True,
                edit=types.WorkspaceEdit(changes={uri: [edit]}),
            )
        )
    return actions


def driver_quick_fixes(
    uri: str,
    source: str,
    diagnostics: list[types.Diagnostic],
    root: str | None,
    script_args: Callable[[str], list[str]] = lambda _path: [],
) -> list[types.CodeAction]:
    """For each ``inputs`` diagnostic that suggests a directive: profile the function from a
    driver instead — the launch configurations whose program imports the module first, then
    the other scripts that import it (``script_args``: the arguments each runs with), then the
    other Python launch configurations."""
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return []
    actions: list[types.CodeAction] = []
    found: tuple[list[Any], list[Any]] | None = None
    for diag in diagnostics:
        if diag.source != "Kernel Lens" or _suggested_directive(diag) is None:
            continue
        try:
            info = function_at(source, diag.range.start.line)
        except (SourceSyntaxError, NotInFunctionError):
            continue
        if found is None:
            folder = root if root and path.startswith(root.rstrip("/") + "/") else None
            folder = folder or os.path.dirname(path)
            found = (find_drivers(folder, path), launch_configs(folder))
        drivers, configs = found
        by_path = {d.path: d for d in drivers}
        offered: list[tuple[str, dict[str, Any]]] = []
        base: dict[str, Any] = {"uri": uri, "function": info.qualname}
        matching = [c for c in configs if c.program in by_path]
        for config in matching:
            chain = by_path[config.program].label
            shown = " ".join(config.args)
            title = f"Take the inputs from launch configuration “{config.name}” ({chain}"
            title += f", {shown})" if shown else ")"
            offered.append((title, {**base, "driver": config.program, "argv": config.args,
                                    "cwd": config.cwd, "env": config.env,
                                    "driver_config": config.name}))  # fmt: skip
        used = {c.program for c in matching}
        for driver in drivers:
            if driver.path in used:
                continue
            # the script runs with its own arguments, as set for it (shown)
            words = " ".join([os.path.basename(driver.path), *script_args(driver.path)])
            title = f"Take the inputs from {words} ({driver.label})"
            offered.append((title, {**base, "driver": driver.path}))
        for config in configs:
            if config in matching or config.program == path:
                continue
            title = f"Take the inputs from launch configuration “{config.name}”"
            offered.append((title, {**base, "driver": config.program, "argv": config.args,
                                    "cwd": config.cwd, "env": config.env,
                                    "driver_config": config.name}))  # fmt: skip
        for title, command_args in offered[:MAX_DRIVERS]:
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    command=types.Command(
                        title=title, command=CMD_PROFILE, arguments=[command_args]
                    ),
                )
            )
    return actions


def run_choice_fixes(
    uri: str,
    source: str,
    diagnostics: list[types.Diagnostic],
    errors: Mapping[str, Mapping[str, Any]],
) -> list[types.CodeAction]:
    """For a Kernel Lens diagnostic of any failed profile (``errors``: each function's stored
    failure, by qualified name): give the script that failed on its arguments or on a device
    the arguments it needs (prefilled with the CPU ones), and pick, change or clear the
    function's driver — the failure dialog's actions, as quick fixes."""
    actions: list[types.CodeAction] = []
    seen: set[str] = set()
    for diag in diagnostics:
        if diag.source != "Kernel Lens":
            continue
        try:
            info = function_at(source, diag.range.start.line)
        except (SourceSyntaxError, NotInFunctionError):
            continue
        error = errors.get(info.qualname)
        if error is None or info.qualname in seen:
            continue
        seen.add(info.qualname)
        for action in error_actions(error, uri=uri):
            if action["command"] not in (CMD_SCRIPT_ARGUMENTS, CMD_CHOOSE_DRIVER):
                continue
            actions.append(
                types.CodeAction(
                    title=action["label"].rstrip("…"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=action["command"] == CMD_SCRIPT_ARGUMENTS,
                    command=types.Command(
                        title=action["label"],
                        command=action["command"],
                        arguments=action["arguments"],
                    ),
                )
            )
        choice = error.get("driver_choice")
        if isinstance(choice, Mapping) and choice.get("shown"):
            title = f"Clear the Driver ({choice['shown']}): its own inputs"
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    command=types.Command(
                        title=title,
                        command=CMD_SET_DRIVER,
                        arguments=[{"uri": uri, "function": info.qualname, "kind": "none"}],
                    ),
                )
            )
    return actions


def _suggested_directive(diag: types.Diagnostic) -> str | None:
    """The directive an ``inputs`` diagnostic suggests (``data``: ``wire.lsp.DiagnosticData``)."""
    data = diag.data
    directive = data.get("suggested_directive") if isinstance(data, dict) else None
    return directive if isinstance(directive, str) else None


class QuickFixes(LanguageFeature):
    """``textDocument/codeAction``: the inputs directive for an ``inputs`` diagnostic."""

    name = "quick_fix"
    #: Fixes of an error go before the timing lint's suggestions.
    order = 0

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        ls = self.ls
        uri = params.text_document.uri
        if uri not in ls.workspace.text_documents:
            return []
        source = ls.workspace.get_text_document(uri).source
        state = ls.documents.peek(uri)
        earlier = state.inputs if state is not None else None
        diagnostics = list(params.context.diagnostics)
        if state is not None and not any(d.source == "Kernel Lens" for d in diagnostics):
            # A client may ask before it attached what we just published (VS Code's first
            # Ctrl+. after a failure answered "No code actions available", the next one had
            # them): ours on the asked lines stand in.
            first, last = params.range.start.line, params.range.end.line
            diagnostics += [
                d
                for group in state.diagnostics.values()
                for d in group
                if d.range.start.line <= last and d.range.end.line >= first
            ]
        fixes = inputs_quick_fixes(uri, source, diagnostics, earlier)
        if ls.settings.workspace_trusted:
            from kernel_lens.lsp.run_choices import script_argv

            errors = {
                r.qualname: r.error
                for r in ls.documents.records(uri)
                if r.state == "error" and r.error is not None
            }
            # the drivers found first (one click runs), then the picker and the argument fixes
            fixes += driver_quick_fixes(
                uri,
                source,
                diagnostics,
                ls.settings.workspace_root,
                lambda path: script_argv(ls, path)[0],
            )
            fixes += run_choice_fixes(uri, source, diagnostics, errors)
        return fixes


def setup(ls: KernelLensServer) -> None:
    """Take part in ``textDocument/codeAction``."""
    ls.dispatcher.add(QuickFixes(ls))
