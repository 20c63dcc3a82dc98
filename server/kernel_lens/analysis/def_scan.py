"""A document's functions and their lens roles without ``ast``: the first answer for a big file.

``ast.parse`` of a 6 MB file takes seconds (CPython builds a million nodes), so a big file's
first code-lens answer comes from this scan instead, made in time linear in the text with a few
compiled patterns (no per-token Python loop over the whole text):

1. strings and comments are blanked (``_STRINGS``: triple-quoted, prefixed, escaped, a string
   left open at the end of its line); a multi-line string keeps its line breaks, so that a
   ``def`` inside a docstring is never seen and every line keeps its number;
2. the lines that start inside brackets or after a backslash are found (bracket groups on one
   line are removed by a few passes of one pattern, then the few brackets left are counted);
3. the logical lines of the module body at column 0, and of each class body at its
   indentation, give the functions and classes (``def``, ``async def``, ``class``) and their
   decorators, with the qualified names :func:`~kernel_lens.analysis.functions.find_functions`
   gives (module-level functions and methods, nested classes included; nested functions and
   those under ``if``/``try`` not).

:func:`outline` then decides the roles it can be sure of (:func:`outline_targets`), as
:func:`~kernel_lens.analysis.lens_targets.lens_targets` would: a Triton kernel (its decorator
resolved through the imports), a function with tensor work in its own text (a tensor module's
name, a ``@`` product, a ``k[grid](…)`` launch, ``.cuda(``), an inputs directive, an
``nn.Module``'s ``forward``, a ``name_inputs`` factory. What needs the whole tree (tensor work
through calls to other functions, names the script uses, trivial bodies, sweeps through kernel
launches) is left to the full model, so the full model only adds lenses: a function this scan
gives a role keeps it, with the same row (a function whose row the tree could change — an int
parameter in a file with launches — is left to the full model). ``tests/unit/test_outline.py``
checks this against ``ast`` on real files.
"""

from __future__ import annotations

import gc
import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

from kernel_lens.analysis.functions import (
    _TRITON_KERNEL_DECORATORS,
    _directive_above,
)
from kernel_lens.analysis.lens_targets import (
    LensRole,
    _directive_names,
    _is_tensor_module,
    is_input_factory,
)

__all__ = [
    "Outline",
    "OutlineDef",
    "blank_strings",
    "last_line",
    "outline",
    "outline_targets",
]

#: A comment, or a string (its prefix, if any, stays: letters of no consequence here). A
#: backslash escapes the next character in every kind of string, raw ones included, as far as
#: finding the end goes; a one-line string left open ends at its line's end (as the tokenizer
#: reports it), an open triple-quoted one at the end of the text.
_STRINGS = re.compile(
    r"""\#[^\n]*
    |\"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
    |'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|\Z)
    |"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|(?=\n)|\Z)
    |'[^'\\\n]*(?:\\.[^'\\\n]*)*(?:'|(?=\n)|\Z)""",
    re.S | re.X,
)
#: A bracket group on one line, with no bracket inside (removed pass after pass).
_GROUP = re.compile(r"[(\[{][^()\[\]{}\n]*[)\]}]")
#: Passes of :data:`_GROUP` (each removes one level of nesting; what is left is counted).
_GROUP_PASSES = 8
#: What is left that can carry a line on: brackets, a backslash at a line's end.
_CARRY = re.compile(r"[(\[{]|[)\]}]|\\\n")
#: A logical line's head (after the indentation the pattern starts with).
_HEAD = r"(?:(?P<d>@)|(?:async[ \t]+)?def[ \t]+(?P<f>\w+)|class[ \t]+(?P<k>\w+)|(?P<o>[^ \t\n\f]))"
_TOP = re.compile(r"^" + _HEAD, re.M)
#: Any non-blank line and its indentation.
_INDENTED = re.compile(r"^([ \t]*)(?=[^ \t\n\f])", re.M)
#: ``import a.b as c, d`` and ``from m import (a as b, c)`` (the names up to the line's end).
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<m>[\w.]+)[ \t]+import(?P<fn>[^\n]*)|import(?P<n>[ \t][^\n]*))", re.M
)
_IMPORT_WORD = re.compile(r"\bimport\b")
_DOTTED = re.compile(r"[ \t]*([^\W\d]\w*(?:[ \t]*\.[ \t]*[^\W\d]\w*)*)[ \t]*")
#: A call whose callee is a subscript (a kernel launch ``k[grid](…)``), a ``@`` product (not a
#: decorator: something precedes it on its line), ``.cuda(``.
_WORK = r"\](?=[ \t]*\()|@|\.[ \t]*cuda[ \t]*\("
_LAUNCH = re.compile(r"\][ \t]*\(")
_INT_DEFAULT = re.compile(r"=[ \t\n]*\d")
_PROCESS_GROUP = re.compile(r"\binit_process_group[ \t]*\(")
_HEADER_END = re.compile(r":[ \t]*(?:\n|$)", re.M)

