"""Argument types of a Triton launch read from the source, for a launch that cannot run here.

Show Assembly needs the types of a launch (``*fp32`` pointers, ``i32`` sizes, the ``constexpr``
values), not a GPU. The real launch gives them exactly (:mod:`triton_ir`); when it cannot run —
public tutorials allocate with ``device="cuda"`` or ``.cuda()`` at module level, assert
``x.is_cuda``, or ask ``triton.runtime.driver.active`` for the device — they are read from the
text instead:

- the kernels come from the file's *definitions* only: imports, ``def``/``class`` statements and
  constant assignments are run one by one (any that fails is skipped), nothing that launches or
  allocates;
- a parameter is a pointer when the kernel's body loads, stores or offsets through it (``tl.load``,
  ``tl.store``, ``tl.atomic_*``, ``tl.make_block_ptr``, ``x_ptr + offs``, ``.dtype.element_ty``)
  or its name says so (``*_ptr``); its element type is ``fp32`` unless a dtype is named for the
  tensor passed at the launch (``torch.empty(…, dtype=torch.float16)``); a scalar is ``fp32``
  when the launch passes a float, or a name the file gives a float (a caller's ``offset=0.0``,
  a ``float`` annotation) or a float's name (``eps``, ``scale``), else ``i32``;
- a ``constexpr`` takes the launch's literal (or a module constant), else the first
  ``triton.Config`` of ``@triton.autotune``, else its default.

What was assumed is said in the result (``types_from`` and a warning), and every type can be
replaced by the user (``overrides``).
"""

from __future__ import annotations

import ast
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.wire.lsp import ASM_POINTER_TYPES, ASM_SCALAR_TYPES

__all__ = [
    "POINTER_TYPES",
    "SCALAR_TYPES",
    "StaticLaunch",
    "apply_overrides",
    "definitions_module",
    "is_launch",
    "missing_global_note",
    "static_launch",
    "types_note",
]

_POINTER_CALLS = {
    "load",
    "store",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_cas",
    "atomic_xchg",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "make_block_ptr",
    "make_tensor_descriptor",
}
_CONST_CALLS = {"constexpr", "cdiv", "next_power_of_2", "Config", "dtype", "getenv", "get"}
_TORCH_DTYPES = {
    "float32": "fp32",
    "float": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "double": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int": "i32",
    "int64": "i64",
    "long": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}
#: The types a user may pick for a parameter (the view's *Argument Types…*).
POINTER_TYPES = ASM_POINTER_TYPES
SCALAR_TYPES = ASM_SCALAR_TYPES


@dataclass
class StaticLaunch:
    """What the text says of one launch: the Triton signature and constexprs, and how each
    was found (for the result's warning)."""

    signature: dict[str, str]
    constexprs: dict[str, Any]
    options: dict[str, Any]
    line: int | None
    call: str | None
    assumed: dict[str, str] = field(default_factory=dict)
    """Parameter → what was assumed for it (``*fp32``, ``i32``, ``BLOCK=1``)."""


def types_note(line: int | None, reason: str, assumed: dict[str, str], picked: list[str]) -> str:
    """One sentence for the view: where the types came from, why, and what is still assumed."""
    text = (
        f"argument types read from the launch at line {line}, as the launcher could not run "
        f"here ({reason})"
        if line
        else "argument types picked"
    )
    guesses: dict[str, list[str]] = {}
    for name, what in assumed.items():
        guesses.setdefault(what, []).append(name)
    if guesses:
        text += "; assumed " + "; ".join(f"{w} for {', '.join(n)}" for w, n in guesses.items())
        text += " (Argument Types… changes them: the view's title bar, the palette)"
    if picked:
        text += f"; picked {', '.join(picked)}"
    return text


def _is_def(node: ast.stmt) -> bool:
    return isinstance(node, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef)


def _imports_only(node: ast.stmt) -> bool:
    """A ``try``/``if`` whose branches only import or assign (``try: from
    triton.language.extra.libdevice import rsqrt`` ``except ImportError: …``)."""
    if isinstance(node, ast.Try):
        bodies = [node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]]
    elif isinstance(node, ast.If):
        bodies = [node.body, node.orelse]
    else:
        return False
    for body in bodies:
        for stmt in body:
            if isinstance(stmt, ast.Pass):
                continue
            if _is_def(stmt) and not isinstance(stmt, ast.ClassDef):
                continue
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and (
                stmt.value is None or _calls_only_constants(stmt.value)
            ):
                continue
            if _imports_only(stmt):
                continue
            return False
    return True


