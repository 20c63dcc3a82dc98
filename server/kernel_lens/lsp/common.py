"""Helpers every feature module shares: paths of URIs, documents' text, trust, errors the user
reads, diagnostics, lens refreshes, the status item, and which function a request is about.

A leaf of the feature layer: feature modules import it, it imports no feature module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from kernel_lens import run_choices
from kernel_lens.analysis.functions import (
    NotInFunctionError,
    SourceSyntaxError,
    TargetKind,
    function_at,
)
from kernel_lens.analysis.places import inside, outside_message
from kernel_lens.analysis.regular_files import read_regular
from kernel_lens.analysis.safe_text import link_safe
from kernel_lens.history import History
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.state import DiagnosticKey
from kernel_lens.run_choices import RunChoices
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import NOTIFY_STATUS, DiagnosticData, ServerState, StatusParams

__all__ = [
    "SYNTAX_KEY",
    "DiagnosticKey",
    "RequestFailed",
    "clear_diagnostics",
    "diagnostic_data",
    "document_source",
    "failure_message",
    "is_trusted",
    "package_file",
    "publish_diagnostics",
    "refresh_lenses",
    "refuse_package_file",
    "request_failed",
    "require_trusted",
    "resolve_target",
    "set_diagnostic",
    "set_diagnostics",
    "status",
    "target_path",
    "text_key",
    "uri_to_path",
    "workspace_folders",
]

#: The diagnostic key of a syntax error found by a profile attempt.
SYNTAX_KEY: DiagnosticKey = ("syntax", "")
#: The largest source file read from disk (a document not open in the editor).
MAX_SOURCE_BYTES = 64 << 20
#: Longest error text put in a message or a result (an exception message can be megabytes).
MAX_MESSAGE_CHARS = 2000


def diagnostic_data(err: ProfileError) -> DiagnosticData | None:
    """The ``data`` of a failed profile's diagnostic: the directive its quick fix inserts
    (``lsp/quick_fix.py``); ``None`` (no ``data``) when there is none."""
    if err.suggested_directive is None:
        return None
    return {"suggested_directive": err.suggested_directive}


class RequestFailed(JsonRpcException):
    """LSP ``RequestFailed`` (-32803): the message is shown to the user as is."""

    CODE = -32803


class QuietRequestFailures(logging.Filter):
    """Drops pygls's traceback of a :class:`RequestFailed`: it is the answer to the request,
    already logged once in the user's words (the output channel showed the server's own frames
    of it, which say nothing to the user). Any other exception in a handler is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, RequestFailed)


def uri_to_path(uri: str) -> str:
    """The file system path of a ``file:`` URI.

    Raises:
        ProfileError: ``not-found`` for a URI that is not a file on disk.
    """
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", "") or parsed.netloc not in ("", "localhost"):
        raise ProfileError("not-found", f"only files on disk can be profiled, not {uri}")
    return unquote(parsed.path)


def document_source(ls: KernelLensServer, uri: str) -> str:
    """The text of ``uri``: the open document's (unsaved edits included), else the file's,
    decoded as Python decodes it (a PEP 263 coding line or a BOM, else UTF-8).

    Raises:
        ProfileError: ``not-found`` when the document is not open and the file cannot be read;
            ``syntax`` when it cannot be decoded.
    """
    if uri in ls.workspace.text_documents:
        return ls.workspace.get_text_document(uri).source
    path = target_path(ls, uri)
    try:
        # only a regular file, with a bound: a FIFO named like a module never blocks the loop
        data = read_regular(path, MAX_SOURCE_BYTES)
    except OSError as exc:
        raise ProfileError(
            "not-found", f"{path} is not open and cannot be read ({exc.strerror or exc})"
        ) from None
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise ProfileError("syntax", f"cannot decode {os.path.basename(path)}: {exc}") from None


def workspace_folders(ls: KernelLensServer) -> list[str]:
    """The workspace folders' paths (every ``file:`` folder the client named, and the root)."""
    folders: list[str] = []
    for folder in list(ls.workspace.folders.values()):
        parsed = urlparse(folder.uri)
        if parsed.scheme == "file":
            folders.append(unquote(parsed.path))
    for root in (ls.workspace.root_path, ls.settings.workspace_root):
        if root and root not in folders:
            folders.append(root)
    return folders


_INSTALLED = ("/site-packages/", "/dist-packages/")