#: Patterns of a class body's logical lines, by indentation.
_BODY_PATTERNS: dict[str, re.Pattern[str]] = {}


def _body_pattern(indent: str) -> re.Pattern[str]:
    found = _BODY_PATTERNS.get(indent)
    if found is None:
        found = _BODY_PATTERNS[indent] = re.compile(r"^" + re.escape(indent) + _HEAD, re.M)
    return found


def blank_strings(text: str) -> str:
    """``text`` with its comments removed and each string made ``""`` (a multi-line one keeps
    its line breaks, and what follows it on its last line keeps its column)."""

    def blank(m: re.Match[str]) -> str:
        s = m.group()
        if s[0] == "#":
            return ""
        breaks = s.count("\n")
        if not breaks:
            return '""'
        return '""' + "\n" * breaks + " " * (len(s) - s.rfind("\n") - 1)

    return _STRINGS.sub(blank, text)


class OutlineDef(NamedTuple):
    """A function or class of the text as the scan sees it.

    Attributes:
        kind: ``def`` or ``class``.
        qualname: ``f``, ``Class.f``, ``Outer.Inner``.
        def_line: 1-based line of the ``def``/``class`` keyword.
        first_line: 1-based line of its first decorator (``def_line`` without).
        end_line: 1-based line before the next statement at its level (trailing blank and
            comment lines included: more than ``ast``'s ``end_lineno``).
        start: offset of its first decorator (or keyword) in the text.
        def_start: offset of the start of its ``def``/``class`` line.
        end: offset of the next statement at its level (or the end of its block).
        decorators: each decorator's text (strings blanked), ``@`` excluded.
        is_method: defined directly in a class body.
    """

    kind: str
    qualname: str
    def_line: int
    first_line: int
    end_line: int
    start: int
    def_start: int
    end: int
    decorators: tuple[str, ...]
    is_method: bool

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Outline:
    """What the scan found in a text.

    Attributes:
        defs: functions and classes, in source order (methods after their class).
        code: the text with strings and comments blanked (same lines).
        aliases: each imported name and everything the file's imports bind it to.
        imports_complete: every ``import`` keyword of the text was read as a statement (an
            import after ``;`` or ``:`` on a line is not: then no name is resolved).
        process_group: the text calls ``init_process_group``.
        launches: the text has a call of a subscript (``k[grid](…)``).
    """

    defs: tuple[OutlineDef, ...]
    code: str
    aliases: dict[str, frozenset[str]]
    imports_complete: bool
    process_group: bool
    launches: bool

    @property
    def functions(self) -> list[OutlineDef]:
        return [d for d in self.defs if d.kind == "def"]


def _carried_lines(code: str) -> set[int]:
    """1-based lines that start inside brackets or after a backslash (not logical lines)."""
    reduced = code
    for _ in range(_GROUP_PASSES):  # brackets nested deeper are counted one by one below
        reduced, n = _GROUP.subn("", reduced)
        if not n:
            break
    carried: set[int] = set()
    depth = 0
    line = 1
    at = 0
    open_line = 0
    for m in _CARRY.finditer(reduced):
        pos = m.start()
        line += reduced.count("\n", at, pos)
        at = pos
        ch = m.group()
        if ch in "([{":
            if depth == 0:
                open_line = line
            depth += 1
        elif ch in ")]}":
            if depth > 0:
                depth -= 1
                if depth == 0 and line > open_line:
                    carried.update(range(open_line + 1, line + 1))
        else:  # a backslash and its line break
            carried.add(line + 1)
            at = pos + 2
            line += 1
    if depth > 0:  # left open (a syntax error): its lines up to the end
        carried.update(range(open_line + 1, line + 1))
    return carried


