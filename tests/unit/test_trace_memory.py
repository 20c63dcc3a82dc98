"""A trace larger than the machine can hold is refused with a message before it is read
(issue 12); the size checked is the JSON's, also for a gzipped file (its trailer's size)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kernel_lens.analysis.trace_columns import TraceError
from kernel_lens.traces import cache, readers

H200 = Path(__file__).parents[1] / "data" / "h200" / "matmul_relu_trace.json"


def test_the_json_size_of_a_gzipped_trace_is_read_from_its_trailer(tmp_path: Path) -> None:
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(H200.read_bytes()))
    assert readers.json_size(str(packed), packed.stat().st_size) == H200.stat().st_size
    assert readers.json_size(str(H200), H200.stat().st_size) == H200.stat().st_size


def test_a_trace_bigger_than_the_free_memory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = H200.stat().st_size
    monkeypatch.setattr(readers, "_available_memory", lambda: size)  # less than 3x the JSON
    with pytest.raises(TraceError, match=r"needs about .* GiB of memory .* available"):
        readers.check_memory(str(H200), size)
    monkeypatch.setattr(readers, "_available_memory", lambda: 100 * size)
    readers.check_memory(str(H200), size)  # fits: no error
    monkeypatch.setattr(readers, "_available_memory", lambda: None)  # unknown: try
    readers.check_memory(str(H200), size)


def test_the_cache_folder_follows_kernel_lens_cache_and_the_file_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path))
    a = cache.cache_folder("/x/t.json", 10, 1)
    assert a.startswith(str(tmp_path / "trace-columns") + "/")
    assert a != cache.cache_folder("/x/t.json", 11, 1) != cache.cache_folder("/x/t.json", 10, 2)
    assert a != cache.cache_folder("/y/t.json", 10, 1)