def _calls_only_constants(value: ast.expr) -> bool:
    """Whether an assignment's value calls nothing but constant helpers (``tl.constexpr(…)``,
    ``triton.cdiv``, ``os.environ.get``) — it allocates nothing and launches nothing."""
    for sub in ast.walk(value):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in _CONST_CALLS:
                return False
    return True


def definitions_module(
    path: str, text: str, *, arch: int | None = None
) -> tuple[types.ModuleType, list[int]]:
    """The file's definitions run as a module (``_kernel_lens_defs_<stem>``), each top-level
    statement on its own: imports, ``def``/``class`` (with their decorators) and constant
    assignments; a statement that fails is skipped. Returns the module and the skipped lines.
    ``arch``: the ``sm_<arch>`` being compiled for, which Triton's driver says while they run
    when there is no GPU driver here (:func:`triton_driver.compile_target`)."""
    if arch is None:
        return _definitions_module(path, text)
    from kernel_lens.agent.triton_driver import compile_target

    with compile_target(arch):
        return _definitions_module(path, text)


def _definitions_module(path: str, text: str) -> tuple[types.ModuleType, list[int]]:
    from kernel_lens.agent.usercode import package_place

    tree = ast.parse(text, path)
    stem = os.path.splitext(os.path.basename(path))[0]
    module = types.ModuleType(f"_kernel_lens_defs_{stem}")
    module.__file__ = path
    module.__dict__["__builtins__"] = __builtins__
    place = package_place(path)
    if place.package:
        # Its package's imports (relative and absolute) resolve as when Python imports it.
        module.__dict__["__package__"] = place.package
        if place.root in sys.path:
            sys.path.remove(place.root)
        sys.path.insert(0, place.root)
    sys.modules[module.__name__] = module
    module.__dict__[SKIPPED_WHY] = {}
    skipped: list[int] = []
    for node in tree.body:
        keep = (
            _is_def(node)
            or _imports_only(node)
            or (
                isinstance(node, ast.Assign | ast.AnnAssign)
                and node.value is not None
                and _calls_only_constants(node.value)
            )
        )
        if not keep:
            continue
        try:
            _run_statements([node], path, module)
        except Exception as exc:
            if isinstance(node, ast.If) and _run_a_branch(node, path, module):
                # ``if compare_version(…) and not is_npu_available():`` whose test could not
                # run here (a helper that failed to import): one of its branches' imports
                # still defines the names (``rsqrt``) the kernels use.
                continue
            skipped.append(node.lineno)
            why = getattr(module, SKIPPED_WHY, None)
            if isinstance(why, dict):
                why[node.lineno] = f"{type(exc).__name__}: {exc}"
    return module, skipped


#: The module's ``{line: why}`` of the definitions that failed here (for a compile's NameError).
SKIPPED_WHY = "__kernel_lens_skipped__"


def _run_statements(body: list[ast.stmt], path: str, module: types.ModuleType) -> None:
    code = compile(ast.Module(body=body, type_ignores=[]), path, "exec")
    exec(code, module.__dict__)


def _run_a_branch(node: ast.If, path: str, module: types.ModuleType) -> bool:
    """The first branch of ``node`` (the ``if`` body, else each ``elif``/``else``) that runs."""
    branch: list[ast.stmt] = node.body
    rest: list[ast.stmt] = node.orelse
    while branch:
        try:
            _run_statements(branch, path, module)
            return True
        except Exception:
            pass
        if len(rest) == 1 and isinstance(rest[0], ast.If):
            branch, rest = rest[0].body, rest[0].orelse
        else:
            branch, rest = rest, []
    return False


