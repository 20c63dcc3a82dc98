"""On a GPU (an H200): Compare Assembly of the lecture's squares reads the Triton launch's own
kernel and the load_inline kernel's SASS, with the same summaries as the CPU machine's ahead of
time compile (tests/cli/test_asm_diff_cli.py)."""

from __future__ import annotations

import pytest

from kernel_lens.agent.stages.inline_ext import find_nvcc
from tests.conftest import KERNELS, run_cli

pytestmark = pytest.mark.gpu

TRITON = KERNELS / "triton_square.py"
INLINE = KERNELS / "inline_square.py"


def test_two_block_sizes_from_their_launches() -> None:
    code, out, err = run_cli(
        "asm-diff", f"{TRITON}::square_kernel[BLOCK_SIZE=64]", f"{TRITON}::square_kernel",
        "--stage", "sass", "--json", timeout=900,
    )  # fmt: skip
    assert code == 0, err
    assert out["a"]["summary"]["load_widths"] == {"32": 1}
    assert out["b"]["summary"]["load_widths"] == {"128": 2}
    assert out["b"]["summary"]["registers"] == 18
    assert out["verdict"].startswith("B loads 128 bits per thread per instruction, A 32")


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc not installed")
def test_triton_against_the_cuda_square_in_sass() -> None:
    code, out, err = run_cli(
        "asm-diff", f"{TRITON}::square_kernel", f"{INLINE}::square", "--stage", "sass", "--json",
        timeout=900,
    )  # fmt: skip
    assert code == 0, err
    assert out["b"]["summary"]["load_widths"] == {"32": 1}  # LDG.E.CONSTANT
    assert out["b"]["summary"]["registers"] == 10
    assert out["a"]["summary"]["load_widths"] == {"128": 2}  # LDG.E.128
    assert "LDG.E.CONSTANT" in out["b"]["original"]["text"]
