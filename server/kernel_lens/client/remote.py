"""An agent on another machine (``kernelLens.agentCommand`` = ``["ssh", "gpu-box", "python3"]``,
``["srun", "--gres=gpu:1", "python3"]``): what travels there and what comes back.

- **The agent's own code.** The remote side needs only Python (and torch): the agent starts as
  ``python3 -c <bootstrap>``, and the bootstrap reads this package as a zip from its stdin (a
  header line ``<size> <sha256>`` and the bytes), keeps it in its cache
  (``~/.cache/kernel-lens/agent/<hash>.zip``, else a private temporary folder) and imports it
  with the standard library's ``zipimport``; a remote ``kernel_lens`` of another version never
  answers our protocol. The rest of stdin is the protocol, as for a local agent.
- **The workspace.** Each job carries the buffer's text and the workspace modules the file
  imports, found statically (:func:`workspace_bundle`: ``import``/``from`` statements, followed
  through the modules found, resolved against the file's folder and the workspace folders as
  Python would, never site-packages); the agent puts them on ``sys.path`` in a private temporary
  folder and compiles them under their paths here, so lines and lenses match the editor.
- **Files back.** The files the result names under the agent's cache (the Chrome trace, an
  Nsight Compute report) come back in the job's messages and are written into this machine's
  cache; the result is rewritten to name the local copies (:func:`save_returned_file`,
  :func:`rewrite_paths`).
- **A dropped connection** is an error that says so (:func:`dropped_connection`); the next job
  starts a new agent, hence a new connection.

Standard library and :mod:`kernel_lens.wire` only.
"""

from __future__ import annotations

import ast
import base64
import functools
import hashlib
import io
import os
import re
import shlex
import zipfile
import zlib
from collections.abc import Iterable
from typing import Any

from kernel_lens.wire.envelope import BundleFile, ReturnedFile
from kernel_lens.wire.paths import CacheDirs, atomic_write, short_name

__all__ = [
    "MAX_BUNDLE_BYTES",
    "MAX_BUNDLE_FILES",
    "bootstrap_argv",
    "dropped_connection",
    "package_payload",
    "remote_name",
    "rewrite_paths",
    "save_returned_file",
    "workspace_bundle",
]

#: The most workspace files one job carries, and their total size: a workspace is source, not
#: data; past these the job goes without the rest (and says so in the log).
MAX_BUNDLE_FILES = 500
MAX_BUNDLE_BYTES = 32 << 20

#: The folder holding the ``kernel_lens`` package.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: Run by the remote ``python3 -c``: read the package zip from stdin, keep it, import the agent.
_BOOTSTRAP = r"""
import hashlib, os, sys, tempfile
def _take(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            sys.exit("kernel-lens: the agent's code did not arrive (the connection closed)")
        data += chunk
    return data
head = b""
while not head.endswith(b"\n"):
    head += _take(1)
size, digest = head.decode().split()
data = _take(int(size))
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit("kernel-lens: the agent's code arrived damaged")
base = os.environ.get("KERNEL_LENS_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kernel-lens")
path = os.path.join(base, "agent", digest[:24] + ".zip")
def _same(p):
    try:
        with open(p, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest() == digest
    except OSError:
        return False
if not _same(path):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.%d.tmp" % (path, os.getpid())
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        path = os.path.join(tempfile.mkdtemp(prefix="kernel-lens-agent-"), "agent.zip")
        with open(path, "wb") as fh:
            fh.write(data)
sys.path.insert(0, path)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (path, os.environ.get("PYTHONPATH")) if p)
from kernel_lens.agent.__main__ import main
sys.exit(main())
"""


@functools.lru_cache(maxsize=1)
def package_payload() -> bytes:
    """The header line and the zip of this ``kernel_lens`` package (its ``.py`` files), as the
    bootstrap reads them from stdin."""
    buf = io.BytesIO()
    package = os.path.join(_PACKAGE_ROOT, "kernel_lens")
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    full = os.path.join(folder, name)
                    info = zipfile.ZipInfo(os.path.relpath(full, _PACKAGE_ROOT))
                    info.compress_type = zipfile.ZIP_DEFLATED
                    with open(full, "rb") as fh:
                        zf.writestr(info, fh.read())  # fixed date: the same bytes, the same hash
    data = buf.getvalue()
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}\n".encode() + data


