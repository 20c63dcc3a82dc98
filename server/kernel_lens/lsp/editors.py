"""Every LSP editor, not only VS Code: Neovim, Helix, Emacs (eglot, lsp-mode), Zed.

The Kernel Lens extension says it is VS Code (``initializationOptions.client``); every other
client gets, from this feature:

- **plain lenses and hovers**: no ``$(icon)`` markup, no ``command:`` link, and only commands
  the server executes itself (its ``executeCommandProvider``). The extension's own commands are
  replaced by the server's: the Report panel by :data:`CMD_OPEN_REPORT` (the CLI's per-line
  table), Generated Code and Show Assembly by :data:`CMD_OPEN_GENERATED_CODE` and
  :data:`CMD_OPEN_ASSEMBLY`; the rest (More…, the error details, the trust button) lose their
  command and keep their text — their actions are code actions;
- **code actions on a function** (Helix and eglot show no lenses): Profile, Profile with
  Backward, Profile Memory, Re-profile, and the row's other actions;
- **inlay hints** at the end of each profiled line: its kernels or ops, their time, its share;
- **documents it opens** with ``window/showDocument``: a text report, torch.compile's code, a
  kernel's assembly, each written as a read-only file under the cache
  (``$KERNEL_LENS_CACHE/views/``). A file, not a virtual document: every editor opens a
  ``file:`` URI the same way (a ``kernel-lens:`` URI would be an empty buffer in Neovim, Helix
  and Emacs, which have no way to ask the server for its text), it stays readable after the
  server exits, and its read-only mode makes the editor say it is not the source.

Nothing changes for VS Code: its answers pass through untouched, and it gets no code actions
or inlay hints from here. Nothing runs in an untrusted workspace: no action is offered there,
and the commands refuse (``require_trusted``) as the lenses' do.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from lsprotocol import types

from kernel_lens.analysis.lens_targets import LensTarget
from kernel_lens.analysis.plain_text import inlay_labels, plain_markdown, plain_title
from kernel_lens.analysis.report_text import format_profile
from kernel_lens.analysis.safe_text import terminal_safe
from kernel_lens.analysis.scripts import SCRIPT_NAME
from kernel_lens.lsp import generated
from kernel_lens.lsp.code_lens import TRUST_COMMAND, more_actions
from kernel_lens.lsp.common import is_trusted
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.results import place
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import (
    CMD_MORE_ACTIONS,
    CMD_OPEN_ASSEMBLY,
    CMD_OPEN_GENERATED_CODE,
    CMD_OPEN_REPORT,
    CMD_PROFILE,
    CMD_PROFILE_LIGHT,
    CMD_PROFILE_SCRIPT_LIGHT,
    CMD_SHOW_ASSEMBLY,
    CMD_SHOW_GENERATED_CODE,
    CMD_SHOW_REPORT,
    AssemblyParams,
    GeneratedCodeParams,
    OpenAssemblyArgs,
    OpenDocumentResult,
    OpenFunctionArgs,
)
from kernel_lens.wire.paths import atomic_write, cache_root

__all__ = [
    "UNTRUSTED_TITLE",
    "Editors",
    "function_actions",
    "inlay_hints",
    "plain_lenses",
    "setup",
    "views_folder",
]

#: The extension's commands that the server has its own way of doing, for other clients.
_REPLACED = {
    CMD_SHOW_REPORT: CMD_OPEN_REPORT,
    CMD_SHOW_GENERATED_CODE: CMD_OPEN_GENERATED_CODE,
    CMD_SHOW_ASSEMBLY: CMD_OPEN_ASSEMBLY,
    CMD_PROFILE_SCRIPT_LIGHT: CMD_PROFILE_LIGHT,
}
#: The trust lens's text for a client without VS Code's trust dialog.
UNTRUSTED_TITLE = (
    "Kernel Lens: workspace not trusted, nothing runs (initializationOptions.workspaceTrusted "
    "or kernelLens/setTrusted)"
)
#: What a code action's title starts with (a client lists every server's actions together).
PREFIX = "Kernel Lens: "


def plain_lenses(lenses: Sequence[types.CodeLens], executable: set[str]) -> list[types.CodeLens]:
    """``lenses`` for an editor other than VS Code: plain titles; a command kept only when the
    server executes it (``executable``), the extension's Report, Generated Code and Show Assembly
    replaced by the server's; the ``More…`` lens left out (its actions are code actions)."""
    out: list[types.CodeLens] = []
    for lens in lenses:
        command = lens.command
        if command is None:
            out.append(lens)
            continue
        if command.command == CMD_MORE_ACTIONS:
            continue
        title = UNTRUSTED_TITLE if command.command == TRUST_COMMAND else plain_title(command.title)
        name = _REPLACED.get(command.command, command.command)
        runs = bool(name) and name in executable
        out.append(
            types.CodeLens(
                range=lens.range,
                command=types.Command(
                    title=title,
                    command=name if runs else "",
                    arguments=command.arguments if runs else None,
                    tooltip=plain_title(command.tooltip) if command.tooltip else None,
                ),
                data=lens.data,
            )
        )
    return out


