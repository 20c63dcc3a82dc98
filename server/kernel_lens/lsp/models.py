"""One parse per document version: the :class:`~kernel_lens.analysis.document_model.DocumentModel`
of each open document, computed off the event loop and kept by (URI, version).

Lenses, hovers, result placement and the timing lint's diagnostics all read the model; nothing
parses a document's text per request any more.

Where the work runs:

- a small text (up to :data:`INLINE_CHARS`, a thousand lines or so) is analysed on the event loop,
  at once: a few tens of milliseconds, less than a trip to another process;
- a bigger one in a worker process (:data:`WORKER`: one, started on the first big document and
  kept). Not a thread: ``ast.parse`` and the walks over the tree are Python holding the GIL, and
  a thread would stop the event loop as surely as running them inline. The worker keeps the
  tree of the versions it analysed, so the lint of a version reuses the parse its lenses made.
  A newer version of a document cancels the older one's work still queued.

A big document's first lenses do not wait for its tree: :meth:`DocumentModels.first` scans its
text without ``ast`` (:mod:`kernel_lens.analysis.def_scan`, a few tenths of a second for 6 MB, in
a thread) for its functions and the lens roles it can be sure of, and the lens feature answers
with their rows while the worker makes the full model; when that adds lenses the client is
asked to refresh (``workspace/codeLens/refresh``). So each version is read twice, each once: the
scan, and the one ``ast.parse`` of the worker. Where the scan cannot answer (the show-all
setting, a distributed script, results in an untrusted workspace) the lens request waits at
most :data:`LENS_WAIT_S` for the model, then answers one lens saying it is reading. Requests on
other documents never wait.

A helper of the feature layer; it imports no feature module.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import logging
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from kernel_lens.analysis import def_scan, document_model
from kernel_lens.analysis.document_model import DocumentModel
from kernel_lens.analysis.timing_lint import TimingIssue
from kernel_lens.lsp.state import LRU


class KernelLensServer(Protocol):
    """What this module reads of the server (its documents and settings); not imported, so
    that the server can own a :class:`DocumentModels`."""

    @property
    def workspace(self) -> Any: ...

    @property
    def settings(self) -> Any: ...


__all__ = ["INLINE_CHARS", "LENS_WAIT_S", "DocumentModels", "FirstLenses", "LensRows"]

logger = logging.getLogger(__name__)

#: Texts up to this many characters (~500 functions) are analysed on the event loop (tens of
#: milliseconds).
INLINE_CHARS = 32_000
#: How long a lens request waits for a model before it answers "reading…" (then refreshes).
LENS_WAIT_S = 0.5
#: How much lower the worker's CPU priority is than the server's (``os.nice``).
WORKER_NICE = 5
#: Seconds the worker waits before each model (tests: the first lenses of a big file come
#: from the scan of its text, not by timing).
MODEL_DELAY_ENV = "KERNEL_LENS_TEST_MODEL_DELAY_S"
#: Models kept (by URI, version and the show-all setting); lints kept.
MODELS_KEPT = 32

#: ``(uri, version or text hash, show_all)``.
ModelKey = tuple[str, Any, bool]


@dataclass(frozen=True)
class LensRows:
    """The lens rows of a big document's functions before any run, made and serialised in the
    worker (``code_lens.rows_ahead``): one JSON text per lens target, ``""`` for none.

    Attributes:
        trusted: each target's row (``None``: made on the loop, a kernel's).
        untrusted: each target's row in an untrusted workspace.
    """

    trusted: tuple[str | None, ...]
    untrusted: tuple[str, ...]


@dataclass
class FirstLenses:
    """A big document's first lenses, from the scan of its text (no tree).

    Attributes:
        targets: ``(first line, qualified name, role)`` of each function the scan gives a lens
            (``profile`` or ``kernel``), in source order.
        process_group: the text calls ``init_process_group``.
        trusted: whether ``rows`` are for a trusted workspace (as it was when they were made).
        rows: trusted, the ``profile`` targets' rows; untrusted, every target's (its trust
            lens): JSON, joined, as :class:`LensRows`'.
        refresh_armed: a refresh is asked once the full model is ready (if it differs).
    """

    targets: tuple[tuple[int, str, str], ...]
    process_group: bool
    trusted: bool
    rows: str
    refresh_armed: bool = False
    #: every function the scan found: ``(first line, qualified name, def line, offset of its
    #: def line, offset of the next statement at its level, is a method, role)``, in order
    functions: tuple[tuple[int, str, int, int, int, bool, str], ...] = ()
    #: each function's row (``""``: none, or a kernel's), as in ``rows``
    function_rows: tuple[str, ...] = ()
    #: the text with strings and comments blanked (where a function's last statement ends)
    code: str = ""
    #: the first answer held results: the full model's answer is asked for in any case
    answered_results: bool = False

    def same_lenses(self, model: DocumentModel) -> bool:
        """Whether the full model gives the same lenses (nothing to refresh)."""
        if model.syntax_error is not None or model.module_work or model.load_inline:
            return False
        if model.process_group != self.process_group:
            return False
        full = tuple(
            (t.info.first_line, t.info.qualname, t.role) for t in model.targets if t.role != "none"
        )
        return (
            not self.answered_results
            and full == self.targets
            and not any(t.sweep_params for t in model.targets)
        )


#: ``rows(uri, functions, trusted)``: each function's first row, JSON (``""`` for none; the
#: lens feature's ``first_rows``); ``functions`` are ``(first line, qualified name, role)``.
FirstRowsMaker = Callable[[str, list[tuple[int, str, str]], bool], list[str]]


def first_work(uri: str, source: str, rows: FirstRowsMaker, trusted: bool) -> FirstLenses:
    """In a thread: the scan's lens targets of a text, and their rows (the collector off: tens
    of thousands of new tuples, no cycles; a collection in the server's heap costs more than
    the scan of a few MB)."""
    with _no_gc(freeze=False):
        found = def_scan.outline(source)
        roles, process_group = def_scan.outline_targets(source, found)
        functions = tuple(
            (d.first_line, d.qualname, d.def_line, d.def_start, d.end, d.is_method, role)
            for d, role in roles
        )
        del roles
        targets = tuple((f[0], f[1], f[6]) for f in functions if f[6] != "none")
        made = rows(uri, [(f[0], f[1], f[6]) for f in functions], trusted)
        return FirstLenses(
            targets,
            process_group,
            trusted,
            ",".join([r for r in made if r]),
            functions=functions,
            function_rows=tuple(made),
            code=found.code,
        )


#: ``rows(uri, source, model, unstructure)``: a document's lens rows made ahead (the lens
#: feature's ``rows_ahead``, handed over by reference: this module imports no feature).
RowsMaker = Callable[[str, str, DocumentModel, Callable[[Any], Any]], LensRows]


def work(
    key: ModelKey, source: str, rows_ahead: RowsMaker | None
) -> tuple[DocumentModel, LensRows | None]:
    """In the worker: the model of a text, and its lens rows made ahead (``None`` when it
    does not parse, or no maker was given)."""
    import attrs

    from kernel_lens.lsp.convert import server_converter

    delay = float(os.environ.get(MODEL_DELAY_ENV) or 0.0)
    if delay > 0:
        time.sleep(delay)
    with _no_gc():
        model = document_model.analyze_keyed(key, source, key[2])
        if model.syntax_error is not None or rows_ahead is None:
            return model, None
        with attrs.validators.disabled():  # the lenses' values are ours; checks cost half the time
            rows = rows_ahead(key[0], source, model, server_converter().unstructure)
    return model, rows


def lint_work(key: ModelKey, source: str) -> tuple[TimingIssue, ...]:
    """In the worker: the timing lint of a text (on the tree its model's work kept)."""
    with _no_gc():
        return document_model.lint_keyed(key, source)


@contextlib.contextmanager
def _no_gc(*, freeze: bool = True) -> Iterator[None]:
    """The cyclic garbage collector off while a big text is parsed and walked (in the worker;
    also around the scan of a text in the server's thread, there with ``freeze=False``: the
    server's heap is not frozen).

    A 6 MB file's tree is a million objects, made in one go and without cycles (freed by their
    reference counts): each collection the allocations trigger walks all that are alive, so
    with the collector on, parsing and walking such a tree takes several times as long (50 s
    instead of 5 for ``ast.parse`` of the 60 000-function benchmark file, another tree alive).

    What is alive at the end (the tree kept for the lint, the result being sent) is frozen
    (``gc.freeze``): the collections that follow never walk it — they would cost seconds, paid
    while the result is pickled — and it is freed by its reference counts all the same."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was:
            gc.enable()


async def _outlive(future: asyncio.Future[Any]) -> None:
    """Wait for ``future`` to end, however it ends (failed, cancelled: another version, a
    closed document); only the waiter's own cancellation goes on."""
    try:
        await asyncio.shield(future)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
    except Exception:  # the scan's failure is its lens request's to report
        pass


def _background() -> None:
    """The worker's work is background work (a big file's full model, its lint): it yields
    the CPU to the server's loop and its scan of the same file (its first lenses), and to the
    editor, on a machine with few cores."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WORKER_NICE)


class DocumentModels:
    """The models of a server's documents, by (URI, version): one parse per version.

    Args:
        inline_chars: the size up to which a text is analysed on the loop (tests lower it).
    """

    def __init__(self, inline_chars: int = INLINE_CHARS) -> None:
        self.inline_chars = inline_chars
        self._models: LRU[ModelKey, DocumentModel] = LRU(MODELS_KEPT)
        self._rows: LRU[ModelKey, LensRows] = LRU(MODELS_KEPT)
        self._lints: LRU[tuple[str, Any], tuple[TimingIssue, ...]] = LRU(MODELS_KEPT)
        self._pending: dict[ModelKey, asyncio.Future[DocumentModel]] = {}
        #: The worker's futures behind ``_pending`` (cancelled with them).
        self._workers: dict[ModelKey, asyncio.Future[Any]] = {}
        self._pending_lints: dict[tuple[str, Any], asyncio.Future[tuple[TimingIssue, ...]]] = {}
        self._firsts: LRU[ModelKey, FirstLenses] = LRU(MODELS_KEPT)
        self._pending_firsts: dict[ModelKey, asyncio.Future[FirstLenses]] = {}
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        #: Set by :meth:`shutdown`.
        self._closed = False
        #: How many texts were analysed (parsed), for tests and the benchmark.
        self.analysed = 0
        #: Makes a big document's lens rows in the worker (set by the lens feature).
        self.rows_ahead: RowsMaker | None = None
        #: Makes a big document's first lens rows from its scan (set by the lens feature).
        self.first_rows: FirstRowsMaker | None = None
        #: How many texts were scanned for their first lenses, for tests and the benchmark.
        self.scanned = 0

    # -- keys -----------------------------------------------------------------------------

    @staticmethod
    def version_of(ls: KernelLensServer, uri: str, source: str) -> Any:
        """The document's version when ``source`` is its open text, else the text's hash (a
        notebook's virtual script, a text given by a caller)."""
        doc = ls.workspace.text_documents.get(uri)
        if doc is not None and doc.version is not None and doc.source is source:
            return doc.version
        return ("text", len(source), hash(source))

    def _key(self, ls: KernelLensServer, uri: str, source: str) -> ModelKey:
        return (uri, self.version_of(ls, uri, source), bool(ls.settings.show_all_lenses))

    # -- models ---------------------------------------------------------------------------

    def ready(self, ls: KernelLensServer, uri: str, source: str) -> DocumentModel | None:
        """The model of this text if it is made already."""
        return self._models.get(self._key(ls, uri, source))

    def rows(self, ls: KernelLensServer, uri: str, source: str) -> LensRows | None:
        """The lens rows the worker made ahead for this text (big texts only)."""
        return self._rows.get(self._key(ls, uri, source))

    def now(self, ls: KernelLensServer, uri: str, source: str) -> DocumentModel:
        """The model of this text, made here and now if need be (on the loop: for a caller that
        cannot wait, e.g. a notebook's virtual script, or a command about one function)."""
        key = self._key(ls, uri, source)
        found = self._models.get(key)
        if found is None:
            found = self._analyse_here(key, source)
        return found

    def _analyse_here(self, key: ModelKey, source: str) -> DocumentModel:
        model = document_model.analyze(source, show_all=key[2])
        self.analysed += 1
        self._keep(key, model, None)
        return model

    async def first(self, ls: KernelLensServer, uri: str, source: str) -> FirstLenses | None:
        """A big text's first lenses from the scan of its text (made once per version, in a
        thread: the loop answers other requests meanwhile); ``None`` when the scan is not used
        (the show-all setting: every function's lenses need the tree, or no rows maker)."""
        key = self._key(ls, uri, source)
        if key[2] or self.first_rows is None:
            return None
        found = self._firsts.get(key)
        if found is not None:
            return found
        future = self._pending_firsts.get(key)
        if future is None:
            self._cancel_older_scans(uri, key)
            future = asyncio.ensure_future(
                asyncio.to_thread(
                    first_work, uri, source, self.first_rows, bool(ls.settings.workspace_trusted)
                )
            )
            self._pending_firsts[key] = future

            def done(f: asyncio.Future[FirstLenses], key: ModelKey = key) -> None:
                self._pending_firsts.pop(key, None)
                if not f.cancelled() and f.exception() is None:
                    self.scanned += 1
                    for other in list(self._firsts):
                        if other[0] == key[0] and other != key:
                            self._firsts.discard(other)
                    if self._models.get(key) is None:  # a model made meanwhile: not needed
                        self._firsts.put(key, f.result())

            future.add_done_callback(done)
        return await asyncio.shield(future)

    def _keep(self, key: ModelKey, model: DocumentModel, rows: LensRows | None) -> None:
        """Keep a document's newest model only (a big file's model and rows are hundreds of
        MB: its older versions go as soon as a newer one is ready)."""
        for other in list(self._models):
            if other[0] == key[0] and other != key:
                self._models.discard(other)
                self._rows.discard(other)
        for other in list(self._firsts):
            if other[0] == key[0]:
                self._firsts.discard(other)  # the full model answers from now on
        self._models.put(key, model)
        if rows is not None:
            self._rows.put(key, rows)

    async def get(self, ls: KernelLensServer, uri: str, source: str) -> DocumentModel:
        """The model of this text: kept, made at once (small), or made in the worker."""
        key = self._key(ls, uri, source)
        found = self._models.get(key)
        if found is not None:
            return found
        if len(source) <= self.inline_chars:
            return self._analyse_here(key, source)
        scan = self._pending_firsts.get(key)
        if scan is not None and key not in self._pending:
            # The scan of the text first (its first lenses): on a machine of two cores the
            # worker's parse would halve its speed. A few tenths of a second for 6 MB.
            await _outlive(scan)
            found = self._models.get(key)
            if found is not None:
                return found
        future = self._pending.get(key)
        if future is None:
            self._cancel_older(uri, key)
            worked = self._submit(key, work, key, source, self.rows_ahead)
            future = asyncio.get_running_loop().create_future()
            self._pending[key] = future

            def done(
                f: asyncio.Future[tuple[DocumentModel, LensRows | None]], key: ModelKey = key
            ) -> None:
                self._pending.pop(key, None)
                self._workers.pop(key, None)
                if f.cancelled():
                    future.cancel()
                elif f.exception() is not None:
                    future.set_exception(f.exception())  # type: ignore[arg-type]
                else:
                    model, rows = f.result()
                    self.analysed += 1
                    self._keep(key, model, rows)
                    future.set_result(model)

            worked.add_done_callback(done)
            self._pending[key] = future
            self._workers[key] = worked
        return await asyncio.shield(future)

    def pending(self, ls: KernelLensServer, uri: str, source: str) -> bool:
        """Whether this text's model is being made."""
        return self._key(ls, uri, source) in self._pending

    def lint_ready(
        self, ls: KernelLensServer, uri: str, source: str
    ) -> tuple[TimingIssue, ...] | None:
        """The lint's findings in this text if it has run (or a small text's, made now)."""
        lkey = (uri, self.version_of(ls, uri, source))
        found = self._lints.get(lkey)
        if found is None and len(source) <= self.inline_chars:
            found = document_model.lint(source)
            self._lints.put(lkey, found)
        return found

    async def lint(self, ls: KernelLensServer, uri: str, source: str) -> tuple[TimingIssue, ...]:
        """The timing lint's findings in this text (from the parse its model made)."""
        version = self.version_of(ls, uri, source)
        lkey = (uri, version)
        found = self._lints.get(lkey)
        if found is not None:
            return found
        if len(source) <= self.inline_chars:
            result = document_model.lint(source)
            self._lints.put(lkey, result)
            return result
        future = self._pending_lints.get(lkey)
        if future is None:
            future = asyncio.ensure_future(self._lint_after_model(ls, uri, source))
            self._pending_lints[lkey] = future

            def done(f: asyncio.Future[tuple[TimingIssue, ...]]) -> None:
                self._pending_lints.pop(lkey, None)
                if not f.cancelled() and f.exception() is None:
                    self._lints.put(lkey, f.result())

            future.add_done_callback(done)
        return await asyncio.shield(future)

    async def _lint_after_model(
        self, ls: KernelLensServer, uri: str, source: str
    ) -> tuple[TimingIssue, ...]:
        """The lint of a big text, queued after its model's work (the lint on open is asked
        before the lenses are): the lenses never wait behind the lint, and the lint reuses the
        tree the model's work kept instead of parsing again."""
        model_key = self._key(ls, uri, source)
        with contextlib.suppress(Exception):  # a model that failed: the lint parses by itself
            await self.get(ls, uri, source)
        return await self._submit((uri, model_key[1]), lint_work, model_key, source)  # type: ignore[no-any-return]

    def forget(self, uri: str) -> None:
        """Drop a closed document's models and its queued work."""
        for key in list(self._models):
            if key[0] == uri:
                self._models.discard(key)
                self._rows.discard(key)
        for lkey in list(self._lints):
            if lkey[0] == uri:
                self._lints.discard(lkey)
        for key in list(self._firsts):
            if key[0] == uri:
                self._firsts.discard(key)
        for key, scan in list(self._pending_firsts.items()):
            if key[0] == uri:
                scan.cancel()  # its thread ends by itself; what it found is not kept
        for key in list(self._workers):
            if key[0] == uri:
                self._workers.pop(key).cancel()
        for lkey, lint_future in list(self._pending_lints.items()):
            if lkey[0] == uri:
                lint_future.cancel()

    def _cancel_older_scans(self, uri: str, key: ModelKey) -> None:
        for other, scan in list(self._pending_firsts.items()):
            if other[0] == uri and other != key:
                scan.cancel()

    def _cancel_older(self, uri: str, key: ModelKey) -> None:
        for other in list(self._workers):
            if other[0] == uri and other != key:
                self._workers.pop(other).cancel()  # queued work of an older version never starts
        for lkey, lint_future in list(self._pending_lints.items()):
            if lkey[0] == uri and lkey[1] != key[1]:
                lint_future.cancel()

    # -- the worker -----------------------------------------------------------------------

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            # spawn: the server has threads (a fork could copy a held lock into the child).
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_background,
            )
        return self._pool

    def _submit(self, key: Any, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        try:
            inner = self._executor().submit(fn, *args)
        except concurrent.futures.BrokenExecutor:
            self._pool = None  # a worker that died (out of memory): a fresh one
            inner = self._executor().submit(fn, *args)
        outer: asyncio.Future[Any] = asyncio.wrap_future(inner, loop=loop)

        def broken(f: asyncio.Future[Any]) -> None:
            if self._closed:
                return  # stopped at shutdown
            if not f.cancelled() and isinstance(f.exception(), concurrent.futures.BrokenExecutor):
                logger.warning("the document worker died on %s; a new one starts", key)
                self._pool = None

        outer.add_done_callback(broken)
        return outer

    def shutdown(self) -> None:
        """Stop the worker (server shutdown), even in the middle of a big text: its work is not
        wanted any more, and the interpreter's exit would wait for it (it joins the pool's
        thread), keeping the server alive for as long as the text takes (seconds for 6 MB)."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            # the private table of 3.11–3.13 (3.14 has terminate_workers())
            processes = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                with contextlib.suppress(Exception):
                    process.kill()