def _through_ssh(prefix: list[str]) -> bool:
    return any(os.path.basename(arg) in ("ssh", "autossh") for arg in prefix)


def bootstrap_argv(prefix: list[str]) -> list[str]:
    """``prefix + ["-c", <bootstrap>]``. The code is one line of base64 (no newline, no shell
    character), quoted for the remote shell when ``ssh`` is in the prefix (ssh joins its
    arguments into a command line); ``srun`` and container execs pass it as one argument."""
    packed = base64.b64encode(zlib.compress(_BOOTSTRAP.encode(), 9)).decode()
    code = f"import base64,zlib;exec(zlib.decompress(base64.b64decode('{packed}')))"
    return [*prefix, "-c", shlex.quote(code) if _through_ssh(prefix) else code]


#: ssh options that take a value (``ssh -p 2222 -i key host``): the host is the first other word.
_SSH_VALUE_OPTIONS = set("BbcDEeFIiJLlmOoPpQRSWw")


def remote_name(prefix: list[str]) -> str:
    """What the agent runs on, for messages: ssh's host (``gpu-box``), ``Slurm (srun)``, or the
    command's name."""
    for i, arg in enumerate(prefix):
        if os.path.basename(arg) in ("ssh", "autossh"):
            words = prefix[i + 1 :]
            j = 0
            while j < len(words):
                word = words[j]
                if word == "--":
                    j += 1
                    break
                if word.startswith("-") and len(word) > 1:
                    if word[-1] in _SSH_VALUE_OPTIONS and len(word) == 2:
                        j += 1  # its value is the next word
                    j += 1
                    continue
                break
            if j < len(words):
                host = words[j]
                return host.rsplit("@", 1)[-1]
            return "the ssh host"
    for arg in prefix:
        if os.path.basename(arg) in ("srun", "salloc"):
            return "the Slurm allocation (srun)"
    return os.path.basename(prefix[0]) if prefix else "the remote side"


#: Words of ssh, srun and the kernel when the link (not the agent) ended.
_DROPPED = re.compile(
    r"connection (to \S+ )?(closed|reset|timed out|refused)|broken pipe|closed by remote host|"
    r"client_loop: send disconnect|packet_write_wait|srun: error: .*(lost|unable to contact|"
    r"connection|socket)|srun: Force Terminated|ssh: connect to host|could not resolve hostname",
    re.IGNORECASE,
)


def dropped_connection(prefix: list[str], code: int | None, output: Iterable[str]) -> bool:
    """Whether a remote agent's end was its connection's: ``ssh`` exits 255 on its own errors,
    and ssh and srun say so on stderr."""
    lines = list(output)[-20:]
    if _through_ssh(prefix) and code == 255:
        return True
    return any(_DROPPED.search(line) for line in lines)


# --- the workspace bundle -------------------------------------------------------------------


def _module_files(base: str, parts: list[str]) -> list[str] | None:
    """The files ``import a.b.c`` runs under the folder ``base`` (``a/__init__.py``, …,
    ``a/b/c.py``), or ``None`` when ``a`` is not there."""
    files: list[str] = []
    folder = base
    for i, part in enumerate(parts):
        if not part.isidentifier():
            return files or None
        last = i == len(parts) - 1
        package = os.path.join(folder, part)
        init = os.path.join(package, "__init__.py")
        module = package + ".py"
        if os.path.isfile(init):
            files.append(init)
            folder = package
        elif os.path.isfile(module):
            files.append(module)
            return files
        elif os.path.isdir(package) and not last:
            folder = package  # a namespace package
        elif os.path.isdir(package):
            return files
        else:
            return files if i else None
    return files


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        import importlib.util

        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def _imports(text: str, path: str) -> list[tuple[int, str, list[str]]]:
    """``(level, module, names)`` of every import statement of the file (in functions too)."""
    try:
        tree = ast.parse(text, path)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((0, alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or "", [a.name for a in node.names]))
    return out


