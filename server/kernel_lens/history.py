"""The history of profiles: every successful run of a function, kept outside the source tree.

One SQLite database, ``history.sqlite3`` (the standard library's :mod:`sqlite3`, WAL mode, a
busy timeout, one transaction per run), in ``$KERNEL_LENS_HISTORY`` if set, else in
``.kernel-lens/history`` of the nearest folder above the file that has a ``.kernel-lens/`` folder
(a user who opts a workspace in), else in ``history/`` of Kernel Lens's cache folder (the folder
:class:`kernel_lens.wire.paths.CacheDirs` chooses: ``$KERNEL_LENS_CACHE``, else
``$XDG_CACHE_HOME/kernel-lens``). A function's runs are keyed by its file's absolute path and
qualified name, numbered ``1``, ``2``… per function (never an id twice, whatever the number of
processes writing), the last :data:`HISTORY_SIZE` kept, the pinned baseline always.

Writers in several processes (the editor, the CLI, terminals) take turns; a write cut short
leaves the store as it was. A damaged store (not a database, malformed) costs only its damaged
rows: a read shows the rows that can still be read (copied row by row into memory, the store
untouched), a write replaces the store by a new one holding them and keeps the damaged file
beside it (``history.sqlite3.damaged-<time>-<pid>``); either is reported once in
:attr:`History.notes` (:mod:`kernel_lens.history_repair`). The JSON-lines files of earlier
versions (``<function>-<key>.jsonl``, a ``.baseline`` beside) are imported when the store is
made; lines that cannot be read are named.

An entry keeps what a later comparison needs and what tells runs apart: time, the function's
text and the file's hash (as they were when the job started), the git commit and whether the
file was dirty, device, versions, an inputs description, the timing (raw samples thinned to
:data:`MAX_SAMPLES` quantiles) and the per-line ops, kernels and device time. Standard library
only (the CLI and the language server both use it; neither imports torch).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import re
import sqlite3
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from kernel_lens.analysis.regular_files import check_regular, read_regular
from kernel_lens.wire import paths

__all__ = [
    "HISTORY_SIZE",
    "MAX_SAMPLES",
    "History",
    "HistoryError",
    "Recorded",
    "cache_root",
    "entry_summary",
    "function_key",
    "git_state",
    "make_entry",
    "record_run",
    "shape_problem",
    "thin_samples",
]

#: Runs kept per function; the oldest goes first.
HISTORY_SIZE = 50
#: Raw timing samples kept per run (quantiles of the sorted samples beyond this).
MAX_SAMPLES = 1000
#: Seconds a ``git`` call may take before the entry goes without git state.
GIT_TIMEOUT_S = 2.0


class HistoryError(Exception):
    """A run that does not exist, or a history that cannot be read."""


def cache_root() -> Path:
    """Kernel Lens's cache folder (:func:`kernel_lens.wire.paths.cache_root`, the agent's too)."""
    return Path(paths.cache_root())


#: A folder of this name at the root of a workspace folder (the editor's; the CLI's is its
#: working directory) opts that workspace in: its history is kept in ``.kernel-lens/history``
#: there, beside the code. Never looked for in the folders above (issue 45 item 7).
WORKSPACE_FOLDER = ".kernel-lens"


def _history_root(path: str | None = None, roots: Iterable[str] | None = None) -> Path:
    """``$KERNEL_LENS_HISTORY``; else ``.kernel-lens/history`` at the root of the workspace
    folder holding ``path`` (``roots``: the editor's workspace folders, by default the working
    directory), when that root has a ``.kernel-lens/`` folder (the user's opt-in); else the
    cache folder. Never a folder above the workspace root."""
    own = os.environ.get("KERNEL_LENS_HISTORY")
    if own:
        return Path(os.path.abspath(own))
    if path is not None:
        from kernel_lens.analysis.places import inside

        file = os.path.abspath(path)
        candidates = [os.path.abspath(r) for r in (roots if roots is not None else [os.getcwd()])]
        # the innermost workspace folder holding the file
        for root in sorted(candidates, key=len, reverse=True):
            if inside(file, [root]) and os.path.isdir(os.path.join(root, WORKSPACE_FOLDER)):
                return Path(root) / WORKSPACE_FOLDER / "history"
    return cache_root() / "history"


def folder_problem(folder: Path, *, uid: int | None = None) -> str | None:
    """Why ``folder`` (an existing history folder, or a ``.kernel-lens`` folder) cannot be
    trusted with the history: owned by another user, or writable by the group or by others
    (anyone could feed it crafted runs or read everyone's); ``None`` when it is fine or absent.
    """
    me = os.geteuid() if uid is None and hasattr(os, "geteuid") else uid
    try:
        st = os.stat(folder)
    except OSError:
        return None  # absent, or not reachable: the store's own use says why
    if not stat.S_ISDIR(st.st_mode):
        return None  # the store's use fails on it, saying so
    if me is not None and st.st_uid != me:
        return f"{folder} is owned by another user (uid {st.st_uid}, you are uid {me})"
    if st.st_mode & 0o022:
        who = "everyone" if st.st_mode & 0o002 else "its group"
        return (
            f"{folder} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o}): "
            f"run `chmod go-w {folder}` if it is yours"
        )
    return None


def thin_samples(samples: list[float], limit: int = MAX_SAMPLES) -> list[float]:
    """``samples`` if there are at most ``limit``, else ``limit`` evenly spaced quantiles of them
    (the distribution, and so the statistics of a comparison, is kept; the order is not)."""
    if len(samples) <= limit:
        return list(samples)
    ordered = sorted(samples)
    n = len(ordered)
    return [ordered[min(n - 1, int((i + 0.5) * n / limit))] for i in range(limit)]


def git_state(path: str) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the repository holding ``path`` (``dirty``: the file differs
    from the commit), or ``None`` outside a repository or without git."""
    folder = os.path.dirname(os.path.abspath(path))

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", folder, *args],
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    status = git("status", "--porcelain", "--", os.path.abspath(path))
    return {"commit": commit.strip(), "dirty": bool(status and status.strip())}


def _inputs_text(inputs: Any, path: str | None) -> str | None:
    from kernel_lens.analysis.lens_text import inputs_args_text, inputs_text

    where = inputs_text(inputs, path)
    if where is None:
        return inputs if isinstance(inputs, str) else None
    args = "; ".join(inputs_args_text(inputs))
    return f"{where} · {args}" if args else where


def make_entry(
    result: dict[str, Any],
    *,
    text: list[str] | None = None,
    file_text: str | None = None,
    git: dict[str, Any] | None = None,
    now: datetime.datetime | None = None,
) -> dict[str, Any]:
    """A history entry from a profile result (without ``id``; :meth:`History.add` gives it one).

    Args:
        result: the profile JSON (``function``, ``path``, ``timing``, ``lines``, ``kernels``…).
        text: the function's lines as profiled (default: the lines in ``result``).
        file_text: the whole file as profiled, for its hash.
        git: :func:`git_state` of the file, if known.
        now: the time of the run (default: now, UTC).
    """
    timing = dict(result.get("timing") or {})
    samples = timing.pop("samples_ms", None)
    keep = {
        k: timing[k]
        for k in (
            "median_ms",
            "spread_pct",
            "reps",
            "method",
            "q1_ms",
            "q3_ms",
            "min_ms",
            "max_ms",
            "warning",
            "policy",  # how it was timed, and the GPU's clocks: runs timed differently are
            "clocks",  # not compared (issue 25)
            "graph",
        )  # fmt: skip
        if k in timing
    }
    if isinstance(samples, list) and samples:
        keep["samples_ms"] = thin_samples([float(s) for s in samples])
    when = now or datetime.datetime.now(datetime.UTC)
    lines = (
        text if text is not None else [str(x.get("source", "")) for x in result.get("lines") or []]
    )
    return {
        "time": when.isoformat(timespec="seconds"),
        "path": result.get("path"),
        "function": result.get("function"),
        "first_line": result.get("first_line"),
        "text": list(lines),
        "file_hash": hashlib.sha256(file_text.encode()).hexdigest()[:16] if file_text else None,
        "git": git,
        "device": result.get("device"),
        "device_kind": result.get("device_kind"),
        "versions": result.get("versions") or {},
        "inputs": _inputs_text(result.get("inputs"), result.get("path")),
        "timing": keep,
        "lines": result.get("lines") or [],
        "kernels": result.get("kernels") or [],
        **_memory_kept(result),
        # A result restored from the history (a reopen, a restart) shows its trace while the
        # file is still in the cache, and the same share of time on lines as when it ran.
        **{k: result[k] for k in ("trace_path", "accounting") if result.get(k) is not None},
    }


def _memory_kept(result: dict[str, Any]) -> dict[str, Any]:
    """A profile with memory: each device's peak and its line (the lines keep their own
    allocations); the live-at-peak lists and the timeline are not kept."""
    memory = result.get("memory")
    if not isinstance(memory, dict):
        return {}
    devices = [
        {
            k: dev.get(k)
            for k in (
                "device",
                "label",
                "peak_bytes",
                "peak_line",
                "peak_in_backward",
                "peak_host_line",
            )
        }  # fmt: skip
        for dev in memory.get("devices") or []
    ]
    return {"memory": {"devices": devices, "source": memory.get("source")}}


def entry_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry without its bulky parts (lines, kernels, samples): what a list shows."""
    timing = {k: v for k, v in (entry.get("timing") or {}).items() if k != "samples_ms"}
    return {
        "id": entry["id"],
        "time": entry.get("time"),
        "function": entry.get("function"),
        "path": entry.get("path"),
        "device": entry.get("device"),
        "device_kind": entry.get("device_kind"),
        "git": entry.get("git"),
        "file_hash": entry.get("file_hash"),
        "versions": entry.get("versions") or {},
        "inputs": entry.get("inputs"),
        "timing": timing,
        "kernel_count": sum(
            float(k.get("calls") or 1)
            for line in entry.get("lines") or []
            for op in line.get("ops") or []
            for k in op.get("kernels") or []
            if k.get("kind", "kernel") == "kernel"
        ),
        **(
            {"peak_bytes": {str(d.get("device")): d.get("peak_bytes") for d in memory["devices"]}}
            if isinstance(memory := entry.get("memory"), dict) and memory.get("devices")
            else {}
        ),
    }


def _slug(function: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", function)[:60] or "function"


def function_key(path: str, function: str) -> str:
    """The key of a function's runs: a hash of its file's absolute path and its qualified name
    (the legacy JSON-lines files were named by it too)."""
    return hashlib.sha256(f"{os.path.abspath(path)}::{function}".encode()).hexdigest()[:16]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def shape_problem(entry: Any) -> str | None:
    """Why ``entry`` is not a run a comparison can read (``None``: it is one)."""
    if not isinstance(entry, dict):
        return f"not a run (a JSON {type(entry).__name__}, not an object)"
    timing = entry.get("timing")
    if not isinstance(timing, dict) or not _is_number(timing.get("median_ms")):
        return "not a run (no timing.median_ms)"
    for key in ("lines", "kernels", "text"):
        if entry.get(key) is not None and not isinstance(entry[key], list):
            return f"not a run ({key} is not a list)"
    return None


def _decode(raw: bytes) -> tuple[Any, str | None]:
    """A JSON value from UTF-8 bytes, or why it cannot be read."""
    try:
        return json.loads(raw.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at {exc.start})"
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"not JSON ({getattr(exc, 'msg', type(exc).__name__)})"


#: The store's file in the history folder.
STORE_NAME = "history.sqlite3"
#: Seconds a writer waits for another's transaction before it gives up.
BUSY_TIMEOUT_S = 30.0
#: The largest legacy JSON-lines file imported.
MAX_LEGACY_BYTES = 256 << 20
#: The schema's version (``PRAGMA user_version``); 0 is a store not yet set up.
SCHEMA_VERSION = 1
#: SQLite's result codes of a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB.
_DAMAGED_CODES = frozenset({11, 26})

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS functions (fkey TEXT PRIMARY KEY, path TEXT, function TEXT,"
    " next_id INTEGER NOT NULL DEFAULT 1, baseline TEXT)",
    "CREATE TABLE IF NOT EXISTS runs (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " fkey TEXT NOT NULL, id TEXT NOT NULL, entry BLOB NOT NULL, UNIQUE (fkey, id))",
    "CREATE TABLE IF NOT EXISTS unreadable (fkey TEXT NOT NULL, source TEXT NOT NULL,"
    " reason TEXT NOT NULL)",
)

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
class History:
    """The runs of every function under one folder (default: see the module docstring), in one
    SQLite database, ``history.sqlite3`` (WAL mode, one transaction per change, so writers in
    several processes neither lose nor duplicate a run and a write cut short changes nothing).

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
        return cls(_history_root(path, roots), read_only=read_only, busy_timeout_s=busy_timeout_s)

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

    # --- the store ---------------------------------------------------------------------------

    def _legacy_files(self) -> list[Path]:
        try:
            return sorted(self.root.glob("*.jsonl"))
        except OSError:
            return []

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
                if not write and not self._legacy_files():
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
        from kernel_lens.history_repair import salvage

        memory = sqlite3.connect(":memory:", isolation_level=None)
        try:
            found = salvage(self.file, memory, _SCHEMA, SCHEMA_VERSION, str(exc))
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
        from kernel_lens.history_repair import salvage

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
                    found = salvage(file, conn, _SCHEMA, SCHEMA_VERSION, str(exc))
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
            for statement in _SCHEMA:
                conn.execute(statement)
            self._import_legacy(conn)
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

    def _import_legacy(self, conn: sqlite3.Connection) -> None:
        """The JSON-lines files of earlier versions (``<slug>-<key>.jsonl`` and its
        ``.baseline``), imported into the store being set up; a line that cannot be read is
        named (in :attr:`notes` and in the function's unreadable runs), never fatal. The files
        are left where they were."""
        for source in self._legacy_files():
            named = re.search(r"-([0-9a-f]{16})\.jsonl$", source.name)
            file_key = named.group(1) if named else None
            try:
                raw = read_regular(source, MAX_LEGACY_BYTES)
            except OSError as exc:
                self.notes.append(f"history: {source.name} not imported ({exc})")
                continue
            keys: set[str] = set()
            for number, line in enumerate(raw.split(b"\n"), 1):
                if not line.strip():
                    continue
                entry, problem = _decode(line)
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
                    self.notes.append(f"history: {where} not imported: {problem}")
                    continue
                fkey = file_key or function_key(str(entry["path"]), str(entry["function"]))
                keys.add(fkey)
                _insert(conn, fkey, entry.get("path"), entry.get("function"), entry)
            baseline = source.with_suffix(".baseline")
            try:
                pinned = read_regular(baseline, 4096).decode("utf-8").strip()
            except (OSError, UnicodeDecodeError):
                pinned = ""
            if pinned and file_key in keys:
                conn.execute("UPDATE functions SET baseline = ? WHERE fkey = ?", (pinned, file_key))

    # --- runs --------------------------------------------------------------------------------

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
                entry, problem = _decode(bytes(raw) if raw is not None else b"")
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
            stored = _insert(conn, fkey, os.path.abspath(path), function, entry, renumber=True)
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


def _insert(
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


@dataclass(frozen=True)
class Recorded:
    """A profile put into its function's history, and its comparison with a reference run.

    Attributes:
        entry: the stored entry (with its ``id``), or the entry alone when it was not kept.
        baseline_id: the pinned baseline's id after the run was added (``None``: none pinned).
        reference: the run it was compared with (``None``: there was none to compare with).
        comparison: :func:`kernel_lens.analysis.compare.compare_results` of ``reference`` and
            ``entry``, labelled ``baseline`` or ``previous`` (``None`` without a reference).
        warnings: what the store had to report (a damaged store read in part or repaired,
            legacy lines not imported): to be shown once.
    """

    entry: dict[str, Any]
    baseline_id: str | None
    reference: dict[str, Any] | None
    comparison: dict[str, Any] | None
    warnings: tuple[str, ...] = ()


def record_run(
    path: str,
    function: str,
    result: dict[str, Any],
    *,
    text: list[str] | None,
    file_text: str | None,
    compare_with: Literal["auto", "previous", "baseline"] | None = "auto",
    keep: bool = True,
    roots: Iterable[str] | None = None,
) -> Recorded:
    """Record a successful profile of ``function`` in ``path`` and compare it with a reference
    run: the one place of the editor's and the CLI's record-and-compare. Blocking (files,
    ``git``).

    Args:
        path: the profiled file (absolute).
        function: its qualified name.
        result: the profile JSON.
        text: the function's lines as profiled (see :func:`make_entry`).
        file_text: the whole file as profiled, for its hash.
        compare_with: ``auto`` (the pinned baseline, else the previous run: the editor's),
            ``previous``, ``baseline``, or ``None`` (no comparison).
        keep: add the run to the history (``False``: only compare it).
        roots: the workspace folders whose root may hold ``.kernel-lens`` (by default the
            working directory).

    Raises:
        HistoryError: the history cannot be read or written.
    """
    from kernel_lens.analysis.compare import compare_results

    history = History.default(path, roots)
    reference: dict[str, Any] | None = None
    label = "previous"
    if compare_with == "auto":
        baseline = history.baseline(path, function)
        previous = next(reversed(history.entries(path, function)), None)
        reference, label = (baseline, "baseline") if baseline is not None else (previous, label)
    elif compare_with == "baseline":
        reference, label = history.baseline(path, function), "baseline"
    elif compare_with == "previous":
        reference = next(reversed(history.entries(path, function)), None)
    entry = make_entry(result, text=text, file_text=file_text, git=git_state(path))
    stored = history.add(path, function, entry) if keep else entry
    comparison = (
        None
        if reference is None
        else compare_results(reference, stored, reference=label, reference_id=str(reference["id"]))
    )
    return Recorded(
        entry=stored,
        baseline_id=history.baseline_id(path, function),
        reference=reference,
        comparison=comparison,
        warnings=tuple(history.notes),
    )
