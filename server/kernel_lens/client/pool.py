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
import contextlib
import itertools
import logging
import os
import re
import signal
import socket
import time
from collections.abc import Callable
from typing import Any

from kernel_lens import early_agent
from kernel_lens.client.faults import describe_exit, failing_frame, fault_frames, where_text
from kernel_lens.client.process import AgentProcess, exit_code
from kernel_lens.client.remote import (
    bootstrap_argv,
    dropped_connection,
    package_payload,
    remote_name,
    rewrite_paths,
    save_returned_file,
    workspace_bundle,
)
from kernel_lens.wire.envelope import (
    STOP,
    ErrorMessage,
    JobMessage,
    PartialMessage,
    PartialUpdate,
    ProgressMessage,
    ReadyMessage,
    RemoteJobFields,
    ResultMessage,
    ReturnedFile,
    clip,
    decode,
    encode,
    error_from_object,
    job_reply,
    merge_partial,
    read_message_line,
)
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.processes import (
    ChildProcess,
    children_from_lines,
    clock_ticks_now,
    reap_orphans,
    set_child_subreaper,
    waiting_text,
)

__all__ = ["AgentClient", "PartialCallback"]

logger = logging.getLogger(__name__)

#: Tests only (docs/testing.md): the Unix socket of a test session's shared fork template
#: (``python -m kernel_lens.agent`` with ``KERNEL_LENS_AGENT_FORK_SERVER_LISTEN``). A local agent
#: is forked there instead of started fresh when the server agrees that the fork is what a fresh
#: agent would be; unset (always, for users) changes nothing.
FORK_SERVER_ENV = "KERNEL_LENS_AGENT_FORK_SERVER"

#: Local jobs running in this process; while there is one, the process is the subreaper of
#: their agents' orphans (and only then: a subreaper must wait for what it adopts, and the
#: orphans of anything else this process runs go to init as before).
_JOBS_RUNNING = [0]


def _subreaper_for_jobs(delta: int) -> bool:
    """Count a local job in (``+1``) or out (``-1``); the process is the subreaper while any
    runs. Whether it is one now."""
    before = _JOBS_RUNNING[0]
    _JOBS_RUNNING[0] = max(0, before + delta)
    if before == 0 and _JOBS_RUNNING[0] > 0:
        return set_child_subreaper(True)
    if before > 0 and _JOBS_RUNNING[0] == 0:
        set_child_subreaper(False)
    return _JOBS_RUNNING[0] > 0


#: ``on_partial(result so far, final keys, stage)``: a job's result before its end.
PartialCallback = Callable[[dict[str, Any], list[str], str], None]

#: Seconds a remote agent's ``ssh``/``srun`` has to end the remote side after a ``SIGTERM``.
REMOTE_STOP_S = 5.0
#: Seconds a cancelled whole-script run has to send the part that ran before it is killed.
STOP_GRACE_S = 15.0
#: Progress stages after a profile's timing: the next spare may start warming meanwhile (the
#: profiled pass, ``ops`` and ``trace``, now runs *before* the timing: the runner says ``timed``
#: once the timing, CUDA graph included, is over).
_AFTER_TIMING = frozenset({"timed", "done"})
#: Stages that time the function again later in the job (the spare waits for the end).
_TIMED_LATE = frozenset({"compiled", "sweep"})
#: A line of a Python traceback naming the exception (``ModuleNotFoundError: No module …``).
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b(: .*)?$")


def warming_text(agent: AgentProcess) -> str | None:
    """``starting the agent: importing torch… 2.1 s`` for an agent still warming up (a fork is
    said as a fork), ``None`` before it has said anything."""
    if agent.started_at is None:
        return None
    phase = agent.warming or "starting Python"
    seconds = time.monotonic() - agent.started_at
    return f"starting the agent: {phase}… {seconds:.1f} s"


def _task_alive(task: asyncio.Task[AgentProcess] | None) -> bool:
    """The task is starting an agent, or has started one that is alive."""
    if task is None:
        return False
    if not task.done():
        return True
    return not task.cancelled() and task.exception() is None and task.result().alive


