"""The agent started with the language server, before the server's own imports.

Standard library only, and outside :mod:`kernel_lens.client` (whose package imports the pool):
:mod:`kernel_lens.lsp`'s ``__init__`` calls :func:`start` first thing, before pandas.

A cold click waits for an agent to import torch (3.4 s on the H200 host) and make its CUDA
context; the server used to start that agent only once VS Code had sent ``initialize``,
``initialized`` and the Python document's ``didOpen`` — after the server had imported pygls,
lsprotocol and its own modules (≈1.2 s on the 2-core VM). Started here, at the first line of
``python -m kernel_lens.lsp``, the agent's warm-up runs in parallel with all of that, and the pool
adopts it as its spare (:meth:`kernel_lens.client.process.AgentProcess.adopt`).

Only when the client asks for it — the extension sets ``KERNEL_LENS_EARLY_AGENT=1`` when the
workspace is trusted and ``kernelLens.agentCommand`` is not set (a local agent on the server's
own interpreter) and ``KERNEL_LENS_EARLY_AGENT_CWD`` to the workspace folder — and the server
confirms it at ``initialize`` (else :func:`discard`): an agent the settings would not have started
(untrusted, another command, another folder) is stopped there, before any job could reach it.

This module imports only the standard library's light modules: it runs before everything else.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

__all__ = [
    "ENV_CWD",
    "ENV_FLAG",
    "EarlyAgent",
    "PACKAGE_ROOT",
    "agent_argv",
    "agent_env",
    "discard",
    "pending",
    "start",
    "take",
]

#: Set to ``1`` by the client: start the agent with the server.
ENV_FLAG = "KERNEL_LENS_EARLY_AGENT"
#: The folder the agent runs in (the workspace folder the pool would give it).
ENV_CWD = "KERNEL_LENS_EARLY_AGENT_CWD"
#: The folder that holds the ``kernel_lens`` package (the server's, appended to the agent's path).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def agent_argv(prefix: list[str]) -> list[str]:
    """The command of a local agent: ``prefix`` (the interpreter) and a one-line boot script.

    Appending (not prepending) the package's folder keeps the user's own site-packages first;
    no shell sits in between, so the one-line boot script is safe.
    """
    boot = (
        "import sys; sys.path.append(sys.argv.pop(1)); "
        "from kernel_lens.agent.__main__ import main; sys.exit(main())"
    )
    return [*prefix, "-c", boot, PACKAGE_ROOT]


def agent_env(base: dict[str, str], *, keep_package: bool = False) -> dict[str, str]:
    """The agent's environment: ``base`` without the server's own folder on ``PYTHONPATH`` (in
    the .vsix: bundled/libs with pygls, attrs, typing_extensions must not shadow the user's
    packages; the boot line appends it last), plus it again when ``keep_package`` (an agent
    command that runs ``-m kernel_lens.agent`` itself), unbuffered."""
    env = dict(base)
    parts = [
        p
        for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and os.path.abspath(p) != PACKAGE_ROOT
    ]
    if keep_package:
        parts.append(PACKAGE_ROOT)
    if parts:
        env["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        env.pop("PYTHONPATH", None)
    env.pop(ENV_FLAG, None)
    env.pop(ENV_CWD, None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


class EarlyAgent:
    """An agent process started before the event loop: its command, folder and process."""

    def __init__(self, argv: list[str], cwd: str | None, proc: subprocess.Popen[bytes]) -> None:
        self.argv = argv
        self.cwd = cwd
        self.proc = proc
        #: ``time.monotonic()`` at its start (the warming progress counts from it).
        self.started_at = time.monotonic()

    def kill(self) -> None:
        """Stop it and its process group (it is a session leader), and reap it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


_early: EarlyAgent | None = None


def start(environ: dict[str, str] | None = None) -> EarlyAgent | None:
    """Start the agent if the client asked for it (see the module's doc); never raises."""
    global _early
    env = dict(os.environ if environ is None else environ)
    if environ is None:
        # Once per server: a process the server starts later (its model worker imports this
        # package too) must not start another.
        os.environ.pop(ENV_FLAG, None)
    if env.get(ENV_FLAG) != "1" or _early is not None:
        return None
    cwd = env.get(ENV_CWD) or None
    if cwd is not None and not os.path.isdir(cwd):
        cwd = None
    argv = agent_argv([sys.executable])
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=agent_env(env),
            cwd=cwd,
            start_new_session=True,
        )
    except OSError:
        return None  # the pool starts one as before, and says why if that fails too
    _early = EarlyAgent(argv, cwd, proc)
    return _early


def take(argv: list[str], cwd: str | None) -> EarlyAgent | None:
    """The early agent, if it was started with this command in this folder (once: the caller
    owns it); one started otherwise is stopped."""
    global _early
    early, _early = _early, None
    if early is None:
        return None
    if early.argv == argv and early.cwd == cwd:
        return early
    early.kill()
    return None


def discard() -> None:
    """Stop the early agent if it was never taken (shutdown, or settings that exclude it)."""
    global _early
    early, _early = _early, None
    if early is not None:
        early.kill()


def pending() -> bool:
    """Whether an early agent waits to be taken."""
    return _early is not None
