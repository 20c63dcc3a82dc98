"""The store's tables, and the one way a run goes into them.

``functions`` (one row per function: its key, path, qualified name, next run number and pinned
baseline), ``runs`` (one row per run: the entry as compact JSON bytes) and ``unreadable`` (runs
an import could not read, named with why). :data:`SCHEMA_VERSION` is the database's
``user_version``. Standard library only.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

__all__ = ["SCHEMA", "SCHEMA_VERSION", "STORE_NAME", "insert_run"]

#: The store's file in the history folder.
STORE_NAME = "history.sqlite3"
#: The schema's version (``PRAGMA user_version``); 0 is a store not yet set up.
SCHEMA_VERSION = 1

#: The tables (each statement safe to run again).
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS functions (fkey TEXT PRIMARY KEY, path TEXT, function TEXT,"
    " next_id INTEGER NOT NULL DEFAULT 1, baseline TEXT)",
    "CREATE TABLE IF NOT EXISTS runs (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " fkey TEXT NOT NULL, id TEXT NOT NULL, entry BLOB NOT NULL, UNIQUE (fkey, id))",
    "CREATE TABLE IF NOT EXISTS unreadable (fkey TEXT NOT NULL, source TEXT NOT NULL,"
    " reason TEXT NOT NULL)",
)


def insert_run(
    conn: sqlite3.Connection,
    fkey: str,
    path: Any,
    function: Any,
    entry: dict[str, Any],
    *,
    renumber: bool = False,
) -> dict[str, Any]:
    """Put one run of ``fkey`` into ``runs`` (inside the caller's transaction): its own id when
    it has a free numeric one and ``renumber`` is off (an import), else the function's next."""
    conn.execute(
        "INSERT OR IGNORE INTO functions (fkey, path, function) VALUES (?, ?, ?)",
        (fkey, None if path is None else str(path), None if function is None else str(function)),
    )
    row = conn.execute("SELECT next_id FROM functions WHERE fkey = ?", (fkey,)).fetchone()
    next_id = int(row[0])
    own = str(entry.get("id", ""))
    number = next_id
    if not renumber and own.isdigit() and int(own) > 0:
        taken = conn.execute(
            "SELECT 1 FROM runs WHERE fkey = ? AND id = ?", (fkey, str(int(own)))
        ).fetchone()
        if taken is None:
            number = int(own)
    stored = {"id": str(number), **{k: v for k, v in entry.items() if k != "id"}}
    conn.execute(
        "INSERT INTO runs (fkey, id, entry) VALUES (?, ?, ?)",
        (fkey, str(number), json.dumps(stored, separators=(",", ":")).encode("utf-8")),
    )
    conn.execute(
        "UPDATE functions SET next_id = ? WHERE fkey = ?", (max(next_id, number + 1), fkey)
    )
    return stored
