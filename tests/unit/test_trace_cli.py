"""``kernel-lens trace summarize`` reads a trace file straight into columns (issue 12): the same
summary as the parsed trace's, gzip included; a file that is not a trace is the error contract."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kernel_lens.analysis.trace_summary import format_trace_summary, load_trace, summarize_trace
from kernel_lens.cli import main

H200 = Path(__file__).parents[1] / "data" / "h200" / "matmul_relu_trace.json"


def test_summarize_a_gzipped_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packed = tmp_path / "trace.json.gz"
    packed.write_bytes(gzip.compress(H200.read_bytes()))
    want = summarize_trace(load_trace(H200), top=3)
    assert main(["trace", "summarize", str(packed), "--json", "--top", "3"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(want.to_json()))
    assert main(["trace", "summarize", str(packed), "--top", "3"]) == 0
    assert capsys.readouterr().out == format_trace_summary(want) + "\n"


def test_summarize_a_file_that_is_not_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rows.json"
    path.write_text("[1, 2]")
    assert main(["trace", "summarize", str(path), "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "trace" and "traceEvents" in error["message"]
