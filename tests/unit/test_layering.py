"""The layers are checked, not only claimed (issue 9 item 6).

Every module under ``server/kernel_lens`` is parsed (imports inside functions included) and:

- ``analysis/`` is pure: no torch, triton, pygls, lsprotocol, attrs; nothing of ``kernel_lens.lsp``
  or ``kernel_lens.agent`` (the process-running side);
- ``agent/`` runs in the user's interpreter: no pygls, lsprotocol, attrs, cattrs; nothing of
  ``kernel_lens.lsp``;
- ``lsp/`` takes from ``kernel_lens.agent`` only the client (the parent side of the process
  boundary);
- ``wire/`` (every type that crosses a process boundary) imports only the standard library and
  nothing of ``kernel_lens`` but ``wire`` itself, so both sides import it without the other's
  packages;
- ``agent/client.py`` imports only the standard library and ``wire``, so the server can import it
  without the user's packages.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "server" / "kernel_lens"

HEAVY = ("torch", "triton", "pygls", "lsprotocol", "attrs", "attr", "cattrs")
AGENT_SHARED = ("kernel_lens.agent.client",)
STDLIB_ONLY = {
    "kernel_lens.agent.client": ("kernel_lens.wire",),
}


@dataclass(frozen=True)
class Import:
    """One imported module name, where it is imported."""

    module: str
    importer: str
    line: int


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, package: Path) -> list[Import]:
    """Every module ``path`` imports (``from a import b`` counts as ``a.b`` and ``a``)."""
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
    return found


def _is(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _is_stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def _known_modules(package: Path) -> set[str]:
    return {_module_name(p, package) for p in package.rglob("*.py")}


def violations(package: Path, rule: str) -> list[str]:
    """The imports of ``package`` that break ``rule``, as ``importer:line imports module``."""
    out: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for imp in imports_of(path, package):
            mod, who = imp.module, imp.importer
            bad = False
            if rule == "analysis" and _is(who, "kernel_lens.analysis"):
                bad = any(_is(mod, h) for h in HEAVY) or any(
                    _is(mod, p) for p in ("kernel_lens.lsp", "kernel_lens.agent")
                )
            elif rule == "agent" and _is(who, "kernel_lens.agent"):
                bad = any(_is(mod, h) for h in ("pygls", "lsprotocol", "attrs", "attr", "cattrs"))
                bad = bad or _is(mod, "kernel_lens.lsp")
            elif rule == "lsp" and _is(who, "kernel_lens.lsp"):
                bad = (
                    _is(mod, "kernel_lens.agent")
                    and mod != "kernel_lens.agent"
                    and not any(_is(mod, ok) for ok in AGENT_SHARED)
                )
            elif rule == "stdlib-only" and who in STDLIB_ONLY:
                allowed = STDLIB_ONLY[who]
                bad = not (
                    _is_stdlib(mod)
                    or mod == "kernel_lens.agent"
                    or any(_is(mod, a) for a in allowed)
                )
            elif rule == "wire" and _is(who, "kernel_lens.wire"):
                bad = not (_is_stdlib(mod) or _is(mod, "kernel_lens.wire"))
            if bad:
                out.setdefault(f"{who}:{imp.line}", f"{who}:{imp.line} imports {mod}")
    return sorted(out.values())


def test_analysis_is_pure() -> None:
    assert violations(PACKAGE, "analysis") == []


def test_agent_imports_nothing_of_the_language_server() -> None:
    assert violations(PACKAGE, "agent") == []


def test_the_shared_agent_modules_import_only_the_standard_library() -> None:
    assert violations(PACKAGE, "stdlib-only") == []


def test_wire_imports_only_the_standard_library() -> None:
    assert violations(PACKAGE, "wire") == []


def test_lsp_takes_only_the_client_from_the_agent() -> None:
    assert violations(PACKAGE, "lsp") == []


def test_every_module_is_checked() -> None:
    names = _known_modules(PACKAGE)
    assert {"kernel_lens.agent.client", "kernel_lens.cli"} <= names
    assert {"kernel_lens.wire.errors", "kernel_lens.wire.lsp", "kernel_lens.wire.results"} <= names
    assert any(_is(n, "kernel_lens.lsp") for n in names)
    assert any(_is(n, "kernel_lens.analysis") for n in names)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "kernel_lens"
    for rel in (
        "__init__.py",
        "agent/__init__.py",
        "analysis/__init__.py",
        "lsp/__init__.py",
        "wire/__init__.py",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    for rel, text in files.items():
        (root / rel).write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(
    "rule, rel, text",
    [
        ("analysis", "analysis/bad.py", "import torch\n"),
        ("analysis", "analysis/bad.py", "def f():\n    from triton import language\n"),
        ("analysis", "analysis/bad.py", "from kernel_lens.agent.stages import ops\n"),
        ("analysis", "analysis/bad.py", "from ..lsp import server\n"),
        ("agent", "agent/bad.py", "from pygls.lsp.server import LanguageServer\n"),
        ("agent", "agent/bad.py", "import attrs\n"),
        ("agent", "agent/bad.py", "from kernel_lens.lsp.protocol import X\n"),
        ("lsp", "lsp/bad.py", "from kernel_lens.agent.errors import ProfileError\n"),
        ("lsp", "lsp/bad.py", "from kernel_lens.agent import runner\n"),
        ("lsp", "lsp/bad.py", "from ..agent.engine import Engine\n"),
        ("wire", "wire/errors.py", "import pandas\n"),
        ("wire", "wire/lsp.py", "import attrs\n"),
        ("wire", "wire/lsp.py", "def f():\n    from kernel_lens.analysis import names\n"),
        ("wire", "wire/results.py", "from ..agent import engine\n"),
        ("stdlib-only", "agent/client.py", "from kernel_lens.agent.errors import ProfileError\n"),
        ("stdlib-only", "agent/client.py", "from . import engine\n"),
    ],
)
def test_the_checker_catches_a_forbidden_import(
    tmp_path: Path, rule: str, rel: str, text: str
) -> None:
    root = _package(tmp_path, {"wire/errors.py": "import dataclasses\n", rel: text})
    found = violations(root, rule)
    assert len(found) == 1 and found[0].startswith("kernel_lens.")


@pytest.mark.parametrize(
    "rule, rel, text",
    [
        ("analysis", "analysis/ok.py", "import json\nfrom .names import short\n"),
        ("lsp", "lsp/ok.py", "from kernel_lens.wire.errors import ProfileError\n"),
        (
            "lsp",
            "lsp/ok.py",
            "from kernel_lens.agent import client\nfrom ..agent.client import C\n",
        ),
        ("stdlib-only", "agent/client.py", "import asyncio\nfrom ..wire.envelope import encode\n"),
        ("wire", "wire/lsp.py", "import typing\nfrom .errors import E\nfrom ._compat import N\n"),
        ("agent", "agent/ok.py", "import torch\nfrom kernel_lens.analysis import names\n"),
    ],
)
def test_the_checker_lets_allowed_imports_through(
    tmp_path: Path, rule: str, rel: str, text: str
) -> None:
    root = _package(tmp_path, {"wire/errors.py": "import dataclasses\n", rel: text})
    assert violations(root, rule) == []