def package_file(ls: KernelLensServer, path: str) -> str | None:
    """The installed package ``path`` is a file of, when it is one (``None`` otherwise): a file
    in a site-packages folder, or outside the workspace folders under the folder of a package a
    run was attributed inside (``kernelLens.attributeInPackages``; an editable install). Such a
    file shows the results of runs started from the workspace; nothing runs from it."""
    for name, root in ls.package_roots.items():
        if (path == root or path.startswith(root.rstrip("/") + "/")) and not inside(
            path, workspace_folders(ls)
        ):
            return name
    for marker in _INSTALLED:
        at = path.rfind(marker)
        if at >= 0:
            top = path[at + len(marker) :].split("/", 1)[0]
            return top[:-3] if top.endswith(".py") else top
    return None


def refuse_package_file(ls: KernelLensServer, path: str | None) -> None:
    """Refuse to run anything from an installed package's file (see :func:`package_file`).

    Raises:
        ProfileError: ``not-found``, saying where the results come from instead.
    """
    if not path:
        return
    package = package_file(ls, path)
    if package is not None:
        raise ProfileError(
            "not-found",
            f"{os.path.basename(path)} is a file of the installed package {package}: it shows "
            "the results of runs started from your workspace (Attribute inside "
            f"{package}, or kernelLens.attributeInPackages); nothing runs from it",
        )


def target_path(ls: KernelLensServer, uri: str, what: str = "read or run") -> str:
    """The path of a ``file:`` URI the client named as a target (a document to profile, to run
    Nsight Compute or a sweep on, to compile, to read the history of): only an open document
    or a file inside a workspace folder, checked here whatever the client checked.

    Raises:
        ProfileError: ``not-found`` for a URI that is not a ``file:`` one, or a file neither
            open nor inside a workspace folder (nothing is read or run).
    """
    path = uri_to_path(uri)
    if uri in ls.workspace.text_documents:
        return path
    folders = workspace_folders(ls)
    if not inside(path, folders):
        raise ProfileError("not-found", outside_message(what, path, folders))
    return path


#: How long the server's history actions wait for another process's write (the CLI's 30 s would
#: hold Set as Baseline that long): then they say the store is locked (issue 39 item 5).
SERVER_HISTORY_WAIT_S = 3.0


def server_history(ls: KernelLensServer, path: str) -> History:
    """The history of ``path``'s runs as this server may use it: its ``.kernel-lens`` looked
    for at the workspace folders' roots only, and read-only in an untrusted workspace (issue 45
    items 7 and 9)."""
    return History.default(
        path,
        workspace_folders(ls),
        read_only=not is_trusted(ls),
        busy_timeout_s=SERVER_HISTORY_WAIT_S,
    )


def failure_message(exc: BaseException) -> str:
    """One line saying what went wrong, short enough for a message (any exception)."""
    text = str(exc) if isinstance(exc, ProfileError) else f"{type(exc).__name__}: {exc}"
    if len(text) > MAX_MESSAGE_CHARS:
        text = f"{text[:MAX_MESSAGE_CHARS]}… ({len(text)} characters)"
    return text


def request_failed(err: ProfileError) -> RequestFailed:
    """A job's error as the request error the user reads."""
    where = f" (line {err.line})" if err.line else ""
    return RequestFailed(message=f"{err.kind}: {err.message[:MAX_MESSAGE_CHARS]}{where}")


def is_trusted(ls: KernelLensServer) -> bool:
    """Whether the workspace is trusted (nothing runs otherwise)."""
    return ls.settings.workspace_trusted


def require_trusted(ls: KernelLensServer) -> None:
    """Refuse a request that runs user code in an untrusted workspace.

    Raises:
        RequestFailed: the workspace is not trusted.
    """
    if not is_trusted(ls):
        raise RequestFailed(
            message="Kernel Lens runs your code to compile it: trust this workspace first."
        )


