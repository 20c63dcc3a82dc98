"""The processes a job started, as both sides of the agent boundary see them (Linux ``/proc``).

The agent is a *child subreaper* (:func:`set_child_subreaper`): a process its job started keeps
it as an ancestor even when it leaves the process group (``start_new_session=True``) or is
orphaned by a double fork, so every one of them is found by walking ``/proc`` by parent pid
(:func:`descendants`) and stopped when the job ends (:func:`kill_descendants`) — by the agent
itself, and by a local parent before it kills the agent. Just before a job's deadline the agent
writes the processes still running on its stderr (:func:`children_line`); the parent reads the
last such line back (:func:`children_from_lines`) and says in the timeout's message what the job
was waiting on (:func:`waiting_text`).

Standard library only: both the agent and the parent (:mod:`kernel_lens.client`) import it.
Elsewhere than Linux every function finds nothing and kills nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CHILDREN_MARK",
    "ChildProcess",
    "children_from_lines",
    "children_line",
    "descendants",
    "kill_descendants",
    "clock_ticks_now",
    "orphans_adopted",
    "parse_stat",
    "reap_orphans",
    "reap_zombies",
    "set_child_subreaper",
    "waiting_text",
]

#: The start of the agent's stderr line that lists the job's live processes (JSON follows).
CHILDREN_MARK = "kernel-lens: child processes still running: "
#: ``prctl`` option (linux/prctl.h).
_PR_SET_CHILD_SUBREAPER = 36
#: Characters of one command kept in a message.
_COMMAND_CHARS = 90


@dataclass(frozen=True)
class ChildProcess:
    """One live process under the agent: its pid, its parent's and its command line."""

    pid: int
    ppid: int
    argv: tuple[str, ...]

    def command(self, width: int = _COMMAND_CHARS) -> str:
        """The command line, clipped to ``width`` characters (``python`` for a full path)."""
        if not self.argv:
            return "?"
        first = os.path.basename(self.argv[0]) or self.argv[0]
        text = " ".join([first, *self.argv[1:]])
        return text if len(text) <= width else text[: width - 1] + "…"


def parse_stat(text: str) -> tuple[int, str, int] | None:
    """``(pid, state, ppid)`` of a ``/proc/PID/stat`` line; ``None`` when it does not parse.

    The command name between parentheses may itself hold spaces and parentheses: the fields
    after it start after the *last* ``)``.
    """
    close = text.rfind(")")
    head = text[: text.find("(")].strip()
    rest = text[close + 1 :].split()
    if close < 0 or len(rest) < 2 or not head.isdigit():
        return None
    try:
        return int(head), rest[0], int(rest[1])
    except ValueError:
        return None


def _table() -> dict[int, tuple[str, int]]:
    """Every process of the machine: pid → (state, parent pid)."""
    table: dict[int, tuple[str, int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as fh:
                parsed = parse_stat(fh.read())
        except OSError:
            continue
        if parsed is not None:
            table[parsed[0]] = (parsed[1], parsed[2])
    return table


def _argv(pid: int) -> tuple[str, ...]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(8192)
    except OSError:
        return ()
    return tuple(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)


def descendants(root: int, *, exclude: Iterable[int] = ()) -> list[ChildProcess]:
    """The live processes under ``root`` (children first; zombies left out), but those of
    ``exclude`` and everything under them."""
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (_state, ppid) in table.items():
        children.setdefault(ppid, []).append(pid)
    skip = set(exclude)
    found: list[ChildProcess] = []
    queue = sorted(children.get(root, ()))
    seen = {root}
    while queue:
        pid = queue.pop(0)
        if pid in seen or pid in skip:
            continue
        seen.add(pid)
        state, ppid = table[pid]
        if state not in ("Z", "X"):
            found.append(ChildProcess(pid, ppid, _argv(pid)))
        queue.extend(sorted(children.get(pid, ())))
    return found


def kill_descendants(root: int, *, exclude: Iterable[int] = (), rounds: int = 50) -> int:
    """``SIGKILL`` every live process under ``root`` until none is left; the number killed.

    A killed process's own children are orphaned onto ``root`` (a subreaper) or, when a parent
    in between is still alive, stay under it: each round walks ``/proc`` again. A process that
    forks while the rounds run is found by the next round.
    """
    killed: set[int] = set()
    skip = tuple(exclude)
    for _ in range(rounds):
        alive = [p for p in descendants(root, exclude=skip) if p.pid != os.getpid()]
        if not alive:
            break
        for process in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signal.SIGKILL)
            killed.add(process.pid)
        time.sleep(0.005)
    return len(killed)


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3 on), or ``None``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    close = text.rfind(")")
    return text[close + 1 :].split() if close >= 0 else None


