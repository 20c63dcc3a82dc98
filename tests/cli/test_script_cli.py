"""Whole scripts: ``kernel-lens profile PATH`` runs the file once as ``__main__`` under the
per-line attribution; its time is the wall time of that one run, never a median."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, HAS_CUDA, run_cli

SCRIPTS = EXAMPLES / "scripts"


def _copy(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copy(SCRIPTS / name, dst)
    return dst


def _lineno(path: Path, text: str) -> int:
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return no
    raise AssertionError(text)


def _ops(out: dict, line: int) -> list[str]:
    for entry in out["lines"]:
        if entry["line"] == line:
            return [op["name"] for op in entry["ops"]]
    return []


def test_a_script_runs_once_with_ops_on_its_module_level_lines(
    tmp_path: Path, trace_dir: str
) -> None:
    path = _copy("lecture_like.py", tmp_path)
    code, out, err = run_cli("profile", str(path), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    # Once, as python FILE: the __main__ block ran, in the file's folder.
    assert (tmp_path / "runs.txt").read_text() == "ran\n"
    assert "sum" in err  # the script's own print goes to stderr with --json
    assert out["function"] == "<script>" and out["call_style"] == "script"
    assert "timing" not in out  # never a median
    assert out["script"]["runs"] == 1 and out["script"]["wall_s"] > 0
    assert "not a median" in out["script"]["label"]
    assert "aten::square" in _ops(out, _lineno(path, "c = torch.square(b)"))
    # Deep: a call into the file's function lands on the function's own line (the innermost
    # workspace line on the stack), once per loop turn; the calling line keeps nothing of it.
    assert _ops(out, _lineno(path, "d = square_3(c)")) == []
    body = _lineno(path, "return a * a * a")
    assert _ops(out, body) == ["aten::mul"]
    row = next(entry for entry in out["lines"] if entry["line"] == body)
    assert row["ops"][0]["calls"] == 6  # 2 multiplications × 3 turns, one run
    assert row["hits"] == 3
    assert "aten::relu" in _ops(out, _lineno(path, "e = torch.relu(d).sum()"))
    assert out["files"] == {}  # no other workspace file ran
    assert Path(out["trace_path"]).is_file()


def test_the_text_report_labels_the_wall_time(tmp_path: Path, trace_dir: str) -> None:
    path = _copy("lecture_like.py", tmp_path)
    code, out, err = run_cli("profile", str(path), "--trace-dir", trace_dir)
    assert code == 0, err
    assert "<script>" in out
    assert "wall time of one run as __main__, under the profiler (not a median)" in out
    assert "median" not in out.replace("not a median", "")


def test_the_scripts_own_profiler_is_a_pass_through_said_on_its_line(
    tmp_path: Path, trace_dir: str
) -> None:
    path = _copy("own_profiler.py", tmp_path)
    code, out, err = run_cli("profile", str(path), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    assert "aten::square" in _ops(out, _lineno(path, "torch.square(torch.randn(200, 200))"))
    notes = out["notes"]
    assert [n["line"] for n in notes] == [_lineno(path, "with profile(")]
    assert "pass-through" in notes[0]["message"]
    assert not (tmp_path / "own_trace.json").exists()


def test_a_script_that_raises_fails_on_its_line(tmp_path: Path, trace_dir: str) -> None:
    path = _copy("raises.py", tmp_path)
    code, out, err = run_cli("profile", str(path), "--json", "--trace-dir", trace_dir)
    assert code == 1
    assert out["error"]["kind"] == "runtime"
    assert out["error"]["line"] == _lineno(path, "y = x @ torch.randn(3, 3)")
    assert "the script raised RuntimeError" in out["error"]["message"]


def test_sys_exit_zero_is_a_normal_end(tmp_path: Path, trace_dir: str) -> None:
    path = _copy("exits_zero.py", tmp_path)
    code, out, err = run_cli("profile", str(path), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    assert "aten::add" in _ops(out, _lineno(path, "z = torch.ones(4) + 1"))


@pytest.mark.skipif(HAS_CUDA, reason="checks the machine without a GPU")
def test_a_triton_script_runs_under_the_interpreter_without_a_gpu(
    tmp_path: Path, trace_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    path = _copy("triton_main.py", tmp_path)
    code, out, err = run_cli("profile", str(path), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    assert out["triton_interpreter"] is True
    assert out["device"] == "CPU · Triton interpreter"
    # the launch inside double(), not the call of double() (the innermost workspace line)
    assert _lineno(path, "double_kernel[(") in [e["line"] for e in out["lines"]]


@pytest.mark.gpu
def test_a_triton_script_on_a_gpu_has_its_kernel_on_the_launch_line(
    tmp_path: Path, trace_dir: str
) -> None:
    path = _copy("triton_main.py", tmp_path)
    code, out, err = run_cli("profile", str(path), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    assert out["device_kind"] == "cuda" and out["triton_interpreter"] is False
    row = next(e for e in out["lines"] if e["line"] == _lineno(path, "double_kernel[("))
    kernels = [k["short_name"] for op in row["ops"] for k in op["kernels"]]
    assert "double_kernel" in kernels
    assert row["device_us"] > 0


def test_a_script_that_runs_past_the_time_limit_keeps_the_part_that_ran(tmp_path: Path) -> None:
    """A training script never ends by itself: shortly before the job's time limit the run is
    cut, and what was profiled is kept, labelled partial (never a killed agent and nothing)."""
    path = tmp_path / "forever.py"
    shutil.copy(EXAMPLES / "scripts" / "forever.py", path)
    code, out, err = run_cli("profile", str(path), "--timeout", "12", "--json", "--no-history")
    assert code == 0, err
    partial = out["script"]["partial"]
    assert partial["reason"] == "time limit" and 3 < partial["after_s"] < 12
    ones = next(i for i, x in enumerate(path.read_text().splitlines(), 1) if "torch.ones" in x)
    line = next(x for x in out["lines"] if x["line"] == ones)
    assert [op["name"] for op in line["ops"]] == ["aten::ones", "aten::mul"]
    assert line["hits"] > 10
    code, text, _ = run_cli("profile", str(path), "--timeout", "12", "--no-history")
    assert code == 0 and "partial the run was cut at the time limit" in text
