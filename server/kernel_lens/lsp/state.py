"""What the server knows, owned in one place: one :class:`DocumentState` per document in a
:class:`DocumentStore`, bounded caches, and the running jobs.

``textDocument/didClose`` releases a document's state as a whole (profile, Nsight Compute and
sweep results, diagnostics, compiled kernels). Every cache here has a size bound, so a long session
does not grow without end.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lsprotocol import types

from kernel_lens.analysis.notebook_script import NotebookScript
from kernel_lens.lsp.results import Record
from kernel_lens.traces.readers import ReaderPool
from kernel_lens.wire.errors import ErrorObject

if TYPE_CHECKING:  # numpy and pandas: imported once a trace is opened, not at start-up
    from kernel_lens.analysis.trace_store import TraceStore

__all__ = [
    "ASM_CACHE_SIZE",
    "DiagnosticKey",
    "TRACE_CACHE_SIZE",
    "TIMELINE_CACHE_SIZE",
    "DocumentState",
    "DocumentStore",
    "Job",
    "LRU",
    "RunLines",
    "TraceCaches",
]

K = TypeVar("K")
V = TypeVar("V")

#: A group of a document's diagnostics: ``(source, key)``, e.g. ``("profile", "square")``,
#: ``("syntax", "")``, ``("ncu", "square")`` (one per hint), ``("nvcc", "")``, ``("lint", "")``,
#: ``("cell", <cell URI>)``. A group is set and cleared as a whole: no key is matched by prefix.
DiagnosticKey = tuple[str, str]

#: Compiled kernels kept per document (one entry per kernel, arch and text version).
ASM_CACHE_SIZE = 16
#: Loaded trace files kept (zooming re-reads the same file).
TRACE_CACHE_SIZE = 4
#: Overview timelines kept (one per trace file).
TIMELINE_CACHE_SIZE = 8
#: Trace stores kept mapped per server (``TraceCaches.stores``).
TRACE_STORES_KEPT = 8


class LRU(Generic[K, V]):
    """A mapping that keeps the ``size`` most recently used entries."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an LRU needs room for at least one entry")
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recent), or ``None``."""
        if key not in self._items:
            return None
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: K, value: V) -> None:
        """Store ``value``; the least recently used entry goes when the cache is full."""
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def discard(self, key: K) -> None:
        """Drop ``key``'s entry, if any."""
        self._items.pop(key, None)

    def clear(self) -> None:
        """Drop every entry."""
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._items))


