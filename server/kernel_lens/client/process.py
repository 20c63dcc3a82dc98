"""One agent process, parent side: started (``python -m kernel_lens.agent``, or forked by a
warm template over a socket), read until its ``ready`` line, its stderr pumped into the log
(lines clipped, the recent ones kept for crash reports), used for one job and killed with its
process group.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kernel_lens.client.faults import describe_exit
from kernel_lens.wire.envelope import (
    HURRY,
    ReadyMessage,
    clip,
    decode,
    read_message_line,
    ready_message,
    template_event,
    warming_phase,
)
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.processes import ChildProcess, descendants, kill_descendants

if TYPE_CHECKING:
    from kernel_lens.early_agent import EarlyAgent

__all__ = [
    "MAX_LINE_CHARS",
    "MAX_LOG_LINES_PER_JOB",
    "START_TIMEOUT_S",
    "AgentProcess",
    "ForkedProc",
]

#: Starting the agent imports torch (and creates a CUDA context): seconds, more over ssh.
START_TIMEOUT_S = 180.0
#: Lines of agent output forwarded per job: a print in a timed function runs thousands of times.
MAX_LOG_LINES_PER_JOB = 300
#: Characters of one output line kept (``print(list(range(10**7)))`` is one 70 MB line).
MAX_LINE_CHARS = 2_000
#: Lines of stderr kept for crash and timeout diagnostics (faulthandler prints up to 100 frames
#: per thread).
_RECENT_LINES = 1_000
#: Kineto's start/stop trace lines (printed by some torch builds at every profile).
_NOISE = re.compile(r"^USDT:.*SyncActivityProfilerHandler\.cpp:\d+\] profiler_(start|stop)$")


class _PipeTransports:
    """Closes the pipe transports of a forked agent (as ``Process._transport.close`` does)."""

    def __init__(self, transports: list[asyncio.BaseTransport]) -> None:
        self.transports = transports

    def close(self) -> None:
        for transport in self.transports:
            with contextlib.suppress(Exception):
                transport.close()


class ForkedProc:
    """An agent forked by the template: the subset of ``asyncio.subprocess.Process`` we use."""

    def __init__(
        self,
        pid: int,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
        exited: asyncio.Future[int],
        transports: list[asyncio.BaseTransport],
    ) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._exited = exited
        self._transport = _PipeTransports(transports)

    @property
    def returncode(self) -> int | None:
        done = self._exited.done() and not self._exited.cancelled()
        return self._exited.result() if done else None

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


async def _read_pipe(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    return reader, transport


async def _write_pipe(fd: int) -> tuple[asyncio.StreamWriter, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return writer, transport


async def _wrap_pipes(
    fds: list[int],
) -> tuple[
    asyncio.StreamWriter, asyncio.StreamReader, asyncio.StreamReader, list[asyncio.BaseTransport]
]:
    """Our ends of a child's stdin, stdout and stderr (``fds``, owned from here) as the loop's
    streams, with their transports; on a failure every one of them is closed."""
    transports: list[asyncio.BaseTransport] = []
    try:
        stdin, t_in = await _write_pipe(fds[0])
        transports.append(t_in)
        stdout, t_out = await _read_pipe(fds[1])
        transports.append(t_out)
        stderr, t_err = await _read_pipe(fds[2])
        transports.append(t_err)
    except BaseException:
        for transport in transports:
            transport.close()
        for fd in fds[len(transports) :]:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise
    return stdin, stdout, stderr, transports


async def exit_code(proc: Any, wait_s: float = 10.0) -> int | None:
    """The exit status of an agent whose output has ended. Not ``proc.wait()`` alone: before
    Python 3.12 it returns only once every pipe of the process is closed, and a process the job
    started in a new session keeps the agent's stderr open after the agent died — the job then
    hung on a crash (issue 39 item 4). The return code is known as soon as the process is
    reaped; ``None`` if it is still running after ``wait_s``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + wait_s
    while proc.returncode is None and loop.time() < end:
        await asyncio.sleep(0.02)
    return proc.returncode  # type: ignore[no-any-return]


def _exit_future(popen: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    """A future of ``popen``'s exit status, for a process the loop did not start: a pidfd
    read by the loop where Linux has them, else a daemon thread in ``wait`` (never joined at
    exit)."""
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[int] = loop.create_future()

    def done(code: int) -> None:
        if not exited.done():
            exited.set_result(code)

    try:
        pidfd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):
        pidfd = -1
    if pidfd >= 0:

        def readable() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            done(popen.wait())

        loop.add_reader(pidfd, readable)
        return exited

    def wait() -> None:
        code = popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(done, code)

    threading.Thread(target=wait, name="early-agent-wait", daemon=True).start()
    return exited


