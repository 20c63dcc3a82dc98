"""The Unix socket of a warm fork template (tests only): the agents' fork server
(``kernel_lens.agent.__main__._fork_server``) and the tests' language-server template
(``tests/lsp/fork_server.py``) listen and take requests the same way. :func:`reaped` is every
template's reaper loop (the product's agent template too).

A request is one ``SOCK_SEQPACKET`` message, a JSON object, with three file descriptors (the
stdin, stdout and stderr of the process to fork); a request the template cannot serve as a fresh
start would be is answered ``{"event": "refused", "reason"}`` and closed here. Standard library
only: the language-server template imports it next to the server's modules.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["listen", "next_request", "reaped"]


def listen(path: str, label: str) -> socket.socket:
    """Listen on ``path``; it appears (renamed from ``path.tmp``) only once it answers."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)
    print(f"{label}: warm, listening on {path}", file=sys.stderr, flush=True)
    return listener


def next_request(
    listener: socket.socket, refusal: Callable[[Any], str | None], label: str
) -> tuple[socket.socket, dict[str, Any], list[int]]:
    """The next request ``refusal`` accepts (``None``): its connection, JSON and descriptors.
    Those it refuses, and malformed ones, are answered and closed on the way."""
    while True:
        conn, _addr = listener.accept()
        try:
            message, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
            request = json.loads(message or b"null")
            reason = refusal(request) if len(fds) == 3 else "no descriptors"
        except (OSError, ValueError) as exc:
            fds, request, reason = [], None, f"bad request: {exc}"
        if reason is None and isinstance(request, dict):
            return conn, request, fds
        print(f"{label}: refused: {reason}", file=sys.stderr, flush=True)
        with contextlib.suppress(OSError):
            conn.send(json.dumps({"event": "refused", "reason": reason}).encode())
        conn.close()
        for fd in fds:
            os.close(fd)


def reaped() -> Iterator[tuple[int, int, float]]:
    """Each child as it ends, forever: its pid, wait status and CPU seconds (with what it waited
    for). For the template's reaper thread; waits while it has no child."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, 0)
        except ChildProcessError:
            time.sleep(0.05)
            continue
        yield pid, status, usage.ru_utime + usage.ru_stime
