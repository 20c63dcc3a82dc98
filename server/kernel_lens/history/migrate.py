"""The JSON-lines files of earlier versions, imported into the store when it is made.

Each function's runs were ``<slug>-<key>.jsonl`` (one JSON entry a line), its pinned baseline a
``.baseline`` file beside it. :func:`import_legacy` copies them into the tables of a store being
set up (inside its transaction); a line that cannot be read is named, never fatal, and the
files are left where they were. Standard library only.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from kernel_lens.analysis.regular_files import read_regular
from kernel_lens.history.entries import decode, function_key, shape_problem
from kernel_lens.history.schema import insert_run

__all__ = ["MAX_LEGACY_BYTES", "import_legacy", "legacy_files"]

#: The largest legacy JSON-lines file imported.
MAX_LEGACY_BYTES = 256 << 20


def legacy_files(root: Path) -> list[Path]:
    """The legacy JSON-lines files in the history folder ``root``, by name."""
    try:
        return sorted(root.glob("*.jsonl"))
    except OSError:
        return []


def import_legacy(conn: sqlite3.Connection, root: Path, notes: list[str]) -> None:
    """The JSON-lines files of earlier versions in ``root`` (``<slug>-<key>.jsonl`` and its
    ``.baseline``), imported into the store being set up; a line that cannot be read is
    named (in ``notes`` and in the function's unreadable runs), never fatal. The files
    are left where they were."""
    for source in legacy_files(root):
        named = re.search(r"-([0-9a-f]{16})\.jsonl$", source.name)
        file_key = named.group(1) if named else None
        try:
            raw = read_regular(source, MAX_LEGACY_BYTES)
        except OSError as exc:
            notes.append(f"history: {source.name} not imported ({exc})")
            continue
        keys: set[str] = set()
        for number, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            entry, problem = decode(line)
            problem = problem or shape_problem(entry)
            where = f"{source.name} line {number}"
            if problem is None and file_key is None:
                if not entry.get("path") or not entry.get("function"):
                    problem = "no path or function"
            if problem is not None:
                if file_key is not None:
                    conn.execute(
                        "INSERT INTO unreadable (fkey, source, reason) VALUES (?, ?, ?)",
                        (file_key, where, problem),
                    )
                notes.append(f"history: {where} not imported: {problem}")
                continue
            fkey = file_key or function_key(str(entry["path"]), str(entry["function"]))
            keys.add(fkey)
            insert_run(conn, fkey, entry.get("path"), entry.get("function"), entry)
        baseline = source.with_suffix(".baseline")
        try:
            pinned = read_regular(baseline, 4096).decode("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            pinned = ""
        if pinned and file_key in keys:
            conn.execute("UPDATE functions SET baseline = ? WHERE fkey = ?", (pinned, file_key))
