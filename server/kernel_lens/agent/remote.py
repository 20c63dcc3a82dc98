"""The agent's side of a job from another machine (``ssh``, ``srun``): the workspace files the
job carries, and the files its result names, sent back.

The files of a job's ``bundle`` (:class:`~kernel_lens.wire.envelope.BundleFile`) are written in
a private temporary folder, one sub-folder per import root of the editor's machine, put first on
``sys.path`` (and on ``PYTHONPATH``, for the processes the job starts: spawn workers import the
file's module by name). A finder first on ``sys.meta_path`` compiles them under their paths on
the editor's machine, and :mod:`linecache` holds their text under those paths: tracebacks, the
profiler's stacks, the lines of a whole run and ``inspect.getsource`` (Triton's ``@jit``) name
the files the editor has open. The folder is removed when the job ends or the agent is stopped.

A leaf: the standard library and :mod:`kernel_lens.wire` only; :mod:`kernel_lens.agent.usercode`
asks it for a file's text and a folder's copy.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.abc
import importlib.machinery
import linecache
import os
import shutil
import sys
import tempfile
import types
import zlib
from collections.abc import Sequence
from typing import Any

from kernel_lens.wire.envelope import BundleFile, ReturnedFile
from kernel_lens.wire.paths import CacheDirs

__all__ = [
    "MAX_RETURNED_BYTES",
    "bundled_text",
    "cleanup",
    "install_bundle",
    "local_folder",
    "returned_files",
]

#: The most bytes of files one result sends back (a trace over this stays on the agent's machine,
#: named by its path there, and the log says so).
MAX_RETURNED_BYTES = 512 << 20


class _State:
    def __init__(self) -> None:
        self.folder: str | None = None
        #: Path on the editor's machine → text.
        self.texts: dict[str, str] = {}
        #: Path of the copy here → path on the editor's machine.
        self.origin: dict[str, str] = {}
        #: A root folder on the editor's machine → its copy here.
        self.roots: dict[str, str] = {}


_STATE = _State()


class _BundleLoader(importlib.machinery.SourceFileLoader):
    """Loads a bundled module from its copy, compiled under its path on the editor's machine."""

    def __init__(self, fullname: str, path: str, origin: str) -> None:
        super().__init__(fullname, path)
        self.origin = origin

    def get_code(self, fullname: str) -> types.CodeType:
        del fullname
        text = _STATE.texts.get(self.origin)
        if text is None:
            text = self.get_data(self.path).decode("utf-8")
        return compile(text, self.origin, "exec", dont_inherit=True)


class _BundleFinder(importlib.abc.MetaPathFinder):
    """Finds the bundle's modules first (as the file's folder first on ``sys.path`` would)."""

    def __init__(self, folders: list[str]) -> None:
        self.folders = folders

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if path is not None and not any(
            str(p).startswith(f + os.sep) for p in path for f in self.folders
        ):
            return None
        spec = importlib.machinery.PathFinder.find_spec(
            fullname, list(path) if path is not None else self.folders, target
        )
        if spec is None or spec.origin is None:
            return None
        origin = _STATE.origin.get(spec.origin)
        if origin is None:
            return None
        spec.loader = _BundleLoader(fullname, spec.origin, origin)
        return spec


def install_bundle(files: Any) -> None:
    """Put a job's workspace files on ``sys.path`` (see the module's docstring); nothing for a
    job without a bundle."""
    if not isinstance(files, list) or not files:
        return
    folder = tempfile.mkdtemp(prefix="kernel-lens-job-")
    _STATE.folder = folder
    order: list[str] = []
    for item in files:
        if not isinstance(item, dict):
            continue
        entry: BundleFile = item  # type: ignore[assignment]
        local, root, text = entry.get("path"), entry.get("root"), entry.get("text")
        if not (isinstance(local, str) and isinstance(root, str) and isinstance(text, str)):
            continue
        if root not in _STATE.roots:
            _STATE.roots[root] = os.path.join(folder, f"r{len(_STATE.roots)}")
            order.append(_STATE.roots[root])
        rel = os.path.relpath(local, root)
        if rel.startswith(".."):
            continue
        copy = os.path.join(_STATE.roots[root], rel)
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        with open(copy, "w", encoding="utf-8") as fh:
            fh.write(text)
        _STATE.texts[local] = text
        _STATE.origin[copy] = local
        linecache.cache[local] = (len(text), None, text.splitlines(True), local)
    for path in reversed(order):
        os.makedirs(path, exist_ok=True)
        sys.path.insert(0, path)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (*order, os.environ.get("PYTHONPATH")) if p
    )
    sys.meta_path.insert(0, _BundleFinder(order))


def bundled_text(path: str) -> str | None:
    """The text a job carried for ``path`` (a path on the editor's machine), if any."""
    return _STATE.texts.get(path)


def local_folder(path: str) -> str:
    """``path`` (a folder on the editor's machine) if it exists here, else its copy in the
    bundle (a whole run's working folder), else ``path``."""
    if os.path.isdir(path) or not _STATE.roots:
        return path
    for root, copy in _STATE.roots.items():
        rel = os.path.relpath(path, root)
        if not rel.startswith("..") and os.path.isdir(os.path.join(copy, rel)):
            return os.path.join(copy, rel)
    return path


def cleanup() -> None:
    """Remove the job's bundle folder (the job has ended, or the agent is being stopped)."""
    folder, _STATE.folder = _STATE.folder, None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _paths(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        if value.startswith(os.sep):
            out.append(value)
    elif isinstance(value, list):
        for item in value:
            _paths(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _paths(item, out)


def returned_files(result: Any, log: Any = None) -> list[ReturnedFile]:
    """The files under this agent's cache that ``result`` names, read, compressed and encoded
    to travel back (at most :data:`MAX_RETURNED_BYTES` in all)."""
    root = CacheDirs.from_env().root
    candidates: list[str] = []
    _paths(result, candidates)
    out: list[ReturnedFile] = []
    total = 0
    for path in dict.fromkeys(candidates):
        rel = os.path.relpath(path, root)
        if rel.startswith("..") or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if total + len(data) > MAX_RETURNED_BYTES:
            if log is not None:
                with contextlib.suppress(Exception):
                    log(f"kernel-lens: {path} is too large to send back ({len(data)} bytes)")
            continue
        total += len(data)
        encoded = base64.b64encode(zlib.compress(data, 6)).decode("ascii")
        out.append({"path": path, "rel": rel, "data": encoded})
    return out
