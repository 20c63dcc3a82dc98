"""What every command of the CLI shares: ``PATH::FUNC`` targets, the error contract (one JSON
object with ``--json``, one line on stderr without), and a job run in a fresh agent through the
same client as the editor's (:mod:`kernel_lens.client`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
from typing import Any, TextIO

from kernel_lens.analysis.safe_text import terminal_safe
from kernel_lens.wire.errors import ErrorObject, ProfileError
from kernel_lens.wire.jobs import JobRequest

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "driver_option",
    "driver_request",
    "saved_args",
    "emit_error",
    "for_the_cli",
    "job",
    "run_in_agent",
    "say",
    "split_target",
    "stderr_line",
    "timeout_option",
    "usage_error",
]

#: Seconds a job may run before its agent is stopped (``--timeout``).
DEFAULT_TIMEOUT_S = 600.0


def split_target(spec: str) -> tuple[str, str | None]:
    """``PATH::FUNC`` as ``(PATH, FUNC)``; ``PATH`` alone as ``(PATH, None)``."""
    if "::" in spec:
        path, func = spec.split("::", 1)
        return path, func or None
    return spec, None


def say(
    *values: object,
    sep: str = " ",
    end: str = "\n",
    file: TextIO | None = None,
    flush: bool = False,
) -> None:
    """``print`` for every line the CLI shows: escape sequences and control characters (but
    newline and tab) removed, bidi controls shown as ``<U+…>``
    (:func:`kernel_lens.analysis.safe_text.terminal_safe`), so no name from a trace, a report,
    the history or user code can write the clipboard, retitle the window, clear the screen or
    make a link (``--json`` output is JSON-escaped already and passes unchanged)."""
    text = sep.join(str(v) for v in values) + end
    out = sys.stdout if file is None else file
    out.write(terminal_safe(text))
    if flush:
        out.flush()


def emit_error(err: ErrorObject, as_json: bool, path: str | None) -> None:
    """Print a job's error: ``{"error": …}`` on stdout with ``--json``, else a line (and the
    traceback) on stderr."""
    if as_json:
        say(json.dumps({"error": err}), flush=True)
        return
    where = f" at {path}:{err['line']}" if err.get("line") and path else ""
    say(f"error ({err['kind']}){where}: {err['message']}", file=sys.stderr)
    memory = err.get("memory")
    if memory:
        from kernel_lens.analysis.memory_text import oom_lines

        for text in oom_lines(memory):
            say(text, file=sys.stderr)
    # An "unsupported" result is a fact about the machine, not a bug to debug: no traceback.
    if err.get("traceback") and err.get("kind") != "unsupported":
        say(err["traceback"], file=sys.stderr)


def stderr_line(text: str) -> None:
    """One line on stderr (the agent's output, progress, warnings), flushed."""
    say(text, file=sys.stderr, flush=True)


def usage_error(args: argparse.Namespace, message: str) -> int:
    """Bad command-line usage found after parsing: one line on stderr, exit status 2."""
    say(f"kernel-lens {getattr(args, 'command', '')}: error: {message}", file=sys.stderr)
    return 2


def for_the_cli(err: ProfileError) -> ProfileError:
    """The client's words for the editor (a setting, a restart) put in the CLI's terms."""
    message = err.message.replace("(kernelLens.timeoutSeconds)", "(--timeout)")
    for tail in (
        "; the agent was stopped and will restart for the next job",
        "; the agent was stopped and will restart",
    ):
        message = message.replace(tail, "")
    err.message = message
    return err


async def run_in_agent(
    request: JobRequest, *, timeout: float, progress: bool, agent_command: list[str] | None = None
) -> dict[str, Any]:
    """Run one job in a fresh agent (no spare) and return its result; with ``agent_command``
    (``["ssh", "gpu-box", "python3"]``) on another machine, as ``kernelLens.agentCommand`` does.

    Raises:
        ProfileError: the job's failure, whatever way it ended.
    """
    from kernel_lens.client import AgentClient

    phases: set[str] = set()

    def on_progress(stage: str, message: str) -> None:
        if not progress:
            return
        if stage == "agent":
            # A terminal keeps every line: each warm-up phase once, not its clock every 0.5 s.
            phase = message.rsplit("… ", 1)[0]
            if phase in phases:
                return
            phases.add(phase)
        stderr_line(f"[{stage}] {message}")

    # One job, one agent (no spare): it is stopped, with its process group, when the job ends,
    # whatever threads the user's code left running.
    client = AgentClient(
        agent_command or [sys.executable],
        stderr_line,
        local=not agent_command,
        spare=False,
        cwd=os.getcwd() if agent_command else None,
    )
    # Ctrl-C as the editor's Cancel (issue 39 item 3): the first stops the job — a whole
    # script's run then sends the part that ran, which is printed — and a second one abandons
    # it at once (KeyboardInterrupt, as before).
    cancelled = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_interrupt() -> None:
        stderr_line(
            "kernel-lens: stopping (a whole script keeps the part that ran); Ctrl-C again to "
            "abandon it"
        )
        cancelled.set()
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)

    handled = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        handled = True
    try:
        return await client.run(
            request.to_json(),
            timeout=timeout,
            on_progress=on_progress,
            method=request.method,
            cancelled=cancelled,
        )
    except ProfileError as err:
        if err.kind == "cancelled" and cancelled.is_set():
            raise KeyboardInterrupt from None  # the job had no part to keep: interrupted
        raise
    finally:
        if handled:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signal.SIGINT)
        await client.kill()


