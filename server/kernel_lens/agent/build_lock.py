"""A torch extension's build lock left by a killed build never blocks a run again.

``torch.utils.cpp_extension`` (``load_inline``, ``load``) builds an extension under a lock file,
``<build directory>/lock`` (:class:`torch.utils.file_baton.FileBaton`): the builder creates it
with ``O_EXCL``, keeps it open while it builds and removes it when done; any other process waits
while it exists — with no limit, and even when the extension is already built, since every
``load_inline`` call takes the lock. A build killed half-way (a profile cancelled or timed out
during its compile, ``SIGKILL``, the OOM killer) leaves the file behind, and from then on every
run of the file waits forever: Kernel Lens's, and the user's own ``python script.py``.

:func:`install` makes ``FileBaton.try_acquire``, when it finds the file, look for its holder: a
process with the file open (``/proc/<pid>/fd``). Where no process of the file's owner holds it,
twice half a second apart on the same file, the lock is stale: it is removed, said on stderr
(the output channel, the CLI's terminal), and taken, so the build runs again. A live holder is
named on stderr, once, and torch waits for it as before. Where ``/proc`` cannot say (another
system, another user's file), nothing changes.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["holders", "install", "is_stale"]

#: The pause between the two looks that call a lock stale (a holder between closing the file
#: and removing it is seen as gone once, never twice on the same file).
SECOND_LOOK_S = 0.5


def _say(text: str) -> None:
    print(f"kernel-lens: {text}", file=sys.stderr, flush=True)


def _identity(path: str) -> tuple[int, int, int, int] | None:
    """The file's device, inode, change time and owner; None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_uid)


def holders(path: str, uid: int | None = None) -> list[int] | None:
    """The processes that have ``path`` open, among those of ``uid`` (default: all); None when
    ``/proc`` cannot say (no ``/proc``, or a process of that user whose files this process may
    not read)."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    want = os.path.realpath(path)
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fd_dir = f"/proc/{entry}/fd"
        try:
            if uid is not None and os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            fds = os.listdir(fd_dir)
        except PermissionError:
            return None
        except OSError:  # the process ended meanwhile
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") == want:
                    found.append(int(entry))
                    break
            except OSError:
                continue
    return found


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "?"


def is_stale(path: str, *, second_look_s: float = SECOND_LOOK_S) -> bool:
    """Whether the lock file at ``path`` is held by no process, twice ``second_look_s`` apart
    on the same file. A live holder is said on stderr."""
    first = _identity(path)
    if first is None:
        return False
    found = holders(path, first[3])
    if found is None:
        return False
    if found:
        pid = found[0]
        _say(f"waiting for {path}: process {pid} ({_command(pid)}) is building this extension")
        return False
    time.sleep(second_look_s)
    if _identity(path) != first:
        return False
    return holders(path, first[3]) == []


def install() -> None:
    """Patch ``torch.utils.file_baton.FileBaton.try_acquire``, once per process. Nothing where
    torch is not imported yet: every runner imports it before the user's code runs, and a file
    that needs no torch must not pay for its import."""
    if "torch" not in sys.modules:
        return
    try:
        from torch.utils import file_baton
    except Exception:
        return
    baton: Any = file_baton.FileBaton
    original: Callable[[Any], bool | None] = baton.try_acquire
    if getattr(original, "_kernel_lens", False):
        return

    @functools.wraps(original)
    def try_acquire(self: Any) -> bool | None:
        if original(self):
            return True
        path = str(getattr(self, "lock_file_path", ""))
        if not path or not is_stale(path):
            return False
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            _say(f"{path} is a stale build lock (no process holds it) but cannot be removed: {exc}")
            return False
        _say(
            f"removed {path}: a build lock that no process holds, left by a build that was "
            "stopped half-way; the extension is built again"
        )
        return original(self)

    try_acquire._kernel_lens = True  # type: ignore[attr-defined]
    baton.try_acquire = try_acquire
