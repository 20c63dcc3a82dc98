"""Check the user's own timing code without running it: the mistakes that make GPU times lie.

Pure (``ast`` only). :func:`lint_timing` reads a file's text and returns one
:class:`TimingIssue` per finding, each with a short explanation and, when it can be named, the
function of this file being timed (the editor offers "Profile this instead" on it). The rules,
each kept conservative (a finding must be a real mistake in the code as written):

- ``no-sync``: a ``time.time()`` / ``time.perf_counter()`` pair around GPU work with no
  ``synchronize()`` (or a value read back: ``.item()``, ``.cpu()``) between the last work and
  the second reading: kernels launch asynchronously, so the clock measures the launches. Only in
  files that use CUDA or Triton.
- ``elapsed-before-sync``: ``start.elapsed_time(end)`` read after ``end.record()`` with no
  ``end.synchronize()`` / ``torch.cuda.synchronize()`` in between.
- ``no-warmup``: a timed region, not in a loop, that times calls none of which ran before it:
  the first call pays for compilation, autotuning, allocation and library handles. Only in
  files that import torch or triton.
- ``no-l2-flush``: a ``for … in range(…)`` loop of timed repetitions on the same tensors with
  nothing written in between (``cache.zero_()``, a ``flush`` helper): from the second
  repetition on, the inputs are served from L2.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["RULES", "Rule", "TimingIssue", "lint_timing"]

Rule = Literal["no-sync", "elapsed-before-sync", "no-warmup", "no-l2-flush"]
RULES: tuple[Rule, ...] = ("no-sync", "elapsed-before-sync", "no-warmup", "no-l2-flush")

#: Functions of ``time`` (and ``timeit``) that read a wall clock.
_CLOCKS = frozenset(
    {"time", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time_ns"}
)
#: Calls that are neither GPU work nor a clock: builtins and bookkeeping.
_HARMLESS = frozenset(
    {
        "print", "len", "range", "int", "float", "str", "round", "sum", "min", "max", "list",
        "dict", "tuple", "set", "enumerate", "zip", "sorted", "isinstance", "format", "repr",
        "abs", "append", "extend", "join", "info", "debug", "warning", "write",
        "Event", "empty_cache", "manual_seed", "seed", "mean", "median", "stdev", "sleep",
    }
)  # fmt: skip
#: Methods that wait for the device: they return a value computed on it.
_WAITS = frozenset({"synchronize", "item", "cpu", "tolist", "numpy"})
#: Writes that evict L2 between repetitions (triton.testing's ``cache.zero_()``).
_FLUSH_METHODS = frozenset({"zero_", "fill_", "random_", "normal_", "uniform_"})

EventKind = Literal["clock", "wait", "record", "elapsed", "work", "harmless"]


@dataclass(frozen=True)
class TimingIssue:
    """One finding: where (1-based lines, 0-based columns), which rule, what to read.

    Attributes:
        rule: the rule's id (:data:`RULES`).
        line, col, end_line, end_col: the call the finding is about.
        message: one or two sentences: what is wrong and what to do.
        function: the function of this file being timed, when it can be named (else ``None``).
    """

    rule: Rule
    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    function: str | None = None


@dataclass
class _Event:
    call: ast.Call
    kind: EventKind
    loops: tuple[ast.For | ast.While | ast.AsyncFor, ...]
    callee: str
    receiver: str | None = None
    flush: bool = False


@dataclass
class _Scope:
    node: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef
    events: list[_Event] = field(default_factory=list)


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` of a name / attribute chain ("" for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


class _Imports:
    """How the file spells the clocks: ``time`` modules and ``from time import …`` names."""

    def __init__(self, tree: ast.Module) -> None:
        self.modules: set[str] = set()
        self.clocks: set[str] = set()
        self.gpu = False
        self.kernels = False  # the file imports torch or triton
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in ("time", "timeit"):
                        self.modules.add(alias.asname or alias.name)
                    top = alias.name.split(".")[0]
                    self.gpu = self.gpu or top == "triton"
                    self.kernels = self.kernels or top in ("torch", "triton")
            elif isinstance(node, ast.ImportFrom) and node.module in ("time", "timeit"):
                for alias in node.names:
                    if alias.name in _CLOCKS or alias.name == "default_timer":
                        self.clocks.add(alias.asname or alias.name)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                top = node.module.split(".")[0]
                self.gpu = self.gpu or top == "triton"
                self.kernels = self.kernels or top in ("torch", "triton")

    def is_clock(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return func.id in self.clocks
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return func.value.id in self.modules and (
                func.attr in _CLOCKS or func.attr == "default_timer"
            )
        return False


def _classify(call: ast.Call, imports: _Imports) -> tuple[EventKind, str, str | None, bool]:
    func = call.func
    callee = _dotted(func) or ast.unparse(func)
    receiver = _dotted(func.value) if isinstance(func, ast.Attribute) else None
    last = func.attr if isinstance(func, ast.Attribute) else _dotted(func)
    if imports.is_clock(func):
        return "clock", callee, receiver, False
    if last in _WAITS:
        return "wait", callee, receiver, False
    if last == "record" and receiver:
        return "record", callee, receiver, False
    if last == "elapsed_time":
        return "elapsed", callee, receiver, False
    flush = last in _FLUSH_METHODS or "flush" in callee.lower()
    if not flush and last in _HARMLESS:
        return "harmless", callee, receiver, False
    return "work", callee, receiver, flush


def _calls_in_order(node: ast.AST) -> list[ast.Call]:
    """The calls of an expression or simple statement, in evaluation order (inner first)."""
    calls = [n for n in _walk_no_scopes(node) if isinstance(n, ast.Call)]
    return sorted(calls, key=lambda c: (c.end_lineno or 0, c.end_col_offset or 0))


def _walk_no_scopes(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` that does not enter nested functions, lambdas or classes."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
            ):
                todo.append(child)


def _collect(
    body: list[ast.stmt],
    loops: tuple[ast.For | ast.While | ast.AsyncFor, ...],
    imports: _Imports,
    out: list[_Event],
) -> None:
    def add(node: ast.AST, in_loops: tuple[ast.For | ast.While | ast.AsyncFor, ...]) -> None:
        for call in _calls_in_order(node):
            kind, callee, receiver, flush = _classify(call, imports)
            out.append(_Event(call, kind, in_loops, callee, receiver, flush))

    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(stmt, ast.For | ast.AsyncFor):
            add(stmt.iter, loops)
            _collect(stmt.body, (*loops, stmt), imports, out)
            _collect(stmt.orelse, loops, imports, out)
        elif isinstance(stmt, ast.While):
            add(stmt.test, (*loops, stmt))
            _collect(stmt.body, (*loops, stmt), imports, out)
            _collect(stmt.orelse, loops, imports, out)
        elif isinstance(stmt, ast.If):
            add(stmt.test, loops)
            _collect(stmt.body, loops, imports, out)
            _collect(stmt.orelse, loops, imports, out)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                add(item.context_expr, loops)
            _collect(stmt.body, loops, imports, out)
        elif isinstance(stmt, ast.Try):
            _collect(stmt.body, loops, imports, out)
            for handler in stmt.handlers:
                _collect(handler.body, loops, imports, out)
            _collect(stmt.orelse, loops, imports, out)
            _collect(stmt.finalbody, loops, imports, out)
        else:
            add(stmt, loops)


def _scopes(tree: ast.Module, imports: _Imports) -> list[_Scope]:
    scopes = [_Scope(tree)]
    scopes += [
        _Scope(n) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for scope in scopes:
        _collect(scope.node.body, (), imports, scope.events)
    return scopes


def _subtracted_names(scope: _Scope) -> set[str]:
    """Names ``S`` of the scope used as ``… - S`` (a clock reading taken as a start)."""
    out: set[str] = set()
    for node in _walk_no_scopes(scope.node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            if isinstance(node.right, ast.Name):
                out.add(node.right.id)
    return out


def _start_name(scope: _Scope, call: ast.Call) -> str | None:
    """``S`` when ``call`` is the whole value of ``S = call``."""
    for node in _walk_no_scopes(scope.node):
        if isinstance(node, ast.Assign) and node.value is call and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                return target.id
        if isinstance(node, ast.AnnAssign) and node.value is call:
            if isinstance(node.target, ast.Name):
                return node.target.id
    return None


@dataclass
class _Region:
    """A timed region: events strictly between ``start`` and ``end`` (indices in the scope)."""

    start: int
    end: int
    kind: Literal["clock", "events"]


def _clock_regions(scope: _Scope) -> list[_Region]:
    subtracted = _subtracted_names(scope)
    events = scope.events
    regions: list[_Region] = []
    for i, event in enumerate(events):
        if event.kind != "clock":
            continue
        name = _start_name(scope, event.call)
        if name is None or name not in subtracted:
            continue
        end = next((j for j in range(i + 1, len(events)) if events[j].kind == "clock"), None)
        if end is not None:
            regions.append(_Region(i, end, "clock"))
    return regions


def _event_regions(scope: _Scope) -> list[_Region]:
    events = scope.events
    regions: list[_Region] = []
    for k, event in enumerate(events):
        if event.kind != "elapsed" or not event.call.args or event.receiver is None:
            continue
        end_name = _dotted(event.call.args[0])
        end = _last_before(events, k, "record", end_name)
        if end is None:
            continue
        start = _last_before(events, end, "record", event.receiver)
        if start is not None:
            regions.append(_Region(start, end, "events"))
    return regions


def _last_before(events: list[_Event], index: int, kind: EventKind, receiver: str) -> int | None:
    for j in range(index - 1, -1, -1):
        if events[j].kind == kind and events[j].receiver == receiver:
            return j
    return None


def _span(call: ast.Call) -> tuple[int, int, int, int]:
    return (
        call.lineno,
        call.col_offset,
        call.end_lineno or call.lineno,
        call.end_col_offset or call.col_offset,
    )


class _Names:
    """Functions of this file the timed call may name: module-level defs, and for a helper's
    parameter (``func(x)`` in ``time_it(func, x)``), the module function passed to it."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.top = {
            n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }

    def resolve(self, call: ast.Call, scope: _Scope) -> str | None:
        if not isinstance(call.func, ast.Name):
            return None
        name = call.func.id
        node = scope.node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            params = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            if name in params:
                return self._passed_to(node.name, params.index(name), name)
        return name if name in self.top else None

    def _passed_to(self, helper: str, index: int, param: str) -> str | None:
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and _dotted(node.func) == helper):
                continue
            candidates = [node.args[index]] if index < len(node.args) else []
            candidates += [k.value for k in node.keywords if k.arg == param]
            for arg in candidates:
                if isinstance(arg, ast.Name) and arg.id in self.top:
                    return arg.id
        return None


