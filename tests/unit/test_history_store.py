"""The history's SQLite store (issue 26): writers in several processes neither lose nor
duplicate a run, a write cut short changes nothing, a damaged store is read in part and
replaced, the JSON-lines files of earlier versions are imported once and their unreadable lines
named."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernel_lens.history import STORE_NAME, History, HistoryError, function_key, make_entry


def _result(median: float = 0.5, path: str = "/w/k.py", function: str = "f") -> dict:
    return {
        "function": function,
        "path": path,
        "timing": {"median_ms": median, "spread_pct": 1.0},
        "lines": [{"line": 4, "source": "return x * x", "ops": []}],
        "kernels": [],
    }


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from kernel_lens.history import History, make_entry

    root, worker, runs = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    history = History(root, size=10_000)
    for i in range(runs):
        function = "f" if i % 2 == 0 else "g"
        result = {"function": function, "path": "/w/k.py",
                  "timing": {"median_ms": worker + i / 1000}, "lines": [], "kernels": []}
        history.add("/w/k.py", function, make_entry(result))
    """
)


def test_concurrent_writer_processes_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    workers, runs = 6, 20
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(w), str(runs)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    history = History(tmp_path, size=10_000)
    f = history.entries("/w/k.py", "f")
    g = history.entries("/w/k.py", "g")
    # Every run of every writer is there, exactly once, and ids are 1..n per function.
    assert len(f) == len(g) == workers * runs // 2
    assert sorted(int(e["id"]) for e in f) == list(range(1, len(f) + 1))
    assert sorted(int(e["id"]) for e in g) == list(range(1, len(g) + 1))
    made = sorted(round(e["timing"]["median_ms"], 3) for e in f + g)
    assert made == sorted(round(w + i / 1000, 3) for w in range(workers) for i in range(runs))
    assert history.read("/w/k.py", "f")[1] == []


