"""Everything the lenses, hovers and diagnostics of a document need, from ONE parse of its text.

The language server used to parse a document again for each function on every lens request
(``lens_targets`` → ``int_parameters`` → ``find_function``): quadratic, 18 s for a copy of
``torch/nn/functional.py``. Here a document version is parsed once and walked in time linear in
its size; the server keeps the :class:`DocumentModel` per document version
(:mod:`kernel_lens.lsp.models`) and answers lenses, hovers and result placement from it.

Two steps, so a big file's lenses do not wait for its diagnostics:

- :func:`analyze`: the functions, their lens targets, the module-level work lines and the
  ``load_inline`` calls (what the lenses and hovers read);
- :func:`lint`: the timing lint's findings (the diagnostics), from the same tree.

:func:`analyze_keyed` / :func:`lint_keyed` are the same two steps for a worker process: the tree
of the last few analysed versions is kept there (by key), so the lint of a version reuses the
parse its lenses made. Pure otherwise (``ast`` only).
"""

from __future__ import annotations

import ast
import bisect
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.analysis.functions import (
    FunctionInfo,
    SourceSyntaxError,
    aliases_of_imports,
    functions_in_tree,
    is_load_inline_call,
    parse_source,
)
from kernel_lens.analysis.lens_targets import LensTarget, lens_targets_in_tree
from kernel_lens.analysis.scripts import module_work_lines
from kernel_lens.analysis.timing_lint import TimingIssue, lint_timing

__all__ = [
    "DocumentModel",
    "analyze",
    "analyze_keyed",
    "analyze_tree",
    "lint",
    "lint_keyed",
]


@dataclass(frozen=True)
class DocumentModel:
    """One version of a document, parsed once.

    Attributes:
        functions: its functions and methods, in source order
            (:func:`~kernel_lens.analysis.functions.find_functions`).
        targets: their lens targets (:func:`~kernel_lens.analysis.lens_targets.lens_targets`).
        show_all: whether ``targets`` is the unfiltered set (``kernelLens.lenses.showAll``).
        module_work: 1-based lines of module-level statements that do work.
        load_inline: 1-based lines of ``load_inline(...)`` calls.
        syntax_error: ``(message, line, column)`` when the text does not parse (everything
            else is then empty).
        size: the text's length in characters.
        process_group: the text calls ``init_process_group``
            (:func:`~kernel_lens.analysis.lens_targets.uses_process_group`).
    """

    functions: tuple[FunctionInfo, ...] = ()
    targets: tuple[LensTarget, ...] = ()
    show_all: bool = False
    module_work: tuple[int, ...] = ()
    load_inline: tuple[int, ...] = ()
    syntax_error: tuple[str, int | None, int | None] | None = None
    size: int = 0
    process_group: bool = False
    _starts: tuple[int, ...] = field(default=(), repr=False, compare=False)
    _by_name: dict[str, FunctionInfo] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Listed functions never overlap (nested defs are not listed): a bisection finds the one
        # around a line, and the first of a name is the one find_function gives.
        object.__setattr__(self, "_starts", tuple(f.first_line for f in self.functions))
        by_name: dict[str, FunctionInfo] = {}
        for info in self.functions:
            by_name.setdefault(info.qualname, info)
        object.__setattr__(self, "_by_name", by_name)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled without the indexes (rebuilt on arrival): a worker sends less.
        return (
            DocumentModel,
            (
                self.functions,
                self.targets,
                self.show_all,
                self.module_work,
                self.load_inline,
                self.syntax_error,
                self.size,
                self.process_group,
            ),
        )

    def check(self) -> None:
        """Raise the text's syntax error, if it has one.

        Raises:
            SourceSyntaxError: the text does not parse.
        """
        if self.syntax_error is not None:
            raise SourceSyntaxError(*self.syntax_error)

    def function_at(self, line: int) -> FunctionInfo | None:
        """The listed function whose definition (decorators included) holds 1-based ``line``
        (``find_function(source, line=line)``)."""
        i = bisect.bisect_right(self._starts, line) - 1
        if i < 0:
            return None
        info = self.functions[i]
        return info if info.contains_line(line) else None

    def function_named(self, qualname: str) -> FunctionInfo | None:
        """The first function called ``qualname`` (``find_function(source, name=…)``)."""
        return self._by_name.get(qualname)