def _uses_gpu(source: str, imports: _Imports) -> bool:
    return imports.gpu or "cuda" in source


class _Lint:
    """The timing rules over a file's scopes; one finding per rule and call (the first kept)."""

    def __init__(self, tree: ast.Module, source: str) -> None:
        self.imports = _Imports(tree)
        self.names = _Names(tree)
        self.gpu = _uses_gpu(source, self.imports)
        self.found: dict[tuple[Rule, int, int], TimingIssue] = {}

    def add(self, rule: Rule, call: ast.Call, message: str, function: str | None) -> None:
        line, col, end_line, end_col = _span(call)
        self.found.setdefault(
            (rule, line, col), TimingIssue(rule, line, col, end_line, end_col, message, function)
        )

    def scope(self, scope: _Scope) -> None:
        """Every rule over one scope's events."""
        clock_regions = _clock_regions(scope)
        regions = clock_regions + _event_regions(scope)
        if self.gpu:
            self.no_sync(scope, clock_regions)
        self.elapsed_before_sync(scope)
        # no-warmup only in files that use torch or triton: a plain script's first call is
        # not compiled
        if self.imports.kernels:
            self.no_warmup(scope, regions)
        if self.gpu:
            self.no_l2_flush(scope, regions)

    def timed_function(self, region: _Region, scope: _Scope) -> str | None:
        """The function of this file the region times (its first work call that names one)."""
        for event in scope.events[region.start + 1 : region.end]:
            if event.kind == "work" and not event.flush:
                resolved = self.names.resolve(event.call, scope)
                if resolved:
                    return resolved
        return None

    def no_sync(self, scope: _Scope, clock_regions: list[_Region]) -> None:
        events = scope.events
        for region in clock_regions:
            inner = events[region.start + 1 : region.end]
            worked = [i for i, e in enumerate(inner) if e.kind == "work"]
            if not worked:
                continue
            if any(e.kind == "wait" for e in inner[worked[-1] + 1 :]):
                continue
            clock = events[region.end]
            self.add(
                "no-sync",
                clock.call,
                f"`{clock.callee}()` is read while the GPU may still be running the work "
                "above: kernels launch asynchronously, so this times the launches, not the "
                "kernels. Call `torch.cuda.synchronize()` before reading the clock (or use "
                "CUDA events).",
                self.timed_function(region, scope),
            )

    def elapsed_before_sync(self, scope: _Scope) -> None:
        events = scope.events
        for k, event in enumerate(events):
            if event.kind != "elapsed" or not event.call.args:
                continue
            end_name = _dotted(event.call.args[0])
            end = _last_before(events, k, "record", end_name)
            if end is None:
                continue
            recorded = {e.receiver for e in events if e.kind == "record"}
            synced = any(
                e.kind == "wait"
                and e.callee.endswith("synchronize")
                and (e.receiver == end_name or e.receiver not in recorded)
                for e in events[end + 1 : k]
            )
            if not synced:
                self.add(
                    "elapsed-before-sync",
                    event.call,
                    f"`elapsed_time` is read before `{end_name}` has completed: the event is "
                    "only recorded in the stream's queue. Call "
                    f"`{end_name}.synchronize()` (or `torch.cuda.synchronize()`) first.",
                    None,
                )

    def no_warmup(self, scope: _Scope, regions: list[_Region]) -> None:
        events = scope.events
        for region in regions:
            start_loops = events[region.start].loops
            if start_loops:
                continue  # repetitions
            inner = events[region.start + 1 : region.end]
            work = [e for e in inner if e.kind == "work" and not e.flush]
            if not work or any(e.loops != start_loops for e in work):
                continue
            before = {e.callee for e in events[: region.start] if e.kind == "work"}
            if any(e.callee in before for e in work):
                continue
            first = work[0]
            self.add(
                "no-warmup",
                first.call,
                f"a single timed call of `{first.callee}` with no warm-up: the first call pays "
                "for compilation (Triton, torch.compile), autotuning, memory allocation and "
                "library set-up. Call it a few times before timing, and time many calls.",
                self.timed_function(region, scope),
            )

    def no_l2_flush(self, scope: _Scope, regions: list[_Region]) -> None:
        events = scope.events
        for region in regions:
            start_loops = events[region.start].loops
            if not start_loops:
                continue
            loop = start_loops[-1]
            if not _is_range_loop(loop) or events[region.end].loops[-1:] != (loop,):
                continue
            in_loop = [e for e in events if loop in e.loops]
            if any(e.flush for e in in_loop):
                continue
            assigned = _assigned_in(loop)
            for event in events[region.start + 1 : region.end]:
                if event.kind != "work":
                    continue
                same = [
                    a.id
                    for a in event.call.args
                    if isinstance(a, ast.Name) and a.id not in assigned
                ]
                if not same:
                    continue
                self.add(
                    "no-l2-flush",
                    event.call,
                    f"each repetition times `{event.callee}` on the same tensor "
                    f"(`{same[0]}`) with no L2 flush in between: from the second repetition "
                    "on its data is served from the L2 cache (tens of MB), so small "
                    "kernels look faster than on cold data. Write a large buffer (for "
                    "example `cache.zero_()` of 256 MB) before each timed call.",
                    self.timed_function(region, scope),
                )
                break