def job(request: JobRequest, args: argparse.Namespace) -> dict[str, Any] | int:
    """Run ``request`` in a fresh agent: its result, or the exit status after printing the error.

    The user's output (the agent's stderr) goes to stderr, so ``--json`` stays one object.
    """
    path = os.path.abspath(request.path)
    if not os.path.isfile(path):
        reason = "Is a directory" if os.path.isdir(path) else "No such file or directory"
        err = ProfileError("not-found", f"cannot read {path}: {reason}")
        emit_error(err.to_json(), args.json, None)
        return 1
    progress = not args.json and not getattr(args, "quiet", False)
    try:
        command = getattr(args, "agent_command", None)
        agent = shlex.split(command) if command else None
        return asyncio.run(
            run_in_agent(request, timeout=args.timeout, progress=progress, agent_command=agent)
        )
    except ProfileError as exc:
        emit_error(for_the_cli(exc).to_json(), args.json, path)
        return 1


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def timeout_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--timeout SECONDS`` (default :data:`DEFAULT_TIMEOUT_S`) and ``--agent-command`` (the
    agent on another machine) to a command that runs a job."""
    parser.add_argument(
        "--agent-command",
        default=os.environ.get("KERNEL_LENS_AGENT_COMMAND") or None,
        metavar="COMMAND",
        help="start Python elsewhere, e.g. 'ssh gpu-box python3' or 'srun -N1 -n1 python3' "
        "(default $KERNEL_LENS_AGENT_COMMAND, else this interpreter); the agent's code and the "
        "workspace modules the file imports travel with the job, the trace comes back",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"stop the job (and its agent) after this long (default {DEFAULT_TIMEOUT_S:g})",
    )


def driver_option(parser: argparse.ArgumentParser, help_text: str | None = None) -> None:
    """Add ``--from DRIVER`` (the function's inputs from a driver script's call; the driver's
    arguments after ``--``) to a command that loads a function (``help_text``: another
    command's own words for it)."""
    parser.add_argument(
        "--from",
        dest="driver",
        metavar="DRIVER",
        help=help_text
        or "take FUNC's inputs, self and calling context from its first call in a run of "
        "DRIVER (`python DRIVER ARGS…`, ARGS after --), in whatever workspace module FUNC is",
    )
    parser.set_defaults(takes_script_args=True)


def driver_request(args: argparse.Namespace) -> dict[str, Any] | int:
    """The job's ``driver``/``argv`` fields from ``--from`` and the words after ``--``, or the
    exit status of a usage error (arguments without a driver, a driver that is no file)."""
    argv = [str(a) for a in getattr(args, "script_args", None) or []]
    if not args.driver:
        if argv:
            return usage_error(args, "arguments after -- are a driver's: give --from DRIVER")
        return {"driver": None, "argv": []}
    driver = os.path.abspath(args.driver)
    if not os.path.isfile(driver):
        return usage_error(args, f"--from: no such file {args.driver}")
    return {"driver": driver, "argv": saved_args(args, driver, argv)}


def saved_args(args: argparse.Namespace, script: str, argv: list[str]) -> list[str]:
    """The arguments a script runs with: the words after ``--`` when there is one (``--``
    alone: none), else the ones kept for it (the editor's *Arguments…*, a launch
    configuration's; :func:`kernel_lens.run_choices.script_arguments`), said on stderr."""
    if getattr(args, "script_args_given", True):
        return argv
    from kernel_lens.run_choices import script_arguments

    roots = [os.getcwd(), *(os.path.abspath(w) for w in getattr(args, "workspace", None) or [])]
    kept, source = script_arguments(script, roots)
    if source is not None:
        where = "kept for it" if source == "set" else f"of the {source}"
        shown = " ".join(kept) or "(none)"
        stderr_line(
            f"kernel-lens: {os.path.basename(script)} runs with the arguments {where}: {shown} "
            "(give others after --, or -- alone for none)"
        )
    return kept
