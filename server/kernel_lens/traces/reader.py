"""The reader process: ``python -m kernel_lens.traces.reader TRACE FOLDER`` reads one trace
file into a `TraceStore` with its summary and saves it in ``FOLDER``, printing its progress as
JSON lines; with ``--serve`` it first imports what reading takes, says ``{"ready": true}``, then
takes ``TRACE`` and ``FOLDER`` from one JSON line on stdin (the language server keeps one such
spare waiting, :mod:`kernel_lens.traces.readers`). It reads one trace and exits, giving its
memory back; a big trace's parse never holds the server's interpreter.
"""

from __future__ import annotations

import dataclasses
import json
import mmap
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from kernel_lens.analysis.trace_columns import TraceColumns, TraceError
from kernel_lens.analysis.trace_store import Piece, build_store, walk_pieces
from kernel_lens.analysis.trace_summary import summarize_columns
from kernel_lens.traces.cache import save_store
from kernel_lens.traces.read import read_columns

__all__ = ["SLOW_DECODER", "fast_decoder", "main", "walk_in_two"]

I64 = npt.NDArray[np.int64]


def main(argv: list[str]) -> int:
    """``TRACE FOLDER``: read TRACE, build its store with its summary, save it in FOLDER.

    Prints JSON lines: ``{"progress": 0..1, "message"}`` while working, ``{"partial": FOLDER
    + ".partial", "fraction", "events"}`` once for a big trace (the store of its first chunk,
    a first view while the rest is read), then ``{"done":
    FOLDER}`` or ``{"error": message}`` (exit code 1).
    """
    path, folder = argv

    def say(obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def progress(fraction: float, message: str) -> None:
        say({"progress": round(fraction, 3), "message": message})

    def on_prefix(columns: TraceColumns, fraction: float) -> None:
        # A first view of a big trace from its first chunk, while the rest is read.
        partial = f"{folder}.partial"
        store = build_store(columns, summary=summarize_columns(columns).to_json())
        save_store(store, partial)
        say({"partial": partial, "fraction": round(fraction, 4), "events": len(columns)})

    decoder = fast_decoder()
    if decoder != "msgspec":
        progress(0.0, SLOW_DECODER)
    try:
        columns = read_columns(path, progress, on_prefix)
        progress(0.7, "summarising")
        summary = _summary_aside(columns)
        store = build_store(columns, progress=progress, walk=walk_in_two)
        store = dataclasses.replace(store, summary=summary())
        del columns
        progress(0.95, "saving the columns")
        save_store(store, folder)
    except TraceError as exc:
        say({"error": str(exc)})
        return 1
    except MemoryError:
        say({"error": f"{path} is too large to read in this machine's memory"})
        return 1
    say({"done": folder, "decoder": decoder})
    return 0


#: Said (progress, then the server's log) when a reader has no msgspec.
SLOW_DECODER = (
    "msgspec is not installed in this Python: reading with the standard json parser (about 7x "
    "slower, about 9x the file in memory); pip install msgspec"
)


def fast_decoder() -> str:
    """``"msgspec"`` when the typed decoder can be imported here, else ``"json"`` (the standard
    parser: a trace of 1M events takes ~9x its file's size in memory and ~7x the time)."""
    try:
        import kernel_lens.traces.decode  # noqa: F401
    except ImportError:
        return "json"
    return "msgspec"


#: Events from which the threads' nesting is walked in two processes.
_WALK_TWO_EVENTS = 400_000


def walk_in_two(pieces: list[Piece]) -> tuple[I64, I64]:
    """`walk_pieces` with the later half of the events walked by a forked process (Linux, big
    traces), which writes its depths and lines into shared memory; a child that fails costs its
    time here (its half is walked here then)."""
    sizes = np.cumsum([len(p[0]) for p in pieces])
    total = int(sizes[-1]) if len(sizes) else 0
    split = int(np.searchsorted(sizes, total // 2, "right")) + 1
    later = pieces[split:]
    if total < _WALK_TWO_EVENTS or not later or not sys.platform.startswith("linux"):
        return walk_pieces(pieces)
    m = total - int(sizes[split - 1])
    out = mmap.mmap(-1, 16 * m)
    try:
        pid = os.fork()
    except OSError:
        out.close()
        return walk_pieces(pieces)
    if pid == 0:  # the child: never returns from here
        code = 1
        try:
            depth, line = walk_pieces(later)
            np.frombuffer(out, np.int64, m, 0)[:] = depth
            np.frombuffer(out, np.int64, m, 8 * m)[:] = line
            code = 0
        finally:
            os._exit(code)
    try:
        try:
            depth, line = walk_pieces(pieces[:split])
        finally:
            _, status = os.waitpid(pid, 0)
        if status != 0:
            later_depth, later_line = walk_pieces(later)
        else:
            later_depth = np.frombuffer(out, np.int64, m, 0).copy()
            later_line = np.frombuffer(out, np.int64, m, 8 * m).copy()
    finally:
        out.close()
    return np.concatenate([depth, later_depth]), np.concatenate([line, later_line])


#: Events from which the summary is computed by a forked process while the store is laid out.
_SUMMARY_ASIDE_EVENTS = 400_000


def _summary_aside(columns: TraceColumns) -> Callable[[], dict[str, Any]]:
    """The summary of ``columns`` as JSON, computed by a forked process while this one lays out
    the store (Linux, big traces): returns the function that waits for it. The summary comes
    through a pipe as the JSON it is saved as; a child that fails costs its time here (the
    summary is computed here then)."""

    def here() -> dict[str, Any]:
        return summarize_columns(columns).to_json()

    if len(columns) < _SUMMARY_ASIDE_EVENTS or not sys.platform.startswith("linux"):
        summary = here()
        return lambda: summary
    try:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
    except OSError:
        summary = here()
        return lambda: summary
    if pid == 0:  # the child: never returns from here
        code = 1
        try:
            os.close(read_fd)
            with os.fdopen(write_fd, "wb") as f:
                f.write(json.dumps(here()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)

    def wait() -> dict[str, Any]:
        with os.fdopen(read_fd, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            return here()
        got: dict[str, Any] = json.loads(data)
        return got

    return wait


def _serve() -> int:
    """``--serve``: import what reading takes, say ``{"ready": true}``, then read the one
    ``{"path", "folder"}`` line
    that comes on stdin as `main` would (the language server keeps such a process waiting, so
    a trace's reading does not wait for Python's start-up and these imports). Exits without
    reading when stdin closes first (the server went)."""
    import contextlib

    with contextlib.suppress(ImportError):
        import kernel_lens.traces.decode  # noqa: F401 (msgspec, when it is there)
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    try:
        job = json.loads(line)
        path, folder = str(job["path"]), str(job["folder"])
    except (ValueError, KeyError, TypeError):
        sys.stdout.write(json.dumps({"error": f"not a reading job: {line.strip()[:200]}"}) + "\n")
        return 1
    return main([path, folder])


if __name__ == "__main__":
    code = _serve() if sys.argv[1:] == ["--serve"] else main(sys.argv[1:])
    # The answer is out (stdout flushed): exit without freeing the trace's millions of objects
    # one by one, which the server would wait for.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
