"""An error of a function whose Triton kernels ran under Triton's interpreter (no GPU) says the
interpreter ran them (issue 41): the same kernel on a GPU is compiled, and the error may be the
interpreter's own."""

from pathlib import Path

import pytest

from tests.conftest import HAS_CUDA, run_cli

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="CPU behaviour: the interpreter runs kernels")

SOURCE = """import torch
import triton
import triton.language as tl


@triton.jit
def bad_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)


def double(x):
    bad_kernel[(1,)](x, x.numel(), BLOCK=3)
    return x


def plain(x):
    raise ValueError("no kernel here")


def double_inputs():
    return (torch.ones(3),)


def plain_inputs():
    return (torch.ones(3),)
"""


def test_an_interpreted_kernels_error_says_the_interpreter_ran_it(tmp_path: Path) -> None:
    src = tmp_path / "interp_bad.py"
    src.write_text(SOURCE)
    code, out, _ = run_cli("profile", f"{src}::double", "--json")
    assert code == 1
    error = out["error"]
    assert error["kind"] == "runtime" and error["line"] == 14
    first = error["message"].splitlines()[0]
    assert "power of 2" in first and "ran under Triton's interpreter" in first
    # A function that launches no kernel of the file's is not said to have been interpreted.
    code, out, _ = run_cli("profile", f"{src}::plain", "--json")
    assert code == 1 and "interpreter" not in out["error"]["message"]
