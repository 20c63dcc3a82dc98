"""Only regular files are read (issue 45 item 4): a FIFO, a device, a socket or a directory named
like a trace, a report or a history file is refused with a clear error, never opened in a way
that blocks (a FIFO's ``open()`` waits for a writer) or read without a bound (``/dev/zero``).

`open_regular` opens with ``O_NONBLOCK`` (so even a FIFO swapped in after a check opens at once)
and checks the opened file with ``fstat`` (symlinks resolved: a link to ``/dev/zero`` is a
character device). `check_regular` is the same check by path (``os.stat``), for callers that only
need the size or the modification time. Both raise `NotRegularFileError`, an ``OSError``, so the
callers' existing ``except OSError`` handlers turn it into their own clear error.

Standard library only: the language server, the CLI, the trace readers and the history use it.
"""

from __future__ import annotations

import errno
import io
import os
import stat

__all__ = [
    "NotRegularFileError",
    "check_regular",
    "file_kind",
    "open_regular",
    "read_regular",
]


class NotRegularFileError(OSError):
    """A path that names something other than a regular file (its ``strerror`` says what)."""


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, in words (``a FIFO``, ``a character device``…)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def _refuse(path: str | os.PathLike[str], mode: int) -> NotRegularFileError:
    return NotRegularFileError(
        errno.EINVAL, f"not a regular file ({file_kind(mode)}): refused", os.fspath(path)
    )


def check_regular(path: str | os.PathLike[str]) -> os.stat_result:
    """``os.stat(path)`` (symlinks followed) of a regular file.

    Raises:
        FileNotFoundError: no such file. NotRegularFileError: not a regular file.
        OSError: it cannot be examined.
    """
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, st.st_mode)
    return st


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """``path`` opened for binary reading, only if it is a regular file.

    Opened with ``O_NONBLOCK`` (a FIFO opens at once instead of waiting for a writer, and is
    then refused), checked with ``fstat`` on the open file (no race with a swap after a check),
    then set back to blocking (which a regular file ignores anyway).

    Raises:
        FileNotFoundError: no such file. NotRegularFileError: not a regular file.
        OSError: it cannot be opened.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, st.st_mode)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes.

    Raises:
        FileNotFoundError: no such file. NotRegularFileError: not a regular file, or larger
            than ``limit`` (its ``strerror`` says so). OSError: it cannot be read.
    """
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise NotRegularFileError(
            errno.EFBIG, f"larger than {limit:,} bytes: refused", os.fspath(path)
        )
    return data
