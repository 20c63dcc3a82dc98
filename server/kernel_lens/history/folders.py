"""Where a history lives, and whether its folder can be trusted with it.

``$KERNEL_LENS_HISTORY`` if set; else ``.kernel-lens/history`` at the root of the workspace
folder holding the file, when that root has a ``.kernel-lens/`` folder (the user's opt-in);
else ``history/`` of Kernel Lens's cache folder. A folder owned by another user, or writable by
others, is refused (:func:`folder_problem`). Standard library only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from kernel_lens.wire import paths

__all__ = ["WORKSPACE_FOLDER", "cache_root", "folder_problem", "history_root"]


def cache_root() -> Path:
    """Kernel Lens's cache folder (:func:`kernel_lens.wire.paths.cache_root`, the agent's too)."""
    return Path(paths.cache_root())


#: A folder of this name at the root of a workspace folder (the editor's; the CLI's is its
#: working directory) opts that workspace in: its history is kept in ``.kernel-lens/history``
#: there, beside the code. Never looked for in the folders above (issue 45 item 7).
WORKSPACE_FOLDER = ".kernel-lens"


def history_root(path: str | None = None, roots: Iterable[str] | None = None) -> Path:
    """``$KERNEL_LENS_HISTORY``; else ``.kernel-lens/history`` at the root of the workspace
    folder holding ``path`` (``roots``: the editor's workspace folders, by default the working
    directory), when that root has a ``.kernel-lens/`` folder (the user's opt-in); else the
    cache folder. Never a folder above the workspace root."""
    own = os.environ.get("KERNEL_LENS_HISTORY")
    if own:
        return Path(os.path.abspath(own))
    if path is not None:
        from kernel_lens.analysis.places import inside

        file = os.path.abspath(path)
        candidates = [os.path.abspath(r) for r in (roots if roots is not None else [os.getcwd()])]
        # the innermost workspace folder holding the file
        for root in sorted(candidates, key=len, reverse=True):
            if inside(file, [root]) and os.path.isdir(os.path.join(root, WORKSPACE_FOLDER)):
                return Path(root) / WORKSPACE_FOLDER / "history"
    return cache_root() / "history"


def folder_problem(folder: Path, *, uid: int | None = None) -> str | None:
    """Why ``folder`` (an existing history folder, or a ``.kernel-lens`` folder) cannot be
    trusted with the history: owned by another user, or writable by the group or by others
    (anyone could feed it crafted runs or read everyone's); ``None`` when it is fine or absent.
    """
    me = os.geteuid() if uid is None and hasattr(os, "geteuid") else uid
    try:
        st = os.stat(folder)
    except OSError:
        return None  # absent, or not reachable: the store's own use says why
    if not stat.S_ISDIR(st.st_mode):
        return None  # the store's use fails on it, saying so
    if me is not None and st.st_uid != me:
        return f"{folder} is owned by another user (uid {st.st_uid}, you are uid {me})"
    if st.st_mode & 0o022:
        who = "everyone" if st.st_mode & 0o002 else "its group"
        return (
            f"{folder} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o}): "
            f"run `chmod go-w {folder}` if it is yours"
        )
    return None