def _norm(name: str) -> str:
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


def _decorator_texts(
    code: str, decorators: list[tuple[int, int, int]], pos: int
) -> tuple[str, ...]:
    """Each decorator's text (after its ``@``, up to the next decorator or the definition at
    ``pos``)."""
    return tuple(
        code[after : (decorators[i + 1][1] if i + 1 < len(decorators) else pos)].strip()
        for i, (_, _, after) in enumerate(decorators)
    )


class _Scan:
    def __init__(self, code: str) -> None:
        self.code = code
        self.carried = _carried_lines(code)
        self.defs: list[OutlineDef] = []

    def block(
        self,
        indent: str,
        start: int,
        end: int,
        line: int,
        prefix: str,
        in_class: bool,
    ) -> None:
        """The logical lines of one block (the module, or a class body) between offsets
        ``start`` and ``end``; ``line`` is the line at ``start``. A definition ends where the
        next statement of the block starts (its first decorator's line for a definition)."""
        code = self.code
        carried = self.carried
        count = code.count
        pattern = _TOP if not indent else _body_pattern(indent)
        decorators: list[tuple[int, int, int]] = []  # (line, offset of '@', offset after)
        # the definition being read: (kind, name, def line, first line, offsets of its start
        # and of its keyword's line, decorators' texts)
        pending: tuple[str, str, int, int, int, int, tuple[str, ...]] | None = None
        at = start
        for m in pattern.finditer(code, start, end):
            pos = m.start()
            line += count("\n", at, pos)
            at = pos
            if carried and line in carried:
                continue
            group = m.lastgroup
            if group == "d":
                decorators.append((line, pos, m.end()))
                continue
            first_line, first_pos = (
                (decorators[0][0], decorators[0][1]) if decorators else (line, pos)
            )
            if pending is not None:
                self._made(pending, first_line - 1, first_pos, in_class, indent)
                pending = None
            if group == "o":
                decorators = []
                continue
            name = m.group(group or 0)
            if not name.isascii():
                name = unicodedata.normalize("NFKC", name)
            texts: tuple[str, ...] = ()
            if decorators:
                texts = _decorator_texts(code, decorators, pos)
                decorators = []
            kind = "def" if group == "f" else "class"
            pending = (kind, prefix + name, line, first_line, first_pos, pos, texts)
        if pending is not None:
            self._made(pending, line + count("\n", at, end), end, in_class, indent)

    def _made(
        self,
        pending: tuple[str, str, int, int, int, int, tuple[str, ...]],
        last: int,
        end: int,
        in_class: bool,
        indent: str,
    ) -> None:
        """The definition read (``pending``), ending on line ``last`` at offset ``end``; a
        class's members after it."""
        kind, name, def_line, p_first, p_start, p_def, texts = pending
        made = OutlineDef(kind, name, def_line, p_first, last, p_start, p_def, end, texts, in_class)
        self.defs.append(made)
        if kind == "class":
            self.class_body(made, indent)

    def class_body(self, cls: OutlineDef, own: str) -> None:
        """The members of a class (its ``class`` line indented by ``own``): the first logical
        line below that line gives the body's indentation."""
        code = self.code
        end = cls.end
        header = code.find("\n", cls.def_start)
        if header < 0 or header >= end:
            return
        line = cls.def_line
        at = header
        for m in _INDENTED.finditer(code, header + 1, end):
            pos = m.start()
            line += code.count("\n", at, pos)
            at = pos
            if line in self.carried:
                continue
            indent = m.group(1)
            if len(indent) <= len(own) or not indent.startswith(own):
                return  # a one-line body (``class A: pass``), or not Python
            self.block(indent, pos, end, line, cls.qualname + ".", True)
            return


