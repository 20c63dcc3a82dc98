"""The processes a job starts (issue 26 item 4): the ``/proc`` walk and the timeout's words
(:mod:`kernel_lens.wire.processes`), and, through the agent pool the language server uses (a
fork template and its spares), no process of a job outlives it while Kernel Lens's own
processes (the template, the next spare) stay. Real processes, CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.client import AgentClient
from kernel_lens.wire.processes import (
    ChildProcess,
    children_from_lines,
    children_line,
    descendants,
    kill_descendants,
    parse_stat,
    waiting_text,
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _with_marker(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv and _alive(int(name)):
            found.append(int(name))
    return found


def test_a_stat_line_parses_whatever_the_command_name_holds() -> None:
    assert parse_stat("42 (python) S 7 42 42 0") == (42, "S", 7)
    assert parse_stat("43 (a) b (c)) Z 1 43 43 0") == (43, "Z", 1)
    assert parse_stat("garbage") is None
    assert parse_stat("") is None


def test_the_children_line_reads_back_and_the_waiting_text_groups_commands() -> None:
    spawn = ("/usr/bin/python3", "-c", "from multiprocessing.spawn import spawn_main")
    children = [
        ChildProcess(11, 10, spawn),
        ChildProcess(12, 10, spawn),
        ChildProcess(13, 10, ("sleep", "100")),
    ]
    lines = ["noise", children_line(children[:1]), children_line(children), "more noise"]
    assert children_from_lines(lines) == children
    assert children_from_lines(["no such line"]) is None
    text = waiting_text(children)
    assert text.startswith("waiting on 3 child processes (pids 11, 12: python3 -c from multi")
    assert "pid 13: sleep 100" in text
    assert waiting_text([]) == ""
    long = ChildProcess(1, 0, ("x" * 500,))
    assert len(long.command()) <= 90


@pytest.mark.timeout(60)
def test_descendants_are_found_and_killed_in_any_session() -> None:
    marker = f"{1000 + secrets.randbelow(10**6) / 10**7:.7f}"
    # A shell that starts a sleep in a new session (setsid), and one in its own group.
    script = f"setsid sleep {marker} & sleep {marker} & wait"
    shell = subprocess.Popen(["sh", "-c", script])
    try:
        deadline = time.monotonic() + 10
        while len(_with_marker(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        found = {c.pid for c in descendants(shell.pid)}
        assert set(_with_marker(marker)) <= found
        assert kill_descendants(shell.pid) >= 2
        deadline = time.monotonic() + 5
        while _with_marker(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _with_marker(marker) == []
        assert shell.wait(5) == 0  # the root itself is left alone (not killed: it ends)
    finally:
        shell.kill()
        shell.wait()
        for pid in _with_marker(marker):
            os.kill(pid, 9)


LEAVER = """\
import os
import subprocess


def leave_processes():
    subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            os.setsid()
            os.execvp("sleep", ["sleep", "{marker}"])
        os._exit(0)
    os.waitpid(pid, 0)
    return 1


def nothing():
    return 2
"""

FAST: dict[str, Any] = {"stages": ["timing"], "budget_ms": 5, "warmup_ms": 1}


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
async def test_the_pool_leaves_no_process_of_a_job_and_keeps_its_own(tmp_path: Path) -> None:
    marker = f"{1000 + secrets.randbelow(10**6) / 10**7:.7f}"
    path = tmp_path / "leaver.py"
    path.write_text(LEAVER.format(marker=marker))
    client = AgentClient([sys.executable], [].append, cwd=str(tmp_path))
    job = {"path": str(path), **FAST}
    try:
        # A fresh agent first; then the template starts and the next agents are its forks.
        await client.run({**job, "function": "leave_processes"}, timeout=120)
        assert _with_marker(marker) == []
        assert client._template is not None  # noqa: SLF001 - CPU-only: the template starts
        template = await asyncio.wait_for(client._template, 120)  # noqa: SLF001
        assert template.proc is not None
        for _ in range(2):  # the spare started before the template, then a fork
            await client.run({**job, "function": "leave_processes"}, timeout=120)
            assert _with_marker(marker) == []
        assert client.info.get("pid") and template.alive
        spare = client._spare_task  # noqa: SLF001
        assert spare is not None
        await asyncio.wait_for(asyncio.shield(spare), 120)
        assert spare.result().alive  # Kernel Lens's own next agent was not touched
        await client.run({**job, "function": "nothing"}, timeout=120)
    finally:
        await client.close()
        for pid in _with_marker(marker):
            os.kill(pid, 9)


def test_the_module_is_named_as_import_would_name_it(tmp_path: Path) -> None:
    from kernel_lens.agent.usercode import exec_module, module_name_for

    first = tmp_path / "a" / "kl_named_mod.py"
    second = tmp_path / "b" / "kl_named_mod.py"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("def square(v):\n    return v * v\n")
    try:
        module = exec_module(str(first), first.read_text())
        assert module.__name__ == "kl_named_mod" and module.square.__module__ == "kl_named_mod"
        assert sys.modules["kl_named_mod"] is module
        # A user file loaded before is replaced (in-process callers load several) …
        again = exec_module(str(second), second.read_text())
        assert sys.modules["kl_named_mod"] is again
        # … but a module of the agent's own is never: a user ``json.py`` keeps the alias.
        clash = tmp_path / "json.py"
        assert module_name_for(str(clash)) == "_kernel_lens_target_json"
        assert module_name_for(str(tmp_path / "my-file.py")) == "_kernel_lens_target_my-file"
    finally:
        for name in ("kl_named_mod", "_kernel_lens_target_kl_named_mod"):
            sys.modules.pop(name, None)
        for path in (first, second):
            with contextlib.suppress(ValueError):
                sys.path.remove(str(path.parent))
