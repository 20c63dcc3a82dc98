"""``kernel-lens asm-diff``: two kernels' PTX/SASS, normalised and summarised, compiled without
a GPU (Triton ahead of time for sm_90; nvcc for the load_inline side)."""

import pytest

from kernel_lens.agent.stages.inline_ext import find_nvcc
from tests.conftest import EXAMPLES, KERNELS, run_cli

TRITON = KERNELS / "triton_square.py"
INLINE = KERNELS / "inline_square.py"
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not installed")


@pytest.mark.slow
@needs_nvcc
def test_triton_square_against_the_load_inline_cuda_square() -> None:
    code, out, err = run_cli(
        "asm-diff", f"{TRITON}::square_kernel", f"{INLINE}::square", "--arch", "90", "--json",
        timeout=900,
    )  # fmt: skip
    assert code == 0, err
    a, b = out["a"], out["b"]
    assert a["kind"] == "triton" and b["kind"] == "inline"
    assert b["kernel"] == "_Z13square_kernelPKfPfl"  # the kernel the host function launches
    assert a["summary"]["load_widths"] == {"128": 2}  # ld.global.v4.b32
    assert b["summary"]["load_widths"] == {"32": 1}  # ld.global.nc.f32
    assert a["summary"]["registers"] == 18
    assert b["summary"]["registers"] == 10 and b["summary"]["spills"] == 0
    assert b["summary"]["block_size"] == 1024  # int threads = 1024 in the CUDA source
    assert a["summary"]["block_size"] == 128  # 4 warps
    assert out["verdict"] == (
        "A loads 128 bits per thread per instruction, B 32: B issues 4× the load instructions "
        "for the same bytes"
    )
    assert out["identical"] is False
    # Each side's normalised document, header first, its lines still on the Python lines.
    source = INLINE.read_text().splitlines()
    load = next(i for i, x in enumerate(source, 1) if "float v = in[i];" in x)
    doc = b["normalised"]
    lines = doc["text"].splitlines()
    assert lines[0].startswith("// B: square_kernel · CUDA (load_inline kernel_lens_inline_square)")
    mapped = next(e["asm_lines"] for e in doc["line_map"] if e["source_line"] == load)
    assert any("ld.global.nc.f32" in lines[i - 1] for i in mapped)


def test_two_block_sizes_of_one_kernel_in_sass() -> None:
    code, out, err = run_cli(
        "asm-diff", f"{TRITON}::square_kernel[BLOCK_SIZE=64]", f"{TRITON}::square_kernel",
        "--stage", "sass", "--arch", "90",
    )  # fmt: skip
    assert code == 0, err
    assert "// A: square_kernel · Triton · triton_square.py · BLOCK_SIZE=64 · SASS sm_90" in out
    assert "// 21 instructions · global loads 1 × 32-bit · global stores 1 × 32-bit" in out
    assert "// 34 instructions · global loads 2 × 128-bit · global stores 2 × 128-bit" in out
    assert (
        "// differs most: B loads 128 bits per thread per instruction, A 32: A issues 4× the "
        "load instructions for the same bytes" in out
    )
    assert "-\t@!P0 LDG.E R5, desc[UR1][R2.64]" in out  # the diff, normalised
    assert "/*0" not in out and "NOP" not in out


def test_the_same_kernel_under_another_name_in_another_file_is_identical() -> None:
    code, out, err = run_cli(
        "asm-diff", f"{TRITON}::square_kernel",
        f"{EXAMPLES / 'triton_square_copy.py'}::copied_square_kernel", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert out["identical"] is True
    assert out["verdict"] == "nothing: the normalised texts are identical"
    # The originals differ (names, .loc lines, paths); the normalised bodies do not.
    assert out["a"]["original"]["text"] != out["b"]["original"]["text"]
    body = [out[k]["normalised"]["text"].split("\n", 6)[6] for k in ("a", "b")]
    assert body[0] == body[1]


def test_bad_sides_get_clear_messages() -> None:
    code, _, err = run_cli("asm-diff", str(TRITON), f"{TRITON}::square_kernel")
    assert code == 2 and "is not PATH::KERNEL" in err
    code, out, _ = run_cli("asm-diff", f"{TRITON}::square", f"{TRITON}::square_kernel", "--json")
    assert code == 1 and out["error"]["kind"] == "not-found"
    assert "square is no @triton.jit kernel of triton_square.py" in out["error"]["message"]
    code, _, err = run_cli("asm-diff", f"{INLINE}::square[X=1]", f"{TRITON}::square_kernel")
    assert code == 2 and "is a load_inline kernel" in err


def test_without_nvcc_the_load_inline_side_says_so() -> None:
    code, out, _ = run_cli(
        "asm-diff", f"{TRITON}::square_kernel", f"{INLINE}::square", "--json",
        env={"CUDA_HOME": "/nonexistent"},
    )  # fmt: skip
    assert code == 1
    assert out["error"]["kind"] == "unsupported"
    assert out["error"]["message"].startswith("needs CUDA and nvcc: nvcc was not found")
