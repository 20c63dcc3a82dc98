"""The parent side of the agent boundary, for the server and the CLI: one job at a time.

A crash (``os._exit``, a segfault, a CUDA fault), a hang past the timeout, or a cancel costs one
job: the process is killed if needed and the next job starts a fresh one.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import os
import re
import signal
from collections.abc import Callable
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.agent.protocol import decode, encode

__all__ = ["AgentClient"]

#: Starting the agent imports torch (and creates a CUDA context): seconds, more over ssh.
START_TIMEOUT_S = 180.0
#: Lines of agent output forwarded per job: a print in a timed function runs thousands of times.
MAX_LOG_LINES_PER_JOB = 300
#: Kineto's start/stop trace lines (printed by some torch builds at every profile).
_NOISE = re.compile(r"^USDT:.*SyncActivityProfilerHandler\.cpp:\d+\] profiler_(start|stop)$")
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def describe_exit(code: int | None) -> str:
    """``exit code 3`` or ``killed by SIGSEGV``."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class AgentClient:
    """One agent process at a time, started on demand.

    Args:
        argv_prefix: the command that starts Python (``[sys.executable]``, ``["ssh", "gpu",
            "python3"]``); ``-m kernel_lens.agent`` is appended.
        log: called with each line the agent writes to stderr (user prints, warnings).
    """

    def __init__(
        self,
        argv_prefix: list[str],
        log: Callable[[str], None],
        *,
        local: bool = True,
        cwd: str | None = None,
    ) -> None:
        self.argv_prefix = list(argv_prefix)
        self.local = local
        self.cwd = cwd
        self._log = log
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self.info: dict[str, Any] = {}
        self._logged = 0
        self._suppressed = 0

    @property
    def running(self) -> bool:
        """Whether an agent process is alive."""
        return self._proc is not None and self._proc.returncode is None

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # The server's folder (in the .vsix: bundled/libs with pygls, attrs, typing_extensions)
        # must not shadow the user's packages in the agent: it goes last, via the boot line.
        parts = [
            p
            for p in env.get("PYTHONPATH", "").split(os.pathsep)
            if p and os.path.abspath(p) != _PACKAGE_ROOT
        ]
        if self.local:
            if parts:
                env["PYTHONPATH"] = os.pathsep.join(parts)
            else:
                env.pop("PYTHONPATH", None)
        else:
            env["PYTHONPATH"] = os.pathsep.join([*parts, _PACKAGE_ROOT])
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def _argv(self) -> list[str]:
        if self.local:
            # Appending (not prepending) the package's folder keeps the user's own site-packages
            # first; no shell sits in between, so the one-line boot script is safe.
            boot = (
                "import sys; sys.path.append(sys.argv.pop(1)); "
                "from kernel_lens.agent.__main__ import main; sys.exit(main())"
            )
            return [*self.argv_prefix, "-c", boot, _PACKAGE_ROOT]
        return [*self.argv_prefix, "-m", "kernel_lens.agent"]

    async def _pump_stderr(self, stream: asyncio.StreamReader) -> None:
        while True:
            raw = await stream.readline()
            if not raw:
                return
            text = raw.decode("utf-8", "replace").rstrip("\n")
            if _NOISE.match(text):
                continue
            self._stderr_tail.append(text)
            if self._logged < MAX_LOG_LINES_PER_JOB:
                self._logged += 1
                self._log(text)
            else:
                self._suppressed += 1

    def _flush_suppressed(self) -> None:
        if self._suppressed:
            self._log(f"… {self._suppressed} more lines of output not shown")
        self._logged = 0
        self._suppressed = 0

    async def start(self) -> None:
        """Start the agent and wait for its ``ready`` line."""
        argv = self._argv()
        self._stderr_tail.clear()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env(),
                cwd=self.cwd if self.cwd and os.path.isdir(self.cwd) else None,
                limit=64 * 1024 * 1024,
                start_new_session=True,
            )
        except OSError as exc:
            raise ProfileError(
                "crash", f"cannot start the agent {argv[0]!r}: {exc.strerror or exc}"
            ) from None
        assert self._proc.stderr is not None and self._proc.stdout is not None
        self._stderr_task = asyncio.ensure_future(self._pump_stderr(self._proc.stderr))
        try:
            raw = await asyncio.wait_for(self._proc.stdout.readline(), START_TIMEOUT_S)
        except asyncio.TimeoutError:
            await self.kill()
            raise ProfileError(
                "timeout", f"the agent did not start within {START_TIMEOUT_S:.0f} s"
            ) from None
        if not raw:
            code = await self._proc.wait()
            await self._drain_stderr()
            raise ProfileError(
                "crash",
                f"the agent ({' '.join(argv)}) exited at start ({describe_exit(code)}): "
                + self._tail_text(),
            )
        self.info = decode(raw)

    def _tail_text(self, n: int = 6) -> str:
        lines = [line for line in self._stderr_tail if line.strip()]
        return " | ".join(lines[-n:]) or "no output"

    async def _drain_stderr(self) -> None:
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 2.0)

    def prewarm(self) -> None:
        """Make sure a warm agent is starting or ready (non-blocking). A no-op for now."""

    async def kill(self) -> None:
        """Stop the agent (its whole process group: compilers and workers too)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), 5.0)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            self._stderr_task = None

    async def run(
        self,
        params: dict[str, Any],
        *,
        timeout: float,
        on_progress: Callable[[str, str], None] | None = None,
        cancelled: asyncio.Event | None = None,
        method: str = "profile",
    ) -> dict[str, Any]:
        """Run one profile job and return its result object.

        Raises:
            ProfileError: the job's own error, or ``timeout``/``crash``/``cancelled``.
        """
        async with self._lock:
            if cancelled is not None and cancelled.is_set():
                raise ProfileError("cancelled", "cancelled before it started")
            if not self.running:
                await self.start()
            proc = self._proc
            assert proc is not None and proc.stdin is not None and proc.stdout is not None
            job_id = next(self._ids)
            self._flush_suppressed()
            try:
                proc.stdin.write(encode({"id": job_id, "method": method, "params": params}))
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                await self.kill()
                raise ProfileError("crash", "the agent closed its input") from None
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            cancel_wait = asyncio.ensure_future(
                cancelled.wait() if cancelled is not None else asyncio.Event().wait()
            )
            try:
                while True:
                    read = asyncio.ensure_future(proc.stdout.readline())
                    remaining = deadline - loop.time()
                    done, _ = await asyncio.wait(
                        {read, cancel_wait},
                        timeout=max(remaining, 0),
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    if read not in done:
                        read.cancel()
                        await self.kill()
                        if cancel_wait in done:
                            raise ProfileError(
                                "cancelled", "cancelled; the agent was stopped and will restart"
                            )
                        raise ProfileError(
                            "timeout",
                            f"no result after {timeout:.0f} s (kernelLens.timeoutSeconds); "
                            "the agent was stopped and will restart for the next job",
                        )
                    raw = read.result()
                    if not raw:
                        code = await proc.wait()
                        await self._drain_stderr()
                        self._proc = None
                        raise ProfileError(
                            "crash",
                            f"the agent process died during the job ({describe_exit(code)}); "
                            f"last output: {self._tail_text()}",
                        )
                    message = decode(raw)
                    if message.get("id") != job_id:
                        continue
                    if "progress" in message and on_progress is not None:
                        progress = message["progress"]
                        on_progress(str(progress.get("stage")), str(progress.get("message")))
                    elif "result" in message:
                        result: dict[str, Any] = message["result"]
                        return result
                    elif "error" in message:
                        err = message["error"]
                        raise ProfileError(
                            str(err.get("kind", "internal")),
                            str(err.get("message", "")),
                            err.get("line"),
                            err.get("traceback"),
                        )
            except asyncio.CancelledError:
                # The request was cancelled ($/cancelRequest): the agent is busy with it.
                await self.kill()
                raise
            finally:
                cancel_wait.cancel()
                self._flush_suppressed()
