"""``kernel-lens trace summarize`` on hostile files (issue 26 item 5): a gzip bomb and a
10**6-deep JSON are a clear ``trace`` error (exit 1, ``{"error": {"kind": "trace", …}}`` with
``--json``), never a RecursionError, a MemoryError or a machine out of memory."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.data.odd_traces import ODD, gzip_bomb


def _refused(code: int, out: object, stderr: str) -> str:
    assert code == 1, (code, out, stderr[-2000:])
    assert isinstance(out, dict) and set(out) == {"error"}, out
    error = out["error"]
    assert error["kind"] == "trace" and error["line"] is None
    assert "Traceback" not in stderr and "RecursionError" not in stderr
    return str(error["message"])


def test_a_million_deep_json_is_a_trace_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(str(ODD["deep.json"]))
    message = _refused(*run_cli("trace", "summarize", str(path), "--json", timeout=120))
    assert "nested more than 64 levels" in message


def test_a_gzip_bomb_past_the_bound_is_a_trace_error(tmp_path: Path) -> None:
    """Eight times the bound (set small here): refused once it has inflated to the bound."""
    bound = 2**20
    path = gzip_bomb(tmp_path / "bomb.json.gz", 8 * bound)
    assert path.stat().st_size < bound / 100
    env = {"KERNEL_LENS_TRACE_MAX_BYTES": str(bound)}
    message = _refused(*run_cli("trace", "summarize", str(path), "--json", env=env, timeout=120))
    assert "inflates past 1 MiB" in message


def test_a_gzip_bomb_is_refused_by_its_ratio_with_the_default_bound(tmp_path: Path) -> None:
    path = gzip_bomb(tmp_path / "bomb.json.gz", 400 * 2**20)
    message = _refused(*run_cli("trace", "summarize", str(path), "--json", timeout=300))
    assert "gzip bomb" in message


def test_without_json_the_error_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(str(ODD["deep.json"]))
    code, out, stderr = run_cli("trace", "summarize", str(path), timeout=120)
    assert code == 1 and out == ""
    assert stderr.startswith("error (trace): trace file ") and "Traceback" not in stderr