def _import_lines(code: str) -> list[int]:
    """The offsets of the lines with "import" in them (a pattern anchored at every line start
    costs more)."""
    starts: list[int] = []
    at = code.find("import")
    while at >= 0:
        line_start = code.rfind("\n", 0, at) + 1
        if not starts or starts[-1] != line_start:
            starts.append(line_start)
        nxt = code.find("\n", at)
        at = code.find("import", nxt) if nxt >= 0 else -1
    return starts


def _read_imports(code: str) -> tuple[dict[str, set[str]], bool]:
    """Every binding the imports make (``ast``'s, in any order), and whether every ``import``
    keyword was read."""
    bindings: dict[str, set[str]] = {}
    read = 0

    def bind(name: str, target: str) -> None:
        bindings.setdefault(_norm(name), set()).add(target)

    complete = True
    for line_start in _import_lines(code):
        m = _IMPORT.match(code, line_start)
        if m is None:
            continue
        read += 1
        module = m.group("m")
        names = m.group("fn") if module is not None else m.group("n")
        names = names.strip()
        if names.startswith("("):
            close = code.find(")", m.start("fn"))
            if close < 0:
                complete = False
                continue
            names = code[m.start("fn") : close].strip().lstrip("(")
        elif names.endswith("\\") or ";" in names:
            complete = False
            continue
        for part in names.split(","):
            words = part.split()
            if not words:
                continue
            if len(words) == 3 and words[1] == "as":
                alias: str | None = words[2]
            elif len(words) == 1:
                alias = None
            else:
                complete = False
                continue
            dotted = words[0]
            if module is None:
                bind(alias or dotted.split(".", 1)[0], dotted if alias else dotted.split(".", 1)[0])
            elif module.startswith(".") or dotted == "":
                continue  # relative: ast's aliases skip it
            elif dotted == "*":
                if module == "triton":
                    bind("jit", "triton.jit")
            else:
                bind(alias or dotted, f"{module}.{dotted}")
    if complete and code.count("import") != read:
        # an identifier with "import" in it, or an import this pattern does not read
        complete = sum(1 for _ in _IMPORT_WORD.finditer(code)) == read
    return bindings, complete


def outline(source: str) -> Outline:
    """Scan ``source`` (any text: one that does not parse gives what can be read of it)."""
    was = gc.isenabled()
    gc.disable()  # tens of thousands of new tuples, no cycles: collections would walk them all
    try:
        return _outline(source)
    finally:
        if was:
            gc.enable()


def _outline(source: str) -> Outline:
    text = source.replace("\r\n", "\n").replace("\r", "\n") if "\r" in source else source
    code = blank_strings(text)
    scan = _Scan(code)
    scan.block("", 0, len(code), 1, "", False)
    bindings, complete = _read_imports(code)
    process_group = False
    for m in _PROCESS_GROUP.finditer(code) if "init_process_group" in code else ():
        before = code[max(0, m.start() - 20) : m.start()].split()
        if not before or before[-1] != "def":
            process_group = True
            break
    return Outline(
        defs=tuple(scan.defs),
        code=code,
        aliases={k: frozenset(v) for k, v in bindings.items()},
        imports_complete=complete,
        process_group=process_group,
        launches=_LAUNCH.search(code) is not None,
    )


def _resolutions(dotted: str, aliases: dict[str, frozenset[str]]) -> frozenset[str]:
    head, _, rest = dotted.partition(".")
    bases = aliases.get(head) or frozenset({head})
    return frozenset(f"{b}.{rest}" if rest else b for b in bases)


def _decorator_name(text: str) -> str | None | bool:
    """The dotted name ``ast``'s ``dotted_name`` gives a decorator (``None``: none), or
    ``False`` when its text is not plain enough to tell."""
    m = _DOTTED.match(text)
    if m is None:
        return None if text and not (text[0].isalpha() or text[0] == "_") else False
    name = re.sub(r"[ \t]+", "", m.group(1))
    rest = text[m.end() :]
    if not rest:
        return name
    if rest[0] != "(":
        return False
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return name if not rest[i + 1 :].strip() else False
    return False


def outline_targets(
    source: str, scanned: Outline | None = None
) -> tuple[list[tuple[OutlineDef, LensRole]], bool]:
    """Each function of the scan with the role it surely gets (``none`` where the scan cannot
    tell: the full model may give it one), and whether the text calls
    ``init_process_group``."""
    was = gc.isenabled()
    gc.disable()
    try:
        return _outline_targets(source, scanned)
    finally:
        if was:
            gc.enable()


