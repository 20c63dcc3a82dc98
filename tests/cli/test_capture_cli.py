"""Inputs taken from the script's own run (issue 10 items 1–4): the file runs as ``python FILE``
and stops at the target's first call; the rest of the script never runs. Real agent, real torch
(CPU), through the CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FAST, ROOT, kl, lineno, write

EXAMPLES = ROOT / "tests" / "data" / "examples" / "capture"


def copy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    shutil.copy(EXAMPLES / name, path)
    return path


def profile_json(target: str, *extra: str) -> dict[str, Any]:
    code, out, err, _ = kl("profile", target, "--json", *FAST, *extra)
    assert code == 0, (out, err)
    result: dict[str, Any] = out
    return result


def error_json(target: str) -> dict[str, Any]:
    code, out, err, _ = kl("profile", target, "--json", *FAST)
    assert code == 1, (out, err)
    error: dict[str, Any] = out["error"]
    return error


def test_the_script_itself_writes_the_marker(tmp_path: Path) -> None:
    # What the next test relies on: run to its end, the script does write its marker.
    path = copy(tmp_path, "timed_square.py")
    subprocess.run([sys.executable, str(path)], check=True, cwd=tmp_path, timeout=120)
    assert (tmp_path / "reached_the_end.txt").exists()


@pytest.mark.parametrize(
    ("function", "call_text"),
    [("square_2", "time_fn(square_2, b)"), ("square_3", "time_fn(square_3, b)")],
)
def test_inputs_are_captured_through_a_timing_helper_and_the_rest_never_runs(
    tmp_path: Path, function: str, call_text: str
) -> None:
    path = copy(tmp_path, "timed_square.py")
    result = profile_json(f"{path}::{function}", "--stages", "timing,ops")
    inputs = result["inputs"]
    assert inputs["source"] == "captured"
    assert inputs["line"] == lineno(path, call_text)
    assert inputs["call"] == f"time_fn → {function}"
    assert isinstance(inputs["setup_s"], float) and inputs["setup_s"] >= 0
    [arg] = inputs["args"]
    assert arg["name"] == "a" and arg["type"] == "Tensor"
    assert arg["shape"] == [64, 32] and arg["dtype"] == "float32" and arg["device"] == "cpu"
    expected = "aten::mul" if function == "square_2" else "aten::pow"
    assert [op["name"] for line in result["lines"] for op in line["ops"]] == [expected]
    assert not (tmp_path / "reached_the_end.txt").exists()


def test_a_module_converted_at_module_level_is_the_profiled_self(tmp_path: Path) -> None:
    # Block.__init__ takes arguments and the instance is float64: a fresh Block() could not
    # be made, and a float32 one would fail on the float64 input.
    path = copy(tmp_path, "module_dtype.py")
    result = profile_json(f"{path}::Block.forward", "--stages", "timing,ops")
    inputs = result["inputs"]
    assert inputs["source"] == "captured"
    assert inputs["line"] == lineno(path, "y = model(x)")
    assert inputs["call"] == "Block.forward"
    assert [(a["name"], a["dtype"], a["shape"]) for a in inputs["args"]] == [
        ("x", "float64", [8, 16])
    ]
    assert inputs["self"] == {
        "class": "Block",
        "how": "captured",
        "name": "model",
        "made_at": lineno(path, "model = Block(16, 64)"),
    }
    ops = {op["name"] for line in result["lines"] for op in line["ops"]}
    assert "aten::linear" in ops and "aten::relu" in ops


def test_a_script_that_never_calls_the_target_says_so_on_the_def_line(tmp_path: Path) -> None:
    path = copy(tmp_path, "never_called.py")
    err = error_json(f"{path}::scale")
    assert err["kind"] == "inputs"
    assert err["line"] == lineno(path, "def scale(")
    assert "the script ran to its end" in err["message"]
    assert "without calling scale" in err["message"]
    directive = err["suggested_directive"]
    assert directive.startswith("# kernel-lens: inputs = ")
    assert "x=" in directive and "factor=" in directive
    assert directive in err["message"]


def test_a_script_that_needs_arguments_says_so(tmp_path: Path) -> None:
    path = copy(tmp_path, "needs_argv.py")
    err = error_json(f"{path}::add_one")
    assert err["kind"] == "inputs"
    assert err["line"] == lineno(path, "def add_one(")
    assert "needs command-line arguments" in err["message"]
    assert "without" not in err["message"]
    assert err["suggested_directive"].startswith("# kernel-lens: inputs = (")


def test_a_script_that_raises_before_the_call_names_the_error_and_its_line(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        'def f(x):\n    return x + 1\n\n\nsettings = {}["missing"]\nf(torch.ones(2))\n',
    )
    err = error_json(f"{path}::f")
    assert err["kind"] == "inputs" and err["line"] == lineno(path, "def f(")
    assert "raised KeyError" in err["message"]
    assert f"at line {lineno(path, 'settings = ')}" in err["message"]


def test_a_directive_wins_and_the_main_block_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "main_ran.txt"
    path = write(
        tmp_path,
        f"""\
        # kernel-lens: inputs = (torch.ones(4),)
        def f(x):
            return x * 3


        def g():
            return torch.ones(4) * 2


        if __name__ == "__main__":
            open({str(marker)!r}, "w").close()
            f(torch.ones(100, 100))
        """,
    )
    for function in ("f", "g"):
        result = profile_json(f"{path}::{function}", "--stages", "timing")
        assert result["inputs"]["source"] == ("directive" if function == "f" else "none")
    assert result["inputs"]["args"] == []
    assert not marker.exists()


def test_a_method_without_capture_uses_the_module_instance(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        class Scaler:
            def __init__(self, k):
                self.k = k

            def run(self):
                return torch.ones(3) * self.k


        scaler = Scaler(5)
        """,
    )
    result = profile_json(f"{path}::Scaler.run", "--stages", "timing")
    assert result["inputs"]["self"] == {
        "class": "Scaler",
        "how": "module instance scaler",
        "name": "scaler",
        "made_at": lineno(path, "scaler = Scaler(5)"),
    }


