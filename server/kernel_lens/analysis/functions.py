"""Find functions in Python source text: names, line ranges and input directives.

Pure (``ast`` only): used by the agent to pick the function to profile and by the language server
to place code lenses, so both agree on what a "function" is and where it starts.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeGuard

__all__ = [
    "CONTEXT_DIRECTIVE_RE",
    "INPUTS_DIRECTIVE_RE",
    "FunctionInfo",
    "NotInFunctionError",
    "SourceSyntaxError",
    "TargetKind",
    "aliases_of_imports",
    "dotted_name",
    "find_function",
    "find_functions",
    "function_at",
    "functions_in_tree",
    "import_aliases",
    "load_inline_lines",
    "load_inline_lines_of",
    "parse_source",
    "resolve_name",
]

#: Resolved decorator names that make a ``@triton.jit`` kernel (``@triton.autotune`` and
#: ``@triton.heuristics`` only ever wrap one).
_TRITON_KERNEL_DECORATORS = frozenset(
    {
        "triton.jit",
        "triton.autotune",
        "triton.heuristics",
        "triton.runtime.jit",
        "triton.runtime.jit.jit",
        "triton.runtime.autotune",
        "triton.runtime.autotuner.autotune",
        "triton.runtime.autotuner.heuristics",
    }
)
INPUTS_DIRECTIVE_RE = re.compile(r"^\s*#\s*kernel-lens:\s*inputs\s*=\s*(?P<expr>.+?)\s*$")
#: ``# kernel-lens: context = torch.autocast("cuda", dtype=torch.bfloat16)`` above a def: the
#: context manager(s) every stage runs the function under, where no capture gives one.
CONTEXT_DIRECTIVE_RE = re.compile(r"^\s*#\s*kernel-lens:\s*context\s*=\s*(?P<expr>.+?)\s*$")
#: ``def name`` on a line (the name's column is where the function's lens and symbol point).
_DEF_NAME_RE = re.compile(r"\bdef\s+(\w+)")


class SourceSyntaxError(ValueError):
    """The source text does not parse; ``line`` is 1-based (or ``None``)."""

    def __init__(self, message: str, line: int | None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class FunctionInfo:
    """A function or method found in source text.

    Attributes:
        qualname: ``name`` for a module-level function, ``Class.name`` for a method
            (nested classes give ``Outer.Inner.name``); nested functions are not listed.
        def_line: 1-based line of the ``def`` keyword.
        first_line: 1-based first line of the definition (the first decorator, if any).
        last_line: 1-based last line of the body.
        body_first_line: 1-based line of the first statement of the body.
        params: parameter names in order (``self``/``cls`` included for methods).
        is_method: defined directly in a class body.
        inputs_expr: the expression of a ``# kernel-lens: inputs = …`` directive directly above
            the definition, if any.
        inputs_line: 1-based line of that directive.
        name_column: 0-based column of the function's name on ``def_line``.
        context_expr: the expression of a ``# kernel-lens: context = …`` directive in the
            comment block directly above the definition, if any.
        context_line: 1-based line of that directive.
        decorators: the decorators' source text (``triton.jit``, ``torch.compile(mode=…)``).
        decorator_targets: what each decorator names once the module's imports are resolved
            (``from numba import cuda`` makes ``cuda.jit`` ``numba.cuda.jit``; ``import triton as
            tr`` makes ``tr.jit`` ``triton.jit``); a name the imports do not bind stays as written.
    """

    qualname: str
    def_line: int
    first_line: int
    last_line: int
    body_first_line: int
    params: tuple[str, ...]
    is_method: bool
    inputs_expr: str | None
    inputs_line: int | None
    name_column: int
    decorators: tuple[str, ...] = ()
    decorator_targets: tuple[str, ...] = ()
    context_expr: str | None = None
    context_line: int | None = None

    @property
    def is_triton_kernel(self) -> bool:
        """Decorated with Triton's ``jit`` (under any import name), maybe under ``autotune``.

        The decorator is resolved through the module's imports, not matched by its spelling:
        numba's ``@cuda.jit`` or ``@numba.jit`` is not a Triton kernel.
        """
        return any(t in _TRITON_KERNEL_DECORATORS for t in self.decorator_targets)

    @property
    def is_numba_kernel(self) -> bool:
        """Decorated with something numba's (``@cuda.jit``, ``@numba.njit``, ``@vectorize``…)."""
        return any(t == "numba" or t.startswith("numba.") for t in self.decorator_targets)

    @property
    def name(self) -> str:
        """The bare function name (last component of ``qualname``)."""
        return self.qualname.rsplit(".", 1)[-1]

    def contains_line(self, line: int) -> bool:
        """Whether the 1-based ``line`` lies within the definition (decorators included)."""
        return self.first_line <= line <= self.last_line