def _work_pattern(aliases: dict[str, frozenset[str]]) -> re.Pattern[str]:
    """Tensor work in a function's text: `_WORK`, or a name the imports bind to a tensor
    module followed by ``.``, ``(`` or ``[``."""
    tensor_names = sorted(
        name
        for name, targets in aliases.items()
        if all(_is_tensor_module(t) for t in targets) and name.isidentifier()
    )
    alias_re = (
        r"(?:" + "|".join(re.escape(n) for n in tensor_names) + r")(?=[ \t]*[.(\[])"
        if tensor_names
        else None
    )
    return re.compile(_WORK + ("|" + alias_re if alias_re else ""))


class _Roles:
    """The role the scan gives each function of an outline (see `outline_targets`)."""

    def __init__(self, source: str, found: Outline) -> None:
        self.found = found
        self.code = found.code
        self.aliases = found.aliases if found.imports_complete else {}
        self.work = _work_pattern(self.aliases)
        self.listed = {d.qualname for d in found.functions}
        self.factories = _directive_names(source)
        self.lines = source.splitlines() if "kernel-lens" in source else None
        # nn.Module classes: bases resolved through the imports, or another such class of the
        # file.
        self.classes = {d.qualname: d for d in found.defs if d.kind == "class"}
        self.modules: dict[str, bool | None] = {}
        # Two defs of one name (``@overload`` stubs, a property's setter): the tree's facts are
        # the first one's for all (``lens_targets`` keys them by name).
        self.first: dict[str, OutlineDef] = {}
        for d in found.functions:
            self.first.setdefault(d.qualname, d)

    def is_module(self, qualname: str, seen: frozenset[str] = frozenset()) -> bool | None:
        """Whether the class is an ``nn.Module`` (``None``: the scan cannot tell)."""
        if qualname in self.modules:
            return self.modules[qualname]
        if qualname in seen or qualname not in self.classes:
            return False
        d = self.classes[qualname]
        header = self.code[d.def_start : d.end].lstrip(" \t")
        m = re.match(r"class[ \t]+\w+[ \t]*(\[[^\]]*\])?[ \t]*", header)
        result: bool | None = False
        if m is not None and header[m.end() : m.end() + 1] == "(":
            close = header.find(")", m.end())
            inner = header[m.end() + 1 : close] if close > 0 else ""
            if close < 0 or any(c in inner for c in "([{"):
                result = None
            else:
                result = self._bases_module(inner, seen | {qualname})
        self.modules[qualname] = result
        return result

    def _bases_module(self, inner: str, seen: frozenset[str]) -> bool | None:
        """Whether one of the bases listed in ``inner`` (a class header's parentheses) is an
        ``nn.Module``."""
        aliases = self.aliases
        result: bool | None = False
        for part in inner.split(","):
            part = part.strip()
            if not part or re.match(r"\w+[ \t]*=", part):
                continue
            base = _DOTTED.fullmatch(part)
            if base is None:
                continue
            name = re.sub(r"[ \t\n]+", "", base.group(1))
            if not aliases and not self.found.imports_complete:
                return None
            if any(r.startswith("torch.nn") for r in _resolutions(name, aliases)):
                return True
            sub = self.is_module(name, seen)
            if sub is None:
                result = None
            elif sub:
                return True
        return result

    def role(self, d: OutlineDef) -> LensRole:
        qualname = d.qualname
        name = qualname.rpartition(".")[2]
        if d.decorators:
            by_decorators = _decorator_role(d, self.found, self.aliases)
            if by_decorators is not None:
                return by_decorators
        if (name[:2] == "__" and name[-2:] == "__" and name != "__call__") or (
            is_input_factory(name) or name in self.factories
        ):
            return "none"
        body = self.first[qualname]
        role = self._profiled(d, name, body)
        if role == "profile" and self.found.launches:
            # Sweeps are found through kernel launches in the tree: a function with an int
            # parameter default is left to it (its row could gain a Sweep lens).
            code = self.code
            head_end = _HEADER_END.search(code, body.def_start, body.end)
            if _INT_DEFAULT.search(
                code, body.def_start, head_end.start() if head_end else body.end
            ):
                role = "none"
        return role

    def _profiled(self, d: OutlineDef, name: str, body: OutlineDef) -> LensRole:
        """``profile`` for a function the scan surely profiles: a directive above it, an
        ``nn.Module``'s ``forward``, tensor work in a public function, or an ``_inputs``
        companion."""
        lines = self.lines
        if lines is not None and (
            _directive_above(lines, d.first_line)[0] is not None
            or (d.first_line != d.def_line and _directive_above(lines, d.def_line)[0] is not None)
        ):
            return "profile"
        if d.is_method and name == "forward" and self.is_module(d.qualname.rpartition(".")[0]):
            return "profile"
        if name[:1] == "_":
            return "none"  # a private helper unless the script uses it: the full model knows
        m = self.work.search(self.code, body.def_start, body.end)
        if m is not None and (m.group()[0] in "]." or _has_work(body, self.code, self.work, m)):
            return "profile"
        if not d.is_method and name + "_inputs" in self.listed:
            return "profile"
        return "none"