def test_the_text_output_has_an_inputs_line(tmp_path: Path) -> None:
    path = copy(tmp_path, "timed_square.py")
    code, out, err, _ = kl("profile", f"{path}::square_2", *FAST, "--stages", "timing")
    assert code == 0, err
    [line] = [x for x in out.splitlines() if x.startswith("inputs: ")]
    assert line == (
        f"inputs: captured at timed_square.py:{lineno(path, 'time_fn(square_2, b)')} "
        "(time_fn → square_2) after " + line.split(" after ")[1].split(" s ")[0] + " s of the "
        "script · a: Tensor float32[64, 32] cpu"
    )


@pytest.mark.gpu
def test_a_module_moved_to_cuda_at_module_level_profiles_on_its_weights(tmp_path: Path) -> None:
    path = copy(tmp_path, "module_cuda.py")
    result = profile_json(f"{path}::Mlp.forward", "--stages", "timing,ops")
    assert result["device_kind"] == "cuda"
    assert result["inputs"]["self"]["how"] == "captured"
    assert [a["device"] for a in result["inputs"]["args"]] == ["cuda:0"]
    assert any(line["ops"] for line in result["lines"])


def test_a_torch_compile_function_is_captured_at_its_wrapper(tmp_path: Path) -> None:
    # Dynamo runs the frame as transformed code: the capture is taken at torch's wrapper.
    marker = tmp_path / "main_ran_on.txt"
    path = write(
        tmp_path,
        f"""\
        @torch.compile
        def fused(x, y):
            return torch.relu(x) * y


        if __name__ == "__main__":
            a = torch.randn(32)
            fused(a, y=a)
            open({str(marker)!r}, "w").close()
        """,
    )
    result = profile_json(f"{path}::fused", "--stages", "timing")
    inputs = result["inputs"]
    assert inputs["source"] == "captured" and inputs["call"] == "fused"
    assert inputs["line"] == lineno(path, "fused(a, y=a)")
    assert [(a["name"], a["shape"]) for a in inputs["args"]] == [("x", [32]), ("y", [32])]
    assert not marker.exists()