def missing_global_note(text: str, name: str, module: types.ModuleType | None) -> str:
    """Where the file defines ``name`` at its top level and why that did not run here, for a
    compile that failed with ``NameError('name is not defined')``; empty when it does not."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    why = getattr(module, SKIPPED_WHY, None) if module is not None else None
    for node in tree.body:
        bound: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.alias):
                bound.add(sub.asname or sub.name.split(".")[0])
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                bound.add(sub.id)
            elif isinstance(sub, ast.FunctionDef | ast.ClassDef):
                bound.add(sub.name)
        if name not in bound:
            continue
        reason = why.get(node.lineno) if isinstance(why, dict) else None
        return f"{name} is defined at line {node.lineno} of the file, which could not run here" + (
            f" ({reason})" if reason else ""
        )
    return ""


#: A kernel's methods that take its launch's arguments (``softmax_kernel.warmup(y, x, …,
#: BLOCK_SIZE=…, num_warps=8, grid=(1,))``: Triton's fused-softmax tutorial compiles that way,
#: then launches the compiled kernel it returns).
_LAUNCH_METHODS = ("warmup", "run")


def is_launch(node: ast.AST, kernel: str) -> bool:
    """Whether ``node`` launches ``kernel``: ``kernel[grid](…)``, or ``kernel.warmup(…)`` /
    ``kernel.run(…)`` (:data:`_LAUNCH_METHODS`)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr not in _LAUNCH_METHODS:
        return False
    return (
        isinstance(func, ast.Subscript | ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == kernel
    )


def _launch_calls(tree: ast.AST, kernel: str) -> list[ast.Call]:
    """The text's launches of ``kernel``: its ``kernel[grid](…)`` calls (outermost first),
    then its ``kernel.warmup(…)`` / ``kernel.run(…)`` calls in the file's order."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and is_launch(n, kernel)]
    by_grid = [n for n in calls if isinstance(n.func, ast.Subscript)]
    by_method = [n for n in calls if isinstance(n.func, ast.Attribute)]
    return by_grid + sorted(by_method, key=lambda n: (n.lineno, n.col_offset))


def _enclosing_def(tree: ast.AST, node: ast.AST) -> ast.FunctionDef | None:
    """The innermost function whose body holds ``node``."""
    found: ast.FunctionDef | None = None
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and any(sub is node for sub in ast.walk(n)):
            if found is None or n.lineno > found.lineno:
                found = n
    return found


def _kernel_def(tree: ast.AST, kernel: str) -> ast.FunctionDef | None:
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and n.name == kernel:
            return n
    return None


def _pointer_params(fn: ast.FunctionDef, params: list[str]) -> set[str]:
    """Parameters the body uses as pointers: the base of a load/store/atomic/block pointer, one
    side of an offset (``p + offs``) that reaches such a call, or ``p.dtype.element_ty``."""
    names = set(params)
    pointers: set[str] = set()
    # A local bound to an expression over a parameter (``row_ptr = x_ptr + row * stride``).
    derived: dict[str, set[str]] = {}

    def pointer_roots(expr: ast.AST) -> set[str]:
        """The parameters that are added into ``expr``'s address (not its offsets' factors)."""
        if isinstance(expr, ast.Name):
            if expr.id in names:
                return {expr.id}
            return derived.get(expr.id, set())
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
            return pointer_roots(expr.left) | pointer_roots(expr.right)
        if isinstance(expr, ast.Subscript):
            return pointer_roots(expr.value)
        if isinstance(expr, ast.Call) and expr.args:
            func = expr.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("advance", "multiple_of", "max_contiguous", "max_constancy"):
                return pointer_roots(expr.args[0])
        return set()

    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                derived[target.id] = pointer_roots(node.value) - {target.id}
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _POINTER_CALLS:
                base = node.args[0] if node.args else None
                if base is None:
                    base = next(
                        (k.value for k in node.keywords if k.arg in ("pointer", "base", "ptr")),
                        None,
                    )
                if base is not None:
                    pointers |= pointer_roots(base)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "element_ty"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "dtype"
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id in names
        ):
            pointers.add(node.value.value.id)
    pointers |= {p for p in params if p.lower().endswith("ptr") or p.lower().startswith("ptr")}
    return pointers


def _literal(expr: ast.expr | None, constants: dict[str, Any]) -> tuple[bool, Any]:
    if expr is None:
        return False, None
    try:
        return True, ast.literal_eval(expr)
    except (ValueError, SyntaxError, TypeError):
        pass
    if isinstance(expr, ast.Name) and expr.id in constants:
        value = constants[expr.id]
        value = getattr(value, "value", value)  # tl.constexpr(128)
        if isinstance(value, int | float | bool | str) or value is None:
            return True, value
    return False, None


def _scope_of(tree: ast.AST, call: ast.Call, name: str) -> ast.AST:
    """Where to look for ``name``'s tensor: the launcher when it assigns ``name`` itself (its
    ``y = torch.empty_like(x)``, not another function's ``y``), else the whole file."""
    launcher = _enclosing_def(tree, call)
    if launcher is not None and any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in ast.walk(launcher)
    ):
        return launcher
    return tree


