"""Stage *target*: load the user's module from buffer text and build the function's inputs.

The text is compiled under the file's real path (:mod:`kernel_lens.agent.usercode`), so line
numbers in tracebacks, in ``inspect.getsource`` (which Triton's ``@jit`` uses) and in the profiler
match the editor, even for unsaved edits.
"""

from __future__ import annotations

import ast
import inspect
import os
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from kernel_lens.agent.context import CallContext, from_directive
from kernel_lens.agent.errors import ProfileError, format_exception, user_line_from_traceback
from kernel_lens.agent.stages import capture
from kernel_lens.agent.stages.suggest import checked_directive
from kernel_lens.agent.usercode import compile_text, exec_module, parse_source, read_source
from kernel_lens.analysis.functions import FunctionInfo, SourceSyntaxError, find_function
from kernel_lens.wire.results import InputArg, InputsInfo

__all__ = ["Target", "load_target"]


@dataclass
class Target:
    """A loaded function ready to call.

    Attributes:
        path: absolute path of the file (the name the text was compiled under).
        info: where the function is in the text.
        fn: the callable to profile (a bound method for instance methods).
        code: the code object whose lines are attributed (the undecorated function's).
        args: positional inputs.
        kwargs: keyword inputs.
        inputs_source: where the inputs came from: ``directive``, ``<name>_inputs()``,
            ``captured`` or ``none``.
        module: the module namespace the text was executed in (run as ``__main__`` when the
            inputs were captured from the script's run).
        inputs: the description of the inputs (the result's ``inputs`` object).
        context: the calling context every stage runs the function under (a captured
            call's, or a ``# kernel-lens: context = …`` directive's; None: the agent's own).
    """

    path: str
    info: FunctionInfo
    fn: Callable[..., Any]
    code: types.CodeType
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    inputs_source: str
    module: types.ModuleType
    source_lines: list[str] = field(default_factory=list)
    inputs: InputsInfo | None = None
    context: CallContext | None = None

    def call(self) -> Any:
        """Call the function once on its inputs."""
        return self.fn(*self.args, **self.kwargs)

    def source_line(self, line: int) -> str:
        """The stripped text of 1-based ``line``."""
        if 1 <= line <= len(self.source_lines):
            return self.source_lines[line - 1].strip()
        return ""


def _unwrap_code(obj: Any) -> types.CodeType | None:
    """The code object of the user's own function under decorators (functools.wraps chains)."""
    seen = 0
    while obj is not None and seen < 20:
        func = getattr(obj, "__func__", obj)
        code = getattr(func, "__code__", None)
        wrapped = getattr(func, "__wrapped__", None)
        if wrapped is None:
            return code if isinstance(code, types.CodeType) else None
        obj = wrapped
        seen += 1
    return None


def _instance_line(text: str, name: str) -> int | None:
    """The line of the module-level assignment to ``name`` (the last one)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, MemoryError, RecursionError):
        return None
    line: int | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                line = node.lineno
    return line


def _module_instance(module: types.ModuleType, owner: type) -> tuple[str, Any] | None:
    """The module's single instance of ``owner`` (``None`` when none or several)."""
    found = [(k, v) for k, v in module.__dict__.items() if type(v) is owner]
    if len({id(v) for _, v in found}) == 1:
        return found[0]
    return None


