"""Every job on a function whose inputs only come from a driver script (issue 23): the sweep,
the generated code (the *compiled* stage) and Nsight Compute take ``--from DRIVER -- ARGS`` as a
profile does, so they run on the same inputs and ``self`` as the driver's call.

The workspace: ``mlp.py`` defines ``Mlp`` and never calls it; ``drive_mlp.py`` needs
``--dim`` and calls ``net(x, chunks=4)`` on an (8, 4, dim) tensor."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, HAS_CUDA, run_cli

DEEP = EXAMPLES / "deep"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DEEP, root)
    return root


def test_a_sweep_of_a_layer_runs_on_its_drivers_inputs(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli(
        "sweep", f"{ws / 'mlp.py'}::Mlp.forward", "--param", "chunks", "--values", "1,2,4",
        "--from", str(ws / "drive_mlp.py"), "--budget-ms", "20", "--warmup-ms", "2", "--json",
        "--", "--dim", "24",
    )  # fmt: skip
    assert code == 0, (out, err)
    inputs = out["inputs"]
    assert inputs["source"] == "captured" and inputs["driver"] == str(ws / "drive_mlp.py")
    assert inputs["self"]["how"] == "captured"
    # The driver's call: chunks=4 (the default is 2), on an (8, 4, 24) tensor from --dim 24.
    assert out["current"] == 4
    assert inputs["args"][0]["shape"] == [8, 4, 24]
    rows = {row["value"]: row for row in out["rows"]}
    assert sorted(rows) == [1, 2, 4] and all(row["error"] is None for row in rows.values())
    # Bytes read and written per call: x and the output, both (8, 4, 24) float32.
    assert all(row["bytes"] == 2 * 8 * 4 * 24 * 4 for row in rows.values())
    assert not (ws / "driven_mlp.txt").exists()  # the driver stopped at the call


def test_without_its_driver_the_layer_has_no_inputs(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli(
        "sweep", f"{ws / 'mlp.py'}::Mlp.forward", "--param", "chunks", "--values", "1,2",
        "--json",
    )  # fmt: skip
    assert code == 1 and out["error"]["kind"] == "inputs", out


def test_the_generated_code_of_a_layer_comes_from_its_drivers_call(
    tmp_path: Path, trace_dir: str
) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli(
        "profile", f"{ws / 'mlp.py'}::Mlp.forward", "--from", str(ws / "drive_mlp.py"),
        "--stages", "compiled", "--json", "--no-history", "--trace-dir", trace_dir,
        "--", "--dim", "24",
    )  # fmt: skip
    assert code == 0, (out, err)
    assert out["inputs"]["driver"] == str(ws / "drive_mlp.py")
    assert out["inputs"]["args"][0]["shape"] == [8, 4, 24]
    compiled = out["compiled"]
    assert compiled["backend"] == "inductor" and compiled["code"]
    # Inductor's kernels map back to the layer's lines.
    forward = next(
        no
        for no, text in enumerate((ws / "mlp.py").read_text().splitlines(), 1)
        if "parts = [self.out" in text
    )
    assert any(forward in k.get("lines", []) for k in compiled["kernels"]), compiled["kernels"]


def test_driver_arguments_need_a_driver(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    for command in (
        ["sweep", f"{ws / 'mlp.py'}::Mlp.forward", "--param", "chunks"],
        ["ncu", "run", f"{ws / 'mlp.py'}::Mlp.forward"],
    ):
        code, out, err = run_cli(*command, "--", "--dim", "24")
        assert code == 2 and "arguments after -- are a driver's: give --from DRIVER" in err, err
    code, out, err = run_cli(
        "ncu", "run", f"{ws / 'mlp.py'}::Mlp.forward", "--from", str(ws / "nope.py")
    )
    assert code == 2 and "--from: no such file" in err, err


@pytest.mark.skipif(HAS_CUDA, reason="checks the machine without a GPU")
def test_nsight_compute_from_a_driver_says_what_it_needs_without_a_gpu(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    code, out, err = run_cli(
        "ncu", "run", f"{ws / 'mlp.py'}::Mlp.forward", "--from", str(ws / "drive_mlp.py"),
        "--json", "--", "--dim", "24",
    )  # fmt: skip
    assert code == 1 and out["error"]["kind"] == "unsupported", out
    assert not (ws / "driven_mlp.txt").exists()


def test_a_nanogpt_shaped_attention_takes_its_inputs_from_bench_on_the_cpu(
    tmp_path: Path, trace_dir: str
) -> None:
    """The CPU half of the H200 check (tests/gpu/test_gpu_deep.py): the nanoGPT-shaped bench
    (globals overridden by ``--key=value`` through an exec'd configurator.py) gives
    CausalSelfAttention its input and ``self`` (built from a GPTConfig)."""
    ws = tmp_path / "ng"
    shutil.copytree(EXAMPLES / "nanogpt_like", ws)
    code, out, err = run_cli(
        "profile", f"{ws / 'model.py'}::CausalSelfAttention.forward",
        "--from", str(ws / "bench.py"), "--json", "--no-samples", "--no-history",
        "--reps", "3", "--runs", "1", "--trace-dir", trace_dir,
        "--", "--device=cpu", "--dtype=float32", "--batch_size=2", "--block_size=32",
    )  # fmt: skip
    assert code == 0, (out, err)
    inputs = out["inputs"]
    assert inputs["call"] == (
        "logits, loss = model(X, Y) → GPT.forward → Block.forward → CausalSelfAttention.forward"
    )
    assert inputs["args"][0]["shape"] == [2, 32, 128] and inputs["self"]["how"] == "captured"
    assert not (ws / "benched.txt").exists()
