"""``kernel-lens sweep``: BLOCK_SIZE of the Triton square (interpreter on CPU, GPU on CUDA)."""

from tests.conftest import HAS_CUDA, KERNELS, run_cli

TRITON = KERNELS / "triton_square.py"


def test_sweep_times_each_value_and_marks_the_best() -> None:
    code, out, err = run_cli(
        "sweep", f"{TRITON}::square", "--param", "BLOCK_SIZE", "--values", "256,1024,0",
        "--budget-ms", "50", "--json", timeout=600,
    )  # fmt: skip
    assert code == 0, err
    assert out["param"] == "BLOCK_SIZE" and out["current"] == 1024
    rows = {r["value"]: r for r in out["rows"]}
    assert set(rows) == {256, 1024, 0}
    assert rows[0]["error"]  # BLOCK_SIZE=0 cannot compile: recorded, the sweep went on
    for value in (256, 1024):
        assert rows[value]["error"] is None and rows[value]["median_ms"] > 0
        n = 10_000 * 10_000 if HAS_CUDA else 1 << 14
        assert rows[value]["bytes"] == 2 * 4 * n  # x read once, out written once
        assert rows[value]["gb_per_s"] > 0
        # each value's repetitions stopped by the timing's rule, which says why (issue 28)
        assert rows[value]["stopped"].startswith(("converged", "not shrinking", "budget"))
    best = min((rows[256], rows[1024]), key=lambda r: r["median_ms"])
    assert out["best"] == {"value": best["value"], "median_ms": best["median_ms"]}


def test_sweep_of_a_missing_parameter_says_which_exist() -> None:
    code, out, _ = run_cli("sweep", f"{TRITON}::square", "--param", "BLOCK", "--json")
    assert code == 1 and out["error"]["kind"] == "inputs"
    assert (
        "no parameter 'BLOCK'" in out["error"]["message"]
        and "BLOCK_SIZE" in out["error"]["message"]
    )


def test_text_table() -> None:
    code, out, _ = run_cli(
        "sweep", f"{TRITON}::square", "--param", "BLOCK_SIZE", "--values", "512,2048",
        "--budget-ms", "30",
    )  # fmt: skip
    assert code == 0 and "BLOCK_SIZE" in out
    if HAS_CUDA:
        assert "← best" in out and "note:" not in out
    else:
        # Under Triton's interpreter the fastest value says nothing of a GPU (issue 10, item 6).
        assert "← best" not in out and "note: Triton interpreter on the CPU" in out
