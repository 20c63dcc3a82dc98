"""Kernel Lens's own writes (issue 26 item 2): a trace the cache cannot take (a full disk, a
cache path that is a file, a name too long) never fails the profile nor leaves a temporary file;
every write is atomic."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from kernel_lens.agent import tracefile
from kernel_lens.agent.tracefile import save_trace
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.paths import MAX_NAME_BYTES, atomic_write, short_name

TRACE = {"traceEvents": [{"name": "aten::mul", "ph": "X", "ts": 1, "dur": 2}]}


def _export(path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(TRACE, fh)


def test_a_trace_is_saved_whole_under_its_name(tmp_path: Path) -> None:
    saved = save_trace(_export, str(tmp_path / "traces"), "k-f-1.json")
    assert saved.error is None and saved.trace == TRACE
    assert saved.path == str(tmp_path / "traces" / "k-f-1.json")
    assert os.listdir(tmp_path / "traces") == ["k-f-1.json"]


def test_a_full_disk_costs_the_file_not_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", dst)

    monkeypatch.setattr(tracefile.os, "replace", full)
    saved = save_trace(_export, str(tmp_path), "k-f-1.json")
    assert saved.trace == TRACE and saved.path is None
    assert saved.error is not None and saved.error.startswith("trace not saved: disk full")
    assert os.listdir(tmp_path) == []  # no temporary file left behind


def test_a_profiler_that_writes_half_a_trace_leaves_nothing(tmp_path: Path) -> None:
    calls: list[str] = []

    def torn_in_the_cache(path: str) -> None:
        calls.append(path)
        Path(path).write_text('{"traceEvents": [{"na')  # cut by a full disk
        Path(path + ".tmp").write_text("x")  # the profiler's own temporary file

    with pytest.raises(ProfileError) as err:
        save_trace(torn_in_the_cache, str(tmp_path), "k.json")
    assert err.value.kind == "internal" and "could not write the profiler's trace" in str(err.value)
    # exported once (torch's profiler cannot save twice), and nothing left behind
    assert os.listdir(tmp_path) == [] and len(calls) == 1


class OnceOnly:
    """torch's profiler: a trace is saved once; a second save raises."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path: str) -> None:
        self.calls += 1
        if self.calls > 1:
            raise RuntimeError("Trace is already saved.")
        _export(path)


def test_the_trace_is_exported_once_whatever_the_cache_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", dst)

    export = OnceOnly()
    monkeypatch.setattr(tracefile.os, "replace", full)
    saved = save_trace(export, str(tmp_path), "k.json")
    assert export.calls == 1 and saved.trace == TRACE and saved.path is None
    assert saved.error is not None and saved.error.startswith("trace not saved: disk full")


def test_a_cache_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("not a folder")
    saved = save_trace(_export, str(tmp_path / "cache" / "traces"), "k.json")
    assert saved.trace == TRACE and saved.path is None
    assert saved.error is not None and "is a file, not a folder" in saved.error
    assert (tmp_path / "cache").read_text() == "not a folder"


def test_nowhere_to_write_is_an_internal_error_never_runtime(tmp_path: Path) -> None:
    def broken(path: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", path)

    with pytest.raises(ProfileError) as err:
        save_trace(broken, str(tmp_path), "k.json")
    assert err.value.kind == "internal" and "disk full" in err.value.message
    assert os.listdir(tmp_path) == []


def test_long_names_are_shortened_and_hashed(tmp_path: Path) -> None:
    long_a = "k-" + "é" * 200 + "a.json"  # 400+ bytes
    long_b = "k-" + "é" * 200 + "b.json"
    a = save_trace(_export, str(tmp_path), long_a)
    b = save_trace(_export, str(tmp_path), long_b)
    assert a.error is None and b.error is None and a.path != b.path
    for path in (a.path, b.path):
        assert path is not None and len(os.path.basename(path).encode()) <= MAX_NAME_BYTES
        assert path.endswith(".json")
    assert short_name("short.json") == "short.json"
    assert short_name(long_a) == short_name(long_a)  # stable


def test_atomic_write_keeps_the_old_file_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "meta.json"
    atomic_write(str(target), "old")
    assert target.read_text() == "old"

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", dst)

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        atomic_write(str(target), "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["meta.json"]


@pytest.fixture
def full_disk(tmp_path: Path):  # noqa: ANN201 (a fixture)
    """A real 64 KiB tmpfs, 56 KiB of it filled (needs root and mount; skipped otherwise)."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')[:80]}")
    try:
        (mount / "filler").write_bytes(b"\0" * 56 * 1024)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_cache_disk_keeps_the_real_profilers_trace(full_disk: Path) -> None:
    """Issue 39 item 1: the real torch profiler's trace, the cache on a full disk — the trace
    is read and kept, the profiler saved once (no "Trace is already saved"), the fault named."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    x = torch.ones(64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(200):  # a trace far larger than the 8 KiB left
            x = torch.add(x, 1)
    saved = save_trace(prof.export_chrome_trace, str(full_disk / "traces"), "k.json")
    names = [e.get("name") for e in saved.trace["traceEvents"]]
    assert names.count("aten::add") == 200 and saved.path is None
    assert saved.error is not None and saved.error.startswith("trace not saved: disk full"), saved
    assert sorted(os.listdir(full_disk / "traces")) == []
