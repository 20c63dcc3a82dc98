"""``python -m kernel_lens.agent``: the profiling process, warm before its job comes.

It imports torch, starts and stops the profiler once (its first start imports ``torch._inductor``,
about a second) and initialises CUDA when present, *then* says ``ready``: the parent keeps it as a
spare and sends it one job (docs/robustness.md). The protocol uses the process's original stdin
and stdout; fd 0 becomes ``/dev/null`` and fd 1 and ``sys.stdout`` point at stderr, so user code
can neither read the protocol nor corrupt it — the server shows stderr in its log.

With ``KERNEL_LENS_AGENT_TEMPLATE_FD`` set (a local machine), the process is a fork *template*
instead: warm (torch, the profiler, triton imported), never running user code nor touching CUDA,
it forks one such agent per request, on pipes the parent passes over a socket; the forked agent
initialises CUDA itself (0.3 s on the H200).

Stopping a job stops the user's code wherever it runs: a thread reads the protocol input, and
when it closes (the server killed the local ``ssh`` that carried it, or the server died) the
agent kills its process group at once, busy or not. ``faulthandler`` prints the stack on a crash,
and just before a job's deadline, so the parent can name the user's line that was running.

A job agent is a child subreaper: every process its job starts — in a new session, or orphaned by
a double fork — stays below it, is named in a timeout's message (the processes the job was
waiting on) and is killed when the job ends (:mod:`kernel_lens.wire.processes`). The protocol's
descriptors are guarded (:mod:`kernel_lens.agent.channel`): user code that closes them ends the
job with a ``crash`` error on its line.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import importlib
import os
import platform
import queue
import signal
import socket
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any, BinaryIO, NoReturn

from kernel_lens.agent import fork_socket, remote
from kernel_lens.agent.channel import ChannelGuard, send_on
from kernel_lens.agent.deadline import request_stop, set_job_timeout
from kernel_lens.agent.engine import METHODS, dispatch
from kernel_lens.agent.errors import format_exception
from kernel_lens.agent.phases import mark, process_start
from kernel_lens.wire.envelope import (
    HURRY,
    STOP,
    AgentMessage,
    ErrorMessage,
    ExitMessage,
    FileMessage,
    JobMessage,
    PartialMessage,
    PartialUpdate,
    ProgressMessage,
    ProgressUpdate,
    ReadyMessage,
    ResultMessage,
    SpawnedMessage,
    WarmingMessage,
    decode_job,
    encode,
    error_object,
)
from kernel_lens.wire.errors import ErrorKind, ErrorObject, ProfileError
from kernel_lens.wire.processes import (
    children_line,
    descendants,
    kill_descendants,
    reap_orphans,
    set_child_subreaper,
)

#: Our modules a profile job imports (pandas included), imported while the agent is a spare.
_WARM_MODULES = (
    "kernel_lens.agent.engine",
    "kernel_lens.agent.runner",
    "kernel_lens.agent.stages.target",
    "kernel_lens.agent.stages.timing",
    "kernel_lens.agent.stages.ops",
    "kernel_lens.analysis.line_attribution",
)
#: Imported once ``ready`` is said and no job is waiting (a job agent), or before it (a
#: template): pandas (~0.3-1 s), which a profile needs only after its per-line ops are sent (the
#: trace's summary). A cold click that comes while the agent warms up gets its first lens
#: without waiting for it (issue 36).
_IDLE_MODULES = ("kernel_lens.analysis.trace_summary",)
#: Seconds a ready agent waits for a job sent on its ``ready`` before its idle imports.
_JOB_GRACE_S = 0.3


def _take_protocol_channels() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's (input, output) streams; user code gets /dev/null and stderr instead."""
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    return os.fdopen(proto_in, "rb", buffering=0), os.fdopen(proto_out, "wb", buffering=0)


#: Set in a job agent (not a fork template, whose descendants are the next jobs' agents).
_JOB_AGENT = False