def _resolve_callable(
    module: types.ModuleType,
    info: FunctionInfo,
    path: str,
    *,
    text: str = "",
    instance: Any = None,
    self_info: dict[str, Any] | None = None,
) -> Any:
    """The object to call; for a method, bound to ``instance`` (the captured ``self``), else
    to the module's single instance of the class, else to a no-argument instance. What was
    chosen is written into ``self_info``."""
    parts = info.qualname.split(".")
    obj: Any = module
    owner: Any = None
    for part in parts:
        owner = obj
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ProfileError(
                "not-found",
                f"'{info.qualname}' is defined in the text but not bound after loading the "
                "module (defined conditionally, or deleted?)",
                info.def_line,
            ) from None
    if info.is_method and isinstance(owner, type):
        raw = owner.__dict__.get(parts[-1])
        if not isinstance(raw, staticmethod | classmethod):
            info_out = self_info if self_info is not None else {}
            info_out["class"] = owner.__name__
            single = _module_instance(module, owner) if instance is None else None
            if instance is not None:
                info_out["how"] = "captured"
                named = [k for k, v in module.__dict__.items() if v is instance]
                if named:
                    info_out["name"] = named[0]
                    info_out["made_at"] = _instance_line(text, named[0])
            elif single is not None:
                instance = single[1]
                info_out["how"] = f"module instance {single[0]}"
                info_out["name"] = single[0]
                info_out["made_at"] = _instance_line(text, single[0])
            else:
                info_out["how"] = f"{owner.__name__}() with no arguments"
            if instance is not None:
                return getattr(instance, parts[-1])
            try:
                instance = owner()
            except Exception as exc:
                raise ProfileError(
                    "inputs",
                    f"to profile the method '{info.qualname}', Kernel Lens needs an instance "
                    f"of {owner.__name__}: the script made none at module level and did not "
                    f"call the method, and {owner.__name__}() with no arguments raised "
                    f"{type(exc).__name__}: {exc}",
                    user_line_from_traceback(exc.__traceback__, path) or info.def_line,
                    format_exception(exc),
                ) from None
            obj = getattr(instance, parts[-1])
    return obj


def _normalize_inputs(value: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], tuple | list)
        and isinstance(value[1], dict)
    ):
        return tuple(value[0]), dict(value[1])
    if isinstance(value, tuple | list):
        return tuple(value), {}
    return (value,), {}


def _compile_directive(expr: str, path: str, line: int) -> types.CodeType:
    """The directive's expression compiled at its own line of ``path`` (for tracebacks)."""
    tree = ast.parse(expr, path, "eval")
    ast.increment_lineno(tree, line - 1)
    return compile(tree, path, "eval")


