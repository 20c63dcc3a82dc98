"""The layers are checked, not only claimed (issue 9 item 6, issue 21).

Every module under ``server/kernel_lens`` is parsed (imports inside functions, and under
``if TYPE_CHECKING:``, included) and:

- no import cycle: the graph of module → imported module (relative imports resolved, ``from pkg
  import module`` read as the module) has no strongly connected component of more than one
  module. Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``; those implicit
  package imports are not edges (a package's ``__init__`` re-exporting its modules would
  otherwise make a cycle of every package);
- ``analysis/`` is pure: no torch, triton, pygls, lsprotocol, attrs; nothing of ``kernel_lens.lsp``,
  ``kernel_lens.agent``, ``kernel_lens.client`` or ``kernel_lens.traces``; and it starts no process
  and shares no memory: no ``multiprocessing``, ``signal``, ``mmap``, ``os.fork``;
- ``agent/`` runs in the user's interpreter: no pygls, lsprotocol, attrs, cattrs; nothing of
  ``kernel_lens.lsp``;
- ``agent/stages/*`` import the agent's leaves (``usercode``, ``results``, ``cache``, ``errors``,
  ``types``), never the orchestrators ``runner`` and ``engine``;
- ``lsp/`` and ``cli`` import no ``kernel_lens.agent`` module: the agent is reached through
  ``kernel_lens.client``, the types that cross the boundary are ``kernel_lens.wire``'s;
- ``wire/`` (every type that crosses a process boundary) imports only the standard library and
  nothing of ``kernel_lens`` but ``wire`` itself, so both sides import it without the other's
  packages;
- ``client/`` (the parent side of the process boundary) imports only the standard library and
  ``wire``, so the server can import it without the user's packages;
- pygls' private parts (an attribute or a module name starting with ``_`` that pygls defines:
  ``ls.protocol._converter``, ``self._send_response`` in a subclass of pygls' protocol,
  ``from pygls.protocol import _dict_to_object``) are named only in ``lsp/protocol.py``.
"""

from __future__ import annotations

import ast
import functools
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pygls
import pytest
from pygls.lsp.server import LanguageServer

from tests.conftest import ROOT

PACKAGE = ROOT / "server" / "kernel_lens"

HEAVY = ("torch", "triton", "pygls", "lsprotocol", "attrs", "attr", "cattrs")
#: What ``analysis/`` may not import: the process-running side of the package.
NOT_IN_ANALYSIS = (
    "kernel_lens.lsp",
    "kernel_lens.agent",
    "kernel_lens.client",
    "kernel_lens.traces",
)
#: Processes and shared memory, which ``analysis/`` stays out of.
PROCESSES = ("multiprocessing", "signal", "mmap", "os.fork")
STDLIB_ONLY = {
    "kernel_lens.client": ("kernel_lens.wire", "kernel_lens.client", "kernel_lens.early_agent"),
    "kernel_lens.wire": ("kernel_lens.wire",),
    # Runs first in the server's process, before its imports (issue 28's cold click).
    "kernel_lens.early_agent": (),
}
#: The agent's orchestrators, which stages never import.
ORCHESTRATORS = ("kernel_lens.agent.runner", "kernel_lens.agent.engine")


@dataclass(frozen=True)
class Import:
    """One imported module name (or ``module.attribute``), where it is imported."""

    module: str
    importer: str
    line: int


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, package: Path) -> list[Import]:
    """Every module ``path`` imports (``from a import b`` counts as ``a.b`` and ``a``), and every
    ``os.fork`` it reads (as the module name ``os.fork``)."""
    name = _module_name(path, package)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.append(Import(base, name, node.lineno))
            found.extend(Import(f"{base}.{alias.name}", name, node.lineno) for alias in node.names)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "fork"
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            found.append(Import("os.fork", name, node.lineno))
    return found