KILLED = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import kernel_lens.history as h
    import kernel_lens.history.queries as q

    real = q.insert_run
    def insert_then_die(*args, **kwargs):
        real(*args, **kwargs)
        os._exit(3)  # the process dies inside the transaction, before its commit
    q.insert_run = insert_then_die
    result = {"function": "f", "path": "/w/k.py", "timing": {"median_ms": 9.0},
              "lines": [], "kernels": []}
    h.History(Path(sys.argv[1])).add("/w/k.py", "f", h.make_entry(result))
    """
)


def test_a_write_cut_short_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    history = History(tmp_path)
    for _ in range(3):
        history.add("/w/k.py", "f", make_entry(_result()))
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3, done.stderr
    assert [e["id"] for e in history.entries("/w/k.py", "f")] == ["1", "2", "3"]
    assert history.add("/w/k.py", "f", make_entry(_result()))["id"] == "4"
    assert history.notes == []


def test_garbage_in_place_of_the_store_is_moved_aside_and_replaced(tmp_path: Path) -> None:
    (tmp_path / STORE_NAME).write_bytes(b"\xffnot a database at all\x00" * 200)
    history = History(tmp_path)
    stored = history.add("/w/k.py", "f", make_entry(_result()))
    assert stored["id"] == "1"
    assert len(history.notes) == 1 and "was damaged" in history.notes[0], history.notes
    aside = [p for p in tmp_path.glob(f"{STORE_NAME}.damaged-*") if p.name[-1].isdigit()]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"\xffnot a database")
    assert [e["id"] for e in History(tmp_path).entries("/w/k.py", "f")] == ["1"]
    # Reported once: the next use finds a sound store.
    again = History(tmp_path)
    again.add("/w/k.py", "f", make_entry(_result()))
    assert again.notes == []


def _big_store(tmp_path: Path, runs: int, functions: int = 1) -> Path:
    history = History(tmp_path, size=1000)
    big = _result()
    big["lines"] = [{"line": i, "source": "x" * 200, "ops": []} for i in range(50)]
    for i in range(runs):
        history.add("/w/k.py", f"f{i % functions}" if functions > 1 else "f", make_entry(big))
    # Fold the WAL into the database, so the damage below is the whole story.
    with sqlite3.connect(tmp_path / STORE_NAME) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for leftover in tmp_path.glob(f"{STORE_NAME}-*"):
        leftover.unlink()
    return tmp_path / STORE_NAME


def test_a_truncated_store_loses_only_its_missing_rows(tmp_path: Path) -> None:
    """Issue 39 item 2: a read shows what can still be read and never moves the store; the
    next write repairs it, keeping every readable run, the damaged file kept beside it."""
    file = _big_store(tmp_path, 40)
    data = file.read_bytes()
    assert len(data) > 3 * 4096
    file.write_bytes(data[: len(data) // 3])
    before = file.read_bytes()
    reader = History(tmp_path)
    readable = reader.entries("/w/k.py", "f")
    assert 0 < len(readable) < 40, len(readable)
    assert [int(e["id"]) for e in readable] == sorted(int(e["id"]) for e in readable)
    assert len(reader.notes) == 1 and "is damaged" in reader.notes[0]
    assert f"{len(readable)} runs readable" in reader.notes[0]
    assert "database disk image is malformed" in reader.notes[0]
    assert file.read_bytes() == before  # a read never moves or changes the store
    assert list(tmp_path.glob(f"{STORE_NAME}.damaged-*")) == []
    writer = History(tmp_path)
    stored = writer.add("/w/k.py", "f", make_entry(_result()))
    assert int(stored["id"]) > max(int(e["id"]) for e in readable)  # never an id twice
    assert len(writer.notes) == 1 and "repaired" in writer.notes[0], writer.notes
    aside = [p for p in tmp_path.glob(f"{STORE_NAME}.damaged-*") if p.name[-1].isdigit()]
    assert len(aside) == 1 and aside[0].read_bytes() == before
    after = History(tmp_path)
    ids = [e["id"] for e in after.entries("/w/k.py", "f")]
    assert ids == [e["id"] for e in readable] + [stored["id"]]
    assert after.notes == []  # reported once: the store is sound again


def test_one_damaged_page_costs_its_runs_not_the_history(tmp_path: Path) -> None:
    """The battery's case: one page overwritten in a store of 81 runs of 3 functions — the
    runs on other pages stay readable for every function."""
    file = _big_store(tmp_path, 81, functions=3)
    data = bytearray(file.read_bytes())
    page = 4096
    pages = len(data) // page
    victim = pages * 2 // 3  # a page of run data, well past the schema and the indexes
    data[victim * page : (victim + 1) * page] = b"\xa5" * page
    file.write_bytes(bytes(data))
    history = History(tmp_path)
    counts = [len(history.entries("/w/k.py", f"f{i}")) for i in range(3)]
    total = sum(counts)
    assert all(c > 0 for c in counts), counts
    assert 70 <= total < 81, counts
    assert history.notes and "is damaged" in history.notes[0]


def test_rows_of_another_shape_are_named_not_fatal(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.add("/w/k.py", "f", make_entry(_result()))
    key = function_key("/w/k.py", "f")
    with sqlite3.connect(tmp_path / STORE_NAME) as conn:
        conn.execute(
            "INSERT INTO runs (fkey, id, entry) VALUES (?, '7', ?)", (key, b'{"timing": {}}')
        )
        conn.execute("INSERT INTO runs (fkey, id, entry) VALUES (?, '8', ?)", (key, b"\xff\xfe"))
    entries, unreadable = history.read("/w/k.py", "f")
    assert [e["id"] for e in entries] == ["1"]
    assert unreadable == [
        "run 7: not a run (no timing.median_ms)",
        "run 8: not UTF-8 (byte 0xff at 0)",
    ]


def test_legacy_json_lines_are_imported_once_and_bad_lines_named(tmp_path: Path) -> None:
    key = function_key("/w/k.py", "f")
    good = [json.dumps({"id": str(i), **make_entry(_result(0.1 * i))}) for i in (1, 2, 4)]
    lines = [
        good[0].encode(),
        good[1].encode()[:40] + b"\xff" + good[1].encode()[40:],  # an invalid byte
        json.dumps({"id": "3", "median_ms": 1.0}).encode(),  # a row of another shape
        good[2].encode(),
        b'{"id": "5", "tim',  # torn by a full disk
    ]
    (tmp_path / f"f-{key}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / f"f-{key}.baseline").write_text("4\n")
    history = History(tmp_path)
    entries, unreadable = history.read("/w/k.py", "f")
    assert [e["id"] for e in entries] == ["1", "4"]
    assert history.baseline_id("/w/k.py", "f") == "4"
    assert unreadable == [
        f"f-{key}.jsonl line 2: not UTF-8 (byte 0xff at 40)",
        f"f-{key}.jsonl line 3: not a run (no timing.median_ms)",
        f"f-{key}.jsonl line 5: not JSON (Unterminated string starting at)",
    ]
    assert len(history.notes) == 3
    # The next run follows the highest imported id; a second use imports nothing again.
    assert history.add("/w/k.py", "f", make_entry(_result()))["id"] == "5"
    again = History(tmp_path)
    assert [e["id"] for e in again.entries("/w/k.py", "f")] == ["1", "4", "5"]
    assert again.notes == []


def test_reading_a_folder_without_a_store_makes_none(tmp_path: Path) -> None:
    history = History(tmp_path / "none")
    assert history.read("/w/k.py", "f") == ([], [])
    assert history.baseline_id("/w/k.py", "f") is None
    assert not (tmp_path / "none").exists()


def test_which_functions_have_runs_is_one_read_for_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's lenses ask which of its functions have runs (60 000 in a big file): one read,
    the same answer as asking each one's entries."""
    history = History(tmp_path)
    assert history.with_runs("/w/k.py", ["f", "g"]) == set()
    assert not tmp_path.joinpath(STORE_NAME).exists()  # a read makes no store
    history.add("/w/k.py", "f", make_entry(_result()))
    history.add("/w/other.py", "g", make_entry(_result(path="/w/other.py", function="g")))
    names = ["f", "g", "h", *(f"n{i}" for i in range(5000))]
    connects: list[int] = []
    real = sqlite3.connect

    def counting(*args: object, **kwargs: object) -> sqlite3.Connection:
        connects.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", counting)
    found = history.with_runs("/w/k.py", names)
    monkeypatch.undo()
    assert found == {"f"} == {n for n in ["f", "g", "h"] if history.entries("/w/k.py", n)}
    assert len(connects) == 1


def test_a_read_only_folder_shows_its_runs_read_only(tmp_path: Path) -> None:
    """Issue 39 item 7: a history on a read-only mount (as root too) shows its runs; a write
    says the folder is read-only and changes nothing."""
    import subprocess

    mount = tmp_path / "ro"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        history = History(mount)
        for _ in range(3):
            history.add("/w/k.py", "f", make_entry(_result()))
        history.set_baseline("/w/k.py", "f", "2")
        remount = ["mount", "-o", "remount,ro", str(mount)]
        assert subprocess.run(remount, capture_output=True, check=False).returncode == 0
        reader = History(mount)
        assert [e["id"] for e in reader.entries("/w/k.py", "f")] == ["1", "2", "3"]
        assert reader.baseline_id("/w/k.py", "f") == "2"
        with pytest.raises(HistoryError) as err:
            reader.add("/w/k.py", "f", make_entry(_result()))
        assert "is read-only" in str(err.value)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