@dataclass
class Job:
    """A running agent job: cancelling sets ``cancelled``."""

    uri: str
    qualname: str
    token: str
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class DocumentState:
    """Everything the server holds for one document (by URI).

    Attributes:
        records: the last profile job per function (qualified name).
        syntax_error: the syntax error a profile attempt hit (a lens until a good profile).
        diagnostics: the published diagnostics by :data:`DiagnosticKey` (each key's in a list),
            in the order they were set (a key set again keeps its place).
        ncu: the last Nsight Compute result per function.
        sweeps: the last sweep result per function.
        asm: the agent's ``asm`` results by (kernel, arch, text digest), bounded.
        asm_latest: the last ``asm`` result per kernel, for the kernel's lens.
        inputs: the inputs of each function's last good run.
    """

    records: dict[str, Record] = field(default_factory=dict)
    syntax_error: ErrorObject | None = None
    diagnostics: dict[DiagnosticKey, list[types.Diagnostic]] = field(default_factory=dict)
    ncu: dict[str, dict[str, Any]] = field(default_factory=dict)
    sweeps: dict[str, dict[str, Any]] = field(default_factory=dict)
    asm: LRU[tuple[Any, ...], dict[str, Any]] = field(default_factory=lambda: LRU(ASM_CACHE_SIZE))
    asm_latest: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The last Show Values run per kernel (its program, grid and out-of-bounds accesses), for
    #: the kernel's lens.
    values_latest: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The inputs (a result's ``inputs`` object) of each function's last good run, for the
    #: quick fix that writes a directive with their shapes and dtypes.
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The driver each function's inputs come from (``{"driver", "argv", "cwd", "env"}``), as
    #: chosen from a quick fix: every later profile of the function runs it.
    drivers: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The arguments of this script's whole-script runs (``sys.argv[1:]``), as last given.
    script_args: list[str] = field(default_factory=list)
    #: The reading of this document's last runs from the history (started when it opens; the
    #: first lens answer waits for it), ``None`` before it starts or to try again.
    restore: asyncio.Future[None] | None = None
    #: A lens answer gave up waiting for :attr:`restore`: its end refreshes the lenses.
    lens_waited_out: bool = False


class DocumentStore:
    """The one owner of per-document state: documents are added on first use and released on
    close."""

    def __init__(self) -> None:
        self._docs: dict[str, DocumentState] = {}

    def __call__(self, uri: str) -> DocumentState:
        """The state of ``uri``, created on first use."""
        state = self._docs.get(uri)
        if state is None:
            state = self._docs[uri] = DocumentState()
        return state

    def peek(self, uri: str) -> DocumentState | None:
        """The state of ``uri`` if it has any (reading never creates state)."""
        return self._docs.get(uri)

    def release(self, uri: str) -> DocumentState | None:
        """Forget everything about ``uri``; returns what was held."""
        return self._docs.pop(uri, None)

    def __contains__(self, uri: object) -> bool:
        return uri in self._docs

    def __len__(self) -> int:
        return len(self._docs)

    # Profile records, the most used part of a document's state.

    def put(self, uri: str, record: Record) -> None:
        """Store (replace) the record of one function."""
        self(uri).records[record.qualname] = record

    def get(self, uri: str, qualname: str) -> Record | None:
        """The record of one function, if any."""
        state = self._docs.get(uri)
        return None if state is None else state.records.get(qualname)

    def records(self, uri: str) -> list[Record]:
        """All records of a document."""
        state = self._docs.get(uri)
        return [] if state is None else list(state.records.values())

    def forget(self, uri: str) -> None:
        """Drop a closed document's state (same as :meth:`release`)."""
        self.release(uri)


@dataclass
class RunLines:
    """One workspace file's lines from a whole run of another file (``model.py``'s, from a
    *Profile Script* of ``bench.py``): its lenses carry the run they came from.

    Attributes:
        run_path: the script that ran.
        stamp: when (``12:03``, local time).
        rows: the file's lines (``ProfileLine`` objects), each with the text it had.
        device_kind: ``cuda`` or ``cpu``.
        function: the function profiled (``None``: a whole run of ``run_path``).
        package: the named package the file is in (``None``: a workspace file): its lenses
            are results only, nothing runs from it.
        packages: the packages the run was attributed inside (re-run with the same).
        mode: ``deep`` (rows are ``ProfileLine`` objects) or ``light`` (*Profile Script
            (Light)*: rows are ``LightLine`` objects).
        light: a light run's numbers for the whole run (its path, device, total kernel time,
            label), for the lenses' shares and the hover.
    """

    run_path: str
    stamp: str
    rows: list[dict[str, Any]]
    device_kind: str
    function: str | None = None
    package: str | None = None
    packages: list[str] = field(default_factory=list)
    mode: str = "deep"
    light: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        """``from bench.py, 12:03``."""
        return f"from {self.run_path.rsplit('/', 1)[-1]}, {self.stamp}"


@dataclass
class TraceCaches:
    """Trace files read for the report and the trace viewer, by path and modification time.

    Attributes:
        traces: path → (mtime, the loaded trace).
        timelines: path → (mtime, the overview timeline).
    """

    traces: LRU[str, tuple[float, dict[str, Any]]] = field(
        default_factory=lambda: LRU(TRACE_CACHE_SIZE)
    )
    timelines: LRU[str, tuple[float, dict[str, Any]]] = field(
        default_factory=lambda: LRU(TIMELINE_CACHE_SIZE)
    )
    #: path → ((size, mtime ns), its columnar store), kept mapped (the columns are
    #: memory-mapped: little resident memory); ``lsp/traces.py``
    stores: LRU[str, tuple[tuple[int, int], TraceStore]] = field(
        default_factory=lambda: LRU(TRACE_STORES_KEPT)
    )
    #: (path, size, mtime ns) → the reading under way, which every request for it waits for
    loading: dict[tuple[str, int, int], TraceLoading] = field(default_factory=dict)
    #: the server's reader processes (its spare reader), made at the first reading
    readers: ReaderPool | None = None


class TraceLoading:
    """A trace being read, how many requests wait for it, and the store of its first chunk
    (``first``: a first view of a big trace, set while the rest is read)."""

    def __init__(self, task: asyncio.Task[TraceStore], first: asyncio.Future[Any] | None) -> None:
        self.task = task
        self.first = first
        self.waiters = 0


@dataclass
class CellRun:
    """The last Profile Cell job of one cell of a notebook (``lsp/notebooks.py``).

    Attributes:
        state: ``running``, ``ok``, ``error`` or ``cancelled``.
        text: the script text (cells up to this one) it ran.
        result: the script result (``ok``).
        error: the error object.
        skipped: how many IPython lines were neutralised in that text.
    """

    state: str
    text: str
    result: dict[str, Any] | None = None
    error: ErrorObject | None = None
    skipped: int = 0


@dataclass
class NotebookState:
    """One open notebook: its virtual script and its cells' runs."""

    uri: str
    virtual_uri: str
    script: NotebookScript | None = None
    version: int = 0
    runs: dict[str, CellRun] = field(default_factory=dict)


class NotebookStates:
    """The open notebooks of one server, by notebook URI and by virtual script URI
    (``lsp/notebooks.py``)."""

    def __init__(self) -> None:
        self.by_notebook: dict[str, NotebookState] = {}
        self.by_virtual: dict[str, NotebookState] = {}
