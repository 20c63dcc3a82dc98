"""Every LSP editor (issue 50): the server started as Neovim, Helix and Emacs start it — from the
project's folder — with their recorded client capabilities (pytest-lsp's; Helix's written here
from ``helix-lsp/src/client.rs``, which pytest-lsp 1.0 has not recorded).

The folder the server starts in holds modules named like the server's own imports (``attrs``,
``typing_extensions``, ``pygls``, …); each would leave a marker and kill the process. The server
must start and answer without importing any of them, under ``python -m kernel_lens.lsp`` and the
``kernel-lens-lsp`` console script alike; Profile is offered as a code action and runs (the real
agent, on the CPU); lenses and inlay hints carry plain titles; every command they reference is
one the server executes; nothing runs while the workspace is untrusted.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, Union

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parent.parent.parent
SERVER_ROOT = ROOT / "server"

OPTIONS = {"timeoutSeconds": 90, "timing": {"warmupMs": 5, "budgetMs": 50, "reps": 0}}

#: Modules the server (or what it imports) would import from the working directory.
SHADOWED = (
    "attrs",
    "cattrs",
    "typing_extensions",
    "pygls",
    "lsprotocol",
    "pandas",
    "numpy",
    "json",
    "asyncio",
)

SOURCE = """import torch


# kernel-lens: inputs = (torch.randn(128, 128),)
def scale(x):
    y = x * 2.0
    z = torch.relu(y + 1.0)
    return z.sum()
"""
#: 0-based line of ``def scale``.
DEF_LINE0 = 4

#: Helix 25.x's capabilities, as ``helix-lsp/src/client.rs`` declares them (the parts the server
#: reads): code actions with literals and ``disabled``, inlay hints, Markdown hovers,
#: ``window/showDocument``, no code lenses.
HELIX: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True},
        "hover": {"contentFormat": ["markdown"]},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {
                    "valueSet": [
                        "",
                        "quickfix",
                        "refactor",
                        "refactor.extract",
                        "refactor.inline",
                        "refactor.rewrite",
                        "source",
                        "source.organizeImports",
                    ]  # fmt: skip
                }
            },
            "isPreferredSupport": True,
            "disabledSupport": True,
            "dataSupport": True,
            "resolveSupport": {"properties": ["edit", "command"]},
        },
        "inlayHint": {"dynamicRegistration": False},
        "publishDiagnostics": {"versionSupport": True, "tagSupport": {"valueSet": [1, 2]}},
    },
    "window": {"workDoneProgress": True, "showDocument": {"support": True}},
    "workspace": {
        "applyEdit": True,
        "configuration": True,
        "workspaceFolders": True,
        "executeCommand": {"dynamicRegistration": False},
        "inlayHint": {"refreshSupport": False},
        "didChangeConfiguration": {"dynamicRegistration": False},
    },
}


def capabilities(client: str) -> types.ClientCapabilities:
    if client == "helix":
        return LanguageClient().protocol._converter.structure(HELIX, types.ClientCapabilities)
    return pytest_lsp.client_capabilities(client)


CLIENTS = ["neovim@v0.7.0", "neovim@v0.11.0", "helix", "emacs@v29.1"]


def _shadow_folder(folder: Path, markers: Path) -> None:
    """Modules named like the server's imports: each leaves a marker and exits the process."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in SHADOWED:
        (folder / f"{name}.py").write_text(
            f"import os\nopen(os.path.join({str(markers)!r}, {name!r}), 'w').close()\n"
            f"raise SystemExit('{name}.py of the working directory was imported')\n"
        )


def _console_script(bin_dir: Path) -> Path:
    """``kernel-lens-lsp`` as pip writes a console script (pyproject's ``[project.scripts]``)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "kernel-lens-lsp"
    script.write_text(
        f"#!{sys.executable}\nimport re\nimport sys\n"
        "from kernel_lens.lsp.__main__ import main\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(main())\n"
    )
    script.chmod(0o755)
    return script


def _read_code_actions_whole(client: LanguageClient) -> None:
    """lsprotocol's client side structures a code action that carries a command as a
    ``Command`` (its ``command`` the action's command object as text); read each by its shape."""
    converter = client.protocol._converter

    def command_or_action(obj: Any, _: Any) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(
        Union[types.Command, types.CodeAction],  # noqa: UP007 (the union lsprotocol names)
        command_or_action,
    )


async def _start(tmp: Path, entry: str) -> tuple[LanguageClient, Path, Path]:
    """A server started the way other editors start it, from a folder of shadowing modules;
    the client, the markers folder and the workspace."""
    markers = tmp / "markers"
    markers.mkdir()
    cwd = tmp / "project"
    _shadow_folder(cwd, markers)
    workspace = tmp / "workspace"
    workspace.mkdir()
    (workspace / "work.py").write_text(SOURCE)
    if entry == "module":
        argv = [sys.executable, "-m", "kernel_lens.lsp"]
    else:
        argv = [str(_console_script(tmp / "bin"))]
    # pytest-lsp starts the command as given: the shell only changes the folder first.
    command = ["/bin/sh", "-c", 'cd "$0" && exec "$@"', str(cwd), *argv]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SERVER_ROOT), str(ROOT)])}
    env.pop("KERNEL_LENS_EARLY_AGENT", None)
    client = await ClientServerConfig(server_command=command, server_env=env).start()
    _read_code_actions_whole(client)

    @client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_refresh(ls: LanguageClient, params: None) -> None:
        del ls, params

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(ls: LanguageClient, params: None) -> None:
        del ls, params

    return client, markers, workspace