def _is(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _is_stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def _known_modules(package: Path) -> set[str]:
    return {_module_name(p, package) for p in package.rglob("*.py")}


def _stdlib_rule(who: str) -> tuple[str, ...] | None:
    """What ``who`` may import besides the standard library, when it is stdlib-only."""
    for owner, allowed in STDLIB_ONLY.items():
        if _is(who, owner):
            return allowed
    return None


def _breaks(rule: str, who: str, mod: str) -> bool:
    """Whether ``who`` importing ``mod`` breaks ``rule``."""
    if rule == "analysis" and _is(who, "kernel_lens.analysis"):
        return any(_is(mod, h) for h in HEAVY) or any(_is(mod, p) for p in NOT_IN_ANALYSIS)
    if rule == "processes" and _is(who, "kernel_lens.analysis"):
        return any(_is(mod, p) for p in PROCESSES)
    if rule == "agent" and _is(who, "kernel_lens.agent"):
        bad = any(_is(mod, h) for h in ("pygls", "lsprotocol", "attrs", "attr", "cattrs"))
        return bad or _is(mod, "kernel_lens.lsp")
    if rule == "stages" and _is(who, "kernel_lens.agent.stages"):
        return any(_is(mod, o) for o in ORCHESTRATORS)
    if rule == "front" and (_is(who, "kernel_lens.lsp") or _is(who, "kernel_lens.cli")):
        return _is(mod, "kernel_lens.agent")
    if rule == "stdlib-only":
        allowed = _stdlib_rule(who)
        if allowed is not None:
            return not (
                _is_stdlib(mod) or mod == "kernel_lens" or any(_is(mod, a) for a in allowed)
            )
    return False


def violations(package: Path, rule: str) -> list[str]:
    """The imports of ``package`` that break ``rule``, as ``importer:line imports module``."""
    out: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for imp in imports_of(path, package):
            if _breaks(rule, imp.importer, imp.module):
                key = f"{imp.importer}:{imp.line}"
                out.setdefault(key, f"{key} imports {imp.module}")
    return sorted(out.values())


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module → the modules of ``package`` it imports (anywhere in it): ``import a.b`` is an edge
    to ``a.b`` (or its deepest prefix that is a module), ``from a import b`` to ``a.b`` when that
    is a module, else to ``a``."""
    known = _known_modules(package)

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in known}
    for path in package.rglob("*.py"):
        seen: set[str] = set()
        importer = _module_name(path, package)
        for imp in imports_of(path, package):
            target = resolve(imp.module)
            if target is not None and target != importer:
                seen.add(target)
        graph[importer] |= seen
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without
    recursion), each sorted, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return sorted(cycles)


def test_no_import_cycle_anywhere() -> None:
    assert import_cycles(import_graph(PACKAGE)) == []


def test_analysis_is_pure() -> None:
    assert violations(PACKAGE, "analysis") == []


def test_analysis_starts_no_process_and_shares_no_memory() -> None:
    assert violations(PACKAGE, "processes") == []


def test_agent_imports_nothing_of_the_language_server() -> None:
    assert violations(PACKAGE, "agent") == []


def test_stages_import_the_leaves_never_the_runner_or_the_engine() -> None:
    assert violations(PACKAGE, "stages") == []


def test_wire_and_the_client_import_only_the_standard_library_and_wire() -> None:
    assert violations(PACKAGE, "stdlib-only") == []


def test_lsp_and_the_cli_import_no_agent_module() -> None:
    assert violations(PACKAGE, "front") == []


def pygls_patches(package: Path) -> list[str]:
    """Where ``lsp/`` reaches into pygls's handler tables (``protocol.fm``) or replaces a method
    of the server object (``ls.text_document_publish_diagnostics = …``)."""
    found: list[str] = []
    for path in sorted((package / "lsp").rglob("*.py")):
        name = _module_name(path, package)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "fm":
                found.append(f"{name}:{node.lineno} reads .fm")
            elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in ("ls", "server")
                        and callable(getattr(LanguageServer, target.attr, None))
                    ):
                        found.append(f"{name}:{node.lineno} replaces {target.attr}")
    return found


def test_no_feature_patches_pygls() -> None:
    """One registration per shared message, in the dispatcher (issue 21 item 4)."""
    assert pygls_patches(PACKAGE) == []


def test_every_module_is_checked() -> None:
    names = _known_modules(PACKAGE)
    assert {
        "kernel_lens.wire.errors",
        "kernel_lens.wire.lsp",
        "kernel_lens.wire.results",
        "kernel_lens.agent.usercode",
        "kernel_lens.agent.results",
        "kernel_lens.client.pool",
        "kernel_lens.cli",
        "kernel_lens.cli.profile",
        "kernel_lens.lsp.dispatch",
        "kernel_lens.traces.read",
        "kernel_lens.traces.ncu_files",
        "kernel_lens.history",
        "kernel_lens.history.store",
        "kernel_lens.notebook.magic",
    } <= names
    assert any(_is(n, "kernel_lens.lsp") for n in names)
    assert any(_is(n, "kernel_lens.analysis") for n in names)
    assert any(_is(n, "kernel_lens.agent.stages") for n in names)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "kernel_lens"
    for rel in (
        "__init__.py",
        "agent/__init__.py",
        "agent/stages/__init__.py",
        "analysis/__init__.py",
        "cli/__init__.py",
        "client/__init__.py",
        "lsp/__init__.py",
        "wire/__init__.py",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(
    "rule, rel, text",
    [
        ("analysis", "analysis/bad.py", "import torch\n"),
        ("analysis", "analysis/bad.py", "def f():\n    from triton import language\n"),
        ("analysis", "analysis/bad.py", "from kernel_lens.agent.stages import ops\n"),
        ("analysis", "analysis/bad.py", "from ..lsp import server\n"),
        ("analysis", "analysis/bad.py", "from kernel_lens.traces.read import read_columns\n"),
        ("processes", "analysis/bad.py", "import mmap\n"),
        ("processes", "analysis/bad.py", "def f():\n    import signal\n"),
        ("processes", "analysis/bad.py", "from multiprocessing import Pool\n"),
        ("processes", "analysis/bad.py", "import os\n\ndef f():\n    return os.fork()\n"),
        ("processes", "analysis/bad.py", "from os import fork\n"),
        ("agent", "agent/bad.py", "from pygls.lsp.server import LanguageServer\n"),
        ("agent", "agent/bad.py", "import attrs\n"),
        ("agent", "agent/bad.py", "from kernel_lens.lsp.protocol import X\n"),
        ("stages", "agent/stages/bad.py", "from kernel_lens.agent.runner import call_user\n"),
        ("stages", "agent/stages/bad.py", "def f():\n    from ..engine import CacheDirs\n"),
        ("stages", "agent/stages/bad.py", "from kernel_lens.agent import runner\n"),
        ("front", "lsp/bad.py", "from kernel_lens.agent.errors import ProfileError\n"),
        ("front", "lsp/bad.py", "from kernel_lens.agent import runner\n"),
        ("front", "lsp/bad.py", "from ..agent.engine import Engine\n"),
        ("front", "lsp/bad.py", "def f():\n    from kernel_lens.agent.stages import ops\n"),
        ("front", "cli/bad.py", "from kernel_lens.agent.client import AgentClient\n"),
        ("front", "cli/bad.py", "from ..agent.runner import run_profile\n"),
        ("front", "lsp/bad.py", "from kernel_lens.agent import types\n"),
        ("stdlib-only", "wire/errors.py", "import pandas\n"),
        ("stdlib-only", "wire/lsp.py", "import attrs\n"),
        ("stdlib-only", "wire/lsp.py", "def f():\n    from kernel_lens.analysis import names\n"),
        ("stdlib-only", "wire/results.py", "from ..agent import engine\n"),
        ("stdlib-only", "client/pool.py", "from kernel_lens.agent.protocol import encode\n"),
        ("stdlib-only", "client/pool.py", "from kernel_lens.agent.errors import ProfileError\n"),
        ("stdlib-only", "client/pool.py", "from ..agent import engine\n"),
        ("stdlib-only", "client/__init__.py", "from kernel_lens.analysis import names\n"),
        ("stdlib-only", "early_agent.py", "from kernel_lens.client import pool\n"),
    ],
)
def test_the_checker_catches_a_forbidden_import(
    tmp_path: Path, rule: str, rel: str, text: str
) -> None:
    root = _package(tmp_path, {"wire/errors.py": "import dataclasses\n", rel: text})
    found = violations(root, rule)
    assert len(found) == 1 and found[0].startswith("kernel_lens."), found


@pytest.mark.parametrize(
    "rule, rel, text",
    [
        ("analysis", "analysis/ok.py", "import json\nfrom .names import short\n"),
        ("processes", "analysis/ok.py", "import os\nimport gzip\n\ndef f():\n    os.getpid()\n"),
        ("front", "lsp/ok.py", "from kernel_lens.wire.errors import ProfileError\n"),
        ("front", "lsp/ok.py", "from kernel_lens import wire\nfrom ..client import C\n"),
        ("front", "cli/ok.py", "from kernel_lens.client import AgentClient\n"),
        ("stages", "agent/stages/ok.py", "from kernel_lens.agent.usercode import call_user\n"),
        ("stages", "agent/stages/ok.py", "from ..results import kernel_totals\n"),
        ("stdlib-only", "client/pool.py", "import asyncio\nfrom ..wire.envelope import encode\n"),
        (
            "stdlib-only",
            "wire/lsp.py",
            "import typing\nfrom .errors import E\nfrom ._compat import N\n",
        ),
        ("stdlib-only", "client/pool.py", "from .faults import describe_exit\n"),
        ("agent", "agent/ok.py", "import torch\nfrom kernel_lens.analysis import names\n"),
    ],
)
def test_the_checker_lets_allowed_imports_through(
    tmp_path: Path, rule: str, rel: str, text: str
) -> None:
    root = _package(tmp_path, {"wire/errors.py": "import dataclasses\n", rel: text})
    assert violations(root, rule) == []


@pytest.mark.parametrize(
    "files, cycle",
    [
        (  # at module level
            {"agent/a.py": "from kernel_lens.agent import b\n", "agent/b.py": "from . import a\n"},
            ["kernel_lens.agent.a", "kernel_lens.agent.b"],
        ),
        (  # deferred, inside a function, through a third module
            {
                "agent/engine.py": "from kernel_lens.agent.runner import run\n",
                "agent/runner.py": "def run():\n    from .stages import target\n",
                "agent/stages/target.py": "def f():\n    from ..engine import CacheDirs\n",
            },
            [
                "kernel_lens.agent.engine",
                "kernel_lens.agent.runner",
                "kernel_lens.agent.stages.target",
            ],
        ),
        (  # a package's __init__ and a module that imports a name from it
            {
                "client/__init__.py": "from kernel_lens.client.pool import AgentClient\n",
                "client/pool.py": "def f():\n    from kernel_lens.client import AgentClient\n",
            },
            ["kernel_lens.client", "kernel_lens.client.pool"],
        ),
    ],
)
def test_the_cycle_finder_finds_a_cycle(
    tmp_path: Path, files: dict[str, str], cycle: list[str]
) -> None:
    assert import_cycles(import_graph(_package(tmp_path, files))) == [cycle]


@pytest.mark.parametrize(
    "text",
    [
        "def setup(ls):\n    features = ls.protocol.fm.features\n",
        "def setup(ls):\n    ls.text_document_publish_diagnostics = print\n",
    ],
)
def test_the_patch_finder_finds_a_patch(tmp_path: Path, text: str) -> None:
    assert len(pygls_patches(_package(tmp_path, {"lsp/bad.py": text}))) == 1


#: The one module that may name pygls' private parts.
PYGLS_DOOR = "kernel_lens.lsp.protocol"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_names(tree: ast.AST, in_class: set[ast.ClassDef] | None = None) -> set[str]:
    """The private names ``tree`` defines: its classes' methods and class attributes,
    ``self._x = …`` in their methods, its module-level functions and names (only in the classes
    of ``in_class`` when given)."""
    names: set[str] = set()
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    if in_class is None:
        body = getattr(tree, "body", [])
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    else:
        classes = [c for c in classes if c in in_class]
    for cls in classes:
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(stmt.name)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                names.add(stmt.target.id)
            elif isinstance(stmt, ast.Assign):
                names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        for node in ast.walk(cls):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign | ast.AugAssign)
                else []
            )
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    names.add(target.attr)
    return {n for n in names if _is_private(n)}


@functools.cache
def pygls_private_names() -> frozenset[str]:
    """Every private name the installed pygls defines (read from its files, so the list follows
    the pygls in use)."""
    names: set[str] = set()
    for path in Path(pygls.__file__).parent.rglob("*.py"):
        names |= _defined_names(ast.parse(path.read_text(encoding="utf-8")))
    return frozenset(names)


def _pygls_classes(trees: dict[str, ast.Module]) -> set[ast.ClassDef]:
    """The classes of ``trees`` that derive from a pygls class (through ours too)."""
    derived: set[str] = set()
    imported: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pygls":
                imported.update(alias.asname or alias.name for alias in node.names)
    found: set[ast.ClassDef] = set()
    changed = True
    while changed:
        changed = False
        for tree in trees.values():
            for node in ast.walk(tree):
                if not isinstance(node, ast.ClassDef) or node in found:
                    continue
                bases = {ast.unparse(b).split(".")[-1] for b in node.bases}
                text = {ast.unparse(b) for b in node.bases}
                if bases & (imported | derived) or any(t.startswith("pygls.") for t in text):
                    found.add(node)
                    derived.add(node.name)
                    changed = True
    return found


def pygls_private_uses(package: Path) -> list[str]:
    """Where a module other than :data:`PYGLS_DOOR` names a private part of pygls: an attribute
    pygls defines privately, read or overridden on a pygls object (``ls.protocol._converter``;
    ``self._x`` in a class deriving from pygls'; ``x._y`` where ``_y`` is pygls's and no class of
    ours defines it), or a private name imported from a pygls module."""
    private = pygls_private_names()
    trees = {
        _module_name(p, package): ast.parse(p.read_text(encoding="utf-8"), str(p))
        for p in sorted(package.rglob("*.py"))
    }
    pygls_classes = _pygls_classes(trees)
    ours: set[str] = set()
    for tree in trees.values():
        own = {n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)} - pygls_classes
        ours |= _defined_names(tree, own)
    found: list[str] = []
    for name, tree in trees.items():
        if name == package.name + PYGLS_DOOR.removeprefix("kernel_lens"):
            continue
        owner: dict[ast.AST, ast.ClassDef] = {}
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                owner.setdefault(node, cls)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pygls":
                found.extend(
                    f"{name}:{node.lineno} imports {node.module}.{alias.name}"
                    for alias in node.names
                    if _is_private(alias.name)
                )
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                cls = owner.get(node)
                if cls in pygls_classes and node.name in private:
                    found.append(f"{name}:{node.lineno} overrides pygls' {node.name}")
            elif isinstance(node, ast.Attribute) and node.attr in private:
                receiver = ast.unparse(node.value)
                cls = owner.get(node)
                if receiver in ("self", "cls", "super()"):
                    bad = cls in pygls_classes
                else:
                    bad = node.attr not in ours or receiver.split(".")[-1] in ("protocol", "ls")
                if bad:
                    found.append(f"{name}:{node.lineno} reads {receiver}.{node.attr}")
    return sorted(set(found))


def test_only_lsp_protocol_names_pygls_private_parts() -> None:
    """pygls' private parts change without notice: one module absorbs them (issue 37 item 2)."""
    assert pygls_private_uses(PACKAGE) == []


def test_the_door_to_pygls_private_parts_is_used() -> None:
    """The check knows pygls' private names, and ``lsp/protocol.py`` is where they are."""
    assert {"_send_response", "_converter", "_result_types", "_dict_to_object"} <= (
        pygls_private_names()
    )
    door = PACKAGE / "lsp" / "protocol.py"
    assert "_send_response" in door.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "text",
    [
        "def f(ls):\n    return ls.protocol._converter.unstructure\n",
        "def f(server):\n    return server.protocol._result_types\n",
        "class D:\n    def f(self):\n        return self._server.protocol._converter\n",
        "from pygls.protocol import _dict_to_object\n",
        (
            "from pygls.protocol import LanguageServerProtocol\n\n"
            "class P(LanguageServerProtocol):\n"
            "    def _send_response(self, msg_id, result=None, error=None):\n"
            "        pass\n"
        ),
        (
            "from pygls.lsp.server import LanguageServer\n\n"
            "class S(LanguageServer):\n"
            "    def f(self):\n"
            "        return self._include_headers\n"
        ),
        (  # through a subclass of ours
            "from pygls.lsp.server import LanguageServer\n\n"
            "class S(LanguageServer):\n    pass\n\n"
            "class T(S):\n    def f(self):\n        self._send_data({})\n"
        ),
    ],
)
def test_the_private_finder_finds_a_private_name(tmp_path: Path, text: str) -> None:
    found = pygls_private_uses(_package(tmp_path, {"lsp/bad.py": text}))
    assert len(found) == 1 and found[0].startswith("kernel_lens.lsp.bad:"), found