def _machine_text(info: ReadyMessage) -> str:
    return f"torch {info.get('torch')}, cuda {info.get('cuda')}"


def _same_machine(fresh: ReadyMessage, forked: ReadyMessage) -> bool:
    """Whether a forked agent has what the fresh agent had (torch, and CUDA where it was)."""
    if not fresh:
        return True
    return bool(forked.get("torch")) == bool(fresh.get("torch")) and bool(
        forked.get("cuda")
    ) == bool(fresh.get("cuda"))


class _SpareDuringJob:
    """When the next spare may warm while a job runs: as soon as the job has finished timing
    the function (or at once for a job that times nothing), never while it times; a template
    still warming up is paused (``SIGSTOP``) meanwhile.

    Args:
        client: the client running the job.
        method: the job's method.
        stages: the job's stages (``None``: the default ones).
    """

    def __init__(self, client: AgentClient, method: str, stages: Any) -> None:
        self._client = client
        self._timed_late = method == "sweep" or bool(_TIMED_LATE & set(stages or ()))
        self._generation = client._generation
        self._early = client.spare and not self._timed_late
        if self._early and method not in ("profile", "sweep"):
            client._start_spare()  # nothing timed in this job
        self._paused = method in ("profile", "sweep") and client._pause_template(True)

    def at_stage(self, stage: str) -> None:
        """The job reported progress at ``stage``."""
        client = self._client
        if stage in _AFTER_TIMING and not self._timed_late and self._paused:
            self._paused = not client._pause_template(False)
        if self._early and stage in _AFTER_TIMING and self._generation == client._generation:
            client._start_spare()

    def end(self) -> None:
        """The job ended (however): a template paused for it goes on warming up."""
        if self._paused:
            self._client._pause_template(False)


async def _write(
    stdin: asyncio.StreamWriter, data: bytes, error: ProfileError | None = None
) -> None:
    """Write ``data`` to an agent's input; ``error`` (a ``crash``: the agent closed its input)
    when the agent has closed it."""
    try:
        stdin.write(data)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        raise error or ProfileError("crash", "the agent closed its input") from None


async def _stop_script(
    stdin: asyncio.StreamWriter,
    err: ProfileError,
    cancel_wait: asyncio.Future[Any],
    deadline: float,
) -> tuple[asyncio.Future[Any], float]:
    """A whole-script run cancelled (``err``): it stops at its next line and sends the part that
    ran; an agent that does not answer soon is killed, as any cancel. The job's new cancel wait
    (it waits on no cancel now) and deadline (at most :data:`STOP_GRACE_S` away)."""
    await _write(stdin, STOP + b"\n", err)
    cancel_wait.cancel()
    loop_time = asyncio.get_running_loop().time()
    return asyncio.ensure_future(asyncio.Event().wait()), min(deadline, loop_time + STOP_GRACE_S)


