"""On a CUDA GPU (issue 23): a layer of model.py profiled from its CUDA driver (bf16 kernels
under the driver's autocast), and a Triton-tutorial-shaped script per line inside its function.

Run on the lent H200 (see docs/benchmarks.md); skipped without CUDA.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli

pytestmark = pytest.mark.gpu


def _ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES / "deep", root)
    return root


def _lineno(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _kernels(row: dict[str, Any]) -> list[str]:
    return [k["name"] for op in row["ops"] for k in op["kernels"]]


def test_a_layer_from_its_cuda_driver_runs_bf16_kernels_under_its_autocast(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path)
    model = ws / "model.py"
    code, out, err = run_cli(
        "profile", f"{model}::Attention.forward", "--from", str(ws / "drive_cuda.py"),
        "--json", "--no-samples", "--no-history", "--trace-dir", str(tmp_path / "t"),
        "--", "--dim", "256",
    )  # fmt: skip
    assert code == 0, (out, err)
    assert out["device_kind"] == "cuda"
    inputs = out["inputs"]
    assert inputs["driver"].endswith("drive_cuda.py")
    autocast = {a["device_type"]: a for a in inputs["context"]["autocast"]}
    assert autocast["cuda"]["enabled"] and autocast["cuda"]["dtype"] == "bfloat16"
    (x,) = inputs["args"]
    assert x["shape"] == [4, 128, 256] and x["device"].startswith("cuda")
    qkv = next(r for r in out["lines"] if r["line"] == _lineno(model, "self.qkv(x).split"))
    names = " ".join(_kernels(qkv)).lower()
    assert "bf16" in names or "bfloat16" in names, names  # the matmul ran in bf16
    assert out["timing"]["method"] == "cuda-events"


def test_a_triton_tutorial_script_has_its_kernels_on_the_lines_inside_its_function(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path)
    script = ws / "triton_benchmark.py"
    code, out, err = run_cli(
        "profile", str(script), "--json", "--no-samples", "--trace-dir", str(tmp_path / "t")
    )
    assert code == 0, (out, err)
    rows = {r["line"]: r for r in out["lines"]}
    call = _lineno(script, "    benchmark()")
    assert call not in rows or not _kernels(rows[call])  # nothing left on the call line
    launch = rows[_lineno(script, "scale_kernel[(triton.cdiv")]
    assert any("scale_kernel" in k for k in _kernels(launch))
    assert any("elementwise" in k.lower() for k in _kernels(rows[_lineno(script, "x * 3.0")]))
    matmul = _kernels(rows[_lineno(script, "c = a @ a")])
    assert matmul, "no kernel on the fp16 matmul line"
    assert out["accounting"]["on_lines_pct"] >= 99.0