def _within(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def workspace_bundle(
    path: str,
    text: str | None,
    roots: list[str],
    *,
    extra: Iterable[str] = (),
    max_files: int = MAX_BUNDLE_FILES,
    max_bytes: int = MAX_BUNDLE_BYTES,
) -> tuple[list[BundleFile], list[str]]:
    """The workspace files a job on ``path`` needs on another machine: the file itself (its
    buffer ``text``, else the file), the files in ``extra`` (a driver script) and every
    workspace module they import, followed through those modules.

    ``roots`` are the folders Python would search, in order (the file's folder first, then the
    workspace folders); only files under them are carried — an import that resolves nowhere
    under them (``torch``, the standard library) is the remote Python's.

    Returns:
        The files, and notes on what was left out (over the limits).
    """
    roots = [os.path.abspath(r) for r in dict.fromkeys(r for r in roots if r and os.path.isdir(r))]
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in roots:
        roots.insert(0, folder)
    out: list[BundleFile] = []
    notes: list[str] = []
    seen: set[str] = set()
    size = 0
    queue: list[tuple[str, str | None, str]] = [(os.path.abspath(path), text, folder)]
    for other in extra:
        other = os.path.abspath(other)
        queue.append((other, None, os.path.dirname(other)))
    while queue:
        file, body, root = queue.pop(0)
        if file in seen:
            continue
        seen.add(file)
        if body is None:
            body = _read(file)
            if body is None:
                continue
        if len(out) >= max_files or size + len(body) > max_bytes:
            notes.append(f"{file} not carried (over {max_files} files or {max_bytes >> 20} MB)")
            continue
        size += len(body)
        out.append({"path": file, "root": root, "text": body})
        for level, module, names in _imports(body, file):
            for found, found_root in _resolve(file, root, roots, level, module, names):
                if found not in seen:
                    queue.append((found, None, found_root))
    return out, notes


def _resolve(
    file: str, root: str, roots: list[str], level: int, module: str, names: list[str]
) -> list[tuple[str, str]]:
    """The workspace files one import statement of ``file`` runs, with their roots."""
    parts = [p for p in module.split(".") if p]
    if level:
        base = os.path.dirname(file)
        for _ in range(level - 1):
            base = os.path.dirname(base)
        if not _within(base, [root]):
            return []
        bases = [(base, root)]
    else:
        if not parts:
            return []
        bases = [(r, r) for r in roots]
    for base, base_root in bases:
        files = _module_files(base, parts) if parts else []
        if files is None:
            continue
        found = list(files)
        # ``from pkg import name``: ``name`` may be a submodule.
        target = os.path.join(base, *parts)
        if os.path.isdir(target):
            for name in names:
                sub = _module_files(target, [name]) if name != "*" else None
                if sub:
                    found.extend(sub)
        if found or level:
            return [(f, base_root) for f in found]
    return []


# --- files back -----------------------------------------------------------------------------


def save_returned_file(item: ReturnedFile, trace_dir: str | None = None) -> str:
    """Write a file a remote job sent back into this machine's cache (the same place under it
    as under the remote cache; a trace into ``trace_dir`` when the job named one) and return its
    local path.

    Raises:
        OSError: it cannot be written; ValueError: its data is not what was promised.
    """
    rel = os.path.normpath(str(item.get("rel") or os.path.basename(item["path"])))
    if rel.startswith("..") or os.path.isabs(rel):
        rel = os.path.basename(rel)
    if trace_dir and rel.split(os.sep)[0] == "traces":
        local = os.path.join(trace_dir, short_name(os.path.basename(rel)))
    else:
        local = os.path.join(CacheDirs.from_env().root, rel)
    data = zlib.decompress(base64.b64decode(item["data"]))
    os.makedirs(os.path.dirname(local), exist_ok=True)
    atomic_write(local, data)
    return local


def rewrite_paths(value: Any, mapping: dict[str, str]) -> Any:
    """``value`` (a result's JSON) with every string that is a key of ``mapping`` replaced."""
    if not mapping:
        return value
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [rewrite_paths(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: rewrite_paths(v, mapping) for k, v in value.items()}
    return value
