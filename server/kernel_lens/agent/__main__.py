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
from typing import Any, BinaryIO

from kernel_lens.agent import remote
from kernel_lens.agent.deadline import request_stop, set_job_timeout
from kernel_lens.agent.engine import METHODS, dispatch
from kernel_lens.agent.phases import mark, process_start
from kernel_lens.wire.envelope import HURRY, STOP, decode, encode, error_object
from kernel_lens.wire.errors import ErrorKind, ErrorObject, ProfileError
from kernel_lens.wire.processes import (
    children_line,
    descendants,
    kill_descendants,
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
    ready: dict[str, Any], *, cuda: bool = True, say: Callable[[str], None] | None = None
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
        # A fork template: even a CPU-only profiler start initialises CUPTI and with it the CUDA
        # driver, which a forked child cannot use ("CUDA error: initialization error", seen on
        # the H200). Import what the profiler's first start imports; each fork starts it once.
        # (Inductor is not among them: profiler_start keeps the profiler from importing it.)
        for name in ("torch.profiler",):
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        for name in (*_WARM_MODULES, *_IDLE_MODULES):
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        ready["warm_s"] = round(time.perf_counter() - began, 3)
        mark("template warm")
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


def _error(kind: ErrorKind, message: str, line: int | None, tb: str | None) -> ErrorObject:
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


def _reap(send: Any) -> None:
    """The template's reaper: report each spare's exit status (``{"event": "exit", …}``)."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            time.sleep(0.05)
            continue
        send({"event": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})


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

    def send(message: dict[str, Any]) -> None:
        with lock:
            channel.write(encode(message))

    threading.Thread(
        target=_read_requests,
        args=(proto_in, queue.Queue()),
        name="kernel-lens-watchdog",
        daemon=True,
    ).start()
    _scheduling("SCHED_IDLE", all_threads=False)
    ready: dict[str, Any] = {"event": "ready", "template": True, "pid": os.getpid()}
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
            code = 1
            try:
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                for fd in (*fds, sock.fileno(), channel.fileno(), proto_in.fileno()):
                    with contextlib.suppress(OSError):
                        os.close(fd)
                faulthandler.disable()
                code = main()
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        send({"event": "spawned", "pid": pid})


def _report_children() -> None:
    """Write the job's live processes on stderr (just before its deadline: what it waits on)."""
    with contextlib.suppress(Exception):
        children = descendants(os.getpid())
        if children:
            print(children_line(children), file=sys.stderr, flush=True)


def main() -> int:
    """Serve jobs until the protocol input closes (in practice: one job, then killed)."""
    global _JOB_AGENT
    mark("process started", process_start())
    mark("agent modules imported")
    template_fd = os.environ.pop(TEMPLATE_ENV, None)
    if template_fd is not None:
        return _template(int(template_fd))
    proto_in, channel = _take_protocol_channels()
    # Our own process group (when the parent did not make one, e.g. under ssh), so that ending
    # the agent ends the compilers and subprocesses it started too.
    with contextlib.suppress(OSError):
        os.setsid()
    # And every process the job starts stays below us, new sessions and daemons included.
    _JOB_AGENT = True
    set_child_subreaper()
    # srun (and container runtimes) stop a task with SIGTERM: the job's processes end with it.
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGTERM, lambda signum, frame: _end_now())
    faulthandler.enable(file=sys.stderr, all_threads=True)

    from kernel_lens.agent.channel import ChannelGuard, send_on
    from kernel_lens.agent.errors import format_exception

    def send(message: dict[str, Any]) -> None:
        channel.write(encode(message))

    job: dict[str, Any] = {"id": None, "path": None}

    def channel_closed(fd: int, text: str, line: int | None) -> None:
        """The job closed our channel: its error, on a copy of the channel; then the end."""
        data = encode({"id": job["id"], "error": _error("crash", text, line, None)})
        if not send_on(guard.reserve, data):
            send_on(channel.fileno(), data)
        with contextlib.suppress(Exception):
            print(f"kernel-lens: {text}", file=sys.stderr, flush=True)
        _end_now()

    guard = ChannelGuard(
        (proto_in.fileno(), channel.fileno()),
        channel.fileno(),
        channel_closed,
        lambda: job["path"],
        threading.get_ident(),
    )

    inbox: queue.Queue[bytes] = queue.Queue()
    threading.Thread(
        target=_read_requests, args=(proto_in, inbox), name="kernel-lens-watchdog", daemon=True
    ).start()

    # This thread only (and the threads it starts): the watchdog stays responsive.
    _scheduling("SCHED_IDLE", all_threads=False)
    ready: dict[str, Any] = {
        "event": "ready",
        "pid": os.getpid(),
        "python": platform.python_version(),
        "executable": sys.executable,
        "main_thread": threading.get_ident(),
    }
    _warm_up(ready, say=lambda phase: send({"event": "warming", "phase": phase}))
    sys.stderr.flush()
    send(ready)
    mark("ready")
    # A job sent on ``ready`` (a click that waited for this agent, the CLI's job) starts at once;
    # with none the rest of the warm-up is imported while nobody waits (a job imports it later).
    pending: bytes | None = None
    try:
        pending = inbox.get(timeout=_JOB_GRACE_S)
    except queue.Empty:
        for name in _IDLE_MODULES:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
        mark("idle imports done")

    while True:
        raw, pending = (pending, None) if pending is not None else (inbox.get(), None)
        if not raw.strip():
            continue
        try:
            message = decode(raw)
        except ValueError as exc:
            send({"id": None, "error": _error("internal", f"bad request: {exc}", None, None)})
            continue
        job_id = message.get("id")
        method = str(message.get("method"))
        if method == "ping":
            send({"id": job_id, "result": {"pong": True}})
            continue
        if method == "shutdown":
            send({"id": job_id, "result": {}})
            break
        handler = METHODS.get(method)
        if handler is None:
            send({"id": job_id, "error": _error("internal", f"unknown {method!r}", None, None)})
            continue
        params = message.get("params") or {}
        _scheduling("SCHED_OTHER")
        path = params.get("path")
        job["id"], job["path"] = job_id, os.path.abspath(path) if isinstance(path, str) else None
        if job_id is not None and not guard.installed:
            guard.install()

        mark(f"job received: {method}")

        def progress(stage: str, text: str, job_id: Any = job_id) -> None:
            mark(f"progress {stage}: {text}")
            send({"id": job_id, "progress": {"stage": stage, "message": text}})

        def partial(
            patch: dict[str, Any], final: list[str], stage: str, job_id: Any = job_id
        ) -> None:
            send({"id": job_id, "partial": {"result": patch, "final": final, "stage": stage}})
            mark(f"partial sent: {stage} ({', '.join(sorted(patch))[:80]})")

        timeout = message.get("timeout")
        set_job_timeout(
            float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
        )
        children_timer: threading.Timer | None = None
        if isinstance(timeout, int | float) and timeout > 0:
            # The stack just before the parent's deadline: the line that hangs; and the
            # processes the job started that are still running (what it may be waiting on).
            before = max(timeout - min(1.0, 0.2 * timeout), 0.05)
            faulthandler.dump_traceback_later(before, file=sys.stderr)
            children_timer = threading.Timer(max(before - 0.05, 0.01), _report_children)
            children_timer.daemon = True
            children_timer.start()
        reply: dict[str, Any]
        try:
            # A job from another machine: the workspace modules it carries go on sys.path.
            remote.install_bundle(message.get("bundle"))
            reply = {"id": job_id, "result": dispatch(method, params, progress, partial)}
        except ProfileError as exc:
            reply = {"id": job_id, "error": error_object(exc)}
        except ImportError as exc:
            message_text = f"{exc} — is torch installed in {sys.executable}?"
            reply = {
                "id": job_id,
                "error": _error("unsupported", message_text, None, format_exception(exc)),
            }
        except SystemExit as exc:
            text = f"the code called sys.exit({exc.code!r})"
            line = _user_line(exc, params.get("path"))
            reply = {"id": job_id, "error": _error("exit", text, line, format_exception(exc))}
        except KeyboardInterrupt as exc:
            line = _user_line(exc, params.get("path"))
            text = "the code raised KeyboardInterrupt"
            reply = {
                "id": job_id,
                "error": _error("interrupted", text, line, format_exception(exc)),
            }
        except Exception as exc:
            traceback.print_exc()
            text = f"{type(exc).__name__}: {exc}"
            reply = {
                "id": job_id,
                "error": _error("internal", text, None, format_exception(exc)),
            }
        finally:
            faulthandler.cancel_dump_traceback_later()
            if children_timer is not None:
                children_timer.cancel()
        # The job has ended: whatever it started ends with it (pool workers, new sessions,
        # daemons), before the parent hears of the end.
        with contextlib.suppress(Exception):
            kill_descendants(os.getpid())
        if message.get("send_files") and "result" in reply:
            # The trace and reports the result names go back to the editor's machine first.
            for item in remote.returned_files(reply["result"], lambda t: print(t, file=sys.stderr)):
                send({"id": job_id, "file": item})
        remote.cleanup()
        # (before the send: the parent may end this process as soon as it has the answer)
        mark("result sent" if "result" in reply else "error sent")
        send(reply)
        sys.stderr.flush()
    sys.stderr.flush()
    # User threads (non-daemon ones too) must not keep the process alive.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
