"""Per-document profile results, and where they belong in the text as it is now.

A result belongs to the text it was measured on. When the function's text is unchanged but has
moved (lines added above it), its results move with it; when the function's own text changed, the
result is *outdated*: its per-line lenses and hovers are withdrawn, never shifted onto lines they
were not measured on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernel_lens.analysis.document_model import DocumentModel
from kernel_lens.analysis.functions import FunctionInfo, SourceSyntaxError, find_functions
from kernel_lens.analysis.scripts import SCRIPT_NAME
from kernel_lens.wire.errors import ErrorObject

__all__ = ["Placed", "Record", "function_text", "place", "script_info"]


@dataclass
class Record:
    """The last job of one function.

    Attributes:
        qualname: the function.
        state: ``running``, ``ok``, ``error`` or ``cancelled``.
        text: the function's lines (first..last) when the job started.
        first_line: its 1-based first line then.
        result: the profile result (state ``ok``), or what a running job streamed so far
            (state ``running``, with ``stage``).
        error: the error object (states ``error``/``cancelled``).
        stage: what a running job with a partial result does now (``timing``…).
    """

    qualname: str
    state: str
    text: list[str]
    first_line: int
    result: dict[str, Any] | None = None
    error: ErrorObject | None = None
    stage: str | None = None


@dataclass(frozen=True)
class Placed:
    """A record placed on the current text: ``offset`` to add to its lines, or outdated."""

    record: Record
    info: FunctionInfo
    outdated: bool
    offset: int

    def current_line(self, measured_line: int) -> int:
        """Where a measured 1-based line is now."""
        return measured_line + self.offset


def function_text(lines: list[str], info: FunctionInfo) -> list[str]:
    """The definition's lines (decorators included)."""
    return lines[info.first_line - 1 : info.last_line]


def script_info(lines: list[str]) -> FunctionInfo:
    """The whole file as the ``<script>`` "function" of a whole-script result."""
    return FunctionInfo(
        qualname=SCRIPT_NAME,
        def_line=1,
        first_line=1,
        last_line=max(1, len(lines)),
        body_first_line=1,
        params=(),
        is_method=False,
        inputs_expr=None,
        inputs_line=None,
        name_column=0,
    )


def place(record: Record, source: str, model: DocumentModel | None = None) -> Placed | None:
    """Locate ``record``'s function in ``source``; ``None`` when it no longer exists.

    A whole script's result (``<script>``) belongs to the whole text: any edit outdates it.
    ``model``: ``source`` already parsed (nothing is parsed again).
    """
    if record.qualname == SCRIPT_NAME:
        lines = source.splitlines()
        return Placed(record, script_info(lines), outdated=lines != record.text, offset=0)
    if model is not None:
        if model.syntax_error is not None:
            return None
        info = model.function_named(record.qualname)
    else:
        try:
            functions = find_functions(source)
        except SourceSyntaxError:
            return None
        info = next((f for f in functions if f.qualname == record.qualname), None)
    if info is None:
        return None
    lines = source.splitlines()
    same = function_text(lines, info) == record.text
    return Placed(record, info, outdated=not same, offset=info.first_line - record.first_line)
