"""Where a Triton kernel is made and where it can be launched from, read from the text: which
names of a file are kernels however they were made (``@triton.jit``, ``k = triton.jit(k)``,
``triton.autotune(…)(k)``), and which functions may launch one — in its own file (a launch
through a local alias counts: any function that names the kernel) or in another module of its
package (``from .kernels.forward import fwd_kernel`` in ``interface.py``).

These are only *candidates*: the launch itself is caught where it happens
(:mod:`triton_ir` intercepts Triton's ``run``), so a candidate that does not launch the kernel
costs one call and says nothing wrong. No triton here.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from kernel_lens.agent.usercode import package_place

__all__ = ["TextKernel", "kernels_in_text", "launcher_candidates", "package_launchers"]

#: Names whose call makes (or wraps) a kernel.
_MAKERS = ("jit", "autotune", "heuristics")
#: Files of a package read at most, and their size, when looking for launchers elsewhere.
MAX_FILES = 400
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class TextKernel:
    """A kernel of a file, by the name it is bound to.

    Attributes:
        name: the module-level name (``fwd`` in ``fwd = triton.jit(_fwd)``).
        def_name: the ``def``'s own name (``_fwd``), which the launch's ``fn.__name__`` is.
        def_line: 1-based line of the ``def``.
    """

    name: str
    def_name: str
    def_line: int


def _makes_kernel(node: ast.expr) -> bool:
    """Whether an expression calls (or is) ``jit``/``autotune``/``heuristics`` anywhere in its
    callee chain (``triton.jit``, ``triton.autotune(configs=…)``, ``jit``)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in _MAKERS:
            return True
        if isinstance(sub, ast.Name) and sub.id in _MAKERS:
            return True
    return False


def kernels_in_text(tree: ast.Module) -> dict[str, TextKernel]:
    """Every kernel of the module's top level, by each name it is bound to: a ``def`` under a
    ``jit`` decorator, and a name assigned a ``jit``/``autotune``/``heuristics`` call that
    wraps one of the module's ``def``s (``k = triton.jit(k)``; the ``def`` is then a kernel
    too, by its own name)."""
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    out: dict[str, TextKernel] = {}
    for fn in defs.values():
        if any(_makes_kernel(d) for d in fn.decorator_list):
            out[fn.name] = TextKernel(fn.name, fn.name, fn.lineno)
    for node in tree.body:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        if not _makes_kernel(node.value.func):
            continue
        wrapped = [
            sub.id
            for sub in ast.walk(node.value)
            if isinstance(sub, ast.Name) and sub.id in defs and sub.id not in _MAKERS
        ]
        if not wrapped:
            continue
        inner = out.get(wrapped[0])
        target_def = defs[wrapped[0]]
        kernel = TextKernel(wrapped[0], target_def.name, target_def.lineno)
        if inner is not None:  # triton.autotune(…)(jitted_def): the def's own kernel
            kernel = inner
        out.setdefault(kernel.def_name, kernel)
        for target in node.targets:
            if isinstance(target, ast.Name):
                out[target.id] = TextKernel(target.id, kernel.def_name, kernel.def_line)
    return out


def _names_in(node: ast.AST) -> set[str]:
    """Names and attribute names (``F.fwd_kernel``) an AST uses."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr)
    return out


def launcher_candidates(tree: ast.Module, names: set[str], kernels: set[str]) -> list[str]:
    """Qualified names of the functions (methods too) that name any of ``names``, those that
    launch one directly (``name[grid](…)``) first; kernels themselves (``kernels``: a
    ``@triton.jit`` helper named inside another kernel) are never launchers."""
    direct: list[str] = []
    named: list[str] = []

    def launches(node: ast.AST) -> bool:
        return any(
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Subscript)
            and _names_in(sub.func.value) & names
            for sub in ast.walk(node)
        )

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name in kernels and not prefix:
                    continue
                if launches(node):
                    direct.append(prefix + node.name)
                elif _names_in(node) & names:
                    named.append(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return direct + named


def _imported_names(tree: ast.Module, module: str, package: str, names: set[str]) -> set[str]:
    """The local names a module binds to any of ``names`` of ``module`` by ``from … import``
    (absolute or relative, ``as`` aliases too), and ``names`` themselves."""
    out = set(names)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if _resolve(node.level, node.module, package) != module:
            continue
        for alias in node.names:
            if alias.name in names:
                out.add(alias.asname or alias.name)
    return out


def package_launchers(path: str, names: set[str]) -> list[tuple[str, list[str]]]:
    """Other files of the file's package (the whole top package; the file's folder when it is
    in none) whose functions name the kernel: ``[(file, [qualname…])]``, files that import it
    by name first. Bounded: at most :data:`MAX_FILES` files of at most :data:`MAX_BYTES`."""
    place = package_place(path)
    top = (
        os.path.join(place.root, place.package.split(".")[0])
        if place.package
        else os.path.dirname(path)
    )
    real = os.path.realpath(path)
    found: list[tuple[int, str, list[str]]] = []
    seen = 0
    for folder, dirs, files in os.walk(top):
        # A package: all of it; a file in none: its folder's files only.
        keep = place.package and seen < MAX_FILES
        dirs[:] = sorted(d for d in dirs if keep and not d.startswith((".", "__pycache__")))
        for file in sorted(files):
            if not file.endswith(".py") or seen >= MAX_FILES:
                continue
            other = os.path.join(folder, file)
            if os.path.realpath(other) == real or not os.path.isfile(other):
                continue
            seen += 1
            try:
                if os.path.getsize(other) > MAX_BYTES:
                    continue
                with open(other, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            if not any(n in text for n in names):
                continue
            try:
                tree = ast.parse(text, other)
            except SyntaxError:
                continue
            other_place = package_place(other)
            if not _imports_module(tree, place.name, other_place.package):
                continue  # a same-named kernel of another module is another kernel
            local = _imported_names(tree, place.name, other_place.package, names)
            own = set(kernels_in_text(tree))
            launchers = launcher_candidates(tree, local, own)
            if launchers:
                found.append((0 if local - names else 1, other, launchers))
    found.sort(key=lambda f: f[0])
    return [(file, launchers) for _, file, launchers in found]


def _resolve(level: int, module: str | None, package: str) -> str:
    """The absolute name of ``from <dots><module> import …`` in ``package``."""
    if not level:
        return module or ""
    base = package.split(".") if package else []
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def _imports_module(tree: ast.Module, module: str, package: str) -> bool:
    """Whether a module imports ``module`` (``pkg.ops.x``): ``import pkg.ops.x``,
    ``from pkg.ops.x import …``, ``from pkg.ops import x`` (relative forms too)."""
    parent, _, stem = module.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name == module or a.name.startswith(module + ".") for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(node.level, node.module, package)
            if source == module:
                return True
            if source == parent and any(a.name == stem for a in node.names):
                return True
    return False
