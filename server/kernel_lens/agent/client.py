"""The parent side of the agent boundary, for the server and the CLI: a fresh agent per job.

Every job runs on its own agent process, so nothing of the user's (modules, cwd, ``sys.path``,
environment, monkeypatches, threads, GPU memory) survives into the next job. It stays warm: a
*spare* agent (torch imported, the profiler started once, CUDA initialised) is started ahead of
the click by :meth:`AgentClient.prewarm`, and again by each job once it has finished timing (the
spare warms under ``SCHED_IDLE`` while a job runs); a job takes the spare and the used agent is
killed with its process group. A crash (``os._exit``, a segfault, a CUDA fault), a hang past the
timeout or a cancel costs that one job, and its error names the user's line that was running
(from the agent's ``faulthandler`` output). Design and costs: docs/robustness.md.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import os
import re
import signal
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kernel_lens.wire.envelope import (
    HURRY,
    clip,
    decode,
    encode,
    error_from_object,
    read_message_line,
)
from kernel_lens.wire.errors import ProfileError

__all__ = ["AgentClient", "StackFrame", "describe_exit", "fault_frames", "failing_frame"]

#: Starting the agent imports torch (and creates a CUDA context): seconds, more over ssh.
START_TIMEOUT_S = 180.0
#: Lines of agent output forwarded per job: a print in a timed function runs thousands of times.
MAX_LOG_LINES_PER_JOB = 300
#: Characters of one output line kept (``print(list(range(10**7)))`` is one 70 MB line).
MAX_LINE_CHARS = 2_000
#: Lines of stderr kept for crash and timeout diagnostics (faulthandler prints up to 100 frames
#: per thread).
_RECENT_LINES = 1_000
#: Progress stages after a profile's timing: the next spare may start warming meanwhile.
_AFTER_TIMING = frozenset({"ops", "trace", "done"})
#: Stages that time the function again later in the job (the spare waits for the end).
_TIMED_LATE = frozenset({"compiled", "sweep"})
#: Kineto's start/stop trace lines (printed by some torch builds at every profile).
_NOISE = re.compile(r"^USDT:.*SyncActivityProfilerHandler\.cpp:\d+\] profiler_(start|stop)$")
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_FAULT_HEADER = re.compile(
    r"^(Current thread|Thread) (0x[0-9a-fA-F]+).*\(most recent call first\):"
)
#: The first line of a dump: a timeout's (``dump_traceback_later``) or a fatal error's.
_FAULT_START = re.compile(r"^(Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!|Fatal Python error)")
_FAULT_FRAME = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<name>.*)$')


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


@dataclass(frozen=True)
class StackFrame:
    """One frame of a ``faulthandler`` dump: file, 1-based line, function."""

    file: str
    line: int
    name: str


def fault_frames(lines: Iterable[str], *, main_thread: int | None = None) -> list[StackFrame]:
    """The frames of the last ``faulthandler`` dump in ``lines``, innermost first.

    A dump (a crash's ``Fatal Python error`` or a timeout's ``Timeout (0:00:05)!``) lists each
    thread as a header and ``File "…", line N in f`` lines, most recent call first. Of the last
    dump, the main thread's block is taken (``main_thread``: its ident, as the agent's ready
    line reports it), else the ``Current thread`` block, else the first block.

    Args:
        lines: stderr lines of the agent, in order.
        main_thread: the agent's main thread ident (``threading.get_ident()``), if known.
    """
    dumps: list[list[tuple[str, int, list[StackFrame]]]] = []
    block: list[StackFrame] | None = None
    for text in lines:
        if _FAULT_START.match(text):
            dumps.append([])
            block = None
            continue
        header = _FAULT_HEADER.match(text)
        if header:
            if not dumps:
                dumps.append([])
            block = []
            dumps[-1].append((header.group(1), int(header.group(2), 16), block))
            continue
        frame = _FAULT_FRAME.match(text)
        if frame and block is not None:
            block.append(StackFrame(frame["file"], int(frame["line"]), frame["name"]))
        elif text.strip() and not text.startswith("  "):
            block = None
    if not dumps or not dumps[-1]:
        return []
    last = dumps[-1]
    for _label, ident, frames in last:
        if main_thread is not None and ident == main_thread:
            return frames
    for label, _ident, frames in last:
        if label == "Current thread":
            return frames
    return last[0][2]


def failing_frame(frames: list[StackFrame], path: str | None) -> StackFrame | None:
    """The innermost frame in the user's file ``path`` (module-level code included)."""
    if not path:
        return None
    want = os.path.normpath(path)
    return next((f for f in frames if os.path.normpath(f.file) == want), None)