#: Python's parser gives up on deep nesting with ``MemoryError`` (its stack) or
#: ``RecursionError`` rather than a ``SyntaxError``: both are said as this, on the deepest line.
TOO_DEEP = "nested too deeply for Python to parse"


def deepest_line(source: str) -> int | None:
    """The 1-based line most deeply nested within itself (brackets open at once, or a run of
    unary operators): where a parser that gave up on depth most likely did."""
    best, where = 0, None
    for number, line in enumerate(source.splitlines(), 1):
        depth = top = 0
        for ch in line:
            if ch in "([{":
                depth += 1
                top = max(top, depth)
            elif ch in ")]}":
                depth -= 1
        runs = max((len(m.group()) for m in re.finditer(r"(?:[-+~]\s*){2,}", line)), default=0)
        score = max(top, runs)
        if score > best:
            best, where = score, number
    return where


def too_deep(source: str) -> SourceSyntaxError:
    """The ``SyntaxError``-like error for a file Python's parser gave up on (depth)."""
    line = deepest_line(source)
    where = f" (line {line})" if line else ""
    return SourceSyntaxError(f"{TOO_DEEP}{where}", line)


def _parse(source: str, filename: str) -> ast.Module:
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise SourceSyntaxError(
            f"{exc.msg} (line {exc.lineno})" if exc.lineno else str(exc.msg),
            exc.lineno,
            (exc.offset - 1) if exc.offset else None,
        ) from None
    except (MemoryError, RecursionError):
        raise too_deep(source) from None


def _directive_above(
    lines: list[str], first_line: int, pattern: re.Pattern[str] = INPUTS_DIRECTIVE_RE
) -> tuple[str | None, int | None]:
    """The directive (inputs, or ``pattern``'s) in the comment block directly above
    ``first_line`` (1-based)."""
    idx = first_line - 2
    while idx >= 0 and lines[idx].lstrip().startswith("#"):
        match = pattern.match(lines[idx])
        if match:
            return match.group("expr"), idx + 1
        idx -= 1
    return None, None


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """What each imported name of a module stands for: ``{"tl": "triton.language", "jit":
    "triton.jit", "cuda": "numba.cuda", "torch": "torch"}`` (imports anywhere in the file, the
    first binding of a name wins; ``from triton import *`` binds ``jit`` to ``triton.jit``)."""
    return aliases_of_imports(
        node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
    )


