"""On a CUDA GPU (issue 23): a layer of model.py profiled from its CUDA driver (bf16 kernels
under the driver's autocast), the same for a nanoGPT-shaped attention from its bench.py (a
GPTConfig, ``--key=value`` overrides, ``torch.amp.autocast`` bf16), Nsight Compute on a layer
from its driver (``ncu run … --from``), and a Triton-tutorial-shaped script per line inside its
function.

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


def test_a_nanogpt_like_attention_from_its_bench_driver_runs_bf16_under_its_autocast(
    tmp_path: Path,
) -> None:
    """nanoGPT's shape (tests/data/examples/nanogpt_like): a GPTConfig, ``--key=value``
    overrides through an exec'd configurator.py, ``ctx = torch.amp.autocast(…, bfloat16)``
    made once and entered around each step."""
    ws = tmp_path / "ng"
    shutil.copytree(EXAMPLES / "nanogpt_like", ws)
    model = ws / "model.py"
    code, out, err = run_cli(
        "profile", f"{model}::CausalSelfAttention.forward", "--from", str(ws / "bench.py"),
        "--json", "--no-samples", "--no-history", "--trace-dir", str(tmp_path / "t"),
        "--", "--batch_size=4",
    )  # fmt: skip
    assert code == 0, (out, err)
    assert out["device_kind"] == "cuda"
    inputs = out["inputs"]
    assert inputs["self"]["how"] == "captured"
    assert inputs["call"].endswith("GPT.forward → Block.forward → CausalSelfAttention.forward")
    autocast = {a["device_type"]: a for a in inputs["context"]["autocast"]}
    assert autocast["cuda"]["enabled"] and autocast["cuda"]["dtype"] == "bfloat16"
    (x,) = inputs["args"]
    assert x["shape"] == [4, 256, 128] and x["device"].startswith("cuda")
    c_attn = next(r for r in out["lines"] if r["line"] == _lineno(model, "self.c_attn(x).split"))
    names = " ".join(_kernels(c_attn)).lower()
    assert "bf16" in names or "bfloat16" in names, names
    assert not (ws / "benched.txt").exists()  # the bench stopped at the layer's first call


@pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute not installed")
def test_nsight_compute_on_a_layer_from_its_driver_profiles_the_layers_kernels(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path)
    model = ws / "model.py"
    code, out, err = run_cli(
        "ncu", "run", f"{model}::Attention.forward", "--from", str(ws / "drive_cuda.py"),
        "--json", "--", "--dim", "256",
        timeout=600,
    )  # fmt: skip
    assert code == 0, (out, err)
    kernels = out["kernels"]
    assert kernels, out
    names = " ".join(k["demangled"] for k in kernels).lower()
    # The driver's autocast travels: the layer's matmuls ran in bf16.
    assert "bf16" in names or "bfloat16" in names, names
    # Only the layer's call: none of the driver's set-up (its randn) was profiled.
    assert "normal" not in names and "distribution" not in names, names
    if out["reader"] == "ncu_report":
        first = _lineno(model, "B, T, C = x.shape")
        last = _lineno(model, "return self.proj(y)")
        lines = [k["line"] for k in kernels]
        assert all(line is not None and first <= line <= last for line in lines), lines
        assert _lineno(model, "self.qkv(x).split") in lines
    assert Path(out["report_path"]).is_file()