def _warming_phase(raw: bytes) -> str | None:
    """The phase of a ``{"event": "warming", "phase": …}`` line, else ``None``."""
    if b'"warming"' not in raw:
        return None
    try:
        return warming_phase(decode(raw))
    except ValueError:
        return None


class AgentProcess:
    """One agent process: started, warming, ready, then used for one job and killed."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self.proc: asyncio.subprocess.Process | ForkedProc | None = None
        #: The agent's ``ready`` line (empty until it came).
        self.info = ReadyMessage()
        #: A template's own state: its socket, spawn lock, spawned pids and exit futures.
        self.sock: socket.socket | None = None
        self._spawn_lock = asyncio.Lock()
        self._spawned: asyncio.Queue[int] = asyncio.Queue()
        self.exits: dict[int, asyncio.Future[int]] = {}
        self._events_task: asyncio.Task[None] | None = None
        #: (An agent on another machine) seconds :meth:`kill` gives the local ``ssh``/``srun``
        #: after a ``SIGTERM`` before its ``SIGKILL``: srun then ends the job step and releases
        #: the allocation (a SIGKILLed srun leaves the step, and the agent, running there).
        self.graceful_s = 0.0
        #: Seconds to wait for ``ready`` (a template may be paused while jobs time: longer).
        self.ready_timeout = START_TIMEOUT_S
        self.recent: collections.deque[str] = collections.deque(maxlen=_RECENT_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        self._logged = 0
        self._suppressed = 0
        #: The job's last progress message (``nvcc: compiling …``), said by a timeout that has no
        #: frame of the user's to name.
        self.last_progress: str | None = None
        #: While the agent warms up: the phase it is in (``importing torch``); ``None`` once
        #: ready. ``started_at``: when the process was started (``time.monotonic()``).
        self.warming: str | None = None
        self.started_at: float | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None,
        *,
        template: bool = False,
        preamble: bytes = b"",
    ) -> None:
        """Start the process and wait for its ``ready`` line (it comes once the agent is warm).

        With ``template``, the process is a fork template (see :meth:`spawn`). ``preamble`` is
        written on its stdin first (a remote bootstrap's package zip).
        """
        pass_fds: tuple[int, ...] = ()
        child: socket.socket | None = None
        self.started_at = time.monotonic()
        if template:
            self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            env = {**env, "KERNEL_LENS_AGENT_TEMPLATE_FD": str(child.fileno())}
            pass_fds = (child.fileno(),)
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=cwd,
                limit=1 << 20,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except OSError as exc:
            raise ProfileError(
                "crash", f"cannot start the agent {argv[0]!r}: {exc.strerror or exc}"
            ) from None
        finally:
            if child is not None:
                child.close()
        if preamble and self.proc.stdin is not None:
            # Buffered by the transport and written as the far side reads (no drain: a link
            # that hangs is the ready timeout's to end).
            with contextlib.suppress(ConnectionError, OSError):
                self.proc.stdin.write(preamble)
        await self._until_ready(" ".join(argv) if not preamble else " ".join(argv[:-1]) + " …")
        if template:
            self._events_task = asyncio.ensure_future(self._template_events())

    async def adopt(self, early: EarlyAgent) -> None:
        """Take over the agent started with the server (:mod:`kernel_lens.early_agent`), its
        pipes wrapped for the loop, and wait for its ``ready`` line (it may have come already)."""
        self.started_at = early.started_at
        popen = early.proc
        streams = [popen.stdin, popen.stdout, popen.stderr]
        fds: list[int] = []
        try:
            for stream in streams:
                assert stream is not None
                fds.append(os.dup(stream.fileno()))
                stream.close()
            stdin, stdout, stderr, transports = await _wrap_pipes(fds)
        except BaseException:
            if len(fds) < 3:  # not yet handed to _wrap_pipes, which closes them itself
                for fd in fds:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            early.kill()
            raise
        exited = _exit_future(popen)
        self.proc = ForkedProc(popen.pid, stdin, stdout, stderr, exited, transports)
        await self._until_ready(" ".join(early.argv[:1]) + " (started with the server)")

    async def start_forked(self, template: AgentProcess) -> None:
        """Start as a fork of ``template`` and wait for the ``ready`` line."""
        self.started_at = time.monotonic()
        self.proc = await template.spawn()
        await self._until_ready("a fork of the agent template")

    async def start_from_fork_server(
        self, path: str, argv: list[str], env: dict[str, str], cwd: str | None
    ) -> None:
        """Tests only (``KERNEL_LENS_AGENT_FORK_SERVER``, docs/testing.md): start as a fork of
        the test session's warm template listening on ``path``, which gives the agent ``env``
        and ``cwd``, and wait for the ``ready`` line.

        Raises:
            ProfileError: no server there, or it refused (the agent it would fork is not the
                one ``argv``/``env`` would start fresh); nothing was started then.
        """
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.setblocking(False)
        fds = [os.pipe() for _ in range(3)]  # (read, write) for stdin, stdout, stderr
        theirs = [fds[0][0], fds[1][1], fds[2][1]]
        ours = [fds[0][1], fds[1][0], fds[2][0]]
        request = {"argv": argv, "env": env, "cwd": cwd or os.getcwd()}
        try:
            await loop.sock_connect(sock, path)
            socket.send_fds(sock, [json.dumps(request).encode()], theirs)
            event = json.loads(await asyncio.wait_for(loop.sock_recv(sock, 1 << 16), 30) or b"{}")
        except (OSError, ValueError, asyncio.TimeoutError) as exc:
            event = {"event": "refused", "reason": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in theirs:
                os.close(fd)
        if event.get("event") != "spawned" or not isinstance(event.get("pid"), int):
            sock.close()
            for fd in ours:
                os.close(fd)
            raise ProfileError("crash", f"fork server: {event.get('reason', event)}")
        pid: int = event["pid"]
        exited: asyncio.Future[int] = loop.create_future()

        async def wait_exit() -> None:
            try:
                raw = await loop.sock_recv(sock, 1 << 16)
                message = template_event(decode(raw)) if raw else None
            except (OSError, ValueError):
                message = None
            finally:
                sock.close()
            code = message["code"] if message and message["event"] == "exit" else -signal.SIGKILL
            if not exited.done():
                exited.set_result(code)

        self._events_task = asyncio.ensure_future(wait_exit())
        self.started_at = time.monotonic()
        stdin, stdout, stderr, transports = await _wrap_pipes(ours)
        self.proc = ForkedProc(pid, stdin, stdout, stderr, exited, transports)
        await self._until_ready("a fork of the test session's agent template")

    async def spawn(self) -> ForkedProc:
        """(On a template) fork a new agent; its pipes are ours.

        Raises:
            ProfileError: the template is gone.
        """
        async with self._spawn_lock:
            if self.sock is None or not self.alive:
                raise ProfileError("crash", "the agent template is not running")
            fds = [os.pipe() for _ in range(3)]  # (read, write) for stdin, stdout, stderr
            theirs = [fds[0][0], fds[1][1], fds[2][1]]
            try:
                socket.send_fds(self.sock, [b"spawn"], theirs)
            except OSError as exc:
                for r, w in fds:
                    os.close(r)
                    os.close(w)
                raise ProfileError("crash", f"the agent template is gone: {exc}") from None
            for fd in theirs:
                os.close(fd)
            ours = [fds[0][1], fds[1][0], fds[2][0]]
            stdin, stdout, stderr, transports = await _wrap_pipes(ours)
            try:
                pid = await asyncio.wait_for(self._spawned.get(), 30)
            except BaseException as exc:
                # Closing our ends ends a child forked meanwhile (its input closes).
                for transport in transports:
                    transport.close()
                if isinstance(exc, asyncio.TimeoutError):
                    raise ProfileError("crash", "the agent template did not fork") from None
                raise
            exited = self.exits.setdefault(pid, asyncio.get_running_loop().create_future())
            return ForkedProc(pid, stdin, stdout, stderr, exited, transports)

    async def _template_events(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        loop = asyncio.get_running_loop()
        while True:
            try:
                raw = await read_message_line(self.proc.stdout)
            except Exception:
                raw = b""
            if not raw:
                for future in self.exits.values():
                    if not future.done():
                        future.set_result(-signal.SIGKILL)
                return
            with contextlib.suppress(ValueError):
                event = template_event(decode(raw))
                if event is None:
                    continue
                if event["event"] == "spawned":
                    self._spawned.put_nowait(event["pid"])
                else:
                    future = self.exits.setdefault(event["pid"], loop.create_future())
                    if not future.done():
                        future.set_result(event["code"])

    async def _until_ready(self, what: str) -> None:
        assert self.proc is not None
        assert self.proc.stderr is not None and self.proc.stdout is not None
        self._stderr_task = asyncio.ensure_future(self._pump_stderr(self.proc.stderr))
        deadline = time.monotonic() + self.ready_timeout
        try:
            while True:
                left = max(deadline - time.monotonic(), 0.001)
                raw = await asyncio.wait_for(read_message_line(self.proc.stdout), left)
                phase = _warming_phase(raw)
                if phase is None:
                    break
                self.warming = phase  # what a job waiting for this agent says it waits for
        except asyncio.TimeoutError:
            await self.kill()
            raise ProfileError(
                "timeout", f"the agent did not start within {self.ready_timeout:.0f} s"
            ) from None
        except BaseException:
            await self.kill()
            raise
        if not raw:
            code: int | None = None
            with contextlib.suppress(asyncio.TimeoutError):
                code = await asyncio.wait_for(self.proc.wait(), 5.0)
            await self.drain_stderr()
            await self.kill()
            raise ProfileError(
                "crash",
                f"the agent ({what}) exited at start ({describe_exit(code)}): " + self.tail_text(),
            )
        self.warming = None
        try:
            self.info = ready_message(decode(raw))
        except ValueError:
            await self.kill()
            raise ProfileError(
                "crash", f"the agent ({what}) did not start: {clip(raw.decode(), 300)}"
            ) from None

    def hurry(self) -> None:
        """Ask a spare that is still warming (under ``SCHED_IDLE``) to finish at normal priority."""
        if self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(Exception):
                self.proc.stdin.write(HURRY + b"\n")

    def _line(self, raw: bytes, dropped: int) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if dropped:
            text += f"… ({dropped} more bytes on this line)"
        if _NOISE.match(text):
            return
        self.recent.append(text)
        if self._logged < MAX_LOG_LINES_PER_JOB:
            self._logged += 1
            with contextlib.suppress(Exception):  # the log must never stop the reader
                self._log(text)
        else:
            self._suppressed += 1

    async def _pump_stderr(self, stream: asyncio.StreamReader) -> None:
        # Chunks, not readline: one output line may be larger than any reader's limit, and a
        # reader that stops lets the pipe fill until the agent blocks.
        pending = bytearray()
        dropped = 0
        while True:
            try:
                chunk = await stream.read(1 << 16)
            except (ConnectionError, OSError):
                chunk = b""
            if not chunk:
                if pending or dropped:
                    self._line(bytes(pending), dropped)
                return
            start = 0
            while start <= len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                room = MAX_LINE_CHARS - len(pending)
                if room > 0:
                    pending += piece[:room]
                dropped += max(0, len(piece) - max(room, 0))
                if end < 0:
                    break
                self._line(bytes(pending), dropped)
                pending.clear()
                dropped = 0
                start = end + 1

    def flush_suppressed(self) -> None:
        if self._suppressed:
            with contextlib.suppress(Exception):
                self._log(f"… {self._suppressed} more lines of output not shown")
        self._logged = 0
        self._suppressed = 0

    def tail_text(self, n: int = 6) -> str:
        lines = [line for line in self.recent if line.strip()]
        return " | ".join(lines[-n:]) or "no output"

    async def drain_stderr(self, seconds: float = 2.0) -> None:
        """Wait (a little) for the rest of the agent's stderr once it has exited."""
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), seconds)

    def job_processes(self) -> list[ChildProcess]:
        """(A local agent) the live processes under it: what its job started and still runs."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return []
        agent = self.info.get("pid")
        return [c for c in descendants(proc.pid) if c.pid != agent]

    async def kill(self, *, with_descendants: bool = False) -> None:
        """Stop the process and its whole group (compilers, workers, user subprocesses).

        With ``with_descendants`` (a local agent that ran a job), first every process below it, in
        whatever session: the agent is their subreaper, so new sessions and double-forked
        daemons are still below it while it lives. Never for a fork template, whose
        descendants are the next jobs' agents.
        """
        proc = self.proc
        if proc is None:
            return
        if with_descendants and proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(None, kill_descendants, proc.pid)
        if self.graceful_s and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), self.graceful_s)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), 5.0)
        await self.drain_stderr(0.5)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
        if self._events_task is not None:
            self._events_task.cancel()
        if self.sock is not None:
            self.sock.close()
        self.flush_suppressed()
        # Close our ends of the pipes now rather than at garbage collection.
        with contextlib.suppress(Exception):
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