@pytest.mark.parametrize(
    "rel, text",
    [
        (  # a feature's own ``_server`` (pygls' protocol has one too)
            "lsp/ok.py",
            "class D:\n    def __init__(self, s):\n        self._server = s\n\n"
            "    def f(self):\n        return self._server.dispatcher\n",
        ),
        ("lsp/protocol.py", "def f(ls):\n    return ls.protocol._converter\n"),
        ("lsp/ok.py", "def f(ls):\n    return ls.protocol.converter\n"),
    ],
)
def test_the_private_finder_lets_public_and_own_names_through(
    tmp_path: Path, rel: str, text: str
) -> None:
    assert pygls_private_uses(_package(tmp_path, {rel: text})) == []


def test_the_cycle_finder_lets_a_package_and_its_modules_be(tmp_path: Path) -> None:
    """``kernel_lens.client`` re-exports ``pool``, and ``pool`` imports ``faults`` by its full
    name: importing ``kernel_lens.client.faults`` runs the package's ``__init__``, but that is
    not an edge (no cycle)."""
    root = _package(
        tmp_path,
        {
            "client/__init__.py": "from kernel_lens.client.pool import AgentClient\n",
            "client/pool.py": "from kernel_lens.client.faults import clip\n",
            "client/faults.py": "import os\n",
        },
    )
    graph = import_graph(root)
    assert graph["kernel_lens.client"] == {"kernel_lens.client.pool"}
    assert graph["kernel_lens.client.pool"] == {"kernel_lens.client.faults"}
    assert import_cycles(graph) == []
