"""Tests only: one warm language-server template per pytest worker (docs/testing.md).

``python tests/lsp/fork_server.py SOCKET`` imports the language server's modules once (pygls,
lsprotocol, every feature module: ≈0.6 CPU s a start, a hundred or so starts a run) and listens
on the Unix socket ``SOCKET`` (``SOCK_SEQPACKET``). ``tests/lsp/launch.py``, the command the LSP
tests give pytest-lsp, sends it what a fresh ``python -m kernel_lens.lsp`` would start with — its
interpreter, environment and folder — and its stdin, stdout and stderr; the server forks a
language server onto those three descriptors and answers ``{"event": "spawned", "pid"}``, later
``{"event": "exit", "code"}``. The launcher exits with that code, so pytest-lsp sees the server's
life as its own process's.

It refuses (``{"event": "refused", "reason"}``, and the launcher starts the server fresh, as the
extension does) when the forked server could differ from a fresh one: another interpreter, or an
environment that differs in what is read before the server's first request — Python's own
``PYTHON*`` variables, the locale, the early agent's flag (read at the import of
``kernel_lens.lsp``). The server's modules read every other variable when they use it (the
template checks that none is read at import: :func:`import_time_reads`), so a test's own
``KERNEL_LENS_*`` folders reach a forked server as they reach a fresh one.

A launcher that dies (pytest-lsp's ``terminate``, a test's timeout) takes its server with it:
the server is killed when the launcher's connection closes.

Never used by the product: nothing outside ``tests/`` imports or starts it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import sys
import threading
from typing import Any

#: Variables a fresh interpreter or the server's imports read before the server's first request.
_READ_AT_START = ("PYTHON", "LANG", "LC_", "KERNEL_LENS_EARLY_AGENT")


def refusal(request: Any, base_env: dict[str, str]) -> str | None:
    """Why a forked server would differ from a fresh start of ``request`` (None: it would not)."""
    if not isinstance(request, dict):
        return "not a request"
    if request.get("executable") != sys.executable:
        return f"another interpreter: {request.get('executable')}"
    env, cwd = request.get("env"), request.get("cwd")
    if not isinstance(env, dict) or not isinstance(cwd, str) or not os.path.isdir(cwd):
        return "no environment or folder"
    differ = {k for k in set(env) | set(base_env) if env.get(k) != base_env.get(k)}
    read = sorted(k for k in differ if k.startswith(_READ_AT_START))
    return f"another environment read at start: {', '.join(read)}" if read else None


class _Servers:
    """The forked servers: each one's launcher connection; its exit is sent there."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conns: dict[int, socket.socket] = {}
        self.tests: dict[int, str] = {}

    def reap(self) -> None:
        from kernel_lens.agent.fork_socket import reaped

        for pid, status, cpu in reaped():
            with self.lock:
                conn = self.conns.pop(pid, None)
                test = self.tests.pop(pid, "")
            # each server's CPU (with what it waited for), which the test's own counts miss;
            # os.write: no lock of sys.stderr taken on this thread (a fork could copy it held)
            os.write(2, f"lsp fork server: server {pid}: {cpu:.2f} CPU s, {test}\n".encode())
            if conn is not None:
                code = os.waitstatus_to_exitcode(status)
                with contextlib.suppress(OSError):
                    conn.send(json.dumps({"event": "exit", "code": code}).encode())
                conn.close()

    def watch(self, pid: int, conn: socket.socket) -> None:
        """Kill the server once its launcher has gone (its connection closed before the exit)."""
        with contextlib.suppress(OSError):
            conn.recv(1)
        with self.lock:
            alive = self.conns.pop(pid, None) is not None
        if alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            conn.close()


def _serve_forked(fds: list[int], request: dict[str, Any], own: list[int]) -> None:
    """In the forked child: become ``python -m kernel_lens.lsp`` on the launcher's descriptors;
    never returns."""
    code = 1
    try:
        for fd in own:
            with contextlib.suppress(OSError):
                os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        import kernel_lens.lsp.__main__ as lsp_main

        # as `python -m kernel_lens.lsp` has them (multiprocessing's spawn reads __main__)
        sys.modules["__main__"] = lsp_main
        sys.argv[:] = [str(lsp_main.__file__)]
        sys.path[0] = os.getcwd()
        try:
            code = lsp_main.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        # what the interpreter does at a normal exit: non-daemon threads, atexit, the streams
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    except BaseException:  # noqa: BLE001 - a fresh server would print it and exit 1
        import traceback

        with contextlib.suppress(Exception):
            traceback.print_exc()
            sys.stderr.flush()
    finally:
        os._exit(code)


def import_time_reads() -> list[str]:
    """Calls reading ``os.environ`` at the top level of the server's modules (none: a forked
    server reads the request's environment when it runs, as a fresh one reads its own)."""
    import ast

    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not name.startswith("kernel_lens") or not path or not path.endswith(".py"):
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id == "os"
                    and sub.attr in ("environ", "getenv")
                ):
                    found.append(f"{name}:{sub.lineno}")
    return found


def serve(path: str) -> None:
    base_env = dict(os.environ)
    import kernel_lens.lsp.__main__  # noqa: F401
    import kernel_lens.lsp.server  # noqa: F401
    from kernel_lens.agent import fork_socket

    reads = import_time_reads()
    if reads:  # a variable fixed in the template would differ from a fresh start: no forks
        print(f"lsp fork server: module-level reads of os.environ: {reads}", file=sys.stderr)
        return
    servers = _Servers()
    threading.Thread(target=servers.reap, daemon=True).start()
    listener = fork_socket.listen(path, "lsp fork server")
    while True:
        conn, request, fds = fork_socket.next_request(
            listener, lambda r: refusal(r, base_env), "lsp fork server"
        )
        sys.stdout.flush()
        sys.stderr.flush()
        with servers.lock:
            own = [listener.fileno(), conn.fileno(), *(c.fileno() for c in servers.conns.values())]
            pid = os.fork()
            if pid == 0:
                _serve_forked(fds, request, own)
            servers.conns[pid] = conn
            servers.tests[pid] = str(request["env"].get("PYTEST_CURRENT_TEST", ""))
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            conn.send(json.dumps({"event": "spawned", "pid": pid}).encode())
        test = request["env"].get("PYTEST_CURRENT_TEST", "")
        print(f"lsp fork server: server {pid} for {test}", file=sys.stderr, flush=True)
        threading.Thread(target=servers.watch, args=(pid, conn), daemon=True).start()


if __name__ == "__main__":
    serve(sys.argv[1])