def _end_now() -> None:
    """Stop this agent and everything it started, at once (the parent is gone)."""
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    with contextlib.suppress(Exception):
        remote.cleanup()
    if _JOB_AGENT:
        # New sessions and double-forked daemons too: they are below this subreaper.
        with contextlib.suppress(Exception):
            kill_descendants(os.getpid())
    if os.getpgrp() == os.getpid():
        with contextlib.suppress(OSError):
            os.killpg(0, signal.SIGKILL)
    os._exit(0)


def _scheduling(policy_name: str, *, all_threads: bool = True) -> None:
    """Put every thread of this process under ``SCHED_IDLE`` or back to ``SCHED_OTHER`` (Linux).

    A spare warms up under ``SCHED_IDLE``: it only takes CPU time nobody else wants, so it does
    not disturb the job that is running meanwhile. A job (or a ``hurry`` from a parent waiting
    for this spare) puts every thread back to the normal policy, which an unprivileged process may
    do (its nice value is unchanged).
    """
    policy = getattr(os, policy_name, None)
    if policy is None or not hasattr(os, "sched_setscheduler"):
        return
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")] if all_threads else [0]
    except OSError:
        tids = [0]
    for tid in tids:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(tid, policy, os.sched_param(0))


def _read_requests(stream: BinaryIO, inbox: queue.Queue[bytes]) -> None:
    """The watchdog: forward request lines; when the input closes, end the agent."""
    parts: list[bytes] = []
    while True:
        try:
            chunk = stream.read(1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            _end_now()
            return
        *lines, rest = chunk.split(b"\n")
        for line in lines:
            parts.append(line)
            request = b"".join(parts)
            parts.clear()
            if request.strip() == HURRY:
                _scheduling("SCHED_OTHER")
            elif request.strip() == STOP:
                request_stop()
            else:
                inbox.put(request)
        if rest:
            parts.append(rest)


def _warm_up(
    ready: ReadyMessage, *, cuda: bool = True, say: Callable[[str], None] | None = None
) -> None:
    """Import torch and our stages, initialise CUDA (unless ``cuda`` is false: a fork template
    must not touch CUDA) and start the profiler once.

    ``say`` is told each phase as it starts (``importing torch``), so a job waiting for this
    agent can say what it waits for."""
    began = time.perf_counter()

    def tell(phase: str) -> None:
        mark(phase)
        if say is not None:
            say(phase)

    try:
        tell("importing torch")
        import torch

        mark("torch imported")

        from kernel_lens.agent import profiler_start

        # the profiler's first start would import torch.compile's compiler (2-5 s) for one flag
        profiler_start.install()
        # what is timed after a profiler pass must not run with CUPTI still attached
        ready["cupti_teardown"] = profiler_start.release_cupti_after_each_profile()
        ready["torch"] = torch.__version__
        ready["cuda"] = bool(cuda and torch.cuda.is_available())
        if ready["cuda"]:
            tell("initialising CUDA")
            ready["device"] = torch.cuda.get_device_name()
            torch.cuda.init()
            mark("CUDA context made")
    except Exception as exc:  # a missing torch is reported per job, not fatal here
        ready["torch"] = None
        ready["torch_error"] = f"{type(exc).__name__}: {exc}"
        return
    if not cuda:
        _warm_template(ready, began)
        return
    try:
        tell("starting the profiler once")
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if ready["cuda"]:
            activities.append(ProfilerActivity.CUDA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with profile(activities=activities, record_shapes=True):
                torch.ones(2).add_(1)
    except Exception as exc:  # the job will meet (and report) the same problem
        ready["profiler_error"] = f"{type(exc).__name__}: {exc}"
    mark("profiler's first start done")
    tell("importing Kernel Lens's stages")
    for name in _WARM_MODULES:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    ready["warm_s"] = round(time.perf_counter() - began, 3)


def _warm_template(ready: ReadyMessage, began: float) -> None:
    """The rest of a fork template's warm-up (torch imported at ``began``): even a CPU-only
    profiler start initialises CUPTI and with it the CUDA driver, which a forked child cannot
    use ("CUDA error: initialization error", seen on the H200). Import what the profiler's
    first start imports, and our stages; each fork starts the profiler once. (Inductor is not
    among them: profiler_start keeps the profiler from importing it.)"""
    for name in ("torch.profiler", *_WARM_MODULES, *_IDLE_MODULES):
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    ready["warm_s"] = round(time.perf_counter() - began, 3)
    mark("template warm")


def _error(
    kind: ErrorKind, message: str, line: int | None = None, tb: str | None = None
) -> ErrorObject:
    """The envelope's error object (message and traceback clipped)."""
    return error_object(ProfileError(kind, message, line, tb))


def _user_line(exc: BaseException, path: object) -> int | None:
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return line


#: Set (to the fd of a socket) for a fork template; removed at once, so spares do not see it.
TEMPLATE_ENV = "KERNEL_LENS_AGENT_TEMPLATE_FD"


def _reap(send: Callable[[AgentMessage], None]) -> None:
    """The template's reaper: report each spare's exit status (``{"event": "exit", …}``)."""
    for pid, status, _cpu in fork_socket.reaped():
        send(ExitMessage(event="exit", pid=pid, code=os.waitstatus_to_exitcode(status)))


def _template(sock_fd: int) -> int:
    """A warm template on a local machine: forks a ready-to-warm spare per request.

    The template imports torch and our stages and starts the profiler once, runs no user code
    and never touches CUDA, so a child forked from it is as clean as a fresh process, and warm
    in milliseconds. A request is one message on the socket ``sock_fd`` carrying three file
    descriptors (the spare's stdin, stdout, stderr); the template answers ``{"event":
    "spawned", "pid"}`` on stdout and later ``{"event": "exit", "pid", "code"}``. It ends when
    its stdin or the socket closes; its spares, in their own sessions, end when theirs close.
    """
    proto_in, channel = _take_protocol_channels()
    with contextlib.suppress(OSError):
        os.setsid()
    lock = threading.Lock()

    def send(message: AgentMessage) -> None:
        with lock:
            channel.write(encode(message))

    threading.Thread(
        target=_read_requests,
        args=(proto_in, queue.Queue()),
        name="kernel-lens-watchdog",
        daemon=True,
    ).start()
    _scheduling("SCHED_IDLE", all_threads=False)
    ready = ReadyMessage(event="ready", template=True, pid=os.getpid())
    _warm_up(ready, cuda=False)
    # Triton's import is seconds on a GPU machine, and it touches no driver: every forked agent
    # gets it for free (a fresh agent does not pay for it before its first job).
    with contextlib.suppress(Exception):
        importlib.import_module("triton")
    sys.stderr.flush()
    send(ready)
    threading.Thread(target=_reap, args=(send,), name="kernel-lens-reaper", daemon=True).start()
    sock = socket.socket(fileno=sock_fd)
    while True:
        try:
            message, fds, _flags, _addr = socket.recv_fds(sock, 64, 3)
        except OSError:
            message, fds = b"", []
        if not message:
            _end_now()
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            continue
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _forked_agent(fds, (sock.fileno(), channel.fileno(), proto_in.fileno()))
        for fd in fds:
            os.close(fd)
        send(SpawnedMessage(event="spawned", pid=pid))


def _forked_agent(fds: list[int], template_fds: tuple[int, ...]) -> NoReturn:
    """(In a child forked by the template) become a job agent on the pipes ``fds`` (stdin,
    stdout, stderr), the template's own descriptors closed."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in (*fds, *template_fds):
            with contextlib.suppress(OSError):
                os.close(fd)
        faulthandler.disable()
        code = main()
    finally:
        os._exit(code)


#: Tests only (tests/conftest.py starts it; docs/testing.md): listen on this Unix socket as one
#: warm fork template shared by every agent client of a test session. Never set by the product.
FORK_SERVER_ENV = "KERNEL_LENS_AGENT_FORK_SERVER_LISTEN"
#: Variables a forked agent may have other than the fork server's: read when a job runs, never
#: while torch or our modules are imported. Any other difference gets the client a refusal (it
#: then starts a fresh agent, as without the fork server).
_FORK_ENV_FREE = frozenset(
    {
        "KERNEL_LENS_CACHE",
        "KERNEL_LENS_HISTORY",
        "KERNEL_LENS_RUN_CHOICES",
        "PYTEST_CURRENT_TEST",
        "PWD",
        "OLDPWD",
    }
)


def _fork_refusal(
    request: dict[str, Any], base_env: dict[str, str], base_path: list[str]
) -> str | None:
    """Why a forked agent could not be what a fresh one started with ``request`` (its argv, env
    and cwd) would be; ``None`` when it can."""
    from kernel_lens.early_agent import agent_argv

    if request.get("argv") != agent_argv([sys.executable]):
        return f"another command: {request.get('argv')}"
    env = request.get("env")
    if not isinstance(env, dict) or not isinstance(request.get("cwd"), str):
        return "no env or cwd"
    keys = {k for k in set(env) | set(base_env) if env.get(k) != base_env.get(k)}
    if "torch._inductor" not in sys.modules:  # Inductor reads its variables at its import
        keys = {k for k in keys if not k.startswith("TORCHINDUCTOR_")}
    other = sorted(keys - _FORK_ENV_FREE - {"PYTHONPATH"})
    if other:
        return f"other environment: {', '.join(other)}"
    for entry in _fork_pythonpath(env, request["cwd"]):
        if entry in base_path:
            continue
        with contextlib.suppress(OSError):
            for name in os.listdir(entry):
                if name.split(".")[0] in sys.modules:
                    return f"{entry} holds {name}, imported already"
    return None


def _fork_pythonpath(env: dict[str, str], cwd: str) -> list[str]:
    """``PYTHONPATH``'s entries as a fresh interpreter in ``cwd`` would put them on sys.path."""
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [os.path.abspath(os.path.join(cwd, p)) for p in parts]


class _ForkedAgents:
    """The fork server's agents: each one's connection and test (``PYTEST_CURRENT_TEST``, for
    the log); its exit is sent on its connection, and what its job left is killed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conns: dict[int, socket.socket] = {}
        self.tests: dict[int, str] = {}

    def fds(self) -> list[int]:
        """(Under the lock) the connections' descriptors: a forked agent closes them."""
        return [conn.fileno() for conn in self.conns.values()]

    def reap(self) -> None:
        """Wait for every child (agents, and the orphans of their jobs adopted)."""
        for pid, status, cpu in fork_socket.reaped():
            threading.Thread(target=self._ended, args=(pid, status, cpu), daemon=True).start()

    def _ended(self, pid: int, status: int, cpu: float) -> None:
        with self.lock:
            conn = self.conns.pop(pid, None)
            test = self.tests.pop(pid, "")
        if conn is None:
            return  # an orphan of a job, adopted
        code = os.waitstatus_to_exitcode(status)
        # (the agents' CPU is not their clients': KERNEL_LENS_TEST_CPU's lists miss it)
        print(f"kernel-lens fork server: agent {pid}: {cpu:.2f} CPU s, exit {code}, {test}",
              file=sys.stderr, flush=True)  # fmt: skip
        with contextlib.suppress(OSError):
            conn.send(encode(ExitMessage(event="exit", pid=pid, code=code)))
        conn.close()
        for pause in (0.0, 0.1, 0.5):  # what the agent's job left: orphaned onto us now
            time.sleep(pause)
            with self.lock:
                known = list(self.conns)
            reap_orphans(os.getpid(), since_ticks=0, known=known)


def _fork_server(path: str) -> int:
    """Tests only: a warm template (as :func:`_template`) that serves every client of a test
    session over the Unix socket ``path`` (``SOCK_SEQPACKET``), so that the CLI runs and the
    language servers of a test session do not each import torch.

    A request is a JSON object ``{"argv", "env", "cwd"}`` (the fresh agent the client would
    start) with three file descriptors (its stdin, stdout, stderr). The answer on the same
    connection is ``{"event": "spawned", "pid"}`` and later ``{"event": "exit", "pid", "code"}``,
    or ``{"event": "refused", "reason"}`` when a forked agent would differ from a fresh one
    (another interpreter, an environment that torch or our imports read, a ``PYTHONPATH`` entry
    that shadows a module imported already): the client then starts a fresh agent. The forked
    agent gets the request's environment, folder and ``sys.path``. The server is the subreaper
    of its agents' jobs: what a job started in a new session and left behind when its agent died
    is killed once the agent's exit is seen (a client's own reaper would have done it).
    """
    base_env = dict(os.environ)
    proto_in, channel = _take_protocol_channels()
    with contextlib.suppress(OSError):
        os.setsid()
    set_child_subreaper()
    threading.Thread(target=_read_requests, args=(proto_in, queue.Queue()), daemon=True).start()
    _scheduling("SCHED_IDLE", all_threads=False)
    # Not triton (unlike the language server's template): a fresh agent imports it in its job,
    # after the job's own settings (TRITON_INTERPRET=1 for Show Values), and so do these forks.
    _warm_up(ReadyMessage(event="ready", template=True, pid=os.getpid()), cuda=False)
    _scheduling("SCHED_OTHER", all_threads=False)
    base_path = list(sys.path)
    # Entries of the server's own PYTHONPATH: replaced by each request's.
    own_entries = set(_fork_pythonpath(base_env, os.getcwd()))
    agents = _ForkedAgents()
    threading.Thread(target=agents.reap, daemon=True).start()
    listener = fork_socket.listen(path, "kernel-lens fork server")
    while True:
        conn, request, fds = fork_socket.next_request(
            listener, lambda r: _fork_refusal(r, base_env, base_path), "kernel-lens fork server"
        )
        env, cwd = request["env"], request["cwd"]
        path_entries = _fork_pythonpath(env, cwd)
        sys.stderr.flush()
        with agents.lock:
            pid = os.fork()
            if pid == 0:
                own = [listener.fileno(), *agents.fds(), conn.fileno()]
                os.environ.clear()
                os.environ.update(env)
                with contextlib.suppress(OSError):
                    os.chdir(cwd)
                rest = [p for p in base_path[1:] if p not in own_entries]
                sys.path[:] = [base_path[0], *path_entries, *rest]
                _forked_agent(fds, (*own, channel.fileno(), proto_in.fileno()))
            agents.conns[pid] = conn
            agents.tests[pid] = str(env.get("PYTEST_CURRENT_TEST", ""))
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            conn.send(encode(SpawnedMessage(event="spawned", pid=pid)))


def _report_children() -> None:
    """Write the job's live processes on stderr (just before its deadline: what it waits on)."""
    with contextlib.suppress(Exception):
        children = descendants(os.getpid())
        if children:
            print(children_line(children), file=sys.stderr, flush=True)


class AgentLoop:
    """A job agent's life: its protocol channels guarded, warm, then serving job lines until
    the protocol input closes (in practice: one job, then killed).

    One method per kind of message: :meth:`serve` reads each line and answers ``ping`` and
    ``shutdown`` itself; a stage method goes to :meth:`run_job` (``id`` and the file of the job
    running are kept for the channel guard and the progress); :meth:`finish_job` sends the
    files a remote result names, then the reply.

    Args:
        proto_in: the protocol's input (the job lines).
        channel: the protocol's output (this agent's messages, :mod:`kernel_lens.wire.envelope`).
    """

    def __init__(self, proto_in: BinaryIO, channel: BinaryIO) -> None:
        self.proto_in = proto_in
        self.channel = channel
        self.inbox: queue.Queue[bytes] = queue.Queue()
        #: The running job's id and absolute file (``None`` between jobs).
        self.job_id: int | None = None
        self.job_path: str | None = None
        self.guard = ChannelGuard(
            (proto_in.fileno(), channel.fileno()),
            channel.fileno(),
            self._channel_closed,
            lambda: self.job_path,
            threading.get_ident(),
        )

    def send(self, message: AgentMessage) -> None:
        """Write one message on the protocol's output."""
        self.channel.write(encode(message))

    def _channel_closed(self, fd: int, text: str, line: int | None) -> None:
        """The job closed our channel: its error, on a copy of the channel; then the end."""
        data = encode(ErrorMessage(id=self.job_id, error=_error("crash", text, line)))
        if not send_on(self.guard.reserve, data):
            send_on(self.channel.fileno(), data)
        with contextlib.suppress(Exception):
            print(f"kernel-lens: {text}", file=sys.stderr, flush=True)
        _end_now()

    def run(self) -> NoReturn:
        """Warm up, say ``ready``, serve jobs; end the process when the loop ends."""
        threading.Thread(
            target=_read_requests,
            args=(self.proto_in, self.inbox),
            name="kernel-lens-watchdog",
            daemon=True,
        ).start()
        pending = self.warm_up()
        self.serve(pending)
        sys.stderr.flush()
        # User threads (non-daemon ones too) must not keep the process alive.
        os._exit(0)

    def warm_up(self) -> bytes | None:
        """Warm up under ``SCHED_IDLE``, say ``ready``; the job sent on it, if one came at once
        (a click that waited for this agent, the CLI's job), else ``None`` after the idle
        imports (a job imports them later)."""
        # This thread only (and the threads it starts): the watchdog stays responsive.
        _scheduling("SCHED_IDLE", all_threads=False)
        ready = ReadyMessage(
            event="ready",
            pid=os.getpid(),
            python=platform.python_version(),
            executable=sys.executable,
            main_thread=threading.get_ident(),
        )
        _warm_up(ready, say=lambda phase: self.send(WarmingMessage(event="warming", phase=phase)))
        sys.stderr.flush()
        self.send(ready)
        mark("ready")
        try:
            return self.inbox.get(timeout=_JOB_GRACE_S)
        except queue.Empty:
            for name in _IDLE_MODULES:
                with contextlib.suppress(Exception):
                    importlib.import_module(name)
            mark("idle imports done")
        return None

    def serve(self, pending: bytes | None) -> None:
        """Answer each request line (``pending`` first) until ``shutdown``."""
        while True:
            raw, pending = (pending, None) if pending is not None else (self.inbox.get(), None)
            if not raw.strip():
                continue
            try:
                message = decode_job(raw)
            except ValueError as exc:
                self.send(ErrorMessage(id=None, error=_error("internal", f"bad request: {exc}")))
                continue
            job_id = message.get("id")
            method = str(message.get("method"))
            if method == "ping":
                self.send(ResultMessage(id=job_id, result={"pong": True}))
            elif method == "shutdown":
                self.send(ResultMessage(id=job_id, result={}))
                return
            elif method not in METHODS:
                self.send(ErrorMessage(id=job_id, error=_error("internal", f"unknown {method!r}")))
            else:
                self.run_job(message, method)

    def run_job(self, message: JobMessage, method: str) -> None:
        """Run one stage job of ``method`` and send its reply (whatever the user's code did)."""
        job_id = message.get("id")
        params = message.get("params") or {}
        _scheduling("SCHED_OTHER")
        path = params.get("path")
        self.job_id = job_id
        self.job_path = os.path.abspath(path) if isinstance(path, str) else None
        if job_id is not None and not self.guard.installed:
            self.guard.install()
        mark(f"job received: {method}")
        children_timer = _arm_deadline(message.get("timeout"))
        reply: ResultMessage | ErrorMessage
        try:
            # A job from another machine: the workspace modules it carries go on sys.path.
            remote.install_bundle(message.get("bundle"))
            progress = functools.partial(self._progress, job_id)
            partial = functools.partial(self._partial, job_id)
            reply = ResultMessage(id=job_id, result=dispatch(method, params, progress, partial))
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            reply = ErrorMessage(id=job_id, error=_job_error(exc, params.get("path")))
        finally:
            faulthandler.cancel_dump_traceback_later()
            if children_timer is not None:
                children_timer.cancel()
        self.finish_job(message, reply)

    def _progress(self, job_id: int | None, stage: str, text: str) -> None:
        mark(f"progress {stage}: {text}")
        update = ProgressUpdate(stage=stage, message=text)
        self.send(ProgressMessage(id=job_id, progress=update))

    def _partial(
        self, job_id: int | None, patch: dict[str, Any], final: list[str], stage: str
    ) -> None:
        update = PartialUpdate(result=patch, final=final, stage=stage)
        self.send(PartialMessage(id=job_id, partial=update))
        mark(f"partial sent: {stage} ({', '.join(sorted(patch))[:80]})")

    def finish_job(self, message: JobMessage, reply: ResultMessage | ErrorMessage) -> None:
        """End what the job started, send back the files a remote result names, then the
        reply."""
        # The job has ended: whatever it started ends with it (pool workers, new sessions,
        # daemons), before the parent hears of the end.
        with contextlib.suppress(Exception):
            kill_descendants(os.getpid())
        job_id = message.get("id")
        if message.get("send_files") and "result" in reply:
            # The trace and reports the result names go back to the editor's machine first.
            for item in remote.returned_files(reply["result"], lambda t: print(t, file=sys.stderr)):
                self.send(FileMessage(id=job_id, file=item))
        remote.cleanup()
        # (before the send: the parent may end this process as soon as it has the answer)
        mark("result sent" if "result" in reply else "error sent")
        self.send(reply)
        sys.stderr.flush()


def _arm_deadline(timeout: object) -> threading.Timer | None:
    """Tell the stages the job's time limit (seconds; none unless positive) and, just before
    the parent's deadline, dump the stack (the line that hangs) and list the processes the job
    started that still run (what it may be waiting on); the timer of that list, to cancel."""
    limit = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
    set_job_timeout(limit)
    if limit is None:
        return None
    before = max(limit - min(1.0, 0.2 * limit), 0.05)
    faulthandler.dump_traceback_later(before, file=sys.stderr)
    children_timer = threading.Timer(max(before - 0.05, 0.01), _report_children)
    children_timer.daemon = True
    children_timer.start()
    return children_timer


def _job_error(exc: BaseException, path: object) -> ErrorObject:
    """The error object of a job that raised ``exc`` (``path``: the job's file, whose line it
    names for an exit or an interrupt)."""
    if isinstance(exc, ProfileError):
        return error_object(exc)
    if isinstance(exc, ImportError):
        text = f"{exc} — is torch installed in {sys.executable}?"
        return _error("unsupported", text, None, format_exception(exc))
    if isinstance(exc, SystemExit):
        text = f"the code called sys.exit({exc.code!r})"
        return _error("exit", text, _user_line(exc, path), format_exception(exc))
    if isinstance(exc, KeyboardInterrupt):
        text = "the code raised KeyboardInterrupt"
        return _error("interrupted", text, _user_line(exc, path), format_exception(exc))
    traceback.print_exception(type(exc), exc, exc.__traceback__)
    text = f"{type(exc).__name__}: {exc}"
    return _error("internal", text, None, format_exception(exc))


def _become_job_agent() -> None:
    """Own what the job will start: our own process group (when the parent did not make one,
    e.g. under ssh), so that ending the agent ends the compilers and subprocesses it started;
    every process it starts stays below us, new sessions and daemons included; srun's (and
    container runtimes') ``SIGTERM`` ends them too; and ``faulthandler`` on."""
    global _JOB_AGENT
    with contextlib.suppress(OSError):
        os.setsid()
    _JOB_AGENT = True
    set_child_subreaper()
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGTERM, lambda signum, frame: _end_now())
    faulthandler.enable(file=sys.stderr, all_threads=True)


def main() -> int:
    """Serve jobs until the protocol input closes (in practice: one job, then killed); with
    :data:`TEMPLATE_ENV` set, be a fork template instead."""
    mark("process started", process_start())
    mark("agent modules imported")
    template_fd = os.environ.pop(TEMPLATE_ENV, None)
    if template_fd is not None:
        return _template(int(template_fd))
    listen = os.environ.pop(FORK_SERVER_ENV, None)
    if listen:
        return _fork_server(listen)
    proto_in, channel = _take_protocol_channels()
    _become_job_agent()
    AgentLoop(proto_in, channel).run()


if __name__ == "__main__":
    sys.exit(main())