def _dtype_of_tensor(tree: ast.AST, name: str) -> str | None:
    """The dtype named where ``name`` is assigned (``dtype=torch.float16``, ``.half()``)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not (isinstance(target, ast.Name) and target.id == name):
            continue
        for sub in ast.walk(node.value):
            if isinstance(sub, ast.keyword) and sub.arg == "dtype":
                dtype = ast.unparse(sub.value).rsplit(".", 1)[-1]
                if dtype in _TORCH_DTYPES:
                    return "*" + _TORCH_DTYPES[dtype]
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                if sub.func.attr in ("half", "bfloat16", "float", "double", "int", "long"):
                    return "*" + _TORCH_DTYPES[sub.func.attr]
    return None


def _autotune_config(kernel_obj: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first ``triton.Config`` of an autotuned kernel: its kwargs and launch options."""
    configs = getattr(kernel_obj, "configs", None)
    if not configs:
        return {}, {}
    first = configs[0]
    options = {
        k: getattr(first, k)
        for k in ("num_warps", "num_stages")
        if isinstance(getattr(first, k, None), int)
    }
    return dict(getattr(first, "kwargs", {}) or {}), options


def static_launch(
    text: str, kernel: str, kernel_obj: Any, module: types.ModuleType
) -> StaticLaunch:
    """The launch of ``kernel`` as the text writes it (its first ``kernel[grid](…)``)."""
    import inspect

    tree = ast.parse(text)
    sig = inspect.signature(_jit_fn(kernel_obj))
    params = list(sig.parameters)
    constexpr = {
        n for n, p in sig.parameters.items() if "constexpr" in str(getattr(p, "annotation", ""))
    }
    fn_def = _kernel_def(tree, kernel)
    pointers = _pointer_params(fn_def, params) if fn_def is not None else set()
    calls = _launch_calls(tree, kernel)
    call = calls[0] if calls else None
    constants = dict(vars(module))
    # The launcher's parameters annotated ``float``/``int``/``bool``.
    hinted = _read_launcher(tree, call, constants) if call is not None else {}
    bound, options = _bind_call(call, params, constants) if call is not None else ({}, {})
    floats = _float_names_in(tree)
    tuned, tuned_options = _autotune_config(kernel_obj)
    for k, v in tuned_options.items():
        options.setdefault(k, v)
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    assumed: dict[str, str] = {}
    for name in params:
        expr = bound.get(name)
        guess: str | None
        if name in constexpr:
            default = sig.parameters[name].default
            constexprs[name], guess = _constexpr_value(name, expr, constants, tuned, default)
            signature[name] = "constexpr"
        elif name in pointers:
            dtype = (
                _dtype_of_tensor(_scope_of(tree, call, expr.id), expr.id)
                if isinstance(expr, ast.Name) and call is not None
                else None
            )
            guess = "*fp32" if dtype is None else None
            signature[name] = dtype or "*fp32"
        else:
            signature[name], guess = _scalar_type(name, expr, constants, hinted, floats)
        if guess is not None:
            assumed[name] = guess
    return StaticLaunch(
        signature=signature,
        constexprs=constexprs,
        options=options,
        line=call.lineno if call is not None else None,
        call=ast.unparse(call) if call is not None else None,
        assumed=assumed,
    )


def _jit_fn(kernel_obj: Any) -> Any:
    """The Python function under a kernel's decorators (autotune, heuristics, jit)."""
    jit = kernel_obj
    while not callable(getattr(jit, "fn", None)) or type(jit).__name__ not in (
        "JITFunction",
        "InterpretedFunction",
    ):
        inner = getattr(jit, "fn", None)
        if inner is None or inner is jit:
            break
        jit = inner
    return getattr(jit, "fn", jit)


def _read_launcher(tree: ast.AST, call: ast.Call, constants: dict[str, Any]) -> dict[str, str]:
    """What the function making ``call`` says of its parameters: those with literal defaults
    (``activation=""``) go into ``constants``; returns those annotated ``float``/``int``/``bool``
    with their Triton type."""
    hinted: dict[str, str] = {}
    launcher = _enclosing_def(tree, call)
    if launcher is None:
        return hinted
    every = launcher.args.posonlyargs + launcher.args.args + launcher.args.kwonlyargs
    for arg in every:
        hint = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        kind = {"float": "fp32", "int": "i32", "bool": "i1"}.get(hint.split("|")[0].strip())
        if kind:
            hinted[arg.arg] = kind
    args = launcher.args
    positional = args.posonlyargs + args.args
    pairs: list[tuple[ast.arg, ast.expr]] = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    for param, default in pairs:
        try:
            constants[param.arg] = ast.literal_eval(default)
        except (ValueError, SyntaxError, TypeError):
            pass
    constants.update(_launcher_locals(launcher))
    return hinted