def _check_signature(
    fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], info: FunctionInfo, source: str
) -> str | None:
    """Why ``fn(*args, **kwargs)`` cannot be called (``None`` when the inputs fit)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # a callable without a signature: the call itself will tell
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        given = ", ".join([type(a).__name__ for a in args] + [f"{k}=…" for k in kwargs])
        name = info.qualname
        return f"{source} gives {name}({given}), which does not fit {name}{signature}: {exc}"
    return None


def _check_inputs(
    module: types.ModuleType,
    fn: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    info: FunctionInfo,
    inputs_source: str,
    path: str,
) -> None:
    """An ``inputs`` error, on the line that gave the inputs, when they do not fit ``fn``."""
    if inputs_source == "directive":
        where, line = "the inputs directive", info.inputs_line
    elif inputs_source == "none":
        where, line = "no inputs directive", info.def_line
    else:
        factory = module.__dict__.get(inputs_source.removesuffix("()"))
        code = getattr(factory, "__code__", None)
        where = inputs_source
        line = code.co_firstlineno if code and code.co_filename == path else info.def_line
    problem = _check_signature(fn, args, kwargs, info, where)
    if problem is None:
        return
    if inputs_source == "none":
        problem += (
            f" (add a `# kernel-lens: inputs = (…)` comment above the def, or a "
            f"{info.qualname.replace('.', '_')}_inputs() function returning them)"
        )
    raise ProfileError("inputs", problem, line)


def _build_inputs(
    module: types.ModuleType, info: FunctionInfo, path: str
) -> tuple[tuple[Any, ...], dict[str, Any], str]:
    if info.inputs_expr is not None:
        code = _directive_code("inputs", info.inputs_expr, path, info.inputs_line)
        value = _eval_directive("inputs", lambda: eval(code, module.__dict__), info.inputs_line)
        args, kwargs = _normalize_inputs(value)
        return args, kwargs, "directive"
    factory_name = info.qualname.replace(".", "_") + "_inputs"
    factory = module.__dict__.get(factory_name)
    if callable(factory):
        try:
            value = factory()
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            raise ProfileError(
                "inputs",
                f"{factory_name}() raised {type(exc).__name__}: {exc}",
                user_line_from_traceback(exc.__traceback__, path),
                format_exception(exc),
            ) from None
        args, kwargs = _normalize_inputs(value)
        return args, kwargs, f"{factory_name}()"
    return (), {}, "none"


def load_target(
    path: str,
    text: str | None = None,
    *,
    name: str | None = None,
    line: int | None = None,
    driver: str | None = None,
    argv: list[str] | None = None,
    cwd: str | None = None,
) -> Target:
    """Load ``path`` (or its unsaved ``text``) and return the function to profile.

    Args:
        path: the file's path; made absolute.
        text: the buffer text; read from ``path`` when ``None``.
        name: ``func`` or ``Class.method``.
        line: a 1-based line inside the function (used when ``name`` is None).
        driver: a script that calls the function (``--from``): the inputs, ``self`` and
            calling context are those of its first call in a run of ``python DRIVER ARGV…``.
        argv: the driver's ``sys.argv[1:]``; cwd: its folder (default: the driver's own).

    Raises:
        ProfileError: ``syntax``, ``not-found``, ``import`` or ``inputs``, with the user's line.
    """
    path = os.path.abspath(path)
    if text is None:
        text = read_source(path)
    try:
        info = find_function(text, name=name, line=line, filename=path)
    except SourceSyntaxError as exc:
        raise ProfileError("syntax", str(exc), exc.line) from None
    if info is None:
        what = f"no function '{name}'" if name is not None else f"no function at line {line}"
        raise ProfileError("not-found", f"{what} in {os.path.basename(path)}", line)
    module_code = compile_text(path, text)
    captured: capture.Capture | None = None
    self_info: dict[str, Any] = {}
    instance: Any = None
    if driver is not None:
        captured = capture.run_driver_until_call(
            driver, list(argv or []), path, text, info, cwd=cwd, suggest=_checked_suggestion
        )
    elif _wants_capture(text, path, info):
        target_code = capture.find_code(module_code, info.qualname, info.def_line)
        if target_code is not None:
            captured = capture.run_until_call(
                path, text, module_code, target_code, info, suggest=_checked_suggestion
            )
    if captured is not None:
        module = captured.module
        if info.is_method and _is_instance_method(module, info) and captured.args:
            instance = captured.args[0]
            captured.args = captured.args[1:]
        elif info.is_method and _is_classmethod(module, info) and captured.args:
            captured.args = captured.args[1:]
    else:
        module = exec_module(path, text)
    fn = _resolve_callable(module, info, path, text=text, instance=instance, self_info=self_info)
    if not callable(fn):
        raise ProfileError("not-found", f"'{info.qualname}' is not callable", info.def_line)
    code = _unwrap_code(fn)
    if code is None or code.co_filename != path:
        raise ProfileError(
            "unsupported",
            f"'{info.qualname}' is not a plain Python function of this file "
            "(a compiled or wrapped object Kernel Lens cannot see into)",
            info.def_line,
        )
    if captured is not None:
        args, kwargs, inputs_source = captured.args, captured.kwargs, "captured"
    else:
        args, kwargs, inputs_source = _build_inputs(module, info, path)
        _check_inputs(module, fn, args, kwargs, info, inputs_source, path)
    inputs = _describe_inputs(module, info, path, fn, args, kwargs, inputs_source, captured)
    if self_info:
        inputs["self"] = self_info
    context = _directive_context(module, info, path)
    if context is None and captured is not None:
        context = captured.context
    if context is not None:
        described = context.to_json()
        if described["label"] or context.source == "directive":
            inputs["context"] = described
    return Target(
        path=path,
        info=info,
        fn=fn,
        code=code,
        args=args,
        kwargs=kwargs,
        inputs_source=inputs_source,
        module=module,
        source_lines=text.splitlines(),
        inputs=inputs,
        context=context,
    )


def _checked_suggestion(
    info: FunctionInfo, text: str, path: str, module: types.ModuleType | None
) -> str:
    """The suggested directive for a function the run never called, each candidate run once
    in ``module`` (see :mod:`kernel_lens.agent.stages.suggest`)."""
    return checked_directive(
        info,
        text,
        path,
        module,
        resolve=lambda m, i, p, t: _resolve_callable(m, i, p, text=t),
        normalize=_normalize_inputs,
    )


def _directive_code(what: str, expr: str, path: str, line: int | None) -> types.CodeType:
    """A directive's expression compiled at its own line (``what``: ``inputs``/``context``)."""
    try:
        return _compile_directive(expr, path, line or 1)
    except SyntaxError as exc:
        raise ProfileError(
            "inputs", f"the {what} directive does not parse: {exc.msg}", line
        ) from None