class _Replies:
    """What one job's replies said so far: its progress (told on), the result's parts (merged,
    told on), the files that came back (a remote agent's), then its result or error.

    Args:
        agent: the agent running the job (its last progress names a timeout's place).
        spare: when the next spare may warm.
        on_progress: told each ``(stage, message)``.
        on_partial: told the result so far at each part (a new dict each time).
    """

    def __init__(
        self,
        agent: AgentProcess,
        spare: _SpareDuringJob,
        on_progress: Callable[[str, str], None] | None,
        on_partial: PartialCallback | None,
    ) -> None:
        self._agent = agent
        self._spare = spare
        self._on_progress = on_progress
        self._on_partial = on_partial
        self._known: dict[str, Any] = {}
        self._final: list[str] = []
        #: A returned file's path on the agent's machine → its copy here.
        self.returned: dict[str, str] = {}
        #: The job's result, once :meth:`ended` said so (as the agent sent it: an object, unless
        #: the agent is broken; the caller checks its shape).
        self.result: dict[str, Any] = {}

    def ended(self, reply: ProgressMessage | PartialMessage | ResultMessage | ErrorMessage) -> bool:
        """Take one reply; whether it ended the job with its result (:attr:`result`).

        Raises:
            ProfileError: the job's error.
        """
        if "progress" in reply:
            progress = reply["progress"]
            stage = str(progress.get("stage"))
            self._agent.last_progress = str(progress.get("message") or stage)
            self._spare.at_stage(stage)
            if self._on_progress is not None:
                self._on_progress(stage, str(progress.get("message")))
        elif "partial" in reply:
            self._partial(reply["partial"])
        elif "result" in reply:
            self.result = rewrite_paths(reply["result"], self.returned)
            return True
        else:
            raise error_from_object(reply["error"])
        return False

    def _partial(self, update: PartialUpdate) -> None:
        try:
            stage = merge_partial(self._known, self._final, update)
        except (ValueError, AttributeError):
            return  # a malformed part is skipped: the whole result still comes
        if self._on_partial is not None:
            try:
                self._on_partial(dict(self._known), list(self._final), stage)
            except Exception:  # the consumer's failure must not end the job
                logger.exception("on_partial failed")


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
        ship_agent: (not ``local``) the agent's code travels on its stdin to a ``python -c``
            bootstrap (the default: the far side needs no ``kernel_lens``); ``False``: the
            command runs ``-m kernel_lens.agent`` itself (``kernel_lens`` is there).
    """

    def __init__(
        self,
        argv_prefix: list[str],
        log: Callable[[str], None],
        *,
        local: bool = True,
        cwd: str | None = None,
        spare: bool = True,
        ship_agent: bool | None = None,
    ) -> None:
        self.argv_prefix = list(argv_prefix)
        self.local = local
        self.ship_agent = not local if ship_agent is None else ship_agent and not local
        self.cwd = cwd
        self.spare = spare
        self._log = log
        self._spare_task: asyncio.Task[AgentProcess] | None = None
        self._spare_agent: AgentProcess | None = None
        #: On a CPU-only local machine: a warm template that forks spares in milliseconds.
        self._template: asyncio.Task[AgentProcess] | None = None
        self._template_agent: AgentProcess | None = None
        self._template_failures = 0
        #: The ready line of the last fresh (not forked) agent: what a fork must match.
        self._fresh_info = ReadyMessage()
        self._busy: AgentProcess | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        #: Bumped by :meth:`kill`: a job that was running then starts no spare after it.
        self._generation = 0
        #: The ready line of the agent that ran the last job (python, torch, cuda, device).
        self.info = ReadyMessage()

    @property
    def running(self) -> bool:
        """Whether an agent process (busy, spare, template or starting) is alive."""
        if self._busy is not None and self._busy.alive:
            return True
        return _task_alive(self._spare_task) or _task_alive(self._template)

    def _env(self) -> dict[str, str]:
        # The server's folder (in the .vsix: bundled/libs with pygls, attrs, typing_extensions)
        # must not shadow the user's packages in the agent: it goes last, via the boot line; a
        # command that runs ``-m kernel_lens.agent`` itself (and keeps env) gets it on the path.
        # A shipped agent gets this package through its stdin (client/remote.py), not the path.
        return early_agent.agent_env(
            dict(os.environ), keep_package=not self.local and not self.ship_agent
        )

    def _argv(self) -> list[str]:
        if self.local:
            return early_agent.agent_argv(self.argv_prefix)
        if not self.ship_agent:
            return [*self.argv_prefix, "-m", "kernel_lens.agent"]
        # Another machine (ssh, srun): a bootstrap that receives this package on its stdin.
        return bootstrap_argv(self.argv_prefix)

    def _cwd(self) -> str | None:
        return self.cwd if self.cwd and os.path.isdir(self.cwd) else None

    async def _start_agent(self, agent: AgentProcess | None = None) -> AgentProcess:
        agent = agent or AgentProcess(self._log)
        if not self.local:
            agent.graceful_s = REMOTE_STOP_S
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
        fork_server = os.environ.get(FORK_SERVER_ENV) if self.local else None
        if fork_server:
            try:
                await agent.start_from_fork_server(
                    fork_server, self._argv(), self._env(), self._cwd()
                )
                return agent
            except ProfileError:
                agent.proc = None  # refused or not there: a fresh agent, as without it
        early = early_agent.take(self._argv(), self._cwd()) if self.local else None
        try:
            if early is not None:
                # Started with the server, before its imports: already warming (or warm).
                self._log(f"agent: taking the agent started with the server (pid {early.proc.pid})")
                await agent.adopt(early)
            else:
                await agent.start(
                    self._argv(),
                    self._env(),
                    self._cwd(),
                    preamble=package_payload() if self.ship_agent else b"",
                )
        except ProfileError as err:
            if not self.local and dropped_connection(self.argv_prefix, None, agent.recent):
                raise ProfileError(
                    "crash",
                    f"cannot reach {remote_name(self.argv_prefix)} (kernelLens.agentCommand): "
                    f"{agent.tail_text()}",
                ) from None
            raise err from None
        self._fresh_info = agent.info.copy()
        self._maybe_start_template(agent.info)
        return agent

    def _maybe_start_template(self, info: ReadyMessage) -> None:
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

        template = self._template_agent = AgentProcess(self._log)
        template.ready_timeout = 3600.0

        async def start() -> AgentProcess:
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
        self._spare_agent = AgentProcess(self._log)
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

    async def _take_agent(
        self, on_progress: Callable[[str, str], None] | None = None
    ) -> AgentProcess:
        """The ready spare, else a new agent (waited for). While the job waits for an agent that
        is still warming up, ``on_progress`` is told what it waits for, every half second
        (``starting the agent: importing torch… 2.1 s``); never a second cold agent."""
        task, self._spare_task = self._spare_task, None
        spare, self._spare_agent = self._spare_agent, None
        if task is not None:
            if not task.done() and spare is not None:
                spare.hurry()
            try:
                if spare is not None and on_progress is not None:
                    await self._say_while_warming(task, spare, on_progress)
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
        agent = AgentProcess(self._log)
        start = asyncio.ensure_future(self._start_agent(agent))
        try:
            if on_progress is not None:
                await self._say_while_warming(start, agent, on_progress)
            return await asyncio.shield(start)
        except asyncio.CancelledError:
            start.cancel()
            with contextlib.suppress(BaseException):
                await agent.kill()
            raise

    async def _say_while_warming(
        self,
        task: asyncio.Future[AgentProcess],
        agent: AgentProcess,
        on_progress: Callable[[str, str], None],
    ) -> None:
        """Until ``task`` is done: tell ``on_progress`` the warming phase of ``agent``."""
        said = None
        while not task.done():
            await asyncio.wait({task}, timeout=0.5)
            if task.done():
                return
            text = warming_text(agent)
            if text is not None and text != said:
                said = text
                on_progress("agent", text)

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
            await busy.kill(with_descendants=self.local)
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
        limit_name: str = "kernelLens.timeoutSeconds",
        on_partial: PartialCallback | None = None,
    ) -> dict[str, Any]:
        """Run one job on a fresh agent and return its result object.

        ``limit_name`` is the setting that ``timeout`` came from, named in a timeout's message.
        ``on_partial(result so far, final keys, stage)`` gets the parts of the result that the
        job streams before its end (a profile's lines first, then its converging timing): the
        result so far is a new dict each time, merged from every ``partial`` message.

        Raises:
            ProfileError: the job's own error, or ``timeout``/``crash``/``cancelled``/``exit``/
                ``interrupted``/``internal``; never another exception (but ``CancelledError``).
        """
        async with self._lock:
            if cancelled is not None and cancelled.is_set():
                raise ProfileError("cancelled", "cancelled before it started")
            agent = await self._wait_cancellable(
                self._take_agent(on_progress), cancelled, (timeout, limit_name)
            )
            job_ticks = clock_ticks_now()
            if self.local:
                # What the job starts in a new session outlives a crashed agent: while a job
                # runs this process is their subreaper, and stops them after it (``_reap``).
                _subreaper_for_jobs(+1)
            generation = self._generation
            self._busy = agent
            self.info = agent.info
            remote: tuple[RemoteJobFields, str | None] | None = None
            try:
                if not self.local:
                    # Reading and parsing the workspace's modules: off the server's event loop.
                    loop = asyncio.get_running_loop()
                    params, remote, notes = await loop.run_in_executor(
                        None, self._remote_job, params
                    )
                    for note in notes:
                        self._log(f"kernel-lens: {note}")
                return await self._job(
                    agent, params, (timeout, limit_name), on_progress, cancelled, method,
                    on_partial, remote,
                )  # fmt: skip
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
                await agent.kill(with_descendants=self.local)
                if self.local:
                    # An agent that died (a crash, ``os._exit``) or was killed leaves what its job
                    # started in a new session orphaned onto this process, their subreaper:
                    # stopped and waited for here, as the agent would have (issue 39 item 4).
                    gone = agent.proc.pid if agent.proc is not None else None
                    try:
                        await asyncio.get_running_loop().run_in_executor(
                            None, self._reap, job_ticks, gone
                        )
                    finally:
                        _subreaper_for_jobs(-1)
                if self.spare and generation == self._generation:
                    self._start_spare()
                    # Nothing is being measured now: the spare may warm at normal priority.
                    if self._spare_agent is not None:
                        self._spare_agent.hurry()

    def _reap(self, since_ticks: int, agent_pid: int | None) -> None:
        """Stop the processes a finished job left orphaned onto this process, and wait for them
        (a thread). The agent itself, and the client's other agents, are asyncio's to wait for."""
        known = [p.proc.pid for p in self._processes() if p.proc is not None]
        known += [agent_pid] if agent_pid is not None else []
        killed = reap_orphans(os.getpid(), since_ticks=since_ticks, known=known)
        if killed:
            self._log(f"kernel-lens: stopped {killed} process(es) the job left running")

    def _processes(self) -> list[AgentProcess]:
        """The agent processes this client holds (spare, template, busy)."""
        held = [self._spare_agent, self._busy, getattr(self, "_template_agent", None)]
        return [p for p in held if isinstance(p, AgentProcess)]

    def _remote_job(
        self, params: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[RemoteJobFields, str | None], list[str]]:
        """A job for an agent on another machine: its paths absolute, the workspace files it
        needs in its ``bundle``, the files its result names sent back; a ``trace_dir`` of this
        machine is where the trace lands here (the agent writes into its own cache).

        Returns:
            The params, (the message's extra keys, the local trace folder), and notes for the
            log (files left out of the bundle). Runs on a worker thread: it logs nothing.
        """
        params = dict(params)
        trace_dir = params.pop("trace_dir", None)
        extra = RemoteJobFields(send_files=True)
        notes: list[str] = []
        path = params.get("path")
        if isinstance(path, str):
            params["path"] = path = os.path.abspath(path)
            driver = params.get("driver")
            drivers = []
            if isinstance(driver, str):
                params["driver"] = driver = os.path.abspath(driver)
                drivers.append(driver)
            workspace = params.get("workspace")
            roots = [str(w) for w in workspace] if isinstance(workspace, list) else []
            roots += [self.cwd or os.getcwd()]
            text = params.get("text") if isinstance(params.get("text"), str) else None
            files, notes = workspace_bundle(path, text, roots, extra=drivers)
            extra["bundle"] = files
        return params, (extra, trace_dir if isinstance(trace_dir, str) else None), notes

    async def _wait_cancellable(
        self,
        coro: Any,
        cancelled: asyncio.Event | None,
        limit: tuple[float, str] | None = None,
    ) -> AgentProcess:
        """Await an agent start, giving up when ``cancelled`` is set or after the job's own
        time limit (``limit``: seconds and the setting they came from): an agent command that
        never answers fails the job at its limit, not at the start's own 180 s (issue 39)."""
        start: asyncio.Future[AgentProcess] = asyncio.ensure_future(coro)
        cancel_wait = asyncio.ensure_future(
            cancelled.wait() if cancelled is not None else asyncio.Event().wait()
        )
        both: set[asyncio.Future[Any]] = {start, cancel_wait}
        try:
            done, _ = await asyncio.wait(
                both,
                timeout=limit[0] if limit is not None else None,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            cancel_wait.cancel()
        if start in done:
            return start.result()
        start.cancel()
        with contextlib.suppress(BaseException):
            agent = await start
            await agent.kill()
        if cancel_wait in done:
            raise ProfileError("cancelled", "cancelled while the agent was starting")
        assert limit is not None
        command = " ".join(self.argv_prefix) or "the agent"
        raise ProfileError(
            "timeout",
            f"the agent did not start within {limit[0]:g} s ({limit[1]}): `{command}` never "
            "said it was ready",
        )

    async def _job(
        self,
        agent: AgentProcess,
        params: dict[str, Any],
        limit: tuple[float, str],
        on_progress: Callable[[str, str], None] | None,
        cancelled: asyncio.Event | None,
        method: str,
        on_partial: PartialCallback | None = None,
        remote: tuple[RemoteJobFields, str | None] | None = None,
    ) -> dict[str, Any]:
        """Send the job to ``agent`` and read its messages until its result or error.

        ``limit`` is the time limit in seconds and the name of the setting it came from;
        ``remote`` (an agent on another machine): the message's extra keys and the local folder
        for the trace that comes back.
        """
        proc = agent.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        job_id = next(self._ids)
        path = params.get("path") if isinstance(params.get("path"), str) else None
        agent.flush_suppressed()
        # ``timeout`` lets the agent dump its stack just before the deadline.
        extra = remote[0] if remote is not None else RemoteJobFields()
        message = JobMessage(id=job_id, method=method, params=params, timeout=limit[0], **extra)
        await _write(proc.stdin, encode(message))
        spare = _SpareDuringJob(self, method, params.get("stages"))
        replies = _Replies(agent, spare, on_progress, on_partial)
        deadline = asyncio.get_running_loop().time() + limit[0]
        cancel_wait: asyncio.Future[Any] = asyncio.ensure_future(
            cancelled.wait() if cancelled is not None else asyncio.Event().wait()
        )
        stoppable = method == "profile" and bool(params.get("script"))
        stopping = False
        try:
            while True:
                try:
                    decoded = await self._next_message(agent, deadline, cancel_wait, limit, path)
                except ProfileError as err:
                    if stopping:  # no part came in time: cancelled, as any cancel
                        raise ProfileError(
                            "cancelled", "cancelled; the agent was stopped and will restart"
                        ) from None
                    if err.kind != "cancelled" or not stoppable:
                        raise
                    stoppable, stopping = False, True
                    cancel_wait, deadline = await _stop_script(
                        proc.stdin, err, cancel_wait, deadline
                    )
                    continue
                reply = job_reply(decoded, job_id)
                if reply is None:
                    continue
                if "file" in reply:
                    self._keep_file(reply["file"], remote[1] if remote else None, replies.returned)
                elif replies.ended(reply):
                    return replies.result
        finally:
            cancel_wait.cancel()
            spare.end()

    def _keep_file(
        self, item: ReturnedFile, trace_dir: str | None, returned: dict[str, str]
    ) -> None:
        """Write a file the remote agent sent back into the local cache (the result will name
        the copy); one that cannot be kept is logged and the result keeps the remote path."""
        try:
            local = save_returned_file(item, trace_dir)
        except Exception as exc:
            where = item.get("path") if isinstance(item, dict) else "a file"
            self._log(f"kernel-lens: {where} from {remote_name(self.argv_prefix)} not kept: {exc}")
            return
        returned[str(item["path"])] = local

    async def _next_message(
        self,
        agent: AgentProcess,
        deadline: float,
        cancel_wait: asyncio.Future[Any],
        limit: tuple[float, str],
        path: str | None,
    ) -> dict[str, Any]:
        """The agent's next message, read until ``deadline`` unless the job is cancelled first.

        Raises:
            ProfileError: ``cancelled``, ``timeout``, ``crash`` (the agent's output ended) or
                ``internal`` (a message that is not a JSON object, or one too large).
        """
        proc = agent.proc
        assert proc is not None and proc.stdout is not None
        read = asyncio.ensure_future(read_message_line(proc.stdout))
        remaining = deadline - asyncio.get_running_loop().time()
        done, _ = await asyncio.wait(
            {read, cancel_wait},
            timeout=max(remaining, 0),
            return_when=asyncio.FIRST_COMPLETED,
        )
        if read not in done:
            read.cancel()
            if cancel_wait in done:
                raise ProfileError("cancelled", "cancelled; the agent was stopped and will restart")
            raise self._timeout_error(agent, limit, path)
        raw = read.result()
        if not raw:
            code = await exit_code(proc)
            await agent.drain_stderr()
            raise self._crash_error(agent, code, path)
        try:
            return decode(raw)
        except ValueError as exc:
            raise ProfileError(
                "internal", f"the agent sent a malformed message: {clip(str(exc), 200)}"
            ) from None

    def _main_thread(self, agent: AgentProcess) -> int | None:
        ident = agent.info.get("main_thread")
        return ident if isinstance(ident, int) else None

    def _timeout_error(
        self, agent: AgentProcess, limit: tuple[float, str], path: str | None
    ) -> ProfileError:
        timeout, name = limit
        frames = fault_frames(agent.recent, main_thread=self._main_thread(agent))
        frame = failing_frame(frames, path)
        where = f", at line {frame.line} {where_text(frames, path)}" if frame else ""
        if not frame and where_text(frames):
            where = f", {where_text(frames)}"
        elif not frame and agent.last_progress:
            where = f", while {agent.last_progress}"
        return ProfileError(
            "timeout",
            f"no result after {timeout:g} s ({name}){where}{self._waiting_on(agent)}; "
            "the agent was stopped and will restart for the next job",
            frame.line if frame else None,
        )

    def _waiting_on(self, agent: AgentProcess) -> str:
        """``; waiting on 4 child processes (pids …: python -c from multiprocessing.spawn …)``
        and the last error a process wrote, when the job still had processes running: those
        the agent listed just before the deadline, else (a local agent whose Python was stuck)
        those found below it now."""
        children: list[ChildProcess] | None = children_from_lines(agent.recent)
        if not children and self.local:
            with contextlib.suppress(Exception):
                children = agent.job_processes()
        if not children:
            return ""
        text = f"; {waiting_text(children)}"
        error = next((x for x in reversed(agent.recent) if _ERROR_LINE.match(x)), None)
        if error is not None:
            text += f"; the last error on the output: {clip(error.strip(), 200)}"
        return text

    def _crash_error(self, agent: AgentProcess, code: int | None, path: str | None) -> ProfileError:
        frames = fault_frames(agent.recent, main_thread=self._main_thread(agent))
        if (
            not self.local
            and not frames
            and dropped_connection(self.argv_prefix, code, agent.recent)
        ):
            return ProfileError(
                "crash",
                f"the connection to {remote_name(self.argv_prefix)} dropped: "
                f"{agent.tail_text(2)} ({describe_exit(code)}); the next job starts a new agent",
            )
        frame = failing_frame(frames, path)
        if frames:
            fatal = next(
                (x for x in reversed(agent.recent) if x.startswith("Fatal Python error")), ""
            )
            frames_text = where_text(frames, path)
            detail = (
                f"{fatal + '; ' if fatal else ''}last frames {frames_text}"
                if frames_text
                else f"{fatal + '; ' if fatal else ''}last output: {agent.tail_text()}"
            )
        else:
            detail = f"last output: {agent.tail_text()}"
        return ProfileError(
            "crash",
            f"the agent process died during the job ({describe_exit(code)})"
            + (f" at line {frame.line}" if frame else "")
            + f"; {detail}",
            frame.line if frame else None,
        )
