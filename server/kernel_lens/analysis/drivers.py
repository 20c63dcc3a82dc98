"""Driver scripts of a module: the workspace's scripts that import it (found statically, with the
import chain), and the Python launch configurations of ``.vscode/launch.json``.

A layer in ``model.py`` is only ever called by another file (``bench.py``, ``train.py``); when the
file itself never calls the function, the ``inputs`` diagnostic offers these as quick fixes
(profile the function with the inputs of its first call in a run of the driver). Pure: it reads
files, runs nothing.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.analysis.regular_files import read_regular

__all__ = [
    "Driver",
    "LaunchConfig",
    "find_drivers",
    "launch_configs",
    "module_names",
    "parse_jsonc",
]

#: The most of one workspace file read (a source file, an env file, launch.json).
_MAX_READ = 16 << 20
#: Folders never searched for scripts.
_SKIP_DIRS = {".git", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist"}


@dataclass(frozen=True)
class Driver:
    """A script that imports the module, directly or through other workspace modules.

    Attributes:
        path: the script.
        chain: the files from the script to the module (``["bench.py", "model.py"]``).
    """

    path: str
    chain: list[str]

    @property
    def label(self) -> str:
        """``bench.py → model.py``."""
        return " → ".join(self.chain)


@dataclass(frozen=True)
class LaunchConfig:
    """A Python launch configuration of ``.vscode/launch.json``.

    Attributes:
        name: its ``name``.
        program: the script (``${workspaceFolder}`` resolved).
        args: its ``args``.
        cwd: its ``cwd`` (``None``: the script's folder).
        env: its ``env`` with ``envFile``'s variables under it.
    """

    name: str
    program: str
    args: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def _python_files(root: str, limit: int) -> Iterator[str]:
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)
                count += 1
                if count >= limit:
                    return


def module_names(path: str, root: str) -> set[str]:
    """The names a file can be imported by from the workspace: ``model`` from its own folder,
    ``pkg.model`` from the root (each folder between them a package)."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    parts = rel[: -len(".py")].split(os.sep) if rel.endswith(".py") else [rel]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts)) if parts[i:]}


def _imports(tree: ast.Module) -> set[str]:
    """Every module name an ``import``/``from … import`` of the file names (``a.b`` also as
    ``a.b.c`` for each imported name, which may be a submodule)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _is_script(tree: ast.Module) -> bool:
    """A file meant to be run: an ``if __name__ == "__main__":`` block, or module-level calls
    outside definitions."""
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.dump(node.test):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            return True
    return False


def find_drivers(root: str, module_path: str, *, limit: int = 2000) -> list[Driver]:
    """The workspace's scripts that import ``module_path`` (directly or through other workspace
    modules), the shortest chains first.

    Args:
        root: the workspace folder.
        module_path: the file whose functions want a driver.
        limit: at most this many Python files are read.
    """
    target = os.path.abspath(module_path)
    files: dict[str, tuple[set[str], bool]] = {}
    names: dict[str, str] = {}  # import name -> file
    for path in _python_files(root, limit):
        try:
            tree = ast.parse(read_regular(path, _MAX_READ).decode("utf-8"), path)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError, MemoryError, RecursionError):
            continue
        files[path] = (_imports(tree), _is_script(tree))
        for candidate in (root, os.path.dirname(path)):
            for name in module_names(path, candidate):
                names.setdefault(name, path)
    # Breadth first from the module: who imports it, then who imports those.
    chain_to: dict[str, list[str]] = {target: [target]}
    frontier = [target]
    while frontier:
        following: list[str] = []
        for reached in frontier:
            for path, (imported, _) in files.items():
                if path in chain_to:
                    continue
                if any(names.get(name) == reached for name in imported):
                    chain_to[path] = [path, *chain_to[reached]]
                    following.append(path)
        frontier = following
    drivers = [
        Driver(path, [os.path.basename(p) for p in chain])
        for path, chain in chain_to.items()
        if path != target and files.get(path, (set(), False))[1]
    ]
    return sorted(drivers, key=lambda d: (len(d.chain), d.path))


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def parse_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas (VS Code's ``launch.json``).

    Raises:
        ValueError: it does not parse.
    """

    def keep_strings(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token.startswith('"') else ""

    return json.loads(_TRAILING_COMMA.sub(r"\1", _COMMENT.sub(keep_strings, text)))


def _env_file(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        for raw in read_regular(path, _MAX_READ).decode("utf-8", "replace").splitlines():
            line = raw.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, value = line.split("=", 1)
            out[key.strip().removeprefix("export ").strip()] = value.strip().strip("'\"")
    except OSError:
        return {}
    return out


def launch_configs(root: str) -> list[LaunchConfig]:
    """The Python launch configurations (``"type": "python"`` or ``"debugpy"``, ``"request":
    "launch"``, with a ``program``) of ``root/.vscode/launch.json``; none when there is no such
    file or it does not parse. ``${workspaceFolder}`` is resolved; a configuration whose
    program is ``${file}`` (whatever is open) is left out."""
    path = os.path.join(root, ".vscode", "launch.json")
    try:
        data = parse_jsonc(read_regular(path, _MAX_READ).decode("utf-8"))
    except (OSError, ValueError):
        return []
    configs = data.get("configurations") if isinstance(data, dict) else None
    out: list[LaunchConfig] = []

    def resolve(value: str) -> str:
        return value.replace("${workspaceFolder}", root).replace("${workspaceRoot}", root)

    for config in configs if isinstance(configs, list) else []:
        if not isinstance(config, dict):
            continue
        if config.get("type") not in ("python", "debugpy") or config.get("request") != "launch":
            continue
        program = config.get("program")
        if not isinstance(program, str) or "${file}" in program:
            continue
        program = resolve(program)
        if not os.path.isabs(program):
            program = os.path.join(root, program)
        args = config.get("args")
        cwd = config.get("cwd")
        env: dict[str, str] = {}
        env_file = config.get("envFile")
        if isinstance(env_file, str):
            env.update(_env_file(resolve(env_file)))
        if isinstance(config.get("env"), dict):
            env.update({str(k): resolve(str(v)) for k, v in config["env"].items()})
        out.append(
            LaunchConfig(
                name=str(config.get("name") or os.path.basename(program)),
                program=os.path.normpath(program),
                args=[resolve(str(a)) for a in args] if isinstance(args, list) else [],
                cwd=resolve(cwd) if isinstance(cwd, str) else None,
                env=env,
            )
        )
    return out
