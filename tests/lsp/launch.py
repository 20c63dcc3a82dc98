"""Tests only: the language server's command in the LSP tests (docs/testing.md).

``python -S tests/lsp/launch.py`` asks the worker's warm template (``tests/lsp/fork_server.py``,
at ``$KERNEL_LENS_TEST_LSP_FORK``) to fork a language server onto this process's stdin, stdout
and stderr, then lives as long as that server and exits with its code; SIGTERM is passed on.
Where the template is not there or refuses, it becomes ``python -m kernel_lens.lsp`` (exec), as
the extension starts it. Standard library only, started without ``site`` (a few ms).
"""

import json
import os
import signal
import socket
import sys


def _fresh() -> None:
    os.execv(sys.executable, [sys.executable, "-m", "kernel_lens.lsp"])


def main() -> int:
    path = os.environ.get("KERNEL_LENS_TEST_LSP_FORK")
    if not path or not os.path.exists(path):
        _fresh()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.settimeout(30)  # a template that does not answer: a fresh server instead
    try:
        sock.connect(path)
        request = {"executable": sys.executable, "env": dict(os.environ), "cwd": os.getcwd()}
        socket.send_fds(sock, [json.dumps(request).encode()], [0, 1, 2])
        answer = json.loads(sock.recv(1 << 16) or b"null")
    except (OSError, ValueError):
        answer = None
    if not isinstance(answer, dict) or answer.get("event") != "spawned":
        sock.close()
        _fresh()
    pid = answer["pid"]
    sock.settimeout(None)  # the server's life: as long as it takes
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
    # Only the server holds the pipes now: its exit is their end, as for a fresh server.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    end = json.loads(sock.recv(1 << 16) or b"null")  # (a SIGTERM passed on: recv goes on)
    code = int(end["code"]) if isinstance(end, dict) and end.get("event") == "exit" else 1
    if code < 0:  # killed by a signal: end the same way, as the server's own process would
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main())
