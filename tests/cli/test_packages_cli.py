"""Attribution inside installed packages the user names (issue 48): ``--in-package NAME``.

A small model package (tests/data/examples/installed/tinymodel) is copied into a
``site-packages`` folder outside the workspace and put on ``PYTHONPATH``, as ``pip install``
would; the workspace's script builds and trains it. Without the option the whole model is on the
script's call line (and its lens is told how much of that line went into the package); with it,
the package's own lines hold the forward and the backward, and nothing is lost on the way."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli

INSTALLED = EXAMPLES / "installed"


def _setup(tmp_path: Path, *, site: str = "site-packages") -> tuple[Path, Path, dict[str, str]]:
    """A workspace (with a .git: the run's workspace is it) and the package installed outside
    it; the environment that makes the package importable."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    for name in ("train.py", "step.py"):
        shutil.copy(INSTALLED / name, ws / name)
    lib = tmp_path / "env" / site
    shutil.copytree(INSTALLED / "tinymodel", lib / "tinymodel")
    path = os.pathsep.join(p for p in (str(lib), os.environ.get("PYTHONPATH", "")) if p)
    return ws, lib / "tinymodel" / "layers.py", {"PYTHONPATH": path}


def _lineno(path: Path, text: str) -> int:
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return no
    raise AssertionError(text)


def _row(rows: list[dict[str, Any]], line: int) -> dict[str, Any]:
    found = next((r for r in rows if r["line"] == line), None)
    assert found is not None, (line, [r["line"] for r in rows])
    return found


def _calls(rows: list[dict[str, Any]], part: str | None = None) -> dict[str, int]:
    """Each op's calls over ``rows`` (the forward ops, or a part: ``backward``)."""
    out: dict[str, int] = {}
    for row in rows:
        holder = row if part is None else (row.get(part) or {})
        for op in holder.get("ops") or []:
            out[op["name"]] = out.get(op["name"], 0) + int(op["calls"])
    return out


def test_without_the_option_the_model_is_on_the_call_line_and_its_share_is_said(
    tmp_path: Path, trace_dir: str
) -> None:
    ws, layers, env = _setup(tmp_path)
    script = ws / "train.py"
    code, out, err = run_cli("profile", str(script), "--json", "--trace-dir", trace_dir, env=env)
    assert code == 0, (out, err)
    call = _row(out["lines"], _lineno(script, "out = model(x)"))
    # The whole forward (3 linears × 3 passes) and its backward are on the call line.
    assert _calls([call])["aten::linear"] == 9
    assert _calls([call], "backward")["AddmmBackward0"] == 9
    assert not out.get("files")  # nothing of the package is a line of its own
    assert "packages" not in out
    # The line's time went into the package's code: the lens's suggestion reads this.
    inside = call["inside"]
    assert inside[0]["package"] == "tinymodel"
    assert 0.5 <= inside[0]["share"] <= 1.0
    assert inside[0]["cpu_us"] > 0
    # A line that never entered the package says nothing of it.
    assert "inside" not in _row(out["lines"], _lineno(script, "x = torch.randn(128, 64)"))
    assert str(layers) not in (out.get("files") or {})


def test_in_package_puts_forward_and_backward_on_the_packages_lines(
    tmp_path: Path, trace_dir: str
) -> None:
    ws, layers, env = _setup(tmp_path)
    script = ws / "train.py"
    code, before, err = run_cli("profile", str(script), "--json", "--trace-dir", trace_dir, env=env)
    assert code == 0, err
    code, out, err = run_cli(
        "profile",
        str(script),
        "--json",
        "--trace-dir",
        trace_dir,
        "--in-package",
        "tinymodel",
        env=env,
    )
    assert code == 0, (out, err)
    assert out["packages"] == {"tinymodel": os.path.realpath(layers.parent)}
    rows = out["files"][os.path.realpath(layers)]
    proj = _row(rows, _lineno(layers, "h = self.proj(x)"))
    assert _calls([proj]) == {"aten::linear": 6}  # two blocks × three passes
    assert _calls([proj], "backward")["AddmmBackward0"] == 6
    head = _row(rows, _lineno(layers, "return self.head(x).sum()"))
    assert _calls([head])["aten::linear"] == 3
    assert _calls([head], "backward")["AddmmBackward0"] == 3
    relu = _row(rows, _lineno(layers, "return torch.relu(h) + x"))
    assert {"aten::relu", "aten::add"} <= set(_calls([relu]))
    assert "ReluBackward0" in _calls([relu], "backward")
    # The call line keeps nothing of the model's ops; the package's lines have them all.
    call = next((r for r in out["lines"] if r["line"] == _lineno(script, "out = model(x)")), None)
    assert call is None or "aten::linear" not in _calls([call])
    all_rows = out["lines"] + [r for file_rows in out["files"].values() for r in file_rows]
    assert _calls(all_rows) == _calls(before["lines"])
    assert _calls(all_rows, "backward") == _calls(before["lines"], "backward")
    assert out["accounting"]["on_lines_pct"] == 100.0
    # torch's own files are never lines.
    assert all("/torch/" not in p for p in out["files"])
    # The summary: where the time is, file by file, the package named.
    by_file = {f["path"]: f for f in out["by_file"]}
    assert by_file[os.path.realpath(layers)]["package"] == "tinymodel"
    assert by_file[str(script)]["package"] is None
    assert by_file[os.path.realpath(layers)]["cpu_us"] > by_file[str(script)]["cpu_us"]


def test_a_function_profile_attributes_inside_the_package_too(
    tmp_path: Path, trace_dir: str
) -> None:
    ws, layers, env = _setup(tmp_path)
    step = ws / "step.py"
    target = f"{step}::step"
    common = ("--json", "--trace-dir", trace_dir, "--reps", "3", "--runs", "2")
    code, before, err = run_cli("profile", target, *common, env=env)
    assert code == 0, err
    call = _row(before["lines"], _lineno(step, "out = model(x)"))
    assert _calls([call])["aten::linear"] == 3  # per call of the function
    assert "files" not in before or not before["files"]
    code, out, err = run_cli("profile", target, *common, "--in-package", "tinymodel", env=env)
    assert code == 0, (out, err)
    rows = out["files"][os.path.realpath(layers)]
    proj = _row(rows, _lineno(layers, "h = self.proj(x)"))
    assert _calls([proj]) == {"aten::linear": 2}
    assert _calls([proj], "backward")["AddmmBackward0"] == 2
    all_rows = out["lines"] + [r for file_rows in out["files"].values() for r in file_rows]
    assert _calls(all_rows) == _calls(before["lines"])
    assert _calls(all_rows, "backward") == _calls(before["lines"], "backward")


def test_an_editable_install_outside_site_packages_is_found_through_the_interpreter(
    tmp_path: Path, trace_dir: str
) -> None:
    ws, layers, env = _setup(tmp_path, site="src")  # a source checkout on the path
    script = ws / "train.py"
    code, out, err = run_cli(
        "profile", str(script), "--json", "--trace-dir", trace_dir, "--in-package", "tinymodel",
        env=env,
    )  # fmt: skip
    assert code == 0, (out, err)
    rows = out["files"][os.path.realpath(layers)]
    assert _calls([_row(rows, _lineno(layers, "h = self.proj(x)"))]) == {"aten::linear": 6}


def test_a_package_that_is_not_installed_or_is_torch_is_refused_clearly(
    tmp_path: Path, trace_dir: str
) -> None:
    ws, _, env = _setup(tmp_path)
    script = ws / "train.py"
    code, out, _ = run_cli(
        "profile", str(script), "--json", "--trace-dir", trace_dir, "--in-package", "nosuchpkg",
        env=env,
    )  # fmt: skip
    assert code != 0
    assert out["error"]["kind"] == "not-found"
    assert "nosuchpkg" in out["error"]["message"] and "not installed" in out["error"]["message"]
    code, out, _ = run_cli(
        "profile", str(script), "--json", "--trace-dir", trace_dir, "--in-package", "torch",
        env=env,
    )  # fmt: skip
    assert code != 0
    assert "torch cannot be named" in out["error"]["message"]


def test_a_real_transformers_model_has_its_attention_and_mlp_lines(
    tmp_path: Path, trace_dir: str
) -> None:
    """A tiny random-weight ``LlamaForCausalLM`` (no download) trained two steps: named,
    ``transformers``'s modeling file holds the time on its attention and MLP lines."""
    pytest.importorskip("transformers")
    ws = tmp_path / "ws"
    ws.mkdir()
    script = ws / "llama_train.py"
    shutil.copy(INSTALLED / "llama_train.py", script)
    common = ("--json", "--trace-dir", trace_dir)
    code, before, err = run_cli("profile", str(script), *common, timeout=600)
    assert code == 0, err
    call = _row(before["lines"], _lineno(script, "out = model(input_ids=ids, labels=ids)"))
    assert call["inside"][0]["package"] == "transformers"
    assert call["inside"][0]["share"] >= 0.5
    code, out, err = run_cli(
        "profile", str(script), *common, "--in-package", "transformers", timeout=600
    )
    assert code == 0, (out, err)
    modeling = next(p for p in out["files"] if p.endswith("models/llama/modeling_llama.py"))
    rows = out["files"][modeling]
    by_source = {r["source"]: r for r in rows}

    def line_with(text: str) -> dict[str, Any]:
        return next(r for s, r in by_source.items() if text in s)

    for projection in ("self.q_proj(", "self.k_proj(", "self.v_proj(", "self.o_proj("):
        row = line_with(projection)
        assert _calls([row])["aten::linear"] == 4, projection  # 2 layers × 2 steps
        assert "AddmmBackward0" in _calls([row], "backward") or "MmBackward0" in _calls(
            [row], "backward"
        ), projection
    mlp = line_with("self.down_proj(")
    assert _calls([mlp])["aten::linear"] == 12  # gate, up, down × 2 layers × 2 steps
    assert out["accounting"]["on_lines_pct"] == 100.0
    all_rows = out["lines"] + [r for file_rows in out["files"].values() for r in file_rows]
    assert _calls(all_rows)["aten::linear"] == _calls(before["lines"])["aten::linear"]
    files = {f["path"]: f for f in out["by_file"]}
    assert files[modeling]["package"] == "transformers"


def test_a_function_profiles_call_line_says_its_share_inside_the_package(
    tmp_path: Path, trace_dir: str
) -> None:
    ws, _, env = _setup(tmp_path)
    step = ws / "step.py"
    code, out, err = run_cli(
        "profile", f"{step}::step", "--json", "--trace-dir", trace_dir, "--reps", "3",
        "--runs", "2", env=env,
    )  # fmt: skip
    assert code == 0, (out, err)
    call = _row(out["lines"], _lineno(step, "out = model(x)"))
    inside = call["inside"][0]
    assert inside["package"] == "tinymodel" and inside["share"] >= 0.5
    # Per call, as the line's own times are: never more than the line's wall time per call.
    assert 0 < inside["cpu_us"]
    assert "by_file" not in out  # one file, nothing named
