"""Installed packages whose code counts as the user's (``kernelLens.attributeInPackages``,
``--in-package``), and the installed package a file belongs to (for the lens that suggests one).

A named package is found the way the user's interpreter imports it: ``importlib.util.find_spec``
of its top-level name, without importing it, so a site-packages install and an editable one (a
``.pth`` or finder pointing at a source checkout) both give the folder its files are really in.
torch's own packages are never the user's: their frames must not take the time from the lines
that called them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping

from kernel_lens.agent.errors import ProfileError

__all__ = ["NEVER_ATTRIBUTED", "PackageFiles", "installed_package_of", "resolve_packages"]

#: Top-level packages whose frames never take the time (torch's own, and Kernel Lens's).
NEVER_ATTRIBUTED = frozenset({"torch", "torchgen", "functorch", "triton", "kernel_lens"})

_THIRD_PARTY = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def resolve_packages(names: Iterable[str]) -> dict[str, str]:
    """The folder (real path) of each named package, by name, in the order given.

    Raises:
        ProfileError: ``not-found`` for a name that is not an importable top-level package of
            this interpreter, or one of torch's own (:data:`NEVER_ATTRIBUTED`).
    """
    out: dict[str, str] = {}
    for raw in names:
        name = str(raw).strip()
        if not name or name in out:
            continue
        if not name.isidentifier():
            raise ProfileError(
                "not-found",
                f"{name!r} is not a package name: name the top-level package (transformers, "
                "timm, diffusers…)",
                None,
            )
        if name in NEVER_ATTRIBUTED:
            raise ProfileError(
                "not-found",
                f"{name} cannot be named for attribution: its frames never take the time from "
                "the lines that called them (torch's own code is what every line runs)",
                None,
            )
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError) as exc:
            spec = None
            why = f" ({type(exc).__name__}: {exc})"
        else:
            why = ""
        folder: str | None = None
        if spec is not None:
            locations = list(spec.submodule_search_locations or [])
            if locations:
                folder = locations[0]
            elif spec.origin and os.path.isfile(spec.origin):
                folder = spec.origin  # a single-module distribution: the file itself
        if folder is None:
            raise ProfileError(
                "not-found",
                f"package {name!r} is not installed in {sys.executable}{why}: it is named in "
                "kernelLens.attributeInPackages / --in-package",
                None,
            )
        out[name] = os.path.realpath(folder)
    return out


class PackageFiles:
    """Which named package a file is in (by real path, cached per file name)."""

    def __init__(self, roots: Mapping[str, str]) -> None:
        self.roots = dict(roots)
        self._cache: dict[str, str | None] = {}

    def __bool__(self) -> bool:
        return bool(self.roots)

    def package_of(self, filename: str) -> str | None:
        """The named package ``filename`` belongs to, ``None`` for any other file."""
        found = self._cache.get(filename, "")
        if found != "":
            return found
        name: str | None = None
        if filename and not filename.startswith("<"):
            real = os.path.realpath(filename)
            for pkg, root in self.roots.items():
                if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                    name = pkg
                    break
        self._cache[filename] = name
        return name


def installed_package_of(filename: str) -> str | None:
    """The top-level package of a file installed in a site-packages (or dist-packages) folder
    (``…/site-packages/transformers/models/llama/modeling_llama.py`` → ``transformers``);
    ``None`` for any other file and for :data:`NEVER_ATTRIBUTED` ones."""
    if not filename or filename.startswith("<"):
        return None
    for marker in _THIRD_PARTY:
        at = filename.rfind(marker)
        if at < 0:
            continue
        rest = filename[at + len(marker) :]
        top = rest.split(os.sep, 1)[0]
        if top.endswith(".py"):
            top = top[:-3]
        if not top.isidentifier() or top in NEVER_ATTRIBUTED or top.startswith("_"):
            return None
        return top
    return None
