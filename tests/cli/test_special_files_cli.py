"""``kernel-lens trace summarize`` on special files (issue 45 item 4): a FIFO named like a trace,
a symlink to ``/dev/zero`` (plain and ``.gz``), a directory and a FIFO ``.pftrace`` are each a
clear ``trace`` error at once (exit 1), never a hang, a MemoryError or a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.data.odd_traces import special_files


@pytest.mark.parametrize("kind", ["fifo", "zero", "zero-gz", "directory", "pftrace"])
def test_a_special_file_is_a_trace_error_at_once(tmp_path: Path, kind: str) -> None:
    path = special_files(tmp_path)[kind]
    code, out, stderr = run_cli("trace", "summarize", str(path), "--json", timeout=30)
    assert code == 1, (code, out, stderr[-2000:])
    assert out["error"]["kind"] == "trace"
    assert "not a regular file" in out["error"]["message"]
    assert "Traceback" not in stderr and "MemoryError" not in stderr


def test_without_json_a_fifo_is_one_clean_line(tmp_path: Path) -> None:
    path = special_files(tmp_path)["fifo"]
    code, out, stderr = run_cli("trace", "summarize", str(path), timeout=30)
    assert code == 1 and out == ""
    assert stderr.startswith("error (trace): ") and "not a regular file" in stderr
    assert "Traceback" not in stderr
