"""The server's state: one object per document, released as a whole; every cache bounded."""

import pytest

from kernel_lens.lsp.results import Record
from kernel_lens.lsp.state import (
    ASM_CACHE_SIZE,
    LRU,
    TIMELINE_CACHE_SIZE,
    TRACE_CACHE_SIZE,
    DocumentStore,
    TraceCaches,
)

URI = "file:///a.py"


def test_lru_keeps_the_most_recently_used() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert list(cache) == ["a", "c"] and cache.get("b") is None and len(cache) == 2
    cache.put("a", 4)
    assert cache.get("a") == 4 and len(cache) == 2
    with pytest.raises(ValueError):
        LRU(0)


def test_reading_creates_no_state_and_release_drops_all_of_it() -> None:
    store = DocumentStore()
    assert store.get(URI, "f") is None and store.records(URI) == [] and store.peek(URI) is None
    assert URI not in store
    state = store(URI)
    store.put(URI, Record("f", "ok", ["def f(): pass"], 1, result={}))
    state.syntax_error = {"kind": "syntax"}
    state.ncu["f"] = {"kernels": []}
    state.sweeps["f"] = {"rows": []}
    state.asm.put(("k", 90, "digest"), {"asm": {}})
    state.asm_latest["k"] = {"asm": {}}
    assert store.peek(URI) is state and len(store) == 1
    released = store.release(URI)
    assert released is state and store.peek(URI) is None and store.records(URI) == []
    assert store(URI).ncu == {} and store(URI).asm_latest == {} and len(store(URI).asm) == 0


def test_every_cache_is_bounded() -> None:
    store = DocumentStore()
    asm = store(URI).asm
    for i in range(ASM_CACHE_SIZE * 3):
        asm.put((f"k{i}", 90, "digest"), {})
    assert len(asm) == ASM_CACHE_SIZE
    caches = TraceCaches()
    for i in range(50):
        caches.traces.put(f"/t{i}.json", (0.0, {}))
        caches.timelines.put(f"/t{i}.json", (0.0, {}))
    assert (len(caches.traces), len(caches.timelines)) == (TRACE_CACHE_SIZE, TIMELINE_CACHE_SIZE)
