"""The history store: per function, bounded, baseline kept, entries from profile results."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import pytest

from kernel_lens.history import (
    History,
    HistoryError,
    cache_root,
    entry_summary,
    function_key,
    git_state,
    make_entry,
    thin_samples,
)
from kernel_lens.wire.paths import CacheDirs
from tests.conftest import ROOT

H200 = ROOT / "tests" / "data" / "h200"


def _result(median: float = 0.5, path: str = "/w/k.py", function: str = "f") -> dict:
    return {
        "function": function,
        "path": path,
        "first_line": 3,
        "device": "cpu",
        "device_kind": "cpu",
        "versions": {"torch": "2.x"},
        "timing": {"median_ms": median, "spread_pct": 1.0, "samples_ms": [median] * 5},
        "lines": [{"line": 4, "source": "return x * x", "ops": []}],
        "kernels": [],
    }


def test_the_cache_folder_is_the_agents(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KERNEL_LENS_HISTORY", raising=False)  # conftest gives each test one
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "c"))
    assert str(cache_root()) == CacheDirs.from_env().root
    monkeypatch.delenv("KERNEL_LENS_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert str(cache_root()) == CacheDirs.from_env().root == str(tmp_path / "xdg" / "kernel-lens")
    assert History.default().root == tmp_path / "xdg" / "kernel-lens" / "history"
    monkeypatch.setenv("KERNEL_LENS_HISTORY", str(tmp_path / "ws" / ".kernel-lens"))
    assert History.default().root == tmp_path / "ws" / ".kernel-lens"


def test_runs_are_numbered_per_function_and_bounded(tmp_path: Path) -> None:
    history = History(tmp_path, size=5)
    for i in range(8):
        history.add("/w/k.py", "f", make_entry(_result(0.1 * (i + 1))))
    history.add("/w/k.py", "g", make_entry(_result(function="g")))
    history.add("/w/other.py", "f", make_entry(_result(path="/w/other.py")))
    runs = history.entries("/w/k.py", "f")
    assert [e["id"] for e in runs] == ["4", "5", "6", "7", "8"]
    assert [e["id"] for e in history.entries("/w/k.py", "g")] == ["1"]
    assert [e["id"] for e in history.entries("/w/other.py", "f")] == ["1"]
    assert history.get("/w/k.py", "f", "-1")["id"] == "8"
    assert history.get("/w/k.py", "f", "-2")["id"] == "7"
    assert history.get("/w/k.py", "f", "5")["timing"]["median_ms"] == pytest.approx(0.5)
    with pytest.raises(HistoryError, match="no run 2 .latest runs: 4, 5, 6, 7, 8"):
        history.get("/w/k.py", "f", "2")
    # One database holds them all.
    assert [p.name for p in tmp_path.glob("history.sqlite3*")][:1] == ["history.sqlite3"]


def test_the_baseline_is_pinned_and_outlives_the_bound(tmp_path: Path) -> None:
    history = History(tmp_path, size=3)
    with pytest.raises(HistoryError, match="has no baseline"):
        history.get("/w/k.py", "f", "baseline")
    for _ in range(2):
        history.add("/w/k.py", "f", make_entry(_result()))
    assert history.set_baseline("/w/k.py", "f", "1")["id"] == "1"  # type: ignore[index]
    for _ in range(4):
        history.add("/w/k.py", "f", make_entry(_result()))
    assert [e["id"] for e in history.entries("/w/k.py", "f")] == ["1", "5", "6"]
    assert history.get("/w/k.py", "f", "baseline")["id"] == "1"
    history.set_baseline("/w/k.py", "f", None)
    assert history.baseline("/w/k.py", "f") is None
    with pytest.raises(HistoryError):
        history.set_baseline("/w/k.py", "f", "42")


def test_a_torn_legacy_line_loses_one_run_not_the_history(tmp_path: Path) -> None:
    key = function_key("/w/k.py", "f")
    run = json.dumps({"id": "1", **make_entry(_result())})
    (tmp_path / f"f-{key}.jsonl").write_text(run + "\n" + '{"id": "2", "tim')
    history = History(tmp_path)
    assert [e["id"] for e in history.entries("/w/k.py", "f")] == ["1"]
    assert history.add("/w/k.py", "f", make_entry(_result()))["id"] == "2"


def test_an_entry_from_a_recorded_profile() -> None:
    result = json.loads((H200 / "square_three_ways_profile.json").read_text())
    result["timing"]["samples_ms"] = [0.5] * 3000
    when = datetime.datetime(2026, 11, 30, 16, 0, tzinfo=datetime.UTC)
    entry = make_entry(
        result, text=["def f(x):", "    return x"], file_text="abc", git=None, now=when
    )
    assert entry["time"] == "2026-11-30T16:00:00+00:00"
    assert entry["device"] == "NVIDIA H200" and entry["device_kind"] == "cuda"
    assert entry["inputs"] == "directive"
    assert len(entry["timing"]["samples_ms"]) == 1000
    assert entry["timing"]["median_ms"] == result["timing"]["median_ms"]
    assert entry["file_hash"] == "ba7816bf8f01cfea"
    assert entry["lines"] == result["lines"]
    summary = entry_summary({"id": "1", **entry})
    assert summary["kernel_count"] == 3 and "samples_ms" not in summary["timing"]
    assert "lines" not in summary


def test_thin_samples_keeps_quantiles() -> None:
    samples = [float(i) for i in range(10_000)]
    thinned = thin_samples(samples, 100)
    assert len(thinned) == 100 and thinned[0] == 50.0 and thinned[-1] == 9950.0
    assert thin_samples([3.0, 1.0], 100) == [3.0, 1.0]


def test_git_state(tmp_path: Path) -> None:
    assert git_state(str(tmp_path / "k.py")) is None
    run = {"cwd": tmp_path, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)  # type: ignore[call-overload]
    (tmp_path / "k.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "k.py"], **run)  # type: ignore[call-overload]
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"],
        **run,  # type: ignore[call-overload]
    )
    clean = git_state(str(tmp_path / "k.py"))
    assert clean is not None and len(clean["commit"]) == 40 and clean["dirty"] is False
    (tmp_path / "k.py").write_text("x = 2\n")
    assert git_state(str(tmp_path / "k.py"))["dirty"] is True  # type: ignore[index]


def test_a_kernel_lens_folder_at_the_workspace_root_opts_its_tree_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("KERNEL_LENS_HISTORY", raising=False)
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "cache"))
    workspace = tmp_path / "ws"
    source = workspace / "pkg" / "sub" / "model.py"
    source.parent.mkdir(parents=True)
    source.write_text("def f(x):\n    return x\n")
    # Not opted in: the cache folder, outside the source tree.
    assert History.default(str(source)).root == tmp_path / "cache" / "history"
    # A .kernel-lens/ folder at the workspace root opts the tree in (issue 45 item 7: only
    # there, never in a folder above it; the CLI's workspace is its working directory).
    (workspace / ".kernel-lens").mkdir()
    roots = [str(workspace)]
    assert History.default(str(source), roots).root == workspace / ".kernel-lens" / "history"
    monkeypatch.chdir(workspace)
    assert History.default(str(source)).root == workspace / ".kernel-lens" / "history"
    monkeypatch.chdir(source.parent)
    assert History.default(str(source)).root == tmp_path / "cache" / "history"
    # The environment wins over both.
    monkeypatch.setenv("KERNEL_LENS_HISTORY", str(tmp_path / "own"))
    assert History.default(str(source), roots).root == tmp_path / "own"
