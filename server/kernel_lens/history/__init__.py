"""The history of profiles: every successful run of a function, kept outside the source tree.

One SQLite database, ``history.sqlite3``, in ``$KERNEL_LENS_HISTORY`` if set, else in
``.kernel-lens/history`` at the root of the workspace folder holding the file, when that root
has a ``.kernel-lens/`` folder (a user who opts a workspace in), else in ``history/`` of Kernel
Lens's cache folder (the folder :class:`kernel_lens.wire.paths.CacheDirs` chooses:
``$KERNEL_LENS_CACHE``, else ``$XDG_CACHE_HOME/kernel-lens``). A function's runs are keyed by
its file's absolute path and qualified name, numbered ``1``, ``2``… per function, the last
:data:`HISTORY_SIZE` kept, the pinned baseline always. Standard library only (the CLI and the
language server both use it; neither imports torch).

The rooms, from the leaves up (each imports only those above it):

- :mod:`~kernel_lens.history.folders`: where a history lives, and whether its folder can be
  trusted with it;
- :mod:`~kernel_lens.history.entries`: what a run keeps (:func:`make_entry` from a profile
  result, :func:`entry_summary`, :func:`function_key`, :func:`shape_problem`);
- :mod:`~kernel_lens.history.schema`: the tables, and the one way a run goes into them;
- :mod:`~kernel_lens.history.migrate`: the JSON-lines files of earlier versions, imported when
  the store is made;
- :mod:`~kernel_lens.history.repair`: what can still be read of a damaged store, row by row;
- :mod:`~kernel_lens.history.store`: the database opened, set up and used one transaction at a
  time (WAL, writers taking turns, damaged or read-only stores);
- :mod:`~kernel_lens.history.queries`: :class:`History`, the runs of a function (read, add,
  get, pin the baseline);
- :mod:`~kernel_lens.history.record`: :func:`record_run`, the one record-and-compare of the
  editor and the CLI.

Import the names from here (``from kernel_lens.history import History``); the modules are the
package's own layout.
"""

from __future__ import annotations

from kernel_lens.history.entries import (
    MAX_SAMPLES,
    entry_summary,
    function_key,
    git_state,
    make_entry,
    shape_problem,
    thin_samples,
)
from kernel_lens.history.folders import WORKSPACE_FOLDER, cache_root, folder_problem
from kernel_lens.history.queries import History
from kernel_lens.history.record import Recorded, record_run
from kernel_lens.history.schema import STORE_NAME
from kernel_lens.history.store import BUSY_TIMEOUT_S, HISTORY_SIZE, HistoryError

__all__ = [
    "BUSY_TIMEOUT_S",
    "HISTORY_SIZE",
    "MAX_SAMPLES",
    "STORE_NAME",
    "WORKSPACE_FOLDER",
    "History",
    "HistoryError",
    "Recorded",
    "cache_root",
    "entry_summary",
    "folder_problem",
    "function_key",
    "git_state",
    "make_entry",
    "record_run",
    "shape_problem",
    "thin_samples",
]
