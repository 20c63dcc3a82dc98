"""Which functions of a file get which lenses, decided from the source text (``ast`` only).

A lens is offered where it means something:

- ``Show Assembly`` on Triton kernels, found by resolving each decorator through the file's
  imports (``import triton as tr`` → ``@tr.jit``), never by its spelling: numba's ``@cuda.jit``
  is not one.
- ``Profile`` on functions that do tensor or GPU work (use torch/triton/numba.cuda/cupy, a ``@``
  product, a kernel launch ``k[grid](…)``, or call such a function of the file), that have an
  inputs directive or a ``<name>_inputs()`` factory, that are the ``forward`` of an
  ``nn.Module``, that the script's own module-level code uses, or that run by themselves (no
  parameters, more than a one-liner); never on ``__init__`` and other dunder methods, input
  factories
  (``*_inputs``, ``make_input``, anything an inputs directive calls), numba kernels, or private
  helpers (``_name``) the script does not use itself.
- ``Sweep P`` only for an int parameter ``P`` (an integer literal default) that reaches a kernel
  launch: passed to ``k[grid](…)``, used in its grid, or handed on to a function of the file
  that does so.

``show_all=True`` gives the old, unfiltered set (every non-kernel function profiled, every int
parameter swept), for the ``kernelLens.lenses.showAll`` setting.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from kernel_lens.analysis.functions import (
    INPUTS_DIRECTIVE_RE,
    FunctionInfo,
    dotted_name,
    functions_in_tree,
    import_aliases,
    parse_source,
    resolve_name,
)
from kernel_lens.analysis.param_edit import int_defaults

__all__ = [
    "LensRole",
    "LensTarget",
    "is_input_factory",
    "lens_targets",
    "lens_targets_in_tree",
    "uses_process_group",
]

#: ``profile``: Profile and its actions; ``kernel``: Show Assembly; ``none``: no lens.
LensRole = Literal["profile", "kernel", "none"]

#: Modules whose use is tensor or GPU work.
_TENSOR_MODULES = ("torch", "triton", "numba.cuda", "cupy")

#: Names of input factories besides ``*_inputs``.
_FACTORY_NAMES = frozenset(
    {"inputs", "make_input", "make_inputs", "get_input", "get_inputs", "example_inputs"}
)


@dataclass(frozen=True)
class LensTarget:
    """One function and the lenses it gets.

    Attributes:
        info: the function.
        role: which lens family it gets (see :data:`LensRole`).
        reason: why, in a few words (``tensor work``, ``input factory``, ``numba kernel``…).
        sweep_params: int parameters offered a Sweep, in order.
        launches: whether it launches kernels (``k[grid](…)``), itself or through a function of
            the file.
    """

    info: FunctionInfo
    role: LensRole
    reason: str
    sweep_params: tuple[str, ...] = ()
    launches: bool = False


def is_input_factory(name: str) -> bool:
    """``square_inputs``, ``make_input``, ``get_inputs``…: a function that builds inputs."""
    return name.endswith("_inputs") or name in _FACTORY_NAMES


def _is_tensor_module(resolved: str) -> bool:
    return any(resolved == m or resolved.startswith(m + ".") for m in _TENSOR_MODULES)


def _nodes_by_qualname(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.setdefault(prefix + node.name, node)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def _module_classes(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    """Qualified names of the ``nn.Module`` subclasses of the file (also through its classes)."""
    classes: dict[str, list[str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                bases = [dotted_name(b) for b in node.bases]
                classes[prefix + node.name] = [b for b in bases if b is not None]
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    modules: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, bases in classes.items():
            if name in modules:
                continue
            for base in bases:
                resolved = resolve_name(base, aliases)
                if resolved.startswith("torch.nn") or base in modules:
                    modules.add(name)
                    changed = True
                    break
    return modules


def _trivial(node: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """One statement (a docstring aside) that computes nothing (``return x``, ``pass``,
    ``return CONST``): a helper, not something worth a profile. ``return a * a`` — the lecture's
    ``square_2``, handed to a timing helper by the script — is not trivial: on tensors it is
    the work."""
    if node is None:
        return True
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if len(body) > 1:
        return False
    computes = (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript, ast.Compare, ast.AugAssign)
    return not any(isinstance(sub, computes) for stmt in body for sub in ast.walk(stmt))


def _script_references(tree: ast.Module, functions: dict[str, FunctionInfo]) -> set[str]:
    """Functions the module-level code names (``f(x)``, ``for fn in (f, g)``, ``obj.method``)."""
    method_names: dict[str, set[str]] = {}
    for qualname in functions:
        method_names.setdefault(qualname.rsplit(".", 1)[-1], set()).add(qualname)
    found: set[str] = set()

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in functions:
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in method_names:
            found.update(q for q in method_names[node.attr] if "." in q)
        for child in ast.iter_child_nodes(node):
            walk(child)

    for stmt in tree.body:
        walk(stmt)
    return found


def _directive_names(source: str) -> set[str]:
    """Names called in the file's ``# kernel-lens: inputs = …`` directives."""
    names: set[str] = set()
    if "kernel-lens" not in source:
        return names  # no directive (most files): no line is matched
    for line in source.splitlines():
        match = INPUTS_DIRECTIVE_RE.match(line)
        if not match:
            continue
        try:
            expr = ast.parse(match.group("expr"), mode="eval")
        except SyntaxError:
            continue
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                names.add(sub.func.id)
    return names


