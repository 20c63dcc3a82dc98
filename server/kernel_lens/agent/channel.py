"""The agent's protocol channel, kept from the user's code: a job that closes it (or replaces it
with ``os.dup2``) ends with a clear ``crash`` error on the user's line, not with a dead pipe and
Kernel Lens's own traceback.

Python-level closes (``os.close``, ``os.closerange``, ``os.dup2`` onto the channel — what
``os.closerange(0, 1024)`` in a daemonising function does) are seen *before* they happen: the
error is sent on the still open channel with the line of the call, and the agent ends with the
job's processes. Anything else that closes it (C code, a file object built on the descriptor) is
seen by a watcher thread within :data:`WATCH_INTERVAL_S`, which names the line the job was on
then and sends the error on a reserve copy of the channel, kept at a high descriptor number.
Only in the agent process itself: a forked child closing its copies is left alone.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

__all__ = ["WATCH_INTERVAL_S", "ChannelGuard", "send_on"]

#: How often the watcher checks that the channel's descriptors are still the channel's.
WATCH_INTERVAL_S = 0.2
#: The lowest number tried for the reserve copy of the output channel.
_RESERVE_FROM = 1536


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class ChannelGuard:
    """Guards the descriptors ``fds`` (the protocol's input and output) of this process.

    Args:
        fds: the protocol's descriptors.
        output: the protocol's output descriptor (one of ``fds``); a reserve copy is made.
        report: called with ``(message, line)`` once the channel is found closed; it sends the
            error (on the descriptor it is given) and ends the agent. Never returns.
        path: what returns the running job's file (``None`` between jobs).
        main_thread: the ident of the thread that runs the jobs.
    """

    def __init__(
        self,
        fds: tuple[int, ...],
        output: int,
        report: Callable[[int, str, int | None], None],
        path: Callable[[], str | None],
        main_thread: int,
    ) -> None:
        self.fds = tuple(fds)
        self._ids = {fd: _identity(fd) for fd in self.fds}
        self._output = output
        self._report = report
        self._path = path
        self._main = main_thread
        self._pid = os.getpid()
        self._fired = threading.Lock()
        self.reserve = self._make_reserve(output)
        self._originals: dict[str, Any] = {}
        #: Whether :meth:`install` ran (once, at the first job).
        self.installed = False

    @staticmethod
    def _make_reserve(fd: int) -> int | None:
        """A close-on-exec copy of ``fd`` at a high number (under the descriptor limit)."""
        try:
            import fcntl
            import resource

            soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            low = _RESERVE_FROM
            if soft != resource.RLIM_INFINITY and soft <= low:
                low = max(int(soft) - 8, 3)
            return int(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low))
        except (ImportError, OSError, ValueError):
            return None

    # -- the user's line -------------------------------------------------------------------

    def _line_in(self, frame: types.FrameType | None) -> int | None:
        path = self._path()
        while frame is not None:
            if path and frame.f_code.co_filename == path:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def _fire(
        self, what: str, frame: types.FrameType | None, fd: int, *, before: bool = True
    ) -> None:
        if not self._fired.acquire(blocking=False):
            return
        line = self._line_in(frame)
        if before:
            head = f"the code {what}{f' at line {line}' if line is not None else ''}: that "
            head += f"closes Kernel Lens's channel to the agent (file descriptor {fd})"
        else:
            head = (
                f"the code closed or replaced Kernel Lens's channel to the agent (file "
                f"descriptor {fd}){f', seen at line {line}' if line is not None else ''}"
            )
        message = (
            f"{head}, so the job cannot report; the agent was stopped (with the processes the "
            "job started) and will restart for the next job"
        )
        self._report(fd, message, line)

    # -- Python-level closes, seen before they happen ---------------------------------------

    def _mine(self) -> bool:
        return os.getpid() == self._pid

    def install(self) -> None:
        """Wrap ``os.close``, ``os.closerange`` and ``os.dup2``; start the watcher thread."""
        self.installed = True
        close, closerange, dup2 = os.close, os.closerange, os.dup2
        self._originals = {"close": close, "closerange": closerange, "dup2": dup2}
        guarded = set(self.fds)
        if self.reserve is not None:
            guarded.add(self.reserve)

        def guarded_close(fd: int) -> None:
            if self._mine() and fd in guarded:
                self._fire(f"called os.close({fd})", sys._getframe(1), fd)
            close(fd)

        def guarded_closerange(low: int, high: int) -> None:
            hit = sorted(fd for fd in guarded if low <= fd < high)
            if self._mine() and hit:
                self._fire(f"called os.closerange({low}, {high})", sys._getframe(1), hit[0])
            closerange(low, high)

        def guarded_dup2(fd: int, fd2: int, inheritable: bool = True) -> int:
            if self._mine() and fd2 in guarded and fd != fd2:
                self._fire(f"called os.dup2({fd}, {fd2})", sys._getframe(1), fd2)
            return dup2(fd, fd2, inheritable)

        for name, fn in (
            ("close", guarded_close),
            ("closerange", guarded_closerange),
            ("dup2", guarded_dup2),
        ):
            fn.__name__ = name
            fn.__qualname__ = name
            fn.__doc__ = self._originals[name].__doc__
            setattr(os, name, fn)
        threading.Thread(target=self._watch, name="kernel-lens-channel", daemon=True).start()

    # -- anything else, seen by the watcher ------------------------------------------------

    def _watch(self) -> None:
        event = threading.Event()
        while not event.wait(WATCH_INTERVAL_S):
            for fd in self.fds:
                if _identity(fd) != self._ids[fd]:
                    frame = sys._current_frames().get(self._main)
                    self._fire("", frame, fd, before=False)
                    return


def send_on(fd: int | None, data: bytes) -> bool:
    """Write ``data`` to ``fd`` whole; whether it went."""
    if fd is None:
        return False
    view = memoryview(data)
    with contextlib.suppress(OSError):
        while view:
            n = os.write(fd, view)
            view = view[n:]
        return True
    return False