def _action(
    title: str, command: str, args: dict[str, Any], *, disabled: str | None = None
) -> types.CodeAction:
    return types.CodeAction(
        title=PREFIX + title,
        command=None
        if disabled
        else types.Command(title=PREFIX + title, command=command, arguments=[args]),
        disabled=types.CodeActionDisabled(reason=disabled) if disabled else None,
    )


def function_actions(
    uri: str,
    target: LensTarget,
    record: Any,
    executable: set[str],
    *,
    disabled_support: bool = False,
) -> list[types.CodeAction]:
    """A function's actions as code actions: *Profile* (*Re-profile* after a run), *Profile
    with Backward*, *Profile Memory*, then its row's other actions (the lens row's and its
    ``More…`` pick's: Report, Generated Code, Sweep, Nsight Compute, Eager vs Compiled), each
    with a command the server executes. An action that cannot work here is listed disabled
    with why (where the client shows those), else left out."""
    info = target.info
    name = info.qualname
    args = {"uri": uri, "function": name}
    if target.role == "kernel":
        return [_action(f"Show Assembly of {name} (PTX)", CMD_OPEN_ASSEMBLY,
                        {"uri": uri, "kernel": name})]  # fmt: skip
    ok = record is not None and record.state == "ok"
    actions = [
        _action(f"Re-profile {name}" if ok else f"Profile {name}", CMD_PROFILE, args),
        _action(f"Profile {name} with Backward", CMD_PROFILE, {**args, "backward": True}),
        _action(f"Profile Memory of {name}", CMD_PROFILE, {**args, "memory": True}),
    ]
    seen = {"Profile Memory"}
    # Nsight Compute after a run on the CPU: listed with why, as the lens row's ``…`` does.
    ncu_ok = (record.result or {}).get("device_kind") == "cuda" if ok else None
    for item in more_actions(uri, target, record, ncu_ok=ncu_ok):
        label = plain_title(str(item["label"]))
        if label in seen:
            continue
        seen.add(label)
        title = f"{label} ({name})" if label != "Report" else f"Report of {name} (text)"
        if "disabled" in item:
            if disabled_support:
                actions.append(_action(title, "", {}, disabled=str(item["disabled"])))
            continue
        command = _REPLACED.get(str(item["command"]), str(item["command"]))
        if command not in executable:
            continue
        actions.append(_action(title, command, dict(item["arguments"][0])))
    return actions


async def inlay_hints(
    ls: KernelLensServer, uri: str, range_: types.Range | None = None
) -> list[types.InlayHint]:
    """The document's profiled lines as inlay hints at their ends (within ``range_``)."""
    if uri not in ls.workspace.text_documents:
        return []
    doc = ls.workspace.get_text_document(uri)
    source = doc.source
    model = await ls.models.get(ls, uri, source)
    lines = source.splitlines()
    codec = doc.position_codec  # the line's end in the negotiated units (UTF-16, Helix's UTF-8)
    hints: list[types.InlayHint] = []
    for record in ls.documents.records(uri):
        if record.result is None or record.state not in ("ok", "running"):
            continue
        placed = place(record, source, None if record.qualname == SCRIPT_NAME else model)
        if placed is None or placed.outdated:
            continue
        try:
            labels = inlay_labels(record.result)
        except (KeyError, TypeError, ValueError):  # a running result not yet whole
            continue
        for measured, label in labels.items():
            line0 = placed.current_line(measured) - 1
            if not 0 <= line0 < len(lines):
                continue
            if range_ is not None and not range_.start.line <= line0 <= range_.end.line:
                continue
            hints.append(
                types.InlayHint(
                    position=types.Position(line0, codec.client_num_units(lines[line0])),
                    label=label,
                    padding_left=True,
                )
            )
    return hints


def views_folder(uri: str) -> str:
    """The folder of the documents opened about ``uri`` (one per source file, private)."""
    digest = hashlib.sha256(uri.encode("utf-8")).hexdigest()[:16]
    folder = os.path.join(cache_root(), "views", digest)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def _file_name(name: str, suffix: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:120] or "_"
    return f"{safe}{suffix}"


def write_view(uri: str, name: str, text: str) -> str:
    """Write ``text`` as the read-only file ``name`` of ``uri``'s views; its path."""
    path = os.path.join(views_folder(uri), name)
    atomic_write(path, text)  # a rename: replaces an older read-only copy
    os.chmod(path, 0o444)
    return path