def _tainted(node: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> set[str]:
    """``param`` and the local names computed from it (``grid = (cdiv(n, BLOCK),)``)."""
    tainted = {param}
    assigns = [
        sub for sub in ast.walk(node) if isinstance(sub, ast.Assign | ast.AnnAssign | ast.AugAssign)
    ]
    changed = True
    while changed:
        changed = False
        for sub in assigns:
            if sub.value is None:
                continue
            uses = {n.id for n in ast.walk(sub.value) if isinstance(n, ast.Name)}
            if not uses & tainted:
                continue
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and name.id not in tainted:
                        tainted.add(name.id)
                        changed = True
    return tainted


def _uses(node: ast.AST | None, names: set[str]) -> bool:
    return node is not None and any(
        isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)
    )


#: Fields that hold no node any of the walks below looks at: names and other strings, a name's
#: load or store, operators (``BinOp.op`` is read from the BinOp), comparison operators.
_LEAF_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "arg", "asname", "module", "level", "kind", "conversion"}
    | {"type_comment", "is_async"}
    | {"names"}  # ``global``'s and ``nonlocal``'s strings (an import's aliases hold no names)
)
#: Per node class, its fields that can hold nodes (see :func:`_walk_exprs`).
_NODE_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: ()}


def _node_fields(cls: type) -> tuple[str, ...]:
    fields = _NODE_FIELDS.get(cls)
    if fields is None:
        fields = _NODE_FIELDS[cls] = tuple(
            f for f in getattr(cls, "_fields", ()) if f not in _LEAF_FIELDS
        )
    return fields