def text_key(text: str) -> str:
    """A short digest of a document's text: results are cached per text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def refresh_lenses(ls: KernelLensServer) -> None:
    """Ask the client to re-request code lenses (and, for editors other than VS Code, inlay
    hints) when it supports it."""
    caps = ls.client_capabilities.workspace
    if caps and caps.code_lens and caps.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)
    # Other editors show the lines' results as inlay hints too (lsp/editors.py).
    if (
        not ls.settings.vscode_client
        and caps
        and caps.inlay_hint
        and caps.inlay_hint.refresh_support
    ):
        ls.workspace_inlay_hint_refresh(None)


def status(ls: KernelLensServer, state: ServerState, message: str, uri: str | None = None) -> None:
    """Send ``kernelLens/status`` (``idle``, ``profiling`` or ``error``)."""
    params = StatusParams(state=state, message=link_safe(message), uri=uri)
    ls.protocol.notify(NOTIFY_STATUS, params)  # type: ignore[arg-type]


def publish_diagnostics(ls: KernelLensServer, uri: str) -> None:
    """Publish the document's diagnostics (every key's, in the order the keys were set)
    through the dispatcher (which may route them: a notebook's script onto its cells)."""
    state = ls.documents.peek(uri)
    entries = state.diagnostics if state is not None else {}
    ls.dispatcher.publish_diagnostics(uri, [d for group in entries.values() for d in group])


def set_diagnostics(
    ls: KernelLensServer, uri: str, key: DiagnosticKey, diagnostics: Sequence[types.Diagnostic]
) -> None:
    """Set the document's diagnostics of ``key`` (an empty list removes them) and republish.

    A document closed meanwhile (a job that ended after its file was closed) keeps no state
    and gets no Problems entry: an entry lives exactly as long as the result it is about.
    """
    if uri not in ls.workspace.text_documents:
        state = ls.documents.peek(uri)
        if state is not None:
            state.diagnostics.pop(key, None)
        publish_diagnostics(ls, uri)
        return
    entries = ls.documents(uri).diagnostics
    if diagnostics:
        entries[key] = list(diagnostics)
    else:
        entries.pop(key, None)
    publish_diagnostics(ls, uri)


def set_diagnostic(
    ls: KernelLensServer, uri: str, key: DiagnosticKey, diag: types.Diagnostic | None
) -> None:
    """Set (or with ``None`` remove) the document's one diagnostic of ``key`` and republish."""
    set_diagnostics(ls, uri, key, [] if diag is None else [diag])


def clear_diagnostics(ls: KernelLensServer, uri: str) -> None:
    """Drop all of the document's diagnostics and republish (none)."""
    state = ls.documents.peek(uri)
    if state is not None:
        state.diagnostics.clear()
    publish_diagnostics(ls, uri)


def resolve_target(
    source: str,
    *,
    name: str | None,
    position: types.Position | dict[str, Any] | Any | None,
    kind: TargetKind = "function",
) -> str:
    """The qualified name a request is about: ``name`` when given, else the function (or
    kernel) at ``position``.

    Raises:
        RequestFailed: neither is given, the text does not parse, or the position is in no
            function (kernel); the message is user-ready.
    """
    if name:
        return name
    if position is None:
        what = "kernel" if kind == "kernel" else "function"
        raise RequestFailed(message=f"Kernel Lens: say which {what} (a name or a position).")
    line, character = _line_character(position)
    try:
        return function_at(source, line, character, kind=kind).qualname
    except NotInFunctionError as exc:
        raise RequestFailed(message=str(exc)) from None
    except SourceSyntaxError as exc:
        raise RequestFailed(message=f"Kernel Lens: fix the syntax error first ({exc}).") from None


def _line_character(position: Any) -> tuple[int, int]:
    """``(line, character)`` of an LSP position given as an object, a namedtuple or a dict."""
    if isinstance(position, dict):
        return int(position.get("line", 0)), int(position.get("character", 0))
    return int(position.line), int(getattr(position, "character", 0))


def kernel_driver_fields(ls: KernelLensServer, uri: str, kernel: str) -> dict[str, Any]:
    """The driver fields for a Triton kernel's assembly: the driver chosen for the kernel
    itself, else the one chosen for a function of the same file (its launcher, profiled
    from a driver), so that Show Assembly uses the launch Profile uses; ``{}`` when none."""
    own = driver_fields(ls, uri, kernel)
    if own:
        return own
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return {}
    for function in RunChoices.for_path(path, workspace_folders(ls)).drivers_of(path):
        return driver_fields(ls, uri, function)
    return {}


def driver_fields(ls: KernelLensServer, uri: str, function: str) -> dict[str, Any]:
    """The job fields (``driver``, ``argv``, ``cwd``, ``env``) of the driver chosen for
    ``function`` of ``uri`` (a quick fix, the picker; kept per workspace), so every job on the
    function — profile, Nsight Compute, sweep, generated code — gets the same inputs and
    ``self``, and a driver script its arguments as set now; ``{}`` when its inputs come from
    elsewhere."""
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return {}
    return run_choices.driver_fields(path, function, workspace_folders(ls))
