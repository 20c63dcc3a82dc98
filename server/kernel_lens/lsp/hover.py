"""Hover: expression → ATen op(s) → kernel(s) on a profiled line; an offer to profile before."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.distributed_text import ranks_hover
from kernel_lens.analysis.document_model import DocumentModel
from kernel_lens.analysis.error_actions import error_actions, error_markdown
from kernel_lens.analysis.lens_text import code_span, hover_markdown
from kernel_lens.analysis.light_text import LIGHT_NAME, light_hover
from kernel_lens.analysis.roofline import with_ncu_roofline
from kernel_lens.analysis.safe_text import md_text
from kernel_lens.analysis.scripts import SCRIPT_NAME
from kernel_lens.lsp.common import package_file, uri_to_path
from kernel_lens.lsp.feature import LanguageFeature
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.results import place
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import CMD_PROFILE

__all__ = ["Hovers", "document_hover", "hover_at", "setup"]


def _command_link(title: str, command: str, args: object) -> str:
    """A command link the server made itself: its title escaped, its arguments JSON,
    percent-encoded whole (no character of them can end the link's target)."""
    encoded = urllib.parse.quote(json.dumps([args]), safe="")
    return f"[{md_text(title)}](command:{command}?{encoded})"


#: How long a hover waits for its document's model (a big file being read) before giving none.
HOVER_WAIT_S = 5.0


def _has_profile_lens(model: DocumentModel, qualname: str) -> bool:
    """Whether ``qualname`` gets a Profile lens (see ``analysis/lens_targets.py``)."""
    return any(t.info.qualname == qualname and t.role == "profile" for t in model.targets)


def _in_installed_package(ls: KernelLensServer, uri: str) -> bool:
    """Whether ``uri`` is a file of an installed package (``common.package_file``)."""
    try:
        return package_file(ls, uri_to_path(uri)) is not None
    except ProfileError:
        return False


def document_hover(
    ls: KernelLensServer,
    uri: str,
    source: str,
    line0: int,
    word: str | None,
    model: DocumentModel | None = None,
) -> str | None:
    """The hover Markdown at 0-based ``line0``, or ``None``.

    ``model``: the text parsed (:mod:`kernel_lens.lsp.models`); made here when not given.
    """
    if _in_installed_package(ls, uri):
        # An installed package's file: the run's lines only, never a link that runs it.
        return _run_lines_hover(ls, uri, source, line0, word)
    if model is None:
        model = ls.models.now(ls, uri, source)
    if model.syntax_error is not None:
        return None
    info = model.function_at(line0 + 1)
    if info is None:
        return _script_hover(ls, uri, source, line0, word) or _run_lines_hover(
            ls, uri, source, line0, word
        )
    if line0 + 1 < info.body_first_line:
        return None
    record = ls.documents.get(uri, info.qualname)
    if record is None or record.state != "ok":
        # A line inside a function, from a whole run (this script's, or another's that
        # called into this file) when the function has no profile of its own.
        whole = _script_hover(ls, uri, source, line0, word) or _run_lines_hover(
            ls, uri, source, line0, word
        )
        if whole is not None:
            return whole
    if record is None and not _has_profile_lens(model, info.qualname):
        # No offer where the lenses offer nothing (``__init__``, factories, helpers).
        return None
    if record is not None and record.state == "error" and record.error is not None:
        return _error_hover(uri, info.qualname, record.error)
    if record is None or record.state != "ok" or record.result is None:
        if not ls.settings.workspace_trusted:
            return "**Kernel Lens**: trust this workspace to profile it."
        link = _command_link(
            f"Profile {info.qualname}", CMD_PROFILE, {"uri": uri, "function": info.qualname}
        )
        return f"**Kernel Lens** · not profiled yet · {link} {code_span(info.qualname)}"
    placed = place(record, source, model)
    if placed is None or placed.outdated:
        return (
            f"**Kernel Lens** · {code_span(info.qualname)} changed since it was profiled; "
            + _command_link("re-profile", CMD_PROFILE, {"uri": uri, "function": info.qualname})
        )
    measured = line0 + 1 - placed.offset
    state = ls.documents.peek(uri)
    ncu = state.ncu.get(info.qualname) if state else None
    result = with_ncu_roofline(record.result, ncu) or record.result
    text = hover_markdown(dict(result), measured, word=word)
    ranks = ranks_hover(record.result, measured)  # a distributed profile: every rank's time
    if ranks:
        text = f"{text}\n\n{ranks}" if text else ranks
    return text


def _error_hover(uri: str, qualname: str, error: Mapping[str, Any]) -> str:
    """A failed function's hover: the whole error, the user's frames, what can fix it."""
    links = [
        f"[{md_text(a['label'])}](command:{a['command']}?"
        f"{urllib.parse.quote(json.dumps(a['arguments']), safe='')})"
        for a in error_actions(error, uri=uri)
    ]
    links.append(_command_link("Profile again", CMD_PROFILE, {"uri": uri, "function": qualname}))
    return error_markdown(error, function=qualname, path=_path_of(uri), links=links)


def _path_of(uri: str) -> str | None:
    try:
        return uri_to_path(uri)
    except Exception:
        return None


def _script_hover(
    ls: KernelLensServer, uri: str, source: str, line0: int, word: str | None
) -> str | None:
    """A module-level line's ops and kernels from the whole script's run, if there was one
    (a line's kernels from its light run, *Profile Script (Light)*, where that is the run)."""
    light = _light_hover(ls, uri, source, line0)
    if light is not None:
        return light
    record = ls.documents.get(uri, SCRIPT_NAME)
    if record is None or record.state != "ok" or record.result is None:
        return None
    placed = place(record, source)
    if placed is None or placed.outdated:
        return None
    if not any(int(line["line"]) == line0 + 1 for line in record.result.get("lines") or []):
        return None
    return hover_markdown(record.result, line0 + 1, word=word)


def _light_hover(ls: KernelLensServer, uri: str, source: str, line0: int) -> str | None:
    """A line's kernels from the script's own light run, while its text is the one that ran."""
    record = ls.documents.get(uri, LIGHT_NAME)
    if record is None or record.state != "ok" or record.result is None:
        return None
    if source.splitlines() != record.text:
        return None
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return None
    rows = (record.result.get("files") or {}).get(path) or []
    row = next((r for r in rows if int(r.get("line") or 0) == line0 + 1), None)
    if row is None:
        return None
    return light_hover(record.result, row, run_uri=uri)


def _run_lines_hover(
    ls: KernelLensServer, uri: str, source: str, line0: int, word: str | None
) -> str | None:
    """A line of this file from a whole run of another script (``from bench.py, 12:03``)."""
    try:
        path = uri_to_path(uri)
    except ProfileError:
        return None
    held = ls.run_lines.get(path)
    if held is None:
        return None
    current = source.splitlines()
    if not 0 <= line0 < len(current):
        return None
    row = next((r for r in held.rows if int(r.get("line") or 0) == line0 + 1), None)
    if row is None or current[line0].strip() != row.get("source"):
        return None
    if held.mode == "light":
        run_uri = "file://" + held.run_path
        return light_hover(held.light or {}, row, run_uri=run_uri, origin=held.label)
    result = {
        "function": SCRIPT_NAME,
        "path": held.run_path,
        "device_kind": held.device_kind,
        "script": {"runs": 1},
        "lines": [row],
    }
    body = hover_markdown(result, line0 + 1, word=word)
    if body is None:
        return None
    what = "a whole-script run" if held.function is None else f"a profile of {held.function}"
    if held.package is not None:
        what += f"; a file of the installed package {held.package}: results only"
    return f"*{md_text(held.label)}* ({md_text(what)})\n\n{body}"


async def hover_at(ls: KernelLensServer, uri: str, position: types.Position) -> types.Hover | None:
    """The hover of the document ``uri`` at ``position`` (Markdown), or ``None`` (also when
    its document is a big file still being read after :data:`HOVER_WAIT_S`)."""
    doc = ls.workspace.get_text_document(uri)
    source = doc.source
    try:
        model = await asyncio.wait_for(ls.models.get(ls, doc.uri, source), HOVER_WAIT_S)
    except TimeoutError:
        return None
    word = doc.word_at_position(position) or None
    text = document_hover(ls, doc.uri, source, position.line, word, model)
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


class Hovers(LanguageFeature):
    """The hover of a Python document (see :func:`document_hover`)."""

    name = "hover"

    def __init__(self, ls: KernelLensServer) -> None:
        self.ls = ls

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        return await hover_at(self.ls, params.text_document.uri, params.position)


def setup(ls: KernelLensServer) -> None:
    """Take part in ``textDocument/hover``."""
    ls.dispatcher.add(Hovers(ls))
