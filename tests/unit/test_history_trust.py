"""The history stays with its owner (issue 45 items 7 and 9): its folder is found at the
workspace root or in the cache, never in a folder above; a folder another user owns, or one
others may write, is refused with a message saying why and where; a read-only history (an
untrusted workspace's) is never written, not even set up."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernel_lens.history import History, HistoryError, folder_problem, make_entry

RESULT = {
    "function": "f",
    "device": "cpu",
    "timing": {"median_ms": 1.0, "spread_pct": 1.0, "reps": 3, "samples_ms": [1.0, 1.0, 1.0]},
    "lines": [],
}


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("KERNEL_LENS_HISTORY", raising=False)
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "shared" / "ws"
    source = ws / "model.py"
    source.parent.mkdir(parents=True)
    source.write_text("def f(x):\n    return x\n")
    return ws, source


def test_an_ancestors_kernel_lens_folder_is_never_used(no_env: Path) -> None:
    """Another user's ``/tmp/.kernel-lens`` (here: a folder above the workspace) collects
    nothing: the history is the cache's."""
    ws, source = _workspace(no_env)
    (no_env / "shared" / ".kernel-lens").mkdir()
    history = History.default(str(source), [str(ws)])
    assert history.root == no_env / "cache" / "history"
    history.add(str(source), "f", make_entry(RESULT, text=None, file_text=None, git=None))
    assert not (no_env / "shared" / ".kernel-lens" / "history").exists()


def test_a_folder_owned_by_another_user_is_refused(no_env: Path) -> None:
    ws, source = _workspace(no_env)
    folder = ws / ".kernel-lens"
    folder.mkdir(mode=0o755)
    os.chown(folder, 65534, 65534)
    problem = folder_problem(folder)
    assert problem is not None and "owned by another user (uid 65534" in problem
    history = History.default(str(source), [str(ws)])
    for act in (
        lambda: history.entries(str(source), "f"),
        lambda: history.add(
            str(source), "f", make_entry(RESULT, text=None, file_text=None, git=None)
        ),
    ):
        with pytest.raises(HistoryError) as caught:
            act()
        message = str(caught.value)
        assert "owned by another user" in message and str(folder) in message
    assert not (folder / "history").exists()


@pytest.mark.parametrize(("mode", "who"), [(0o777, "everyone"), (0o775, "its group")])
def test_a_folder_others_may_write_is_refused(no_env: Path, mode: int, who: str) -> None:
    ws, source = _workspace(no_env)
    folder = ws / ".kernel-lens" / "history"
    folder.mkdir(parents=True)
    os.chmod(folder, mode)
    history = History.default(str(source), [str(ws)])
    with pytest.raises(HistoryError, match=f"writable by {who}"):
        history.entries(str(source), "f")
    with pytest.raises(HistoryError, match="chmod go-w"):
        history.add(str(source), "f", make_entry(RESULT, text=None, file_text=None, git=None))


def test_the_users_own_cache_folder_is_made_private_not_refused(no_env: Path) -> None:
    folder = no_env / "cache" / "history"
    folder.mkdir(parents=True, mode=0o775)
    os.chmod(folder, 0o775)
    history = History.default(str(no_env / "x.py"), [])
    history.add(str(no_env / "x.py"), "f", make_entry(RESULT, text=None, file_text=None, git=None))
    assert os.stat(folder).st_mode & 0o022 == 0
    assert len(history.entries(str(no_env / "x.py"), "f")) == 1


def test_a_new_history_folder_is_private(no_env: Path) -> None:
    history = History.default(str(no_env / "x.py"), [])
    history.add(str(no_env / "x.py"), "f", make_entry(RESULT, text=None, file_text=None, git=None))
    assert os.stat(history.root).st_mode & 0o077 == 0


def test_a_read_only_history_is_read_never_written(no_env: Path) -> None:
    path = str(no_env / "x.py")
    writable = History.default(path, [])
    writable.add(path, "f", make_entry(RESULT, text=None, file_text=None, git=None))
    before = {p.name: p.stat().st_mtime_ns for p in writable.root.iterdir()}
    read_only = History.default(path, [], read_only=True)
    assert len(read_only.entries(path, "f")) == 1
    with pytest.raises(HistoryError, match="Restricted Mode"):
        read_only.add(path, "f", make_entry(RESULT, text=None, file_text=None, git=None))
    with pytest.raises(HistoryError, match="Restricted Mode"):
        read_only.set_baseline(path, "f", "-1")
    assert len(writable.entries(path, "f")) == 1
    assert writable.baseline_id(path, "f") is None
    after = {p.name: p.stat().st_mtime_ns for p in writable.root.iterdir()}
    assert after.get("history.sqlite3") == before.get("history.sqlite3")


def test_a_read_only_history_makes_no_store(no_env: Path) -> None:
    """No store, a legacy file beside: a read-only read imports nothing, creates nothing."""
    root = no_env / "cache" / "history"
    root.mkdir(parents=True, mode=0o700)
    (root / "f-0123456789abcdef.jsonl").write_text("{}\n")
    read_only = History.default(str(no_env / "x.py"), [], read_only=True)
    assert read_only.entries(str(no_env / "x.py"), "f") == []
    assert not (root / "history.sqlite3").exists()


def test_a_fifo_as_the_store_is_refused_at_once(no_env: Path) -> None:
    root = no_env / "cache" / "history"
    root.mkdir(parents=True, mode=0o700)
    os.mkfifo(root / "history.sqlite3")
    for read_only in (False, True):
        history = History.default(str(no_env / "x.py"), [], read_only=read_only)
        with pytest.raises(HistoryError, match="not a regular file"):
            history.entries(str(no_env / "x.py"), "f")