class _Choice:
    """A launcher's local set to one of several literals by conditions the text cannot decide
    (``num_stages = 4 if SIZE_SMEM > 200000 else 2``; ``GROUP_SIZE_M = 64`` then
    ``if N <= 8192: GROUP_SIZE_M = 96``…): the first is taken, and said."""

    def __init__(self, values: list[Any]) -> None:
        self.first, self.others = values[0], values[1:]

    def said(self, name: str) -> str:
        others = ", ".join(repr(v) for v in self.others)
        return f"{name}={self.first!r} (or {others}: chosen at run time; the first taken)"


def _choice_of(expr: ast.expr | None, constants: dict[str, Any]) -> _Choice | None:
    """The :class:`_Choice` a launcher's local ``expr`` names, if it is one."""
    choice = constants.get(expr.id) if isinstance(expr, ast.Name) else None
    return choice if isinstance(choice, _Choice) else None


def _launcher_locals(launcher: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any]:
    """The launcher's locals whose every assignment is a literal (``num_warps = 8``) or a choice
    between literals (:class:`_Choice`); a parameter, or a name bound any other way, is left
    out."""
    params = {a.arg for a in launcher.args.posonlyargs + launcher.args.args}
    params |= {a.arg for a in launcher.args.kwonlyargs}
    unknown: set[str] = set(params)
    found: dict[str, list[Any]] = {}
    for node in ast.walk(launcher):
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            options = _literal_options(value)
            if options is None:
                unknown.add(target.id)
            else:
                found.setdefault(target.id, []).extend(options)
            continue
        if isinstance(node, ast.Assign | ast.AugAssign | ast.For | ast.With | ast.NamedExpr):
            for sub in ast.walk(node):  # any other binding makes the name's value unknown
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    unknown.add(sub.id)
    out: dict[str, Any] = {}
    for name, values in found.items():
        if name in unknown:
            continue
        distinct = list(dict.fromkeys(values))
        out[name] = distinct[0] if len(distinct) == 1 else _Choice(distinct)
    return out


def _literal_options(value: ast.expr) -> list[Any] | None:
    """The values a literal (one) or a conditional between literals (each branch) can be."""
    ok, literal = _literal(value, {})
    if ok:
        return [literal]
    if isinstance(value, ast.IfExp):
        body, orelse = _literal_options(value.body), _literal_options(value.orelse)
        if body is not None and orelse is not None:
            return body + orelse
    return None


def _bind_call(
    call: ast.Call, params: list[str], constants: dict[str, Any]
) -> tuple[dict[str, ast.expr], dict[str, Any]]:
    """The launch's argument expressions by kernel parameter, and its literal ``num_warps`` /
    ``num_stages``."""
    bound: dict[str, ast.expr] = {}
    options: dict[str, Any] = {}
    for name, arg_expr in zip(params, call.args, strict=False):
        bound[name] = arg_expr
    for kw in call.keywords:
        if kw.arg in params:
            bound[kw.arg] = kw.value
        # (also when the kernel has a parameter of that name: Triton's run() reads the
        # compile options from all of a launch's keywords)
        if kw.arg in ("num_warps", "num_stages"):
            ok, value = _literal(kw.value, constants)
            choice = _choice_of(kw.value, constants)
            if not ok and choice is not None:
                ok, value = True, choice.first
            if ok and isinstance(value, int):
                options[kw.arg] = value
    return bound, options


def _constexpr_value(
    name: str, expr: ast.expr | None, constants: dict[str, Any], tuned: dict[str, Any], default: Any
) -> tuple[Any, str | None]:
    """A constexpr's value: the launch's literal, the autotune config's, the kernel's default,
    else a usual value; with what was assumed (``None``: read, not assumed)."""
    import inspect

    ok, value = _literal(expr, constants)
    choice = _choice_of(expr, constants)
    if not ok and choice is not None:
        return choice.first, choice.said(name)
    if not ok and name in tuned:
        ok, value = True, tuned[name]
    if not ok and default is not inspect.Parameter.empty:
        ok, value = True, getattr(default, "value", default)
    if ok:
        return value, None
    # A block size computed at run time (``triton.next_power_of_2(N)``): a usual tile; anything
    # else (a flag, a count): 1. Either is said, and can be picked.
    value = 64 if any(w in name.upper() for w in ("BLOCK", "TILE")) else 1
    return value, f"{name}={value} ({'computed at run time' if expr is not None else 'not given'})"


