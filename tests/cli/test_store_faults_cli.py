"""Issue 26 items 1 and 2 from a terminal (the real agent): a damaged history store or a
corrupted legacy history never costs the run's result; the text stored is the text measured;
a cache that cannot take the trace gives ``trace not saved: <why>``, exit 0."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from kernel_lens.history import STORE_NAME, History, function_key, make_entry
from tests.conftest import run_cli

FAST = """import torch


# kernel-lens: inputs = (torch.ones(1 << 10),)
def scale(x):
    return x * 2
"""

FAST_ARGS = ("--stages", "timing,ops", "--warmup-ms", "5", "--budget-ms", "100")


def _profile(target: str, env: dict[str, str], *extra: str) -> tuple[int, object, str]:
    return run_cli("profile", target, *FAST_ARGS, *extra, env=env)


def test_a_store_of_garbage_costs_no_result(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    (history / STORE_NAME).write_bytes(b"\x00garbage, not SQLite\xff" * 100)
    env = {"KERNEL_LENS_HISTORY": str(history)}
    src = tmp_path / "k.py"
    src.write_text(FAST)
    code, out, err = _profile(f"{src}::scale", env, "--json")
    assert code == 0, err
    assert out["timing"]["median_ms"] > 0  # type: ignore[index]
    assert "was damaged" in err and "repaired" in err, err
    assert [p for p in os.listdir(history) if ".damaged-" in p]
    code, out, err = run_cli("history", f"{src}::scale", "--json", env=env)
    assert code == 0, err
    assert [r["id"] for r in out["runs"]] == ["1"] and out["unreadable"] == []


def test_a_corrupted_legacy_history_is_imported_and_its_bad_lines_named(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    src = tmp_path / "k.py"
    src.write_text(FAST)
    key = function_key(str(src), "scale")
    result = {"function": "scale", "path": str(src), "timing": {"median_ms": 0.25},
              "lines": [], "kernels": []}  # fmt: skip
    good = json.dumps({"id": "1", **make_entry(result)}).encode()
    bad_byte = good[:30] + b"\xff" + good[30:]
    other_shape = json.dumps({"id": "3", "median_ms": 9.0}).encode()
    (history / f"scale-{key}.jsonl").write_bytes(b"\n".join([good, bad_byte, other_shape]))
    env = {"KERNEL_LENS_HISTORY": str(history)}
    code, out, err = _profile(f"{src}::scale", env, "--json", "--compare", "previous")
    assert code == 0, err
    assert out["comparison"]["reference_id"] == "1"  # type: ignore[index]
    assert "line 2 not imported: not UTF-8" in err, err
    code, out, err = run_cli("history", f"{src}::scale", env=env)
    assert code == 0, err
    assert out.count(" ms ±") == 2, out  # run 1 (imported) and this run, 4
    assert "2 unreadable" in out
    assert "line 2: not UTF-8 (byte 0xff at 30)" in out
    assert "line 3: not a run (no timing.median_ms)" in out


EDITS_ITSELF = """import torch

calls = []


# kernel-lens: inputs = (torch.ones(64),)
def scale(x):
    if not calls:  # the file is edited on disk while its job runs
        calls.append(1)
        text = open(__file__).read()
        open(__file__, "w").write(text.replace("return x * 2", "return x * " + "3"))
    return x * 2
"""


def test_a_file_edited_during_the_run_is_stored_as_measured(tmp_path: Path) -> None:
    env = {"KERNEL_LENS_HISTORY": str(tmp_path / "history")}
    src = tmp_path / "k.py"
    src.write_text(EDITS_ITSELF)
    code, out, err = _profile(f"{src}::scale", env, "--json")
    assert code == 0, err
    assert "return x * 3" in src.read_text()  # the edit happened during the run
    (entry,) = History(tmp_path / "history").entries(str(src), "scale")
    assert "    return x * 2" in entry["text"]
    assert "return x * 3" not in "".join(entry["text"])
    measured = hashlib.sha256(EDITS_ITSELF.encode()).hexdigest()[:16]
    assert entry["file_hash"] == measured


def test_a_cache_path_that_is_a_file_gives_trace_not_saved(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.write_text("a file where the cache folder should be")
    src = tmp_path / "k.py"
    src.write_text(FAST)
    env = {"KERNEL_LENS_CACHE": str(cache)}
    code, out, err = _profile(f"{src}::scale", env, "--json")
    assert code == 0, err
    assert out["trace_path"] is None  # type: ignore[index]
    assert out["trace_error"].startswith("trace not saved: ")  # type: ignore[index]
    assert out["lines"] and out["timing"]["median_ms"] > 0  # type: ignore[index]
    code, text, err = _profile(f"{src}::scale", env)
    assert code == 0, err
    assert "trace not saved: " in text
    assert cache.read_text() == "a file where the cache folder should be"
    assert sorted(os.listdir(tmp_path)) == ["cache", "k.py"]


def test_a_function_name_longer_than_a_file_name_still_saves_its_trace(tmp_path: Path) -> None:
    name = "f" * 300
    src = tmp_path / "k.py"
    src.write_text(FAST.replace("def scale", f"def {name}"))
    traces = tmp_path / "traces"
    code, out, err = _profile(f"{src}::{name}", {}, "--json", "--trace-dir", str(traces))
    assert code == 0, err
    assert out.get("trace_error") is None, out  # type: ignore[union-attr]
    (saved,) = os.listdir(traces)
    assert len(saved.encode()) <= 200 and saved.endswith(".json")
    assert out["trace_path"] == str(traces / saved)  # type: ignore[index]