def clock_ticks_now() -> int:
    """Clock ticks since boot now, the unit of a process's start time in ``/proc`` (0 when it
    cannot be read)."""
    try:
        with open("/proc/uptime", encoding="ascii") as fh:
            seconds = float(fh.read().split()[0])
        return int(seconds * os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def orphans_adopted(parent: int, *, since_ticks: int, known: Iterable[int] = ()) -> list[int]:
    """The processes ``parent`` (a subreaper) adopted from a job whose agent died: its direct
    children that it did not start itself (not in ``known``), in a session other than its own
    (a job agent's session, or one a job made with ``start_new_session``: never a ``git`` or a
    reader the parent ran), started at or after ``since_ticks`` (the job's start)."""
    own = _stat_fields(parent)
    if own is None or len(own) < 4:
        return []
    own_session = own[3]
    skip = set(known)
    found: list[int] = []
    for pid, (state, ppid) in _table().items():
        if ppid != parent or pid in skip or state in ("Z", "X"):
            continue
        fields = _stat_fields(pid)
        if fields is None or len(fields) < 20 or fields[3] == own_session:
            continue
        try:
            started = int(fields[19])
        except ValueError:
            continue
        if started >= since_ticks:
            found.append(pid)
    return sorted(found)


def reap_orphans(parent: int, *, since_ticks: int, known: Iterable[int] = ()) -> int:
    """``SIGKILL`` what :func:`orphans_adopted` finds and everything under it; the number."""
    killed = 0
    known = tuple(known)
    for pid in orphans_adopted(parent, since_ticks=since_ticks, known=known):
        killed += kill_descendants(pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    for _ in range(50):  # the killed ones, once the kernel has them as zombies
        if not orphans_adopted(parent, since_ticks=since_ticks, known=known):
            break
        time.sleep(0.005)
    reap_zombies(parent, known=known)
    return killed


def set_child_subreaper(on: bool = True) -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``prctl``), or stop being
    it with ``on=False``; whether it worked. Not inherited across ``fork``: each agent sets it
    for itself."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reap_zombies(parent: int, *, known: Iterable[int] = ()) -> int:
    """Wait for the exited children of ``parent`` (this process) that it adopted as their
    subreaper: in a session other than its own and not in ``known`` (processes it started and
    waits for itself — asyncio's child watcher would lose their status). A subreaper that does
    not wait for its adopted orphans keeps them as zombies. The number reaped."""
    own = _stat_fields(parent)
    if own is None or len(own) < 4:
        return 0
    skip = set(known)
    reaped = 0
    for pid, (state, ppid) in _table().items():
        if ppid != parent or state != "Z" or pid in skip:
            continue
        fields = _stat_fields(pid)
        if fields is None or len(fields) < 4 or fields[3] == own[3]:
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                reaped += 1
    return reaped


def children_line(children: Iterable[ChildProcess]) -> str:
    """The agent's stderr line listing ``children`` (read back by :func:`children_from_lines`)."""
    rows = [[c.pid, c.ppid, list(c.argv)[:12]] for c in children]
    return CHILDREN_MARK + json.dumps(rows, separators=(",", ":"))


def children_from_lines(lines: Iterable[str]) -> list[ChildProcess] | None:
    """The processes of the last :func:`children_line` in ``lines``; ``None`` when there is
    none (or it does not parse, e.g. clipped)."""
    last = None
    for line in lines:
        if line.startswith(CHILDREN_MARK):
            last = line
    if last is None:
        return None
    try:
        rows = json.loads(last[len(CHILDREN_MARK) :])
        return [ChildProcess(int(p), int(pp), tuple(str(a) for a in argv)) for p, pp, argv in rows]
    except (ValueError, TypeError):
        return None


def waiting_text(children: list[ChildProcess], *, groups: int = 3) -> str:
    """``waiting on 4 child processes (pids 11, 12, 13, 14: python -c from multiprocessing…)``:
    the processes grouped by command line, the most numerous first."""
    if not children:
        return ""
    by_command: dict[str, list[int]] = {}
    for child in children:
        by_command.setdefault(child.command(), []).append(child.pid)
    ordered = sorted(by_command.items(), key=lambda item: -len(item[1]))
    parts = []
    for command, pids in ordered[:groups]:
        shown = ", ".join(str(p) for p in pids[:6]) + (", …" if len(pids) > 6 else "")
        parts.append(f"{'pids' if len(pids) > 1 else 'pid'} {shown}: {command}")
    if len(ordered) > groups:
        parts.append(f"{len(ordered) - groups} more commands")
    n = len(children)
    return f"waiting on {n} child process{'es' if n != 1 else ''} ({'; '.join(parts)})"