def _scalar_type(
    name: str,
    expr: ast.expr | None,
    constants: dict[str, Any],
    hinted: dict[str, str],
    floats: set[str],
) -> tuple[str, str | None]:
    """A scalar argument's Triton type, and what was assumed (``None``: the text says it)."""
    ok, value = _literal(expr, constants)
    if ok and isinstance(value, bool):
        return "i1", None
    if ok and isinstance(value, float):
        return "fp32", None
    if ok and isinstance(value, int):
        return ("i32" if -(2**31) <= value < 2**31 else "i64"), None
    if isinstance(expr, ast.Name) and expr.id in hinted:
        return hinted[expr.id], None  # the launcher's annotation says it
    if isinstance(expr, ast.Name) and expr.id in floats:
        # The value comes from a caller in the file that says float (``offset=0.0`` in
        # ``forward(ctx, X, W, eps, offset=0.0)``, ``f(x, offset=1.0)``, ``offset: float``).
        return "fp32", "fp32"
    # Nothing in the text says: a float-named scalar (eps, scale, alpha…) is fp32, any other
    # i32 — either way said, never silent.
    guess = "fp32" if _float_name(name) else "i32"
    return guess, guess


def _float_names_in(tree: ast.AST) -> set[str]:
    """Names the file gives a float: a parameter with a float literal default or a ``float``
    annotation (any function's), and a keyword passed a float literal in any call."""
    out: set[str] = set()

    def is_float(expr: ast.expr | None) -> bool:
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
            expr = expr.operand
        return isinstance(expr, ast.Constant) and isinstance(expr.value, float)

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            positional = args.posonlyargs + args.args
            firsts = positional[len(positional) - len(args.defaults) :]
            pairs = list(zip(firsts, args.defaults, strict=True))
            kw = zip(args.kwonlyargs, args.kw_defaults, strict=True)
            pairs += [(a, d) for a, d in kw if d is not None]
            out |= {a.arg for a, d in pairs if is_float(d)}
            for a in positional + args.kwonlyargs:
                hint = ast.unparse(a.annotation) if a.annotation is not None else ""
                if hint.split("|")[0].strip() == "float":
                    out.add(a.arg)
        elif isinstance(node, ast.Call):
            out |= {k.arg for k in node.keywords if k.arg and is_float(k.value)}
    return out


#: Scalar parameter names that hold a float in the kernels Kernel Lens has met.
_FLOAT_NAMES = (
    "eps", "epsilon", "scale", "alpha", "beta", "gamma", "factor", "temperature", "momentum",
    "dropout", "p_drop", "lr", "weight_decay", "softcap", "label_smoothing", "multiplier",
)  # fmt: skip


def _float_name(name: str) -> bool:
    lowered = name.lower()
    return any(lowered == n or lowered.endswith("_" + n) or lowered.startswith(n + "_")
               for n in _FLOAT_NAMES)  # fmt: skip


def apply_overrides(
    signature: dict[str, str], constexprs: dict[str, Any], overrides: dict[str, str]
) -> list[str]:
    """Replace types (``{"x_ptr": "*fp16"}``) and constexpr values (``{"BLOCK": "256"}``) in
    place; returns what changed, for the view. Unknown names and bad values are errors."""
    changed: list[str] = []
    for name, value in overrides.items():
        if name not in signature:
            raise ValueError(f"the kernel has no parameter {name!r} ({', '.join(signature)})")
        if value == "None" and (signature[name].startswith("*") or constexprs.get(name, 0) is None):
            # An optional pointer left out (``bias=None``): Triton makes it a constexpr None.
            signature[name] = "constexpr"
            constexprs[name] = None
        elif (
            signature[name] == "constexpr"
            and constexprs.get(name, 0) is None
            and value in POINTER_TYPES + SCALAR_TYPES
        ):
            # A None the launch passed (an optional pointer): given a type, it is passed.
            signature[name] = value
            constexprs.pop(name, None)
        elif signature[name] == "constexpr":
            try:
                constexprs[name] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                raise ValueError(f"{name} is a constexpr: a literal, not {value!r}") from None
        else:
            allowed = POINTER_TYPES if signature[name].startswith("*") else SCALAR_TYPES
            if value not in POINTER_TYPES + SCALAR_TYPES:
                raise ValueError(f"{name}: {value!r} is not one of {', '.join(allowed)}")
            signature[name] = value
        changed.append(f"{name}={value}")
    return changed