async def _init(
    client: LanguageClient, name: str, workspace: Path, trusted: bool
) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(name),
            client_info=types.ClientInfo(name=name.split("@")[0]),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")],
            initialization_options={**OPTIONS, "workspaceTrusted": trusted},
        )
    )


def _open(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=path.read_text()
            )
        )
    )
    return uri


async def _actions(client: LanguageClient, uri: str, line0: int) -> list[types.CodeAction]:
    answer = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line0, 4), types.Position(line0, 4)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in answer or [] if isinstance(a, types.CodeAction)]


async def _lenses(client: LanguageClient, uri: str) -> list[types.CodeLens]:
    answer = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return list(answer or [])


def _assert_plain(lenses: list[types.CodeLens], executable: set[str]) -> None:
    for lens in lenses:
        assert lens.command is not None
        assert "$(" not in lens.command.title, lens.command.title
        assert lens.command.command in executable | {""}, lens.command.command


@pytest.mark.parametrize("entry", ["module", "script"])
@pytest.mark.parametrize("name", CLIENTS)
async def test_untrusted_from_a_folder_of_shadowing_modules(
    tmp_path: Path, name: str, entry: str
) -> None:
    """Started in a folder of modules named like its imports, untrusted: the server imports none
    of them, offers nothing that runs, refuses a Profile sent anyway; trusted, it offers it."""
    client, markers, workspace = await _start(tmp_path, entry)
    try:
        init = await _init(client, name, workspace, trusted=False)
        provider = init.capabilities.execute_command_provider
        assert provider is not None
        executable = set(provider.commands)
        assert {"kernelLens.profile", "kernelLens.openReport"} <= executable
        assert init.capabilities.inlay_hint_provider
        uri = _open(client, workspace / "work.py")
        assert await _actions(client, uri, DEF_LINE0) == []
        lenses = await _lenses(client, uri)
        _assert_plain(lenses, executable)
        assert [lens.command.title for lens in lenses if lens.command] == [
            "Kernel Lens: workspace not trusted, nothing runs "
            "(initializationOptions.workspaceTrusted or kernelLens/setTrusted)"
        ]
        refused = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.profile", arguments=[{"uri": uri, "function": "scale"}]
            )
        )
        assert refused["ok"] is False and refused["error"]["kind"] == "untrusted"
        client.protocol.notify("kernelLens/setTrusted", {"trusted": True})
        titles = [a.title for a in await _actions(client, uri, DEF_LINE0)]
        assert titles[:3] == [
            "Kernel Lens: Profile scale",
            "Kernel Lens: Profile scale with Backward",
            "Kernel Lens: Profile Memory of scale",
        ]
        assert sorted(os.listdir(markers)) == []
    finally:
        await client.shutdown_session()
        await client.stop()
    assert sorted(os.listdir(markers)) == []