def aliases_of_imports(imports: Iterable[ast.AST]) -> dict[str, str]:
    """:func:`import_aliases` of a module's import statements (in ``ast.walk`` order)."""
    aliases: dict[str, str] = {}
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases.setdefault(alias.asname, alias.name)
                else:
                    top = alias.name.split(".", 1)[0]
                    aliases.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name == "*":
                    if node.module == "triton":
                        aliases.setdefault("jit", "triton.jit")
                    continue
                aliases.setdefault(alias.asname or alias.name, f"{node.module}.{alias.name}")
    return aliases


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name (a call's callee for a call), else None."""
    if isinstance(node, ast.Call):
        node = node.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def resolve_name(dotted: str, aliases: dict[str, str]) -> str:
    """``dotted`` with its first component replaced by what the imports bind it to."""
    head, _, rest = dotted.partition(".")
    base = aliases.get(head, head)
    return f"{base}.{rest}" if rest else base


def find_functions(source: str, filename: str = "<source>") -> list[FunctionInfo]:
    """List the module-level functions and class methods of ``source``, in source order.

    Raises:
        SourceSyntaxError: the text does not parse.
    """
    return functions_in_tree(_parse(source, filename), source.splitlines())


def parse_source(source: str, filename: str = "<source>") -> ast.Module:
    """``ast.parse`` with a syntax error as :class:`SourceSyntaxError`.

    Raises:
        SourceSyntaxError: the text does not parse.
    """
    return _parse(source, filename)


def functions_in_tree(
    tree: ast.Module, lines: list[str], aliases: dict[str, str] | None = None
) -> list[FunctionInfo]:
    """:func:`find_functions` of an already parsed module (``lines``: its text's lines)."""
    if aliases is None:
        aliases = import_aliases(tree)
    found: list[FunctionInfo] = []

    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                # Above the decorators, or between the last decorator and the def.
                expr, expr_line = _directive_above(lines, first)
                if expr is None and first != node.lineno:
                    expr, expr_line = _directive_above(lines, node.lineno)
                ctx, ctx_line = _directive_above(lines, first, CONTEXT_DIRECTIVE_RE)
                if ctx is None and first != node.lineno:
                    ctx, ctx_line = _directive_above(lines, node.lineno, CONTEXT_DIRECTIVE_RE)
                def_text = lines[node.lineno - 1] if node.lineno - 1 < len(lines) else ""
                # One compiled pattern for every name (a pattern per name costs a compile each).
                name_match = next(
                    (m for m in _DEF_NAME_RE.finditer(def_text) if m.group(1) == node.name), None
                )
                col = name_match.start(1) if name_match else 0
                args = node.args
                params = tuple(
                    a.arg
                    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
                    + ([args.vararg] if args.vararg else [])
                    + ([args.kwarg] if args.kwarg else [])
                )
                found.append(
                    FunctionInfo(
                        qualname=prefix + node.name,
                        def_line=node.lineno,
                        first_line=first,
                        last_line=node.end_lineno or node.lineno,
                        body_first_line=node.body[0].lineno,
                        params=params,
                        is_method=in_class,
                        inputs_expr=expr,
                        inputs_line=expr_line,
                        context_expr=ctx,
                        context_line=ctx_line,
                        name_column=max(col, 0),
                        decorators=tuple(ast.unparse(d) for d in node.decorator_list),
                        decorator_targets=tuple(
                            resolve_name(name, aliases)
                            for name in (dotted_name(d) for d in node.decorator_list)
                            if name is not None
                        ),
                    )
                )
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.", True)

    visit(tree.body, "", False)
    return found


def find_function(
    source: str,
    *,
    name: str | None = None,
    line: int | None = None,
    filename: str = "<source>",
) -> FunctionInfo | None:
    """The function called ``name`` (``f`` or ``Class.f``), or the innermost listed one at ``line``.

    Args:
        source: the module's text.
        name: qualified name to look for.
        line: 1-based line inside the definition (used when ``name`` is None).
        filename: used in syntax error messages.

    Returns:
        The function, or ``None`` when nothing matches.

    Raises:
        SourceSyntaxError: the text does not parse.
    """
    functions = find_functions(source, filename)
    if name is not None:
        for info in functions:
            if info.qualname == name:
                return info
        return None
    if line is not None:
        containing = [f for f in functions if f.contains_line(line)]
        if containing:
            # Methods come after their class's earlier siblings; the narrowest range wins.
            return min(containing, key=lambda f: f.last_line - f.first_line)
    return None


#: What a position is resolved to: a function that launches kernels, or a ``@triton.jit`` kernel.
TargetKind = Literal["function", "kernel"]


class NotInFunctionError(ValueError):
    """The position is in no function (or kernel) of the wanted kind; ``str()`` is user-ready.

    Attributes:
        line: the 1-based line of the position.
    """

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def function_at(
    source: str,
    line: int,
    character: int = 0,
    *,
    kind: TargetKind = "function",
    filename: str = "<source>",
) -> FunctionInfo:
    """The function (or ``@triton.jit`` kernel) that contains a 0-based editor position.

    ``kind="function"`` gives the innermost listed function or method around the position (a
    nested ``def`` belongs to the function it is in: only listed functions can be profiled),
    never a kernel: a kernel is not profiled by itself, the function that launches it is.
    ``kind="kernel"`` gives the ``@triton.jit`` kernel around the position. Decorator lines
    belong to their function. Resolution is per line, so ``character`` (0-based, LSP) does not
    change the answer; it is taken so that callers pass the whole position.

    Args:
        source: the module's text.
        line: 0-based line (LSP ``Position.line``).
        character: 0-based column (LSP ``Position.character``).
        kind: what to look for.
        filename: used in syntax error messages.

    Returns:
        The function or kernel.

    Raises:
        SourceSyntaxError: the text does not parse.
        NotInFunctionError: nothing of ``kind`` at the position; the message says what to do.
    """
    del character  # line-granular on purpose (see above)
    line1 = line + 1
    info = find_function(source, line=line1, filename=filename)
    if kind == "kernel":
        if info is None or not info.is_triton_kernel:
            raise NotInFunctionError(
                "Kernel Lens: put the cursor in a @triton.jit kernel "
                f"(line {line1} is not in one).",
                line1,
            )
        return info
    if info is None:
        raise NotInFunctionError(
            "Kernel Lens: put the cursor in a function that launches kernels "
            f"(line {line1} is not in one).",
            line1,
        )
    if info.is_triton_kernel:
        raise NotInFunctionError(
            f"Kernel Lens: {info.qualname} is a @triton.jit kernel, which is not profiled by "
            "itself: put the cursor in the function that launches it.",
            line1,
        )
    return info


def load_inline_lines(source: str) -> list[int]:
    """1-based lines of the ``load_inline(...)`` calls in ``source`` (``[]`` if it won't parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, MemoryError, RecursionError):
        return []
    return load_inline_lines_of(tree)


def load_inline_lines_of(tree: ast.AST) -> list[int]:
    """:func:`load_inline_lines` of an already parsed module."""
    return sorted(node.lineno for node in ast.walk(tree) if is_load_inline_call(node))


def is_load_inline_call(node: ast.AST) -> TypeGuard[ast.Call]:
    """A ``load_inline(...)`` call (``torch.utils.cpp_extension.load_inline`` or its alias)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "load_inline"
