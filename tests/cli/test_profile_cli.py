"""``kernel-lens profile`` end to end on CPU: every example in kernels/ and the error cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, HAS_CUDA, KERNELS, run_cli

FAST = ["--budget-ms", "100", "--warmup-ms", "5"]


def _profile(spec: str, trace_dir: str, *extra: str) -> dict[str, Any]:
    code, out, err = run_cli("profile", spec, "--json", "--trace-dir", trace_dir, *FAST, *extra)
    assert code == 0, (out, err)
    return out  # type: ignore[no-any-return]


def _line(result: dict[str, Any], source_start: str) -> dict[str, Any]:
    for line in result["lines"]:
        if line["source"].startswith(source_start):
            return line
    raise AssertionError(f"no line {source_start!r} in {[x['source'] for x in result['lines']]}")


def _lineno(path: Path, text: str) -> int:
    """1-based line of the first line of ``path`` that contains ``text``."""
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return no
    raise AssertionError(f"{text!r} not in {path}")


def _op_names(line: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for op in line["ops"]:
        names.append(op["name"])
        names.extend(op["dispatch"])
    return names


@pytest.mark.serial  # times real calls to ±1%: alone, not beside the parallel workers
def test_a_stable_function_stops_timing_once_converged_well_before_the_budget(
    trace_dir: str,
) -> None:
    """Issue 28 item 2: repetitions stop once the median is known within ±1%, not at the
    budget; the policy says so, with the count. (One intra-op thread: on a loaded 2-core
    machine torch's thread pool makes each call wait for a busy core, a noise no rule fixes.)"""
    budget_ms = 2000.0
    code, out, err = run_cli(
        "profile", f"{KERNELS}/square.py::square_mul", "--json", "--trace-dir", trace_dir,
        "--budget-ms", str(budget_ms), "--warmup-ms", "5", env={"OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert code == 0, (out, err)
    timing = out["timing"]
    policy = timing["policy"]
    assert policy["stopped"].startswith("converged (CI ±"), (
        policy["stopped"], policy["ci_pct"], timing["reps"], sum(timing["samples_ms"]),
    )  # fmt: skip
    assert policy["ci_pct"] <= 1.0 and policy["reps"] == timing["reps"] >= 20
    assert sum(timing["samples_ms"]) < budget_ms / 4, (timing["reps"], policy)
    assert "median converged (95% CI ±" in policy["text"]


def test_three_ways_names_the_op_of_each_line(trace_dir: str) -> None:
    result = _profile(f"{KERNELS}/square.py::square_three_ways", trace_dir)
    assert result["function"] == "square_three_ways"
    if HAS_CUDA:
        import torch

        assert result["device"] == torch.cuda.get_device_name(0)
    else:
        assert result["device"] == "CPU"
    timing = result["timing"]
    assert timing["median_ms"] > 0 and timing["reps"] >= 10
    assert len(timing["samples_ms"]) == timing["reps"]
    assert timing["method"] == ("cuda-events" if HAS_CUDA else "perf-counter")
    assert _line(result, "a = torch.square(x)")["ops"][0]["name"] == "aten::square"
    assert _op_names(_line(result, "b = x * x")) == ["aten::mul"]
    assert _op_names(_line(result, "c = x**2")) == ["aten::pow"]
    # Line numbers are the file's own.
    src = (KERNELS / "square.py").read_text().splitlines()
    for line in result["lines"]:
        assert src[line["line"] - 1].strip() == line["source"]
    # The trace was written and summarised.
    assert Path(result["trace_path"]).is_file()
    assert result["trace"]["event_count"] > 0
    json.loads(Path(result["trace_path"]).read_text())


@pytest.mark.parametrize(
    "func, op",
    [("square_torch", "aten::square"), ("square_mul", "aten::mul"), ("square_pow", "aten::pow")],
)
def test_each_variant(func: str, op: str, trace_dir: str) -> None:
    result = _profile(f"{KERNELS}/square.py::{func}", trace_dir)
    ops = [o["name"] for line in result["lines"] for o in line["ops"]]
    assert ops == [op]


def test_helper_calls_count_on_the_calling_line(trace_dir: str) -> None:
    result = _profile(f"{KERNELS}/square.py::square_all", trace_dir)
    assert result["inputs"]["label"] == "square_all_inputs()"
    line = _line(result, "return torch.square(x) + x * x + _pow2(x)")
    assert sorted(op["name"] for op in line["ops"]) == [
        "aten::add",
        "aten::mul",
        "aten::pow",
        "aten::square",
    ]
    assert {op["name"]: op["calls"] for op in line["ops"]}["aten::add"] == 2
    # _pow2's own line (in the helper) never appears.
    assert [x["line"] for x in result["lines"]] == [line["line"]]


def test_fusion_examples(trace_dir: str) -> None:
    result = _profile(f"{KERNELS}/fusion.py::square_twice", trace_dir)
    ops = result["lines"][0]["ops"]
    # Both squares are top-level ops of the one line: one entry, called twice per call.
    assert [o["name"] for o in ops] == ["aten::square"]
    assert ops[0]["calls"] == 2
    result = _profile(f"{KERNELS}/fusion.py::matmul_relu", trace_dir)
    assert _line(result, "z = x @ y")["ops"][0]["name"] == "aten::matmul"
    assert "aten::relu" in _op_names(_line(result, "z = torch.relu(z)"))
    assert _op_names(_line(result, "return z + 1.0")) == ["aten::add"]


def test_triton_square_runs_under_the_interpreter_on_cpu(trace_dir: str) -> None:
    result = _profile(f"{KERNELS}/triton_square.py::square", trace_dir)
    assert result["inputs"]["label"] == "directive"
    assert _line(result, "out = torch.empty_like(x)")["ops"][0]["name"] == "aten::empty_like"
    launch = _line(result, "square_kernel[grid]")
    assert launch["cpu_us"] > 0
    if HAS_CUDA:
        names = [k["name"] for op in launch["ops"] for k in op["kernels"]]
        assert "square_kernel" in names


@pytest.mark.skipif(HAS_CUDA, reason="the CPU message; the GPU test builds the extension")
def test_inline_square_says_it_needs_cuda_and_nvcc(trace_dir: str) -> None:
    code, out, _ = run_cli(
        "profile", f"{KERNELS}/inline_square.py::square", "--json", "--trace-dir", trace_dir
    )
    assert code == 1
    assert out["error"]["kind"] == "unsupported"
    assert "needs CUDA and nvcc" in out["error"]["message"]
    assert out["error"]["line"] == _lineno(
        KERNELS / "inline_square.py", "raise NotImplementedError"
    )


def test_profile_by_line_and_method(trace_dir: str) -> None:
    result = _profile(f"{EXAMPLES}/errors.py", trace_dir, "--line", str(_lineno(E, "h = x @")))
    assert result["function"] == "Model.forward"
    assert [o["name"] for o in _line(result, "h = x @ self.w")["ops"]] == ["aten::matmul"]
    result = _profile(f"{EXAMPLES}/errors.py::Model.scale", trace_dir, "--stages", "ops")
    assert "timing" not in result
    assert result["lines"][0]["ops"][0]["name"] == "aten::mul"


def test_timing_only_stage_skips_the_profiler(trace_dir: str) -> None:
    result = _profile(
        f"{KERNELS}/square.py::square_mul", trace_dir, "--stages", "timing", "--reps", "7"
    )
    assert result["timing"]["reps"] == 7
    assert "lines" not in result and "trace_path" not in result


def test_user_prints_do_not_corrupt_json(trace_dir: str) -> None:
    code, out, err = run_cli(
        "profile", f"{EXAMPLES}/errors.py::prints_a_lot", "--json", "--trace-dir", trace_dir, *FAST
    )
    assert code == 0
    assert out["function"] == "prints_a_lot"
    assert "user output that must not reach stdout" in err


E = EXAMPLES / "errors.py"


@pytest.mark.parametrize(
    "spec, kind, where, message",
    [
        (
            f"{EXAMPLES}/syntax_error.py::fine",
            "syntax",
            (EXAMPLES / "syntax_error.py", "def broken"),
            "expected ':'",
        ),
        (f"{E}::nope", "not-found", None, "no function 'nope'"),
        (
            f"{E}::raises_in_body",
            "runtime",
            (E, "raise ValueError"),
            "ValueError: boom from the body",
        ),
        (f"{E}::bad_inputs_directive", "inputs", (E, "inputs = (undefined_name,)"), "NameError"),
        (f"{E}::bad_factory", "inputs", (E, "return (1 / 0,)"), "ZeroDivisionError"),
        (
            f"{EXAMPLES}/import_error.py::f",
            "import",
            (EXAMPLES / "import_error.py", "raise Runtime"),
            "RuntimeError: module-level failure",
        ),
        (
            f"{E}::not_implemented_here",
            "unsupported",
            (E, "raise NotImplementedError"),
            "needs CUDA and nvcc",
        ),
        ("/nonexistent/file.py::f", "not-found", None, "cannot read"),
    ],
)
def test_errors_name_the_users_line(
    spec: str, kind: str, where: tuple[Path, str] | None, message: str, trace_dir: str
) -> None:
    code, out, _ = run_cli("profile", spec, "--json", "--trace-dir", trace_dir)
    assert code == 1
    err = out["error"]
    assert err["kind"] == kind
    assert err["line"] == (_lineno(*where) if where else None)
    assert message in err["message"]


def test_text_output_and_error_text(trace_dir: str) -> None:
    code, out, _ = run_cli(
        "profile", f"{KERNELS}/square.py::square_three_ways", "-q", "--trace-dir", trace_dir, *FAST
    )
    assert code == 0
    assert "median" in out and "aten::mul" in out and "x**2" in out
    code, out, err = run_cli("profile", f"{EXAMPLES}/errors.py::raises_in_body")
    assert code == 1 and out == ""
    assert "error (runtime) at" in err
    assert f"errors.py:{_lineno(E, 'raise ValueError')}" in err


def test_usage_error_exit_code() -> None:
    # (``profile PATH`` alone is a whole-script run: tests/cli/test_script_cli.py.)
    code, _, err = run_cli("profile")
    assert code == 2 and "target" in err
    code, _, err = run_cli("profile", f"{KERNELS}/square.py::square_mul", "--reps", "many")
    assert code == 2 and "--reps" in err