def lint_timing(source: str, tree: ast.Module | None = None) -> list[TimingIssue]:
    """Every timing mistake found in ``source`` (empty when it does not parse), by line.

    Args:
        source: the file's text.
        tree: ``source`` already parsed (one parse per document version in the server).

    Returns:
        The findings, sorted by position; at most one per rule and call.
    """
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return []
    lint = _Lint(tree, source)
    for scope in _scopes(tree, lint.imports):
        lint.scope(scope)
    return sorted(lint.found.values(), key=lambda i: (i.line, i.col, RULES.index(i.rule)))


def _is_range_loop(loop: ast.For | ast.While | ast.AsyncFor) -> bool:
    return (
        isinstance(loop, ast.For)
        and isinstance(loop.iter, ast.Call)
        and _dotted(loop.iter.func) == "range"
    )


def _assigned_in(loop: ast.For | ast.While | ast.AsyncFor) -> set[str]:
    """Names the loop (re)binds: its target and every assignment in its body."""
    out: set[str] = set()
    targets: list[ast.AST] = [loop.target] if isinstance(loop, ast.For | ast.AsyncFor) else []
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign):
            targets += node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) or (
            isinstance(node, ast.For | ast.AsyncFor) and node is not loop
        ):
            targets.append(node.target)
        elif isinstance(node, ast.NamedExpr):
            targets.append(node.target)
    for target in targets:
        out.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return out
