"""The runs of a function in its history: read them, add one, find one, pin the baseline.

:class:`History` is the :class:`~kernel_lens.history.store.Store` of a history folder, with
the queries over its runs: a function's runs are keyed by its file's absolute path and
qualified name (:func:`~kernel_lens.history.entries.function_key`), numbered ``1``, ``2``… per
function (never an id twice, whatever the number of processes writing), the last
:data:`~kernel_lens.history.store.HISTORY_SIZE` kept, the pinned baseline always. Standard
library only.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from typing import Any

from kernel_lens.history.entries import decode, function_key, shape_problem
from kernel_lens.history.folders import history_root
from kernel_lens.history.schema import insert_run
from kernel_lens.history.store import BUSY_TIMEOUT_S, HistoryError, Store

__all__ = ["History"]


class History(Store):
    """The runs of every function under one folder (default: see :meth:`default`), in its
    store (see :class:`~kernel_lens.history.store.Store` for the attributes)."""

    @classmethod
    def default(
        cls,
        path: str | None = None,
        roots: Iterable[str] | None = None,
        *,
        read_only: bool = False,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> History:
        """The history of ``path``'s runs: ``$KERNEL_LENS_HISTORY``, else the opted-in
        ``.kernel-lens/`` folder at the root of the workspace folder holding the file (``roots``;
        by default the working directory), else the cache folder (read each time, so tests can
        change it). ``read_only``: never written, not even set up (an untrusted workspace's)."""
        return cls(history_root(path, roots), read_only=read_only, busy_timeout_s=busy_timeout_s)

    def read(self, path: str, function: str) -> tuple[list[dict[str, Any]], list[str]]:
        """The runs of ``function`` in ``path``, oldest first, and the runs that could not be
        read, each named with why (a row of another shape, bytes that are not UTF-8 or JSON).

        Raises:
            HistoryError: the store cannot be read.
        """
        fkey = function_key(path, function)

        def fetch(conn: sqlite3.Connection) -> tuple[list[dict[str, Any]], list[str]]:
            entries: list[dict[str, Any]] = []
            problems: list[str] = []
            for source, reason in conn.execute(
                "SELECT source, reason FROM unreadable WHERE fkey = ? ORDER BY rowid", (fkey,)
            ):
                problems.append(f"{source}: {reason}")
            for run_id, raw in conn.execute(
                "SELECT id, entry FROM runs WHERE fkey = ? ORDER BY seq", (fkey,)
            ):
                entry, problem = decode(bytes(raw) if raw is not None else b"")
                problem = problem or shape_problem(entry)
                if problem is not None:
                    problems.append(f"run {run_id}: {problem}")
                    continue
                entry["id"] = str(run_id)
                entries.append(entry)
            return entries, problems

        nothing: tuple[list[dict[str, Any]], list[str]] = ([], [])
        return self._run(fetch, write=False, empty=nothing)

    def with_runs(self, path: str, functions: Iterable[str]) -> set[str]:
        """Which of ``functions`` of ``path`` have runs stored (one read for all: a file's
        lenses ask this for each of its functions, 60 000 in a big one).

        Raises:
            HistoryError: the store cannot be read.
        """
        keys = {function_key(path, f): f for f in functions}

        def fetch(conn: sqlite3.Connection) -> set[str]:
            found = (row[0] for row in conn.execute("SELECT DISTINCT fkey FROM runs"))
            return {keys[k] for k in found if k in keys}

        return self._run(fetch, write=False, empty=set())

    def entries(self, path: str, function: str) -> list[dict[str, Any]]:
        """The runs of ``function`` in ``path`` that can be read, oldest first (see
        :meth:`read` for the others)."""
        return self.read(path, function)[0]

    def add(self, path: str, function: str, entry: dict[str, Any]) -> dict[str, Any]:
        """Add a run in one transaction (given the function's next id, ``"1"``, ``"2"``…, never
        one given before) and drop the oldest beyond :attr:`size` (the pinned baseline stays);
        returns the stored entry.

        Raises:
            HistoryError: the store cannot be written.
        """
        fkey = function_key(path, function)

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            stored = insert_run(conn, fkey, os.path.abspath(path), function, entry, renumber=True)
            baseline = conn.execute(
                "SELECT baseline FROM functions WHERE fkey = ?", (fkey,)
            ).fetchone()[0]
            rows = conn.execute(
                "SELECT seq, id FROM runs WHERE fkey = ? ORDER BY seq", (fkey,)
            ).fetchall()
            excess = len(rows) - self.size
            if excess > 0:
                drop = [(seq,) for seq, run_id in rows if run_id != baseline][:excess]
                conn.executemany("DELETE FROM runs WHERE seq = ?", drop)
            return stored

        return self._run(write, write=True, empty={})

    def get(self, path: str, function: str, run: str) -> dict[str, Any]:
        """One run by id (``"7"``), by position from the end (``"-1"`` the latest, ``"-2"`` the
        one before), or ``"baseline"``.

        Raises:
            HistoryError: no such run.
        """
        entries = self.entries(path, function)
        if run == "baseline":
            found = self.baseline(path, function)
            if found is None:
                raise HistoryError(f"{function} has no baseline (Set as Baseline pins one)")
            return found
        if run.startswith("-") and run[1:].isdigit():
            back = int(run[1:])
            if 0 < back <= len(entries):
                return entries[-back]
        for e in entries:
            if str(e["id"]) == run:
                return e
        have = ", ".join(str(e["id"]) for e in entries[-10:]) or "none"
        raise HistoryError(f"{function} has no run {run} (latest runs: {have})")

    def baseline_id(self, path: str, function: str) -> str | None:
        """The id of the pinned baseline, if any."""
        fkey = function_key(path, function)

        def fetch(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT baseline FROM functions WHERE fkey = ?", (fkey,)).fetchone()
            return None if row is None or not row[0] else str(row[0])

        try:
            return self._run(fetch, write=False, empty=None)
        except HistoryError:
            return None

    def baseline(self, path: str, function: str) -> dict[str, Any] | None:
        """The pinned baseline run (``None``: none pinned, or it has left the history)."""
        wanted = self.baseline_id(path, function)
        if wanted is None:
            return None
        return next((e for e in self.entries(path, function) if str(e["id"]) == wanted), None)

    def set_baseline(self, path: str, function: str, run: str | None) -> dict[str, Any] | None:
        """Pin run ``run`` (an id, ``-1``…) as the baseline, or unpin with ``None``; returns the
        pinned entry.

        Raises:
            HistoryError: no such run.
        """
        fkey = function_key(path, function)
        if run is None:

            def clear(conn: sqlite3.Connection) -> None:
                conn.execute("UPDATE functions SET baseline = NULL WHERE fkey = ?", (fkey,))

            self._run(clear, write=self.file.exists(), empty=None)
            return None
        entry = self.get(path, function, run)

        def pin(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE functions SET baseline = ? WHERE fkey = ?", (entry["id"], fkey))

        self._run(pin, write=True, empty=None)
        return entry
