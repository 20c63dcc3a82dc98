"""Lens rows as LSP ``CodeLens`` objects and as JSON text (the row layout is
:mod:`kernel_lens.analysis.lens_rows`; the request is answered by ``lsp/code_lens.py``).

A big file's answer is a join of JSON texts: the rows of the functions without a result are made
in the document worker (:func:`rows_ahead`) or from the scan of its text (:func:`first_rows`),
each a ``str.format`` template of a row before any run filled in with the function's line, name
and sweep parameters — byte for byte what unstructuring its lenses gives.
"""

from __future__ import annotations

import json
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.document_model import DocumentModel
from kernel_lens.analysis.functions import FunctionInfo
from kernel_lens.analysis.lens_rows import TRUST_COMMAND, TRUST_TITLE, Lens, before_run_row
from kernel_lens.analysis.lens_targets import LensTarget
from kernel_lens.lsp.models import LensRows

__all__ = ["code_lens", "code_lenses", "first_rows", "row_json", "rows_ahead"]


def code_lens(lens: Lens) -> types.CodeLens:
    """One lens of a row as the LSP ``CodeLens`` (a zero-width range at its line's start)."""
    at = types.Position(lens.line0, 0)
    return types.CodeLens(
        range=types.Range(at, at),
        command=types.Command(
            title=lens.title, command=lens.command, arguments=lens.arguments, tooltip=lens.tooltip
        ),
    )


def code_lenses(lenses: list[Lens]) -> list[types.CodeLens]:
    """A row's lenses as LSP ``CodeLens`` objects, in order."""
    return [code_lens(lens) for lens in lenses]


def row_json(lenses: list[types.CodeLens], unstructure: Any) -> str:
    """A row's lenses as the items of a JSON list (no brackets; ``""`` for none), compact (no
    space after separators: a big file's answer is tens of thousands of rows)."""
    return ",".join(json.dumps(unstructure(lens), separators=(",", ":")) for lens in lenses)


#: ``str.format`` templates of rows before any run, by number of sweep parameters (``-1``: the
#: untrusted row), for :func:`rows_ahead`.
_ROW_TEMPLATES: dict[int, str] = {}
#: Marks a value in a row's JSON (a private-use character: ``json.dumps`` writes ``\ue000``).
_MARK = "\ue000"
#: The line of a probe row (``"line":987654321`` is nowhere else in a row's JSON: a string's
#: quotes are escaped there).
_PROBE_LINE = 987_654_321


def _row_template(params: int, unstructure: Any) -> str:
    """The JSON of a row before any run, as a ``str.format`` template of ``(line0, uri,
    qualname, *sweep params)`` given as JSON string contents (``params == -1``: the untrusted
    row, of ``(line0,)``). Made from a probe function whose values are markers, so the template
    holds no text of the user's."""
    found = _ROW_TEMPLATES.get(params)
    if found is not None:
        return found
    marks = [f"{_MARK}{i}{_MARK}" for i in range(1, 3 + max(params, 0))]
    if params < 0:
        lenses = [Lens(_PROBE_LINE, TRUST_TITLE, TRUST_COMMAND)]
    else:
        info = FunctionInfo(
            qualname=marks[1],
            def_line=_PROBE_LINE + 1,
            first_line=_PROBE_LINE + 1,
            last_line=_PROBE_LINE + 1,
            body_first_line=_PROBE_LINE + 1,
            params=tuple(marks[2:]),
            is_method=False,
            inputs_expr=None,
            inputs_line=None,
            name_column=0,
        )
        target = LensTarget(info, "profile", "", tuple(marks[2:]))
        lenses = before_run_row(marks[0], target, [])
    text = row_json(code_lenses(lenses), unstructure).replace("{", "{{").replace("}", "}}")
    encoded = [json.dumps(m)[1:-1] for m in marks]
    text = text.replace(f'"line":{_PROBE_LINE}', '"line":{0}')
    for i, mark in enumerate(encoded, start=1):
        text = text.replace(mark, "{" + str(i) + "}")
    _ROW_TEMPLATES[params] = text
    return text


def rows_ahead(uri: str, source: str, model: DocumentModel, unstructure: Any) -> LensRows:
    """Each lens target's row before any run (trusted; ``None`` for a kernel, whose lens reads
    the server's state) and its row in an untrusted workspace, as JSON (for
    ``code_lens.document_lenses_json``; made in the document worker).

    A row before any run differs from function to function only in its line, name and sweep
    parameters: it is made once per number of sweep parameters (:func:`_row_template`) and
    filled in, which is what ``row_json(code_lenses(before_run_row(…)))`` gives, byte for
    byte."""
    del source  # a row before any run reads no text
    uri_json = json.dumps(uri)[1:-1]
    untrusted_row = _row_template(-1, unstructure)
    trusted: list[str | None] = []
    untrusted: list[str] = []
    for target in model.targets:
        role = target.role
        if role == "none":
            trusted.append("")
            untrusted.append("")
            continue
        line0 = target.info.first_line - 1
        untrusted.append(untrusted_row.format(line0))
        if role == "kernel":
            trusted.append(None)
        else:
            params = target.sweep_params
            trusted.append(
                _row_template(len(params), unstructure).format(
                    line0,
                    uri_json,
                    json.dumps(target.info.qualname)[1:-1],
                    *(json.dumps(p)[1:-1] for p in params),
                )
            )
    return LensRows(tuple(trusted), tuple(untrusted))


def first_rows(
    uri: str, functions: list[tuple[int, str, str]], trusted: bool, unstructure: Any
) -> list[str]:
    """Each scanned function's row before any run (``(first line, qualified name, role)``;
    ``""`` for none), as :func:`rows_ahead` makes them from a model without sweeps: trusted, a
    ``profile`` function's row (a kernel's reads the server's state: made on the loop);
    untrusted, the trust lens of each function with a role."""
    if not trusted:
        untrusted_row = _row_template(-1, unstructure)
        return [
            untrusted_row.format(line - 1) if role != "none" else "" for line, _, role in functions
        ]
    uri_json = json.dumps(uri)[1:-1]
    row = _row_template(0, unstructure)
    return [
        row.format(line - 1, uri_json, name if name.isascii() else json.dumps(name)[1:-1])
        if role == "profile"
        else ""
        for line, name, role in functions
    ]