def analyze_tree(tree: ast.Module, source: str, *, show_all: bool = False) -> DocumentModel:
    """The model of an already parsed text."""
    aliases = aliases_of_imports(_imports(tree))
    # Calls named in the text only (an identifier is in the text as written, or NFKC-normalised
    # from other characters, which an ASCII text has none of): most files have neither, and
    # their expressions are not walked for them.
    inline: list[int] = []
    process_group = False
    if not source.isascii() or "load_inline" in source or "init_process_group" in source:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                if is_load_inline_call(node):
                    inline.append(node.lineno)
                elif _calls_process_group(node):
                    process_group = True
    infos = functions_in_tree(tree, source.splitlines(), aliases)
    targets = lens_targets_in_tree(tree, source, show_all=show_all, infos=infos, aliases=aliases)
    return DocumentModel(
        functions=tuple(infos),
        targets=tuple(targets),
        show_all=show_all,
        module_work=tuple(module_work_lines(tree)),
        load_inline=tuple(sorted(inline)),
        size=len(source),
        process_group=process_group,
    )


#: Nodes that hold statements (imports are statements: they are found in these only).
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The module's imports, wherever they are, in ``ast.walk`` order (breadth first: which
    binding of a name comes first), walking its statements only, not their expressions.

    A statement's parent is a statement, an ``except`` handler, a ``case`` or the module: the
    breadth-first walk restricted to those visits them in the order of the full walk."""
    found: list[ast.Import | ast.ImportFrom] = []
    level: list[ast.AST] = [tree]
    blocks = _BLOCKS
    while level:
        nxt: list[ast.AST] = []
        for node in level:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
                continue
            for name in node._fields:
                value = getattr(node, name, None)
                if type(value) is list and value and isinstance(value[0], blocks):
                    nxt.extend(v for v in value if isinstance(v, blocks))
        level = nxt
    return found


def _calls_process_group(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return bool(name == "init_process_group")


def _parse(source: str) -> ast.Module | DocumentModel:
    try:
        return parse_source(source)
    except SourceSyntaxError as exc:
        return DocumentModel(syntax_error=(str(exc), exc.line, exc.column), size=len(source))
    except (ValueError, RecursionError, MemoryError) as exc:
        # null bytes, nesting too deep for the parser: not Python the lenses can read
        return DocumentModel(syntax_error=(f"cannot parse: {exc}", None, None), size=len(source))


def analyze(source: str, *, show_all: bool = False) -> DocumentModel:
    """Parse ``source`` once and find what its lenses and hovers need (a text that does not
    parse gives a model with only its ``syntax_error``)."""
    tree = _parse(source)
    if isinstance(tree, DocumentModel):
        return tree
    return analyze_tree(tree, source, show_all=show_all)


def lint(source: str, tree: ast.Module | None = None) -> tuple[TimingIssue, ...]:
    """The timing lint's findings (``()`` when the text does not parse)."""
    if tree is None:
        parsed = _parse(source)
        if isinstance(parsed, DocumentModel):
            return ()
        tree = parsed
    return tuple(lint_timing(source, tree))


#: Trees of the last versions analysed in this (worker) process, by the caller's key.
_TREES: OrderedDict[Any, ast.Module | None] = OrderedDict()
#: How many trees a worker keeps (a 6 MB file's tree is a few hundred MB of objects; the lint
#: of a version comes right after its model).
TREES_KEPT = 1


def analyze_keyed(key: Any, source: str, show_all: bool = False) -> DocumentModel:
    """:func:`analyze` in a worker process, keeping the tree for :func:`lint_keyed`."""
    parsed = _parse(source)
    _TREES[key] = None if isinstance(parsed, DocumentModel) else parsed
    _TREES.move_to_end(key)
    while len(_TREES) > TREES_KEPT:
        _TREES.popitem(last=False)
    if isinstance(parsed, DocumentModel):
        return parsed
    return analyze_tree(parsed, source, show_all=show_all)


def lint_keyed(key: Any, source: str) -> tuple[TimingIssue, ...]:
    """:func:`lint` in a worker process, on the tree :func:`analyze_keyed` kept for ``key``
    (parsed here only when it was not kept)."""
    if key in _TREES:
        tree = _TREES[key]
        return () if tree is None else tuple(lint_timing(source, tree))
    return lint(source)