def where_text(frames: list[StackFrame], path: str | None = None, n: int = 3) -> str:
    """``in f (x.py:12) ← main (x.py:30)``: the innermost frames (of ``path`` when it has some)."""
    want = os.path.normpath(path) if path else None
    mine = [f for f in frames if want and os.path.normpath(f.file) == want] or frames
    return "in " + " ← ".join(f"{f.name} ({os.path.basename(f.file)}:{f.line})" for f in mine[:n])


class _PipeTransports:
    """Closes the pipe transports of a forked agent (as ``Process._transport.close`` does)."""

    def __init__(self, transports: list[asyncio.BaseTransport]) -> None:
        self.transports = transports

    def close(self) -> None:
        for transport in self.transports:
            with contextlib.suppress(Exception):
                transport.close()


class _ForkedProc:
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


class _Agent:
    """One agent process: started, warming, ready, then used for one job and killed."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self.proc: asyncio.subprocess.Process | _ForkedProc | None = None
        self.info: dict[str, Any] = {}
        #: A template's own state: its socket, spawn lock, spawned pids and exit futures.
        self.sock: socket.socket | None = None
        self._spawn_lock = asyncio.Lock()
        self._spawned: asyncio.Queue[int] = asyncio.Queue()
        self.exits: dict[int, asyncio.Future[int]] = {}
        self._events_task: asyncio.Task[None] | None = None
        #: Seconds to wait for ``ready`` (a template may be paused while jobs time: longer).
        self.ready_timeout = START_TIMEOUT_S
        self.recent: collections.deque[str] = collections.deque(maxlen=_RECENT_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        self._logged = 0
        self._suppressed = 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(
        self, argv: list[str], env: dict[str, str], cwd: str | None, *, template: bool = False
    ) -> None:
        """Start the process and wait for its ``ready`` line (it comes once the agent is warm).

        With ``template``, the process is a fork template (see :meth:`spawn`).
        """
        pass_fds: tuple[int, ...] = ()
        child: socket.socket | None = None
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
        await self._until_ready(" ".join(argv))
        if template:
            self._events_task = asyncio.ensure_future(self._template_events())

    async def start_forked(self, template: _Agent) -> None:
        """Start as a fork of ``template`` and wait for the ``ready`` line."""
        self.proc = await template.spawn()
        await self._until_ready("a fork of the agent template")

    async def spawn(self) -> _ForkedProc:
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
            transports: list[asyncio.BaseTransport] = []
            try:
                stdin, t_in = await _write_pipe(ours[0])
                transports.append(t_in)
                stdout, t_out = await _read_pipe(ours[1])
                transports.append(t_out)
                stderr, t_err = await _read_pipe(ours[2])
                transports.append(t_err)
                pid = await asyncio.wait_for(self._spawned.get(), 30)
            except BaseException as exc:
                # Closing our ends ends a child forked meanwhile (its input closes).
                for transport in transports:
                    transport.close()
                for fd in ours[len(transports) :]:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                if isinstance(exc, asyncio.TimeoutError):
                    raise ProfileError("crash", "the agent template did not fork") from None
                raise
            exited = self.exits.setdefault(pid, asyncio.get_running_loop().create_future())
            return _ForkedProc(pid, stdin, stdout, stderr, exited, [t_in, t_out, t_err])

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
                event = decode(raw)
                pid = event.get("pid")
                if not isinstance(pid, int):
                    continue
                if event.get("event") == "spawned":
                    self._spawned.put_nowait(pid)
                elif event.get("event") == "exit":
                    future = self.exits.setdefault(pid, loop.create_future())
                    code = event.get("code")
                    if not future.done():
                        future.set_result(code if isinstance(code, int) else -1)

    async def _until_ready(self, what: str) -> None:
        assert self.proc is not None
        assert self.proc.stderr is not None and self.proc.stdout is not None
        self._stderr_task = asyncio.ensure_future(self._pump_stderr(self.proc.stderr))
        try:
            raw = await asyncio.wait_for(read_message_line(self.proc.stdout), self.ready_timeout)
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
        try:
            self.info = decode(raw)
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

    async def kill(self) -> None:
        """Stop the process and its whole group (compilers, workers, user subprocesses)."""
        proc = self.proc
        if proc is None:
            return
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


def _task_alive(task: asyncio.Task[_Agent] | None) -> bool:
    """The task is starting an agent, or has started one that is alive."""
    if task is None:
        return False
    if not task.done():
        return True
    return not task.cancelled() and task.exception() is None and task.result().alive


def _machine_text(info: dict[str, Any]) -> str:
    return f"torch {info.get('torch')}, cuda {info.get('cuda')}"


def _same_machine(fresh: dict[str, Any], forked: dict[str, Any]) -> bool:
    """Whether a forked agent has what the fresh agent had (torch, and CUDA where it was)."""
    if not fresh:
        return True
    return bool(forked.get("torch")) == bool(fresh.get("torch")) and bool(
        forked.get("cuda")
    ) == bool(fresh.get("cuda"))


class AgentClient:
    """Runs each job on a fresh agent process, with a warm spare ready ahead of the click.

    Args:
        argv_prefix: the command that starts Python (``[sys.executable]``, ``["ssh", "gpu",
            "python3"]``); ``-m kernel_lens.agent`` is appended.
        log: called with each line the agent writes to stderr (user prints, warnings).
        local: the agent runs on this machine with this package's folder importable.
        cwd: the agent's working directory (the workspace folder).
        spare: keep a warm agent ready for the next job (started by :meth:`prewarm` and after
            each job). ``False`` for a one-job client such as the CLI: nothing outlives it.
    """

    def __init__(
        self,
        argv_prefix: list[str],
        log: Callable[[str], None],
        *,
        local: bool = True,
        cwd: str | None = None,
        spare: bool = True,
    ) -> None:
        self.argv_prefix = list(argv_prefix)
        self.local = local
        self.cwd = cwd
        self.spare = spare
        self._log = log
        self._spare_task: asyncio.Task[_Agent] | None = None
        self._spare_agent: _Agent | None = None
        #: On a CPU-only local machine: a warm template that forks spares in milliseconds.
        self._template: asyncio.Task[_Agent] | None = None
        self._template_agent: _Agent | None = None
        self._template_failures = 0
        #: The ready line of the last fresh (not forked) agent: what a fork must match.
        self._fresh_info: dict[str, Any] = {}
        self._busy: _Agent | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        #: Bumped by :meth:`kill`: a job that was running then starts no spare after it.
        self._generation = 0
        #: The ready line of the agent that ran the last job (python, torch, cuda, device).
        self.info: dict[str, Any] = {}

    @property
    def running(self) -> bool:
        """Whether an agent process (busy, spare, template or starting) is alive."""
        if self._busy is not None and self._busy.alive:
            return True
        return _task_alive(self._spare_task) or _task_alive(self._template)

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

    def _cwd(self) -> str | None:
        return self.cwd if self.cwd and os.path.isdir(self.cwd) else None

    async def _start_agent(self, agent: _Agent | None = None) -> _Agent:
        agent = agent or _Agent(self._log)
        template = self._template
        if _task_alive(template) and template is not None and template.done():
            try:
                await agent.start_forked(template.result())
                if _same_machine(self._fresh_info, agent.info):
                    return agent
                # A fork that lost what a fresh agent has (torch, CUDA): never fork again.
                self._log(
                    "agent template: a forked agent reported "
                    f"{_machine_text(agent.info)} where a fresh one reported "
                    f"{_machine_text(self._fresh_info)}; starting fresh agents from now on"
                )
                self._template_failures = 2
                await agent.kill()
                await self._stop_template()
            except ProfileError as err:
                self._log(f"agent template: {err.message}; starting a fresh agent")
            agent.proc = None
        await agent.start(self._argv(), self._env(), self._cwd())
        self._fresh_info = dict(agent.info)
        self._maybe_start_template(agent.info)
        return agent

    def _maybe_start_template(self, info: dict[str, Any]) -> None:
        """Start the fork template once a local agent has shown a working torch.

        Forking is how a warm, clean spare costs milliseconds instead of seconds. The template
        never touches CUDA (a CUDA context does not survive a fork), so each forked spare creates
        its own: on the H200 that is 0.3 s where a fresh process spends 9.6 s importing torch,
        the profiler and triton (docs/robustness.md). ``KERNEL_LENS_FORK_TEMPLATE=0`` turns it
        off; agents over ssh or srun (not local) always start fresh.
        """
        if not (self.local and self.spare and hasattr(socket, "send_fds")):
            return
        if os.environ.get("KERNEL_LENS_FORK_TEMPLATE", "1") == "0" or not info.get("torch"):
            return
        if _task_alive(self._template) or self._template_failures >= 2:
            return
        if self._template is not None:
            self._template_failures += 1

        template = self._template_agent = _Agent(self._log)
        template.ready_timeout = 3600.0

        async def start() -> _Agent:
            await template.start(self._argv(), self._env(), self._cwd(), template=True)
            return template

        self._template = asyncio.ensure_future(start())
        self._template.add_done_callback(lambda t: None if t.cancelled() else t.exception())

    def _start_spare(self) -> None:
        """Start a spare agent in the background unless one is starting or alive."""
        task = self._spare_task
        if task is not None:
            if not task.done():
                return
            if not task.cancelled() and task.exception() is None and task.result().alive:
                return
        self._spare_agent = _Agent(self._log)
        self._spare_task = asyncio.ensure_future(self._start_agent(self._spare_agent))
        # A spare that fails to start is retried by the next job, which reports the error.
        self._spare_task.add_done_callback(lambda t: None if t.cancelled() else t.exception())

    def prewarm(self) -> None:
        """Make sure a warm agent is starting or ready (non-blocking; needs a running loop)."""
        if not self.spare:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._start_spare()

    async def _take_agent(self) -> _Agent:
        """The ready spare, else a new agent (waited for)."""
        task, self._spare_task = self._spare_task, None
        spare, self._spare_agent = self._spare_agent, None
        if task is not None:
            if not task.done() and spare is not None:
                spare.hurry()
            try:
                agent = await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():
                    # Our caller was cancelled: the spare stays for the next job.
                    self._spare_task, self._spare_agent = task, spare
                    raise
            except ProfileError:
                pass  # started badly (e.g. a bad agent command): try once more, below
            else:
                if agent.alive:
                    return agent
        return await self._start_agent()

    def _pause_template(self, pause: bool) -> bool:
        """Stop (``SIGSTOP``) or continue a template that is still warming up.

        A template warms up under ``SCHED_IDLE``, but on a small machine it would still take the
        free core while a job times its function (and the job would say "busy machine").
        """
        template = self._template_agent
        task = self._template
        if template is None or template.proc is None or task is None:
            return False
        if pause and task.done():
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(template.proc.pid, signal.SIGSTOP if pause else signal.SIGCONT)
            return True
        return False

    async def _stop_template(self) -> None:
        self._pause_template(False)
        self._template_agent = None
        template, self._template = self._template, None
        if template is not None:
            if not template.done():
                template.cancel()
                with contextlib.suppress(BaseException):
                    await template
            elif not template.cancelled() and template.exception() is None:
                await template.result().kill()

    async def kill(self) -> None:
        """Stop every agent of this client (busy, spare, template), with their groups."""
        self._generation += 1
        await self._stop_template()
        task, self._spare_task = self._spare_task, None
        self._spare_agent = None
        busy, self._busy = self._busy, None
        if busy is not None:
            await busy.kill()
        if task is not None:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            elif not task.cancelled() and task.exception() is None:
                await task.result().kill()

    async def close(self) -> None:
        """Stop everything, as at shutdown (the same as :meth:`kill`)."""
        await self.kill()

    async def run(
        self,
        params: dict[str, Any],
        *,
        timeout: float,
        on_progress: Callable[[str, str], None] | None = None,
        cancelled: asyncio.Event | None = None,
        method: str = "profile",
    ) -> dict[str, Any]:
        """Run one job on a fresh agent and return its result object.

        Raises:
            ProfileError: the job's own error, or ``timeout``/``crash``/``cancelled``/``exit``/
                ``interrupted``/``internal``; never another exception (but ``CancelledError``).
        """
        async with self._lock:
            if cancelled is not None and cancelled.is_set():
                raise ProfileError("cancelled", "cancelled before it started")
            agent = await self._wait_cancellable(self._take_agent(), cancelled)
            generation = self._generation
            self._busy = agent
            self.info = agent.info
            try:
                return await self._job(agent, params, timeout, on_progress, cancelled, method)
            except ProfileError:
                raise
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any other failure is still one failed job
                raise ProfileError(
                    "internal", f"agent protocol error: {type(exc).__name__}: {exc}"
                ) from None
            finally:
                self._busy = None
                await agent.kill()
                if self.spare and generation == self._generation:
                    self._start_spare()
                    # Nothing is being measured now: the spare may warm at normal priority.
                    if self._spare_agent is not None:
                        self._spare_agent.hurry()

    async def _wait_cancellable(self, coro: Any, cancelled: asyncio.Event | None) -> _Agent:
        """Await an agent start, giving up when ``cancelled`` is set."""
        start: asyncio.Future[_Agent] = asyncio.ensure_future(coro)
        if cancelled is None:
            return await start
        cancel_wait = asyncio.ensure_future(cancelled.wait())
        both: set[asyncio.Future[Any]] = {start, cancel_wait}
        try:
            done, _ = await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel_wait.cancel()
        if start in done:
            return start.result()
        start.cancel()
        with contextlib.suppress(BaseException):
            agent = await start
            await agent.kill()
        raise ProfileError("cancelled", "cancelled while the agent was starting")

    async def _job(
        self,
        agent: _Agent,
        params: dict[str, Any],
        timeout: float,
        on_progress: Callable[[str, str], None] | None,
        cancelled: asyncio.Event | None,
        method: str,
    ) -> dict[str, Any]:
        proc = agent.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        job_id = next(self._ids)
        path = params.get("path") if isinstance(params.get("path"), str) else None
        agent.flush_suppressed()
        try:
            # ``timeout`` lets the agent dump its stack just before the deadline.
            proc.stdin.write(
                encode({"id": job_id, "method": method, "params": params, "timeout": timeout})
            )
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise ProfileError("crash", "the agent closed its input") from None
        # The next spare warms while this job finishes, but never while it times the function.
        stages = params.get("stages")
        timed_late = method == "sweep" or bool(_TIMED_LATE & set(stages or ()))
        generation = self._generation
        early_spare = self.spare and not timed_late
        if early_spare and method not in ("profile", "sweep"):
            self._start_spare()  # nothing timed in this job
        paused = method in ("profile", "sweep") and self._pause_template(True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        cancel_wait = asyncio.ensure_future(
            cancelled.wait() if cancelled is not None else asyncio.Event().wait()
        )
        try:
            while True:
                read = asyncio.ensure_future(read_message_line(proc.stdout))
                remaining = deadline - loop.time()
                done, _ = await asyncio.wait(
                    {read, cancel_wait},
                    timeout=max(remaining, 0),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if read not in done:
                    read.cancel()
                    if cancel_wait in done:
                        raise ProfileError(
                            "cancelled", "cancelled; the agent was stopped and will restart"
                        )
                    raise self._timeout_error(agent, timeout, path)
                raw = read.result()
                if not raw:
                    code = await proc.wait()
                    await agent.drain_stderr()
                    raise self._crash_error(agent, code, path)
                try:
                    message = decode(raw)
                except ValueError as exc:
                    raise ProfileError(
                        "internal", f"the agent sent a malformed message: {clip(str(exc), 200)}"
                    ) from None
                if message.get("id") != job_id:
                    continue
                if "progress" in message:
                    progress = message["progress"]
                    stage = str(progress.get("stage"))
                    if stage in _AFTER_TIMING and not timed_late and paused:
                        paused = not self._pause_template(False)
                    if early_spare and stage in _AFTER_TIMING and generation == self._generation:
                        self._start_spare()
                    if on_progress is not None:
                        on_progress(stage, str(progress.get("message")))
                elif "result" in message:
                    result: dict[str, Any] = message["result"]
                    return result
                elif "error" in message:
                    raise error_from_object(message["error"])
        finally:
            cancel_wait.cancel()
            if paused:
                self._pause_template(False)

    def _main_thread(self, agent: _Agent) -> int | None:
        ident = agent.info.get("main_thread")
        return ident if isinstance(ident, int) else None

    def _timeout_error(self, agent: _Agent, timeout: float, path: str | None) -> ProfileError:
        frames = fault_frames(agent.recent, main_thread=self._main_thread(agent))
        frame = failing_frame(frames, path)
        where = f", at line {frame.line} {where_text(frames, path)}" if frame else ""
        if not frame and frames:
            where = f", {where_text(frames)}"
        return ProfileError(
            "timeout",
            f"no result after {timeout:g} s (kernelLens.timeoutSeconds){where}; "
            "the agent was stopped and will restart for the next job",
            frame.line if frame else None,
        )

    def _crash_error(self, agent: _Agent, code: int | None, path: str | None) -> ProfileError:
        frames = fault_frames(agent.recent, main_thread=self._main_thread(agent))
        frame = failing_frame(frames, path)
        if frames:
            fatal = next(
                (x for x in reversed(agent.recent) if x.startswith("Fatal Python error")), ""
            )
            detail = f"{fatal + '; ' if fatal else ''}last frames {where_text(frames, path)}"
        else:
            detail = f"last output: {agent.tail_text()}"
        return ProfileError(
            "crash",
            f"the agent process died during the job ({describe_exit(code)})"
            + (f" at line {frame.line}" if frame else "")
            + f"; {detail}",
            frame.line if frame else None,
        )