@pytest.mark.parametrize("name", ["neovim@v0.11.0", "helix", "emacs@v29.1"])
async def test_profile_through_a_code_action(tmp_path: Path, name: str) -> None:
    """Profile from the code action (the real agent, CPU): lenses, inlay hints and hovers are
    plain and reference only commands the server executes; the text report opens."""
    client, markers, workspace = await _start(tmp_path, "module")
    try:
        init = await _init(client, name, workspace, trusted=True)
        provider = init.capabilities.execute_command_provider
        assert provider is not None
        executable = set(provider.commands)
        uri = _open(client, workspace / "work.py")
        before = await _actions(client, uri, DEF_LINE0 + 1)
        for action in before:
            assert action.command is None or action.command.command in executable
        profile = next(a for a in before if a.title == "Kernel Lens: Profile scale")
        assert profile.command is not None
        outcome = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=profile.command.command, arguments=profile.command.arguments
            )
        )
        assert outcome["ok"] is True, outcome

        lenses = await _lenses(client, uri)
        _assert_plain(lenses, executable)
        titles = [lens.command.title for lens in lenses if lens.command]
        assert any(re.search(r"\d (ms|µs)", t) for t in titles), titles
        assert "More…" not in titles
        report = next(lens for lens in lenses if lens.command and lens.command.title == "Report")
        assert report.command is not None and report.command.command == "kernelLens.openReport"

        hints = await client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(types.Position(0, 0), types.Position(20, 0)),
            )
        )
        by_line = {h.position.line: h.label for h in hints or []}
        lines = SOURCE.splitlines()
        # the body's lines, at their ends: an op and its share of the time
        assert {DEF_LINE0 + 1, DEF_LINE0 + 2} <= set(by_line), by_line
        for line0, label in by_line.items():
            assert isinstance(label, str) and "$(" not in label
            assert re.search(r"aten::\w+", label), label
            assert re.search(r"\d+% of [\d.]+ (ms|µs)", label), label
            hint = next(h for h in hints or [] if h.position.line == line0)
            assert hint.position.character == len(lines[line0])  # ASCII: any encoding

        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(DEF_LINE0 + 1, 9),
            )
        )
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert "command:" not in hover.contents.value and "$(" not in hover.contents.value

        after_actions = await _actions(client, uri, DEF_LINE0)
        after = [a.title for a in after_actions]
        assert after[0] == "Kernel Lens: Re-profile scale"
        assert "Kernel Lens: Report of scale (text)" in after
        # Nsight Compute needs a GPU: listed disabled with why where the client shows those
        nsight = [a for a in after_actions if "Nsight Compute" in a.title]
        action_caps = capabilities(name).text_document.code_action  # type: ignore[union-attr]
        if action_caps is not None and action_caps.disabled_support:
            assert len(nsight) == 1 and nsight[0].command is None
            assert nsight[0].disabled is not None and "GPU" in nsight[0].disabled.reason
        else:
            assert nsight == []

        opened = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.openReport", arguments=report.command.arguments
            )
        )
        assert opened["ok"] is True, opened
        path = Path(opened["path"])
        assert path.read_text().startswith("scale  ·  ")
        assert "aten::" in path.read_text()
        assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        window = capabilities(name).window
        if window and window.show_document and window.show_document.support:
            assert [p.uri for p in client.shown_documents] == [path.as_uri()]
        else:  # Emacs 29's eglot: where the report is, in a message
            assert client.shown_documents == []
            assert any(str(path) in m.message for m in client.messages)
    finally:
        await client.shutdown_session()
        await client.stop()
    assert sorted(os.listdir(markers)) == []


async def test_vscode_keeps_its_titles_and_gets_no_function_actions(tmp_path: Path) -> None:
    """The extension (``client: vscode``) keeps ``$(icon)`` titles and its own commands, and
    gets no function code actions or inlay hints (its lenses show the same)."""
    client, _, workspace = await _start(tmp_path, "module")
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
                root_uri=workspace.as_uri(),
                initialization_options={**OPTIONS, "client": "vscode"},
            )
        )
        uri = _open(client, workspace / "work.py")
        lenses = await _lenses(client, uri)
        row = [(lens.command.title, lens.command.command) for lens in lenses if lens.command]
        assert row[:2] == [
            ("$(play) Profile", "kernelLens.profile"),
            ("$(symbol-namespace) Generated Code", "kernelLens.showGeneratedCode"),
        ]
        assert await _actions(client, uri, DEF_LINE0) == []
        hints = await client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(types.Position(0, 0), types.Position(20, 0)),
            )
        )
        assert not hints
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_assembly_and_generated_code_open_as_read_only_files(tmp_path: Path) -> None:
    """Helix: a Triton kernel's *Show Assembly* lens and a function's *Generated Code* code
    action run the server's commands, which write read-only files under the cache and open them
    with ``window/showDocument``."""
    client, markers, workspace = await _start(tmp_path, "module")
    for name in ("triton_square.py", "fusion.py"):
        (workspace / name).write_text((ROOT / "kernels" / name).read_text())
    try:
        init = await _init(client, "helix", workspace, trusted=True)
        provider = init.capabilities.execute_command_provider
        assert provider is not None
        executable = set(provider.commands)

        triton_uri = _open(client, workspace / "triton_square.py")
        lenses = await _lenses(client, triton_uri)
        _assert_plain(lenses, executable)
        show = next(
            lens for lens in lenses if lens.command and lens.command.title == "Show Assembly"
        )
        assert show.command is not None and show.command.command == "kernelLens.openAssembly"
        arguments = [{**show.command.arguments[0], "arch": 90}]  # type: ignore[index]
        opened = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="kernelLens.openAssembly", arguments=arguments)
        )
        assert opened["ok"] is True, opened
        ptx = Path(opened["path"])
        assert ptx.name == "square_kernel.sm_90.ptx"
        assert ".target sm_90a" in ptx.read_text()
        assert not ptx.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)

        fusion_uri = _open(client, workspace / "fusion.py")
        line0 = (workspace / "fusion.py").read_text().splitlines().index("def matmul_relu(x, y):")
        actions = await _actions(client, fusion_uri, line0)
        generated = next(
            a for a in actions if a.title == "Kernel Lens: Generated Code (matmul_relu)"
        )
        assert generated.command is not None
        assert generated.command.command == "kernelLens.openGeneratedCode"
        opened = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=generated.command.command, arguments=generated.command.arguments
            )
        )
        assert opened["ok"] is True, opened
        code = Path(opened["path"])
        assert code.name.startswith("matmul_relu.inductor")
        assert "def call(" in code.read_text()
        assert [p.uri for p in client.shown_documents] == [ptx.as_uri(), code.as_uri()]
    finally:
        await client.shutdown_session()
        await client.stop()
    assert sorted(os.listdir(markers)) == []
