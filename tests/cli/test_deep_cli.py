"""Real projects (issue 23): whole scripts per line inside their functions and across the
workspace's files, script arguments after ``--``, a layer of ``model.py`` profiled with the
inputs its driver script gives it (``--from``), and a window of a long run (``--skip/--steps``).

Each test copies a small workspace (tests/data/examples/deep) into a fresh folder and runs the
real CLI, so the agent runs it as ``python FILE ARGS…`` would, in that folder."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli

DEEP = EXAMPLES / "deep"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DEEP, root)
    return root


def _lineno(path: Path, text: str) -> int:
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return no
    raise AssertionError(text)


def _row(rows: list[dict[str, Any]], line: int) -> dict[str, Any] | None:
    return next((r for r in rows if r["line"] == line), None)


def _ops(rows: list[dict[str, Any]], line: int) -> list[str]:
    row = _row(rows, line)
    return [op["name"] for op in row["ops"]] if row else []


def test_a_main_shaped_script_has_its_ops_inside_main_and_in_the_helper_file(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    script, helper = ws / "main_shaped.py", ws / "pkg" / "helpers.py"
    code, out, err = run_cli("profile", str(script), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    lines = out["lines"]
    # Inside step() and main(), not on the `main()` call line.
    assert _ops(lines, _lineno(script, "    main()")) == []
    matmul = _row(lines, _lineno(script, "y = torch.relu(x @ x)"))
    assert matmul is not None and matmul["hits"] == 4  # the loop's four passes, summed
    names = [op["name"] for op in matmul["ops"]]
    assert "aten::matmul" in names and "aten::relu" in names
    assert "aten::square" in _ops(lines, _lineno(script, "total = torch.square(x).sum()"))
    assert "aten::randn" in _ops(lines, _lineno(script, "x = torch.randn(32, 32)"))
    # The helper module's lines are under files, by path, with their text and hits.
    rows = out["files"][str(helper)]
    centered = _row(rows, _lineno(helper, "centered = x - x.mean()"))
    assert centered is not None and centered["hits"] == 4
    assert centered["source"] == "centered = x - x.mean()"
    assert {"aten::mean", "aten::sub"} <= {op["name"] for op in centered["ops"]}
    assert "aten::std" in _ops(rows, _lineno(helper, "return centered / (centered.std()"))
    # Nothing of torch's own files is a workspace file.
    assert all("site-packages" not in p for p in out["files"])


def test_the_text_report_lists_the_other_files_lines(tmp_path: Path, trace_dir: str) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli("profile", str(ws / "main_shaped.py"), "--trace-dir", trace_dir)
    assert code == 0, err
    assert f"{ws / 'pkg' / 'helpers.py'} (lines of this workspace file the run executed)" in out
    assert "centered = x - x.mean()" in out


def test_arguments_after_double_dash_are_the_scripts_argv(tmp_path: Path, trace_dir: str) -> None:
    ws = _workspace(tmp_path)
    driver, model = ws / "drive.py", ws / "model.py"
    code, out, err = run_cli(
        "profile", str(driver), "--json", "--trace-dir", trace_dir, "--", "--dim", "24"
    )
    assert code == 0, (out, err)
    assert out["script"]["argv"] == ["--dim", "24"]
    assert (ws / "driven.txt").is_file()  # it ran to its end, in its own folder
    # The driver's model call is spread over model.py's lines (the innermost workspace line).
    rows = out["files"][str(model)]
    sdpa = _row(rows, _lineno(model, "scaled_dot_product_attention(q, k, v"))
    assert sdpa is not None and sdpa["hits"] == 4  # 2 blocks × 2 steps
    assert "aten::scaled_dot_product_attention" in [op["name"] for op in sdpa["ops"]]
    assert _ops(out["lines"], _lineno(driver, "loss = net(x)")) == []


def test_a_script_that_needs_arguments_says_to_give_them_after_double_dash(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    # `--` alone: no arguments (not the launch configuration's, see the test below)
    code, out, err = run_cli(
        "profile", str(ws / "drive.py"), "--json", "--trace-dir", trace_dir, "--"
    )
    assert code == 1
    error = out["error"]
    assert error["kind"] == "exit"
    assert "needs command-line arguments: argparse exited" in error["message"]
    assert "after `--`" in error["message"]
    assert error["line"] == _lineno(ws / "drive.py", "args = parser.parse_args()")


def test_a_script_runs_with_the_arguments_kept_for_it_when_none_are_given(
    tmp_path: Path, trace_dir: str
) -> None:
    """Issue 41: one list per script — a launch configuration's args, else the ones the editor's
    Arguments… kept — used by the CLI's runs too, and said on stderr."""
    from kernel_lens.run_choices import RunChoices

    ws = _workspace(tmp_path)
    drive = ws / "drive.py"
    code, out, err = run_cli("profile", str(drive), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    assert out["script"]["argv"] == ["--dim", "24"]  # .vscode/launch.json's "Drive (dim 24)"
    assert "runs with the arguments of the launch configuration “Drive (dim 24)”: --dim 24" in err
    RunChoices.for_path(str(drive)).set_script_args(str(drive), ["--dim", "8", "--steps", "1"])
    code, out, err = run_cli("profile", str(drive), "--json", "--trace-dir", trace_dir)
    assert code == 0, (out, err)
    assert out["script"]["argv"] == ["--dim", "8", "--steps", "1"]
    assert "runs with the arguments kept for it: --dim 8 --steps 1" in err
    # and as the driver of a layer (--from), the same
    target = f"{ws / 'model.py'}::Attention.forward"
    code, out, err = run_cli(
        "profile", target, "--from", str(drive), "--json", "--stages", "timing", "--reps", "2"
    )
    assert code == 0, (out, err)
    assert "drive.py runs with the arguments kept for it: --dim 8 --steps 1" in err
    (x,) = out["inputs"]["args"]
    assert x["shape"] == [2, 8, 8]  # --dim 8, as kept


def test_a_layer_is_profiled_with_the_inputs_its_driver_gives_it(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    driver, model = ws / "drive.py", ws / "model.py"
    code, out, err = run_cli(
        "profile",
        f"{model}::Attention.forward",
        "--from",
        str(driver),
        "--json",
        "--reps",
        "3",
        "--runs",
        "1",
        "--trace-dir",
        trace_dir,
        "--",
        "--dim",
        "24",
    )
    assert code == 0, (out, err)
    inputs = out["inputs"]
    assert inputs["source"] == "captured" and inputs["driver"] == str(driver)
    assert inputs["line"] == _lineno(driver, "loss = net(x)")
    assert inputs["call"] == "loss = net(x) → Net.forward → Block.forward → Attention.forward"
    # x is the (B, T, C) tensor the driver made, C from its required argument.
    (x,) = inputs["args"]
    assert x["shape"] == [2, 8, 24]
    # self is the driver's layer, and the call's autocast travels with it.
    assert inputs["self"]["how"] == "captured"
    autocast = {a["device_type"]: a for a in inputs["context"]["autocast"]}
    assert autocast["cpu"]["enabled"] and autocast["cpu"]["dtype"] == "bfloat16"
    # The driver stopped at the call: it never got past the model.
    assert not (ws / "driven.txt").exists()
    lines = out["lines"]
    sdpa = _lineno(model, "scaled_dot_product_attention(q, k, v")
    assert "aten::scaled_dot_product_attention" in _ops(lines, sdpa)
    assert out["timing"]["median_ms"] > 0


def test_the_text_output_says_where_the_drivers_inputs_came_from(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli(
        "profile",
        f"{ws / 'model.py'}::Attention.forward",
        "--from",
        str(ws / "drive.py"),
        "--reps",
        "3",
        "--runs",
        "1",
        "--trace-dir",
        trace_dir,
        "--",
        "--dim",
        "16",
    )
    assert code == 0, err
    line = _lineno(ws / "drive.py", "loss = net(x)")
    assert f"inputs: inputs from drive.py:{line} (loss = net(x) → Net.forward →" in out
    assert "self = the driver's Attention" in out


def test_a_driver_that_never_calls_the_function_says_so(tmp_path: Path, trace_dir: str) -> None:
    ws = _workspace(tmp_path)
    model = ws / "model.py"
    code, out, err = run_cli(
        "profile",
        f"{model}::Attention.forward",
        "--from",
        str(ws / "main_shaped.py"),
        "--json",
        "--trace-dir",
        trace_dir,
    )
    assert code == 1
    assert out["error"]["kind"] == "inputs"
    assert "main_shaped.py ran to its end" in out["error"]["message"]
    assert out["error"]["line"] == _lineno(model, "def forward(self, x):")


def test_a_training_loop_is_cut_to_a_window_of_optimizer_steps(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    script = ws / "train_window.py"
    code, out, err = run_cli(
        "profile", str(script), "--json", "--trace-dir", trace_dir, "--skip", "2", "--steps", "3"
    )
    assert code == 0, (out, err)
    window = out["script"]["window"]
    assert window["counted_from"] == "optimizer.step()"
    assert window["steps_profiled"] == 3 and window["steps_seen"] == 5 and window["stopped"]
    # Stopped where step 5 ended: the step files after the window were never written.
    assert sorted(p.name for p in ws.glob("step*.txt")) == [f"step{i}.txt" for i in range(4)]
    # The profiled steps only: the loss line ran three times under the profiler (steps 3–5),
    # the two skipped steps are not in it.
    loss = _row(out["lines"], _lineno(script, "loss = model(torch.randn(4, 8))"))
    assert loss is not None and loss["hits"] == 3
    assert "the profiled window" in out["script"]["label"]


def test_a_marker_line_ends_each_step_and_the_marker_after_the_window_is_not_written(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    script = ws / "marker_window.py"
    code, out, err = run_cli(
        "profile", str(script), "--json", "--trace-dir", trace_dir, "--skip", "2", "--steps", "3"
    )
    assert code == 0, (out, err)
    assert out["script"]["window"]["counted_from"] == "marker"
    # The marker line is a step's end: reached for the 5th time, the script stops before it.
    assert sorted(p.name for p in ws.glob("mark*.txt")) == [f"mark{i}.txt" for i in range(4)]
    tanh = _row(out["lines"], _lineno(script, "x = torch.tanh(x @ x)"))
    assert tanh is not None and tanh["hits"] == 3


def test_a_window_past_the_end_of_the_run_says_how_many_steps_it_saw(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli(
        "profile", str(ws / "marker_window.py"), "--json", "--trace-dir", trace_dir,
        "--skip", "100", "--steps", "1",
    )  # fmt: skip
    assert code == 1
    assert out["error"]["kind"] == "not-found"
    assert "after 40 step(s)" in out["error"]["message"]


def test_window_options_need_a_whole_script(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli("profile", f"{ws / 'model.py'}::Attention.forward", "--steps", "2")
    assert code == 2
    assert "--skip/--steps/--after cut a whole script's run" in err


def test_a_wall_clock_window_starts_at_the_first_step_past_its_time(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli(
        "profile", str(ws / "marker_window.py"), "--json", "--trace-dir", trace_dir,
        "--after", "0s", "--steps", "2",
    )  # fmt: skip
    assert code == 0, (out, err)
    window = out["script"]["window"]
    assert window["after_s"] == 0 and window["started_s"] >= 0
    assert window["steps_profiled"] == 2 and window["stopped"]
    # No step had ended by 0 s: it started at the first line past its time, and the second
    # marker ended the window before it ran.
    assert sorted(p.name for p in ws.glob("mark*.txt")) == ["mark0.txt"]


def test_after_takes_seconds_minutes_and_milliseconds(tmp_path: Path) -> None:
    from kernel_lens.cli.profile import parse_seconds

    assert parse_seconds("30") == 30.0 and parse_seconds("30s") == 30.0
    assert parse_seconds("1.5m") == 90.0 and parse_seconds("200ms") == pytest.approx(0.2)
    with pytest.raises(ValueError, match="not a time"):
        parse_seconds("soon")
    code, out, err = run_cli("profile", str(tmp_path / "x.py"), "--after", "soon")
    assert code == 2 and "--after: not a time: 'soon'" in err