def _eval_directive(what: str, run: Callable[[], Any], line: int | None, hint: str = "") -> Any:
    """``run()`` — the directive's evaluation — with its failure said on the directive's line."""
    try:
        return run()
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        raise ProfileError(
            "inputs",
            f"the {what} directive raised {type(exc).__name__}: {exc}{hint}",
            line,
            format_exception(exc),
        ) from None


def _directive_context(
    module: types.ModuleType, info: FunctionInfo, path: str
) -> CallContext | None:
    """The ``# kernel-lens: context = …`` directive's context, evaluated in the module (once
    here to check and label it, then anew for every block that runs under it)."""
    if info.context_expr is None:
        return None
    code = _directive_code("context", info.context_expr, path, info.context_line)
    hint = (
        ' (it takes a context manager, or a tuple of them: torch.autocast("cuda", '
        "dtype=torch.bfloat16), torch.no_grad())"
    )
    made: CallContext = _eval_directive(
        "context",
        lambda: from_directive(lambda: eval(code, module.__dict__)),
        info.context_line,
        hint,
    )
    return made


def _owner_attr(module: types.ModuleType, info: FunctionInfo) -> Any:
    parts = info.qualname.split(".")
    owner: Any = module
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    return owner.__dict__.get(parts[-1]) if isinstance(owner, type) else None


def _is_instance_method(module: types.ModuleType, info: FunctionInfo) -> bool:
    raw = _owner_attr(module, info)
    return raw is not None and not isinstance(raw, staticmethod | classmethod)


def _is_classmethod(module: types.ModuleType, info: FunctionInfo) -> bool:
    return isinstance(_owner_attr(module, info), classmethod)


def _factory_defined(tree: ast.Module, name: str) -> bool:
    """Whether the module binds ``name`` at top level (a def, an assignment or an import)."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return True
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any((a.asname or a.name) == name for a in node.names):
                return True
    return False


def _required_params(tree: ast.Module, info: FunctionInfo) -> list[str]:
    """The parameters of the def at ``info.def_line`` that have no default (``self``/``cls``
    of a method left out)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == (
            info.def_line
        ):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            if (
                info.is_method
                and positional
                and not any(
                    isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
                )
            ):
                positional = positional[1:]
            required = positional[: len(positional) - len(a.defaults)] if a.defaults else positional
            required += [k for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None]
            return [p.arg for p in required]
    return []


def _wants_capture(text: str, path: str, info: FunctionInfo) -> bool:
    """Neither a directive nor ``<name>_inputs()``, and parameters without defaults."""
    if info.inputs_expr is not None:
        return False
    tree = parse_source(text, path)
    if _factory_defined(tree, info.qualname.replace(".", "_") + "_inputs"):
        return False
    return bool(_required_params(tree, info))


def _describe_inputs(
    module: types.ModuleType,
    info: FunctionInfo,
    path: str,
    fn: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    inputs_source: str,
    captured: capture.Capture | None,
) -> InputsInfo:
    """The result's ``inputs`` object: where the inputs came from and each argument."""
    try:
        names = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
    except (TypeError, ValueError):
        names = []
    described = [
        capture.describe_value(names[i] if i < len(names) else f"arg{i}", a)
        for i, a in enumerate(args)
    ] + [capture.describe_value(k, v) for k, v in kwargs.items()]
    if captured is not None:
        out: InputsInfo = {
            "source": "captured",
            "label": "captured",
            "line": captured.line,
            "call": captured.call,
            "setup_s": captured.setup_s,
            "args": described,
        }
        if captured.driver is not None:
            out["driver"] = captured.driver
            out["label"] = f"captured from {os.path.basename(captured.driver)}"
        return out
    if inputs_source == "directive":
        return _inputs("directive", "directive", info.inputs_line, described)
    if inputs_source == "none":
        return _inputs("none", "none", None, described)
    factory = module.__dict__.get(inputs_source.removesuffix("()"))
    code = getattr(factory, "__code__", None)
    line = code.co_firstlineno if code and code.co_filename == path else None
    return _inputs("factory", inputs_source, line, described)


def _inputs(
    source: Literal["directive", "factory", "none"],
    label: str,
    line: int | None,
    args: list[InputArg],
) -> InputsInfo:
    """The ``inputs`` object of inputs that were not captured (no call chain, no set-up time)."""
    return {
        "source": source,
        "label": label,
        "line": line,
        "call": None,
        "setup_s": None,
        "args": args,
    }
