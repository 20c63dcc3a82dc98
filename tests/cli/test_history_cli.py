"""``kernel-lens profile --compare``, ``history`` and ``compare``: the same statistics as the
lenses, from a terminal (the real agent on this machine)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

FAST = """import torch


# kernel-lens: inputs = (torch.ones(1 << 12),)  # small: one thread, steady on a busy CPU
def scale(x):
    return x * 2
"""
SLOW = FAST.replace("    return x * 2", "    for _ in range(200):\n        x = x * 2\n    return x")


def _profile(path: Path, env: dict[str, str], *extra: str) -> tuple[int, object, str]:
    return run_cli(
        "profile", f"{path}::scale", "--stages", "timing,ops", "--warmup-ms", "5",
        "--budget-ms", "150", *extra, env=env,
    )  # fmt: skip


def test_profile_compare_history_and_compare(tmp_path: Path) -> None:
    env = {"KERNEL_LENS_HISTORY": str(tmp_path / "history")}
    src = tmp_path / "scale.py"
    src.write_text(FAST)
    code, out, err = _profile(src, env, "--json", "--compare", "previous")
    assert code == 0, err
    assert "comparison" not in out  # type: ignore[operator]

    code, out, err = _profile(src, env, "--json", "--compare", "previous")
    assert code == 0, err
    again = out["comparison"]  # type: ignore[index]
    assert again["reference"] == "previous" and again["reference_id"] == "1"
    assert again["verdict"]["method"] == "mann-whitney"

    src.write_text(SLOW)
    code, out, err = _profile(src, env, "--json", "--compare", "previous")
    assert code == 0, err
    slower = out["comparison"]  # type: ignore[index]
    verdict = slower["verdict"]
    assert verdict["significant"] is True and verdict["change_pct"] > 100, verdict
    assert verdict["text"].startswith("×") and " vs " in verdict["text"]
    assert any(d["status"] != "same" for d in slower["lines"])

    code, out, err = run_cli("history", f"{src}::scale", "--json", env=env)
    assert code == 0, err
    assert [r["id"] for r in out["runs"]] == ["1", "2", "3"]
    assert out["runs"][0]["verdict"] is None
    assert out["runs"][2]["verdict"]["significant"] is True
    assert out["baseline"] is None
    assert "samples_ms" not in out["runs"][0]["timing"]

    code, out, err = run_cli("history", f"{src}::scale", "--baseline", "1", env=env)
    assert code == 0, err
    assert "baseline run 1" in out and "(baseline)" in out
    assert out.count(" ms ±") == 3

    code, out, err = run_cli("compare", f"{src}::scale#baseline", f"{src}::scale#3", env=env)
    assert code == 0, err
    assert "scale run 3 vs scale run 1" in out and "Mann–Whitney p = " in out
    assert "lines:" in out

    code, out, err = _profile(src, env, "--compare", "baseline")
    assert code == 0, err
    assert "this run vs baseline (run 1):" in out and "vs baseline " in out

    code, out, err = run_cli("compare", f"{src}::scale#7", f"{src}::scale#1", "--json", env=env)
    assert code == 1 and "has no run 7" in out["error"]["message"]


def test_compare_two_profile_json_files(tmp_path: Path) -> None:
    from tests.conftest import ROOT

    h200 = ROOT / "tests" / "data" / "h200"
    a = h200 / "square_three_ways_profile.json"
    b = h200 / "triton_square_profile.json"
    code, out, err = run_cli("compare", str(a), str(b), "--json")
    assert code == 0, err
    assert out["verdict"]["method"] == "iqr" and out["verdict"]["significant"] is True
    assert {k["status"] for k in out["kernels"]} >= {"added", "removed"}
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"no": "timing"}))
    code, out, _ = run_cli("compare", str(a), str(bad), "--json")
    assert code == 1 and "is not a profile" in out["error"]["message"]