def test_a_triton_launcher_called_at_module_level_stops_before_the_benchmark(
    tmp_path: Path,
) -> None:
    # On the GPU machine it runs on CUDA; here under Triton's interpreter.
    path = copy(tmp_path, "triton_launch.py")
    result = profile_json(f"{path}::square", "--stages", "timing,ops")
    inputs = result["inputs"]
    assert inputs["source"] == "captured" and inputs["line"] == lineno(path, "y = square(x)")
    assert [(a["name"], a["shape"], a["repr"]) for a in inputs["args"]][1] == (
        "BLOCK",
        None,
        "128",
    )
    assert inputs["args"][0]["shape"] == [1000]
    assert not (tmp_path / "benchmark_ran.txt").exists()


@pytest.mark.gpu
def test_a_triton_launcher_on_cuda_is_captured_with_cuda_inputs(tmp_path: Path) -> None:
    path = copy(tmp_path, "triton_launch.py")
    result = profile_json(f"{path}::square", "--stages", "timing,ops")
    assert result["device_kind"] == "cuda"
    assert result["inputs"]["args"][0]["device"] == "cuda:0"
    assert any("square_kernel" in k["name"] for k in result["kernels"]), result["kernels"]
    assert not (tmp_path / "benchmark_ran.txt").exists()


SUGGEST = """import torch
import torch.nn as nn


def mm(a, b):
    return (a @ b).relu()


def conv(x):
    return torch.nn.functional.conv2d(x, torch.ones(8, x.shape[1], 3, 3))


def typed(x: torch.Tensor, n: int, *, eps: float):
    return x[:n] * eps


def picky(x):
    raise ValueError("no input is ever right")


class Needs(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.lin = nn.Linear(cfg, cfg)

    def forward(self, x):
        return self.lin(x)
"""


def test_a_suggested_directive_is_run_once_before_it_is_offered(tmp_path: Path) -> None:
    path = write(tmp_path, SUGGEST)
    # two tensors: matrices first, and the pair runs
    fix = error_json(f"{path}::mm")["suggested_directive"]
    assert fix == (
        "# kernel-lens: inputs = ((), dict(a=torch.randn(64, 64), b=torch.randn(64, 64)))"
        "  # checked: it runs; the shapes are a guess"
    )
    # a 4-D input is found by trying each rank
    assert error_json(f"{path}::conv")["suggested_directive"] == (
        "# kernel-lens: inputs = (torch.randn(2, 4, 64, 64),)  # x; checked: it runs; the "
        "shapes are a guess"
    )
    # type hints decide ints and floats; keyword-only parameters are given by name
    assert error_json(f"{path}::typed")["suggested_directive"].startswith(
        "# kernel-lens: inputs = ((), dict(x=torch.randn(1024), n=1024, eps=1.0))  # checked"
    )
    # nothing runs: the suggestion says so, with the reason, instead of claiming it works
    picky = error_json(f"{path}::picky")["suggested_directive"]
    assert picky.endswith("does not run as is (ValueError: no input is ever right): edit it")
    # a method whose class needs arguments cannot be called: not checked, and why
    needs = error_json(f"{path}::Needs.forward")["suggested_directive"]
    assert "not checked: to profile the method 'Needs.forward'" in needs
    # what is said checked is what runs: the offered directive profiles
    fixed = tmp_path / "fixed.py"
    lines = SUGGEST.splitlines(True)
    at = next(i for i, line in enumerate(lines) if line.startswith("def mm"))
    lines.insert(at, fix + "\n")
    fixed.write_text("".join(lines))
    result = profile_json(f"{fixed}::mm")
    assert result["inputs"]["source"] == "directive"
    assert result["timing"]["median_ms"] > 0