class Editors(LanguageFeature):
    """What editors other than VS Code get (see the module's docstring)."""

    name = "editors"
    #: After the quick fixes and the timing lint: a fix of an error comes first.
    order = 50
    commands = {
        CMD_OPEN_REPORT: OpenFunctionArgs,
        CMD_OPEN_GENERATED_CODE: OpenFunctionArgs,
        CMD_OPEN_ASSEMBLY: OpenAssemblyArgs,
    }

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    def _plain(self) -> bool:
        return not self.ls.settings.vscode_client

    def executable(self) -> set[str]:
        """The commands the server executes (its ``executeCommandProvider``)."""
        provider = self.ls.server_capabilities.execute_command_provider
        return set(provider.commands) if provider is not None else set()

    def adapting(self, method: str) -> bool:
        return self._plain()

    def adapt_code_lens(self, lenses: list[types.CodeLens]) -> list[types.CodeLens]:
        return plain_lenses(lenses, self.executable())

    def adapt_hover(self, hover: types.Hover) -> types.Hover:
        contents = hover.contents
        if isinstance(contents, types.MarkupContent):
            contents = types.MarkupContent(kind=contents.kind, value=plain_markdown(contents.value))
        return types.Hover(contents=contents, range=hover.range)

    async def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        ls = self.ls
        uri = params.text_document.uri
        if not self._plain() or not is_trusted(ls) or uri not in ls.workspace.text_documents:
            return None  # untrusted: nothing that runs is offered
        source = ls.workspace.get_text_document(uri).source
        model = await ls.models.get(ls, uri, source)
        if model.syntax_error is not None:
            return None
        caps = ls.client_capabilities.text_document
        disabled = bool(caps and caps.code_action and caps.code_action.disabled_support)
        info = model.function_at(params.range.start.line + 1)
        if info is None:
            if model.module_work:
                return [_action("Profile Script", CMD_PROFILE, {"uri": uri, "script": True})]
            return None
        target = next((t for t in model.targets if t.info.qualname == info.qualname), None)
        record = ls.documents.get(uri, info.qualname)
        if target is None:
            return None
        if target.role == "none" and record is None and not ls.settings.show_all_lenses:
            return None  # no action where the lenses offer none (__init__, input factories)
        return function_actions(uri, target, record, self.executable(), disabled_support=disabled)

    async def execute_command(self, command: str, args: Any) -> OpenDocumentResult:
        ls = self.ls
        try:
            if command == CMD_OPEN_REPORT:
                path = self._report(cast(OpenFunctionArgs, args))
            elif command == CMD_OPEN_GENERATED_CODE:
                path = await self._generated(cast(OpenFunctionArgs, args))
            else:
                path = await self._assembly(cast(OpenAssemblyArgs, args))
        except Exception as exc:  # the user reads why; the server goes on
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"Kernel Lens: {message}"
                )
            )
            return {"ok": False, "message": str(message)}
        await self._show(path)
        return {"ok": True, "path": path}

    def _report(self, args: OpenFunctionArgs) -> str:
        record = self.ls.documents.get(args.uri, args.function)
        if record is None or record.state != "ok" or record.result is None:
            raise ProfileError("not-found", f"{args.function} has no profile yet: profile it first")
        text = terminal_safe(format_profile(dict(record.result)))
        return write_view(args.uri, _file_name(args.function, ".report.txt"), text + "\n")

    async def _generated(self, args: OpenFunctionArgs) -> str:
        result = await generated.generated_code(
            self.ls, GeneratedCodeParams(uri=args.uri, function=args.function)
        )
        suffix = ".inductor.py" if result.get("language") != "cpp" else ".inductor.cpp.py"
        return write_view(args.uri, _file_name(args.function, suffix), str(result["code"]))

    async def _assembly(self, args: OpenAssemblyArgs) -> str:
        params = AssemblyParams(uri=args.uri, kernel=args.kernel, stage=args.stage, arch=args.arch)
        result = await generated.assembly(self.ls, params)
        name = _file_name(args.kernel, f".{result['arch']}.{args.stage}")  # sm_90
        return write_view(args.uri, name, str(result["asm"]))

    async def _show(self, path: str) -> None:
        """Open ``path`` in the client, or say where it is when the client cannot be asked."""
        ls = self.ls
        window = ls.client_capabilities.window
        file_uri = Path(path).as_uri()
        if window is not None and window.show_document and window.show_document.support:
            shown = await ls.window_show_document_async(
                types.ShowDocumentParams(uri=file_uri, take_focus=True)
            )
            if shown.success:
                return
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Info, message=f"Kernel Lens: {path}")
        )


def setup(ls: KernelLensServer) -> None:
    """Take part in code actions, lenses and hovers; answer ``textDocument/inlayHint``."""
    feature = Editors(ls)
    ls.dispatcher.add(feature)

    @ls.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hint(
        ls: KernelLensServer, params: types.InlayHintParams
    ) -> list[types.InlayHint] | None:
        if ls.settings.vscode_client:
            return None  # VS Code shows the same on its lenses
        return await inlay_hints(ls, params.text_document.uri, params.range)