def _walk_exprs(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (itself included) but the leaves of :data:`_LEAF_FIELDS`
    (``Load``, ``Store``, ``Add``…: a third of a function's nodes), depth first: ``ast.walk``
    without its per-node generators, for walks whose order does not matter."""
    stack = [node]
    pop, push, more = stack.pop, stack.append, stack.extend
    ast_type = ast.AST
    fields_of = _NODE_FIELDS
    while stack:
        current = pop()
        if not isinstance(current, ast_type):
            continue  # a list's None (``{**d}``'s key, a keyword-only parameter's default)
        yield current
        cls = type(current)
        fields = fields_of.get(cls)
        if fields is None:
            fields = _node_fields(cls)
        for name in fields:
            value = getattr(current, name, None)
            if type(value) is list:
                more(value)  # nodes, or None in a few lists (their strings' fields are skipped)
            elif isinstance(value, ast_type):
                push(value)


@dataclass
class _Facts:
    """What one walk of a function's body finds (each function is walked once)."""

    tensor_work: bool = False
    launches: bool = False
    callees: set[str] | None = None
    calls: list[ast.Call] | None = None


def _facts(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    aliases: dict[str, str],
    functions: dict[str, FunctionInfo],
    top_level: set[str],
) -> _Facts:
    """Tensor work, launches, the functions of the file it names and its calls: one walk.

    Tensor work: a tensor module named, a ``@`` product, ``.cuda()`` or a kernel launch.
    Callees: functions of the file it names (``f`` at module level, ``self.m``).
    """
    owner = qualname.rsplit(".", 1)[0] if "." in qualname else None
    tensor = launches = False
    callees: set[str] = set()
    calls: list[ast.Call] = []
    name_t, attribute_t, call_t, binop_t, augassign_t = (
        ast.Name, ast.Attribute, ast.Call, ast.BinOp, ast.AugAssign
    )  # fmt: skip
    matmult_t, subscript_t, load_t = ast.MatMult, ast.Subscript, ast.Load
    for sub in _walk_exprs(node):
        cls = type(sub)  # parsed nodes are of the ast classes themselves, never subclasses
        if cls is name_t:
            sub_id = sub.id  # type: ignore[attr-defined]
            if sub_id in aliases and _is_tensor_module(aliases[sub_id]):
                tensor = True
            if sub_id in top_level and type(sub.ctx) is load_t:  # type: ignore[attr-defined]
                callees.add(sub_id)
        elif cls is attribute_t:
            value = sub.value  # type: ignore[attr-defined]
            if (
                owner is not None
                and type(value) is name_t
                and value.id in ("self", "cls")
                and f"{owner}.{sub.attr}" in functions  # type: ignore[attr-defined]
            ):
                callees.add(f"{owner}.{sub.attr}")  # type: ignore[attr-defined]
        elif cls is call_t:
            calls.append(sub)  # type: ignore[arg-type]
            func = sub.func  # type: ignore[attr-defined]
            if isinstance(func, subscript_t):
                tensor = launches = True
            elif isinstance(func, attribute_t) and func.attr == "cuda":
                tensor = True
        elif (cls is binop_t or cls is augassign_t) and isinstance(sub.op, matmult_t):  # type: ignore[attr-defined]
            tensor = True
    callees.discard(qualname)
    return _Facts(tensor, launches, callees, calls)


def _propagate(
    flags: dict[str, bool], callees: dict[str, set[str]], skip: set[str]
) -> dict[str, bool]:
    """``flags`` spread from each function to the functions of the file that call it (not
    through ``skip``): a worklist over the reversed call graph, linear in its size."""
    callers: dict[str, list[str]] = {}
    for q, named in callees.items():
        for callee in named:
            if callee not in skip:
                callers.setdefault(callee, []).append(q)
    out = dict(flags)
    work = [q for q, on in out.items() if on]
    while work:
        callee = work.pop()
        for q in callers.get(callee, ()):
            if not out[q]:
                out[q] = True
                work.append(q)
    return out


def _launch_params(
    nodes: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    functions: dict[str, FunctionInfo],
    candidates: dict[str, tuple[str, ...]],
    calls: dict[str, list[ast.Call]],
) -> dict[str, set[str]]:
    """Per function, its candidate int parameters that reach a kernel launch (passed to
    ``k[grid](…)``, used in its grid, or handed on to a function of the file that does so).

    Each function's calls and tainted names are found once, and a function is checked again
    only when a function it calls gains a parameter (a worklist, not a fixed point over all).
    """
    reach: dict[str, set[str]] = {q: set() for q in functions}
    tainted: dict[tuple[str, str], set[str]] = {}
    callers: dict[str, set[str]] = {}
    for qualname in candidates:
        for call in calls.get(qualname, ()):
            if isinstance(call.func, ast.Name) and call.func.id in reach:
                callers.setdefault(call.func.id, set()).add(qualname)

    def check(qualname: str) -> bool:
        node = nodes.get(qualname)
        if node is None:
            return False
        grew = False
        for param in candidates[qualname]:
            if param in reach[qualname]:
                continue
            names: set[str] | None = None
            for call in calls.get(qualname, ()):
                hit = False
                if names is None and (
                    isinstance(call.func, ast.Subscript)
                    or (isinstance(call.func, ast.Name) and reach.get(call.func.id))
                ):
                    # What the param taints, found once, and only for a function with a call
                    # it could reach (most have none).
                    names = tainted.get((qualname, param))
                    if names is None:
                        names = tainted[(qualname, param)] = _tainted(node, param)
                if names is None:
                    continue
                if isinstance(call.func, ast.Subscript):
                    hit = _uses(call.func.slice, names) or any(
                        _uses(a, names) for a in [*call.args, *call.keywords]
                    )
                elif isinstance(call.func, ast.Name) and call.func.id in reach:
                    callee = call.func.id
                    wanted = reach[callee]
                    if not wanted:
                        continue
                    callee_params = functions[callee].params
                    hit = any(
                        kw.arg in wanted and _uses(kw.value, names) for kw in call.keywords
                    ) or any(
                        i < len(callee_params) and callee_params[i] in wanted and _uses(arg, names)
                        for i, arg in enumerate(call.args)
                    )
                if hit:
                    reach[qualname].add(param)
                    grew = True
                    break
        return grew

    work = [q for q, params in candidates.items() if params]
    while work:
        qualname = work.pop()
        if check(qualname):
            work.extend(c for c in callers.get(qualname, ()) if candidates.get(c))
    return reach


def lens_targets(source: str, *, show_all: bool = False) -> list[LensTarget]:
    """Every function of ``source`` with the lenses it gets, in source order.

    Args:
        source: the module's text.
        show_all: offer Profile on every function that is not a Triton kernel and Sweep on
            every int parameter (the ``kernelLens.lenses.showAll`` setting).

    Raises:
        SourceSyntaxError: the text does not parse.
    """
    tree = parse_source(source)
    return lens_targets_in_tree(tree, source, show_all=show_all)


def lens_targets_in_tree(
    tree: ast.Module,
    source: str,
    *,
    show_all: bool = False,
    infos: list[FunctionInfo] | None = None,
    aliases: dict[str, str] | None = None,
) -> list[LensTarget]:
    """:func:`lens_targets` of an already parsed module, in time linear in its size (each
    function's body is walked a bounded number of times; nothing is parsed again).

    Args:
        tree: ``source`` parsed.
        source: the module's text.
        show_all: see :func:`lens_targets`.
        infos: its functions (:func:`~kernel_lens.analysis.functions.functions_in_tree`),
            when the caller has them already.
        aliases: its imports (:func:`~kernel_lens.analysis.functions.import_aliases`).
    """
    if aliases is None:
        aliases = import_aliases(tree)
    if infos is None:
        infos = functions_in_tree(tree, source.splitlines(), aliases)
    nodes = _nodes_by_qualname(tree)
    functions = {info.qualname: info for info in infos}
    top_level = {q for q in functions if "." not in q}
    int_params = {q: tuple(int_defaults(nodes[q])) if q in nodes else () for q in functions}
    facts = {q: _facts(nodes[q], q, aliases, functions, top_level) for q in functions if q in nodes}
    launches = {q: q in facts and facts[q].launches for q in functions}
    if show_all:
        return [
            LensTarget(
                info,
                "kernel" if info.is_triton_kernel else "profile",
                "triton kernel" if info.is_triton_kernel else "all lenses shown",
                () if info.is_triton_kernel else int_params[info.qualname],
                launches[info.qualname],
            )
            for info in infos
        ]

    module_classes = _module_classes(tree, aliases)
    script = _script_references(tree, functions)
    factories = _directive_names(source)
    callees = {q: (facts[q].callees or set()) if q in facts else set() for q in functions}
    kernels = {q for q, info in functions.items() if info.is_triton_kernel or info.is_numba_kernel}
    # Tensor work and launches through the functions of the file a function calls.
    tensor = {q: q in facts and facts[q].tensor_work for q in functions}
    direct = _propagate(tensor, callees, kernels)
    launches = _propagate(launches, callees, kernels)
    reach = _launch_params(
        nodes, functions, int_params, {q: f.calls or [] for q, f in facts.items()}
    )

    targets: list[LensTarget] = []
    for info in infos:
        q = info.qualname
        name = info.name
        owner = q.rsplit(".", 1)[0] if info.is_method else None
        role: LensRole = "none"
        if info.is_triton_kernel:
            role, reason = "kernel", "triton kernel"
        elif info.is_numba_kernel:
            reason = "numba kernel: profile the function that launches it"
        elif name.startswith("__") and name.endswith("__") and name != "__call__":
            reason = (
                "__init__ sets the object up: profile the code that uses it"
                if name == "__init__"
                else f"{name} is a special method"
            )
        elif is_input_factory(name) or name in factories:
            reason = "input factory"
        elif info.inputs_expr is not None:
            role, reason = "profile", "inputs directive"
        elif owner is not None and owner in module_classes and name == "forward":
            role, reason = "profile", "nn.Module forward"
        elif name.startswith("_") and q not in script:
            reason = "private helper"
        elif direct[q]:
            role, reason = "profile", "tensor work"
        elif not info.is_method and f"{name}_inputs" in functions:
            role, reason = "profile", "inputs factory"
        elif q in script and not _trivial(nodes.get(q)):
            role, reason = "profile", "called by the script"
        elif not info.is_method and not info.params and not _trivial(nodes.get(q)):
            # Runs by itself (no inputs to find): a script's main(), a job.
            role, reason = "profile", "runs without inputs"
        elif q in script:
            reason = "a one-line helper without tensor work"
        else:
            reason = "no tensor work, not called by the script"
        sweep = tuple(p for p in int_params[q] if p in reach[q]) if role == "profile" else ()
        targets.append(LensTarget(info, role, reason, sweep, launches[q]))
    return targets


def uses_process_group(source: str) -> bool:
    """Whether the file calls ``init_process_group`` (``dist.init_process_group(…)``, or the name
    imported): a distributed script, offered *Profile on N ranks*. A file that does not parse
    is not one."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "init_process_group":
                return True
    return False
