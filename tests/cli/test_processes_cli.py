"""User code that uses processes (issue 26 items 4 and 5): ``multiprocessing`` with spawn and
forkserver works under Kernel Lens as under plain Python, every process a job started is gone
when it ends (new sessions and double-forked daemons included), a job stuck on its workers says
so, and a function that closes the agent's descriptors gets a ``crash`` on its line.

Real ``kernel-lens`` CLI runs (real agent, real worker processes, CPU). The user files import no
torch, so that a spawned worker starts in a fraction of a second.
"""

from __future__ import annotations

import os
import secrets
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import kl, lineno

FEW = ["--stages", "timing,ops", "--reps", "2", "--warmup-ms", "1", "--budget-ms", "5"]
FEW += ["--runs", "1", "--no-history"]

POOL = """\
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor


def square(v):
    return v * v


def with_pool(method):
    with mp.get_context(method).Pool(2) as pool:
        out = pool.map(square, range(6))
    assert out == [0, 1, 4, 9, 16, 25], out
    return sum(out)


def spawn_pool():
    return with_pool("spawn")


def forkserver_pool():
    return with_pool("forkserver")


def executor():
    with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        out = list(ex.map(square, range(6)))
    assert out == [0, 1, 4, 9, 16, 25], out
    return sum(out)


if __name__ == "__main__":
    print("total", spawn_pool())
"""

SCRIPT = """\
import multiprocessing as mp
import sys


def cube(v):
    return v * v * v


def main(method):
    with mp.get_context(method).Pool(2) as pool:
        out = pool.map(cube, range(5))
    assert out == [0, 1, 8, 27, 64], out
    print("cubes", out)


if __name__ == "__main__":
    main(sys.argv[1])
"""


def _write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _with_marker(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
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


def _gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The pids of ``pids`` still alive after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    left = [p for p in pids if _alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [p for p in left if _alive(p)]
    return left


@pytest.mark.timeout(300)
@pytest.mark.parametrize("func", ["spawn_pool", "forkserver_pool", "executor"])
def test_a_profiled_function_with_a_process_pool_runs_as_under_python(
    tmp_path: Path, func: str
) -> None:
    # The workers unpickle ``square`` by its module's name: they must import this file by it.
    path = _write(tmp_path, POOL, "pooled.py")
    code, out, err, _ = kl("profile", f"{path}::{func}", "--json", *FEW, "--timeout", "120")
    assert code == 0, (out, err[-3000:])
    assert out["function"] == func
    assert out["timing"]["median_ms"] > 0
    assert "ModuleNotFoundError" not in err


@pytest.mark.timeout(300)
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_whole_script_with_a_process_pool_runs_as_under_python(
    tmp_path: Path, method: str
) -> None:
    # The workers re-import the script through ``__main__.__file__`` as ``__mp_main__``.
    path = _write(tmp_path, SCRIPT, "script_pool.py")
    code, out, err, _ = kl("profile", str(path), "--json", "--timeout", "120", "--", method)
    assert code == 0, (out, err[-3000:])
    assert out["function"] == "<script>" or out["call_style"] == "script", out.get("function")
    assert "cubes [0, 1, 8, 27, 64]" in err
    assert "ModuleNotFoundError" not in err


@pytest.mark.timeout(200)
def test_no_process_of_the_job_outlives_it(tmp_path: Path) -> None:
    # A child in a new session and a double-forked daemon (its own session too): neither is in
    # the agent's process group, both are gone when the job ends.
    marker = f"{1000 + secrets.randbelow(10**6) / 10**7:.7f}"
    path = _write(
        tmp_path,
        f"""\
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
        """,
        "leaver.py",
    )
    try:
        code, out, err, _ = kl("profile", f"{path}::leave_processes", "--json", *FEW)
        assert code == 0, (out, err[-3000:])
        assert _gone(_with_marker(marker), 3.0) == []
    finally:
        for pid in _with_marker(marker):
            os.kill(pid, 9)


@pytest.mark.timeout(200)
def test_a_job_stuck_on_its_workers_says_which_and_leaves_none(tmp_path: Path) -> None:
    # Each worker fails importing the file, the pool starts new ones: pool.map waits forever.
    pids = tmp_path / "worker_pids.txt"
    path = _write(
        tmp_path,
        f"""\
        import multiprocessing as mp
        import os

        if mp.parent_process() is not None:
            with open({str(pids)!r}, "a") as fh:
                fh.write(f"{{os.getpid()}}\\n")
            raise RuntimeError("this module cannot be imported in a worker")


        def square(v):
            return v * v


        def stuck():
            with mp.get_context("spawn").Pool(2) as pool:
                return sum(pool.map(square, range(4)))
        """,
        "stuck.py",
    )
    code, out, err, _ = kl("profile", f"{path}::stuck", "--json", *FEW, "--timeout", "12")
    assert code == 1, (out, err[-3000:])
    error = out["error"]
    assert error["kind"] == "timeout", error
    assert error["line"] == lineno(path, "pool.map(square")
    message = error["message"]
    assert "waiting on" in message and "child process" in message, message
    assert "multiprocessing.spawn" in message, message
    assert "RuntimeError: this module cannot be imported in a worker" in message, message
    workers = [int(x) for x in pids.read_text().split()]
    assert workers, "no worker started"
    assert _gone(workers, 3.0) == []


CLOSER = """\
import os
import time


def close_everything():
    x = 1
    os.closerange(0, 1024)
    return x


def close_through_file_objects():
    for fd in range(3, 256):
        try:
            os.fdopen(fd, "rb").close()
        except OSError:
            pass
    time.sleep(2)
    return 1
"""


@pytest.mark.timeout(200)
@pytest.mark.parametrize(
    "func, line_text",
    [
        ("close_everything", "os.closerange(0, 1024)"),
        # Not through os.close: the watcher sees it, on the line the job was on then.
        ("close_through_file_objects", "time.sleep(2)"),
    ],
)
def test_closing_the_agents_descriptors_is_a_crash_on_the_line(
    tmp_path: Path, func: str, line_text: str
) -> None:
    path = _write(tmp_path, CLOSER, "closer.py")
    code, out, err, _ = kl("profile", f"{path}::{func}", "--json", *FEW, "--timeout", "60")
    assert code == 1, (out, err[-3000:])
    error = out["error"]
    assert error["kind"] == "crash", error
    assert error["line"] == lineno(path, line_text), error
    assert "channel to the agent" in error["message"], error
    assert "Traceback" not in error["message"]
    assert "kernel_lens" not in (error.get("traceback") or "")
