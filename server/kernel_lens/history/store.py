"""The store: one SQLite database per history folder, opened, set up and used one transaction
at a time, whatever state its file is in.

``history.sqlite3`` (the standard library's :mod:`sqlite3`, WAL mode, a busy timeout, one
transaction per change), so writers in several processes (the editor, the CLI, terminals) take
turns, and a write cut short leaves the store as it was. A damaged store (not a database,
malformed) costs only its damaged rows: a read shows the rows that can still be read (copied
row by row into memory, the store untouched), a write replaces the store by a new one holding
them and keeps the damaged file beside it (``history.sqlite3.damaged-<time>-<pid>``); either
is reported once in :attr:`Store.notes` (:mod:`kernel_lens.history.repair`). A folder that is
read-only, or a workspace that is not trusted, is read without being written or set up. The
runs themselves (read, add, pin) are :class:`kernel_lens.history.queries.History`'s. Standard
library only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from kernel_lens.analysis.regular_files import check_regular
from kernel_lens.history.folders import WORKSPACE_FOLDER, cache_root, folder_problem
from kernel_lens.history.migrate import import_legacy, legacy_files
from kernel_lens.history.schema import SCHEMA, SCHEMA_VERSION, STORE_NAME
from kernel_lens.wire import paths

__all__ = ["BUSY_TIMEOUT_S", "HISTORY_SIZE", "HistoryError", "Store"]

#: Runs kept per function; the oldest goes first.
HISTORY_SIZE = 50
#: Seconds a writer waits for another's transaction before it gives up.
BUSY_TIMEOUT_S = 30.0
#: SQLite's result codes of a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB.
_DAMAGED_CODES = frozenset({11, 26})


class HistoryError(Exception):
    """A run that does not exist, or a history that cannot be read."""


_T = TypeVar("_T")


def _in_words(exc: BaseException, file: Path) -> str:
    """A storage fault in words: SQLite says ``disk I/O error`` or ``database or disk is full``
    for a full disk, ``attempt to write a readonly database`` for a read-only folder."""
    import errno

    text = str(exc)
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return f"the disk holding {file.parent} is full"
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", 0) or 0
        full = (code & 0xFF) == 13 or "is full" in text  # SQLITE_FULL
        if full or ((code & 0xFF) == 10 or "disk I/O error" in text):  # SQLITE_IOERR
            try:
                st = os.statvfs(file.parent)
                if full or st.f_bavail * st.f_frsize < 1 << 20:
                    return f"the disk holding {file.parent} is full ({text})"
            except OSError:
                pass
        if "readonly" in text:
            return f"{file.parent} is read-only ({text})"
        if "locked" in text or (code & 0xFF) == 5:  # SQLITE_BUSY
            return (
                "it is locked by another process writing to it (a profile being recorded in a "
                "terminal?): try again in a moment; nothing was changed"
            )
    return text


def _writable(folder: Path) -> bool:
    """Whether this process can make files in ``folder`` (a read-only mount says no even to
    root, whom permission bits do not stop)."""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return False
    except (OSError, AttributeError):
        pass
    return os.access(folder, os.W_OK)


def _damaged(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _DAMAGED_CODES
    text = str(exc)
    return "not a database" in text or "malformed" in text


@dataclass(frozen=True)
class Store:
    """The history folder's database, ``history.sqlite3`` (WAL mode, one transaction per change,
    so writers in several processes neither lose nor duplicate a run and a write cut short
    changes nothing).

    Attributes:
        root: the folder.
        size: runs kept per function.
        notes: what this object had to report while using the store (a damaged store moved
            aside, legacy lines that could not be imported): shown once, by the caller.
    """

    root: Path
    size: int = HISTORY_SIZE
    notes: list[str] = field(default_factory=list, compare=False, repr=False)
    read_only: bool = False
    busy_timeout_s: float = BUSY_TIMEOUT_S
    """How long a write waits for another process's (the language server waits less: a locked
    store then says so rather than holding an action)."""

    def _check_folders(self) -> None:
        """Refuse a history folder (or its ``.kernel-lens``) that is another user's or writable
        by others; the cache's own folder, when it is this user's, is made private instead.

        Raises:
            HistoryError: why, and where the history was looked for.
        """
        guarded = [self.root]
        if self.root.parent.name == WORKSPACE_FOLDER:
            guarded.insert(0, self.root.parent)
        for folder in guarded:
            problem = folder_problem(folder)
            if problem and folder == cache_root() / "history" and "writable" in problem:
                with contextlib.suppress(OSError):  # the user's own cache: made private
                    os.chmod(folder, stat.S_IMODE(os.stat(folder).st_mode) & ~0o022)
                    problem = folder_problem(folder)
            if problem:
                raise HistoryError(
                    f"history folder refused: {problem}. Kernel Lens keeps the history in "
                    f"{self.root} ($KERNEL_LENS_HISTORY, else .kernel-lens/history at the "
                    "workspace root, else its cache folder): nothing was read or written there"
                )

    @property
    def file(self) -> Path:
        """The database."""
        return self.root / STORE_NAME

    def _run(self, fn: Callable[[sqlite3.Connection], _T], *, write: bool, empty: _T) -> _T:
        """``fn(connection)`` in one transaction (``BEGIN IMMEDIATE`` for a write: writers take
        turns, waiting up to :data:`BUSY_TIMEOUT_S`); on a damaged store a read reads what can
        be read of it (in memory), a write repairs it once and makes the call again.

        Raises:
            HistoryError: the store cannot be opened, read or written (or ``fn`` raised it).
        """
        file = self.file
        verb = "write" if write else "read"
        if write and self.read_only:
            raise HistoryError(
                "the history is not written in Restricted Mode (an untrusted workspace): "
                "trust the workspace to record runs or pin a baseline; nothing was changed"
            )
        self._check_folders()
        if self.read_only:
            return self._read_only(fn, empty)
        if write and self.root.is_dir() and not _writable(self.root):
            raise HistoryError(
                f"cannot write {file}: the folder {self.root} is read-only (its runs can still "
                "be read); nothing was changed"
            )
        if not write and self.file.exists() and not _writable(self.root):
            # A read-only folder (a read-only mount, another user's copy): its runs are shown,
            # read-only, rather than hidden behind "unable to open database file".
            return self._read_only(fn, empty)
        for attempt in range(2):
            try:
                inode: int | None = check_regular(file).st_ino
            except FileNotFoundError:
                inode = None
                if not write and not legacy_files(self.root):
                    return empty  # nothing recorded yet: no store is made by a read
            except OSError as exc:
                raise HistoryError(f"cannot {verb} {file}: {exc.strerror or exc}") from None
            try:
                if inode is None:
                    self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
                conn = sqlite3.connect(file, timeout=self.busy_timeout_s, isolation_level=None)
            except (OSError, sqlite3.Error) as exc:
                raise HistoryError(f"cannot {verb} {file}: {exc}") from None
            try:
                self._prepare(conn)
                return _transaction(conn, fn, write=write)
            except sqlite3.DatabaseError as exc:
                if attempt == 0 and _damaged(exc):
                    conn.close()
                    if not write:
                        # A read never moves the store: what can be read of it, in memory.
                        return self._read_salvaged(fn, exc)
                    self._repair(inode, exc)
                    continue
                raise HistoryError(f"cannot {verb} {file}: {_in_words(exc, file)}") from None
            finally:
                conn.close()
        raise HistoryError(f"cannot {verb} {file}: damaged again after it was repaired")

    def _read_salvaged(self, fn: Callable[[sqlite3.Connection], _T], exc: Exception) -> _T:
        """``fn`` on the readable rows of the damaged store, copied into memory; said once in
        :attr:`notes`. The store itself is not touched (it is repaired on the next write)."""
        from kernel_lens.history.repair import salvage

        memory = sqlite3.connect(":memory:", isolation_level=None)
        try:
            found = salvage(self.file, memory, SCHEMA, SCHEMA_VERSION, str(exc))
            self.notes.append(
                f"history store {self.file} is damaged: {found.note}; shown read-only, it is "
                "repaired when the next run is recorded"
            )
            return _transaction(memory, fn, write=False)
        finally:
            memory.close()

    def _repair(self, inode: int | None, exc: Exception) -> None:
        """Replace a damaged store by a new one holding every row that can still be read; the
        damaged file kept beside it (``history.sqlite3.damaged-<time>-<pid>``, WAL files too).
        A store another process already replaced is left alone. Said in :attr:`notes`."""
        from kernel_lens.history.repair import salvage

        file = self.file
        with self._lock():
            try:
                current: int | None = os.stat(file).st_ino
            except OSError:
                current = None
            if current is None or current != inode:
                return
            stamp = time.strftime("%Y%m%d-%H%M%S")
            aside = file.with_name(f"{file.name}.damaged-{stamp}-{os.getpid()}")
            fresh = Path(paths.temp_beside(str(file)))
            try:
                conn = sqlite3.connect(fresh, isolation_level=None)
                try:
                    conn.execute("BEGIN")
                    found = salvage(file, conn, SCHEMA, SCHEMA_VERSION, str(exc))
                    conn.execute("COMMIT")
                finally:
                    conn.close()
                os.replace(file, aside)
                for suffix in ("-wal", "-shm"):
                    with contextlib.suppress(FileNotFoundError):
                        os.replace(f"{file}{suffix}", f"{aside}{suffix}")
                os.replace(fresh, file)
            except (OSError, sqlite3.Error) as err:
                paths.remove_quietly(str(fresh))
                raise HistoryError(
                    f"{file} is damaged ({exc}), cannot repair it: {_in_words(err, file)}"
                ) from None
        self.notes.append(
            f"history store {file} was damaged: {found.note}; repaired, the damaged file "
            f"kept as {aside.name}"
        )

    def _read_only(self, fn: Callable[[sqlite3.Connection], _T], empty: _T) -> _T:
        """``fn`` on the store opened read-only: nothing set up, imported or moved aside. In a
        folder this process cannot write, a WAL store cannot make its shared-memory file, so
        it is opened as immutable (nothing else can be writing there either)."""
        file = self.file
        try:
            check_regular(file)
        except FileNotFoundError:
            return empty
        except OSError as exc:
            raise HistoryError(f"cannot read {file}: {exc.strerror or exc}") from None
        modes = ["mode=ro"] + ([] if _writable(self.root) else ["mode=ro&immutable=1"])
        if not _writable(self.root):
            modes.reverse()
        failure: sqlite3.Error | None = None
        for mode in modes:
            try:
                conn = sqlite3.connect(
                    f"{file.as_uri()}?{mode}",
                    uri=True,
                    timeout=self.busy_timeout_s,
                    isolation_level=None,
                )
            except sqlite3.Error as exc:
                failure = exc
                continue
            try:
                if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                    return empty
                return _transaction(conn, fn, write=False)
            except sqlite3.Error as exc:
                failure = exc
            finally:
                conn.close()
        raise HistoryError(f"cannot read {file}: {_in_words(failure or Exception(), file)}")

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """WAL mode, the busy timeout, the schema; the legacy JSON-lines files imported once."""
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        if conn.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
            return

        def set_up(conn: sqlite3.Connection) -> None:
            if conn.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
                return  # another process did it while this one waited
            for statement in SCHEMA:
                conn.execute(statement)
            import_legacy(conn, self.root, self.notes)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

        _transaction(conn, set_up, write=True)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """An exclusive lock on ``.history.lock`` beside the store (POSIX; elsewhere none)."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        with open(self.root / ".history.lock", "a", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def _transaction(
    conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], _T], *, write: bool
) -> _T:
    """``fn(conn)`` in one transaction: all of it or, on any exception, none of it."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        out = fn(conn)
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return out
