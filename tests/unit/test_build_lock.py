"""A torch extension's build lock that no process holds is taken back; a live one is waited for
(kernel_lens.agent.build_lock), with torch's own FileBaton, the class load_inline locks with."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from torch.utils.file_baton import FileBaton

from kernel_lens.agent import build_lock
from tests.conftest import run_cli

HOLD = textwrap.dedent(
    """
    import sys, time
    from torch.utils.file_baton import FileBaton
    baton = FileBaton(sys.argv[1])
    assert baton.try_acquire()
    print("held", flush=True)
    time.sleep(60)
    """
)


@pytest.fixture(autouse=True)
def _installed() -> None:
    build_lock.install()
    assert getattr(FileBaton.try_acquire, "_kernel_lens", False)


def _holder(lock: Path) -> subprocess.Popen[str]:
    """A process that takes the lock as torch's build does and keeps it (as a build in
    progress)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_lock_no_process_holds_is_removed_and_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "lock"
    lock.touch()  # what a killed build leaves
    baton = FileBaton(str(lock))
    assert baton.try_acquire() is True
    assert lock.exists()  # now ours, as torch's own try_acquire leaves it
    assert "removed" in capsys.readouterr().err
    baton.release()
    assert not lock.exists()


def test_a_held_lock_is_waited_for_then_taken_once_its_holder_is_killed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "lock"
    holder = _holder(lock)
    try:
        assert build_lock.holders(str(lock)) == [holder.pid]
        assert FileBaton(str(lock)).try_acquire() is False
        err = capsys.readouterr().err
        assert f"process {holder.pid}" in err and "is building" in err
        assert lock.exists()
        # a build killed half-way: its file stays, and no process holds it
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        assert lock.exists() and build_lock.holders(str(lock)) == []
        assert FileBaton(str(lock)).try_acquire() is True
        assert "removed" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait(10)


def test_a_lock_released_between_the_two_looks_is_left_to_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "lock"
    lock.touch()
    # a holder between closing the file and removing it: no holder at the first look, the file
    # gone at the second
    monkeypatch.setattr(build_lock.time, "sleep", lambda _s: lock.unlink())
    assert build_lock.is_stale(str(lock)) is False
    # and one made again meanwhile (another build took it): not the same file
    monkeypatch.setattr(build_lock.time, "sleep", lambda _s: (lock.unlink(), _held_anew(lock)))
    lock.touch()
    assert build_lock.is_stale(str(lock)) is False


def _held_anew(lock: Path) -> None:
    lock.write_text("x")  # a new file's change time differs from the first look's
    os.utime(lock, ns=(1, 1))


def test_a_users_run_takes_back_a_stale_lock(tmp_path: Path) -> None:
    """Through the product: a profiled function whose extension's lock was left by a killed
    build runs, where it waited until the job's limit before."""
    lock = tmp_path / "ext" / "lock"
    lock.parent.mkdir()
    lock.touch()
    user = tmp_path / "user.py"
    user.write_text(
        textwrap.dedent(
            f"""
            import torch
            from torch.utils.file_baton import FileBaton


            def build(x):
                baton = FileBaton({str(lock)!r})  # as load_inline does before it builds
                if not baton.try_acquire():
                    baton.wait()
                    raise RuntimeError("waited on the lock")
                baton.release()
                return x + 1


            if __name__ == "__main__":
                build(torch.ones(2))
            """
        )
    )
    code, out, err = run_cli("profile", f"{user}::build", "--json", "--timeout", "60")
    assert code == 0, err[-2000:]
    assert "build lock that no process holds" in err
    assert not lock.exists()