def _outline_targets(
    source: str, scanned: Outline | None
) -> tuple[list[tuple[OutlineDef, LensRole]], bool]:
    found = scanned if scanned is not None else outline(source)
    roles = _Roles(source, found)
    return [(d, roles.role(d)) for d in found.functions], found.process_group


def _decorator_role(
    d: OutlineDef, found: Outline, aliases: dict[str, frozenset[str]]
) -> LensRole | None:
    """The role a function's decorators decide (a Triton kernel, a numba one: no lens), ``none``
    when the scan cannot tell what they are, ``None`` when they decide nothing."""
    targets: set[str] = set()
    for text in d.decorators:
        dotted = _decorator_name(text)
        if dotted is None:
            continue
        head = text.lstrip().split(".", 1)[0].split("(", 1)[0].strip()
        matters = any(h.startswith(("triton", "numba")) for h in _resolutions(head, aliases))
        if dotted is False:
            if matters or not found.imports_complete:
                return "none"  # cannot tell: left to the full model
            continue
        assert isinstance(dotted, str)
        if not found.imports_complete:
            return "none"
        resolved = _resolutions(dotted, aliases)
        if len(resolved) > 1 and matters:
            return "none"
        targets |= resolved
    if any(t in _TRITON_KERNEL_DECORATORS for t in targets):
        return "kernel"
    if any(t == "numba" or t.startswith("numba.") for t in targets):
        return "none"
    return None


def _has_work(d: OutlineDef, code: str, work: re.Pattern[str], m: re.Match[str] | None) -> bool:
    """Whether the function's text (its decorators aside) does tensor work (``m``: the
    pattern's first match in it).

    A ``@`` counts where it is a product, not a (nested function's) decorator; a tensor
    module's name where it is read: not in a longer name, an attribute's (``x.torch``), a
    definition's name or an import's."""
    while m is not None:
        start = m.start()
        first = m.group()[0]
        if first in "].":
            return True
        line_start = code.rfind("\n", 0, start) + 1
        before = code[line_start:start]
        if first == "@":
            if before and not before.isspace():
                return True
        elif not (code[start - 1].isalnum() or code[start - 1] in "._"):
            words = before.split()
            if not (
                before.rstrip().endswith(".")
                or (
                    words
                    and (
                        words[-1] in ("def", "class", "import", "as")
                        or words[0] in ("import", "from")
                    )
                )
            ):
                return True
        m = work.search(code, m.end(), d.end)
    return False


def last_line(code: str, def_line: int, def_start: int, end: int) -> int:
    """The 1-based line where a function ends as ``ast`` ends it (``end_lineno``: its last
    statement's line, trailing blank and comment lines aside), from the scan's ``code`` and the
    function's ``def_line``, the offset of that line and the offset of the next statement.

    A function whose last statement is a string over several lines (a stub's docstring) ends
    here on that string's first line: its blanked lines cannot be told from blank ones."""
    stop = len(code[def_start:end].rstrip()) + def_start
    return def_line + code.count("\n", def_start, max(stop - 1, def_start))
