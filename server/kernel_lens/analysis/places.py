"""Where a path named by the client or by stored data may lead (issue 45): a target the server
runs or reads must be inside a workspace folder (or an open document), and a trace path a
stored run names is followed only inside the cache or a workspace folder.

Pure: paths are compared as the file system would resolve them (``realpath``), and also
lexically (``normpath``: a symlink the workspace itself holds stays the workspace's).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["inside", "outside_message"]


def _under(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives, or a relative path against an absolute one
        return False


def inside(path: str, roots: Iterable[str | None]) -> bool:
    """Whether ``path`` (absolute) lies in one of ``roots`` (folders; ``None`` skipped), read
    lexically or with its symlinks resolved."""
    if not path or not os.path.isabs(path) or "\x00" in path:
        return False
    lexical, real = os.path.normpath(path), os.path.realpath(path)
    for root in roots:
        if not root or not os.path.isabs(root):
            continue
        for r in {os.path.normpath(root), os.path.realpath(root)}:
            if r == os.sep:
                continue  # "/" as a workspace folder would let everything through
            if _under(lexical, r) or _under(real, r):
                return True
    return False


def outside_message(what: str, path: str, roots: Iterable[str | None]) -> str:
    """``what`` (``"profile"``…) refused for ``path``: the folders it had to be in."""
    shown = [r for r in roots if r]
    where = ", ".join(shown) if shown else "(no workspace folder is open)"
    return (
        f"Kernel Lens only works on files in the workspace folders or open in the editor: "
        f"{path} is outside {where}, so it was not {what}."
    )
