"""What can still be read of a damaged history store, row by row (issue 39 item 2).

A store with one damaged page used to be moved aside whole, even on a read: every function
then showed 0 runs though most of them were intact. Here each table is copied into a fresh
database one row at a time (by its integer key), so a damaged page costs the rows stored on it
and nothing else; the caller decides where the copy lives — in memory for a read (the store is
not touched), or in a new file that replaces the damaged one on a write (the damaged file kept
beside it). Standard library only.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Salvage", "salvage"]

#: Row keys probed past the last one found when the table's largest key cannot be read.
_PROBE_PAST = 2000
#: The most rows of one table a salvage reads (a bound on a store whose counters are damaged).
_MAX_KEY = 1_000_000


@dataclass(frozen=True)
class Salvage:
    """The rows a salvage copied.

    Attributes:
        kept: runs copied.
        lost: runs whose rows could not be read (their keys are known to have held a row, or
            a lookup of their key failed on a damaged page).
        note: the damage in words, for the log and a warning.
    """

    kept: int
    lost: int
    note: str


def _max_key(src: sqlite3.Connection, table: str, key: str) -> int | None:
    for sql in (
        f"SELECT max({key}) FROM {table}",
        f"SELECT seq FROM sqlite_sequence WHERE name = '{table}'",
    ):  # noqa: E501
        try:
            row = src.execute(sql).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row is not None and isinstance(row[0], int):
            return int(row[0])
    return None


def _rows(
    src: sqlite3.Connection, table: str, key: str, columns: Sequence[str]
) -> tuple[list[tuple[object, ...]], int, bool]:
    """Every readable row of ``table`` in key order, how many keys failed to read between
    readable rows (or up to the table's largest key, when that can be read), and whether
    lookups kept failing past the last readable row with no largest key to bound them (the
    end of the file is gone: how many rows it held cannot be told)."""
    cols = ", ".join(columns)
    try:  # the whole table in one go when its pages are intact
        return list(src.execute(f"SELECT {cols} FROM {table} ORDER BY {key}")), 0, False
    except sqlite3.DatabaseError:
        pass
    top = _max_key(src, table, key)
    out: list[tuple[object, ...]] = []
    failures: list[int] = []
    last_found = 0
    k = 1
    while k <= _MAX_KEY and (k <= (top or 0) or k <= last_found + _PROBE_PAST):
        try:
            row = src.execute(f"SELECT {cols} FROM {table} WHERE {key} = ?", (k,)).fetchone()
        except sqlite3.DatabaseError:
            failures.append(k)
        else:
            if row is not None:
                out.append(row)
                last_found = k
        k += 1
    bound = top if top is not None else last_found
    inside = sum(1 for f in failures if f <= bound)
    return out, inside, top is None and len(failures) > inside


def _copy(
    dst: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    rows: Iterable[tuple[object, ...]],
) -> None:
    marks = ", ".join("?" for _ in columns)
    dst.executemany(f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)


def _open_copy(damaged: Path, spare: Path) -> sqlite3.Connection | None:
    """A read-only connection to a copy of ``damaged`` (and its WAL) that SQLite will open: a
    file cut short still claims its old size in its header, and SQLite then refuses even the
    schema; the copy's header is told its size field is stale (bytes 92–95, "version valid
    for", no longer equal to the change counter), so SQLite takes the size from the file, which
    is padded to whole pages. The damaged file itself is never written."""
    copy = spare / "store.sqlite3"
    try:
        data = bytearray(damaged.read_bytes())
        wal = Path(f"{damaged}-wal")
        if wal.is_file():
            Path(f"{copy}-wal").write_bytes(wal.read_bytes())
    except OSError:
        return None
    if len(data) >= 100 and data[:16] == b"SQLite format 3\x00":
        counter = int.from_bytes(data[24:28], "big")
        data[92:96] = ((counter + 1) & 0xFFFFFFFF).to_bytes(4, "big")
        size = int.from_bytes(data[16:18], "big")
        page = 65536 if size == 1 else size
        if page >= 512 and len(data) % page:
            data.extend(b"\0" * (page - len(data) % page))
    try:
        copy.write_bytes(bytes(data))
        return sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True, isolation_level=None)
    except (OSError, sqlite3.Error):
        return None


def salvage(
    damaged: Path, into: sqlite3.Connection, schema: Sequence[str], version: int, why: str
) -> Salvage:
    """Copy what can be read of ``damaged`` into ``into`` (an empty database: the schema is
    made there), row by row where a whole-table read fails.

    Args:
        damaged: the damaged store, read here (never written: a copy is opened).
        into: where the rows go (``:memory:`` for a read, a new file for a repair).
        schema: the store's ``CREATE TABLE`` statements.
        version: its ``user_version``.
        why: the error that said it was damaged.
    """
    for statement in schema:
        into.execute(statement)
    kept = lost = 0
    cut = False
    with tempfile.TemporaryDirectory(prefix="kernel-lens-salvage-") as spare:
        src = _open_copy(damaged, Path(spare))
        if src is not None:
            try:
                runs, lost, cut = _rows(src, "runs", "seq", ("seq", "fkey", "id", "entry"))
                functions, _, _ = _rows(
                    src, "functions", "rowid", ("fkey", "path", "function", "next_id", "baseline")
                )
                unreadable, _, _ = _rows(src, "unreadable", "rowid", ("fkey", "source", "reason"))
            finally:
                src.close()
    if src is not None:
        _copy(into, "runs", ("seq", "fkey", "id", "entry"), runs)
        _copy(into, "functions", ("fkey", "path", "function", "next_id", "baseline"), functions)
        _copy(into, "unreadable", ("fkey", "source", "reason"), unreadable)
        kept = len(runs)
        # A function whose row was on a damaged page: numbered on after its highest run, so an
        # id is still never given twice.
        for fkey, top in list(
            into.execute(
                "SELECT fkey, max(CAST(id AS INTEGER)) FROM runs WHERE fkey NOT IN "
                "(SELECT fkey FROM functions) GROUP BY fkey"
            )
        ):
            into.execute(
                "INSERT INTO functions (fkey, next_id) VALUES (?, ?)", (fkey, int(top or 0) + 1)
            )
    into.execute(f"PRAGMA user_version = {int(version)}")
    lost_text = f"{lost} lost" if lost else "none lost"
    if src is not None and cut:
        lost_text += " and the runs stored after them (the end of the file is unreadable)"
    note = f"{kept} runs readable, {lost_text}" if src is not None else "nothing readable"
    return Salvage(kept, lost, f"{note} ({why})")
