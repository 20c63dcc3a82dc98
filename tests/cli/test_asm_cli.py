"""``kernel-lens asm``: Triton compiled ahead of time for sm_90 on a machine without a GPU."""

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, KERNELS, run_cli

TRITON_SQUARE = KERNELS / "triton_square.py"


def _lineno(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_ptx_for_sm90_with_a_line_map_from_tl_load_to_ld_global() -> None:
    code, out, err = run_cli("asm", f"{TRITON_SQUARE}::square_kernel", "--arch", "90", "--json")
    assert code == 0, err
    assert out["kernel"] == "square_kernel" and out["arch"] == "sm_90"
    assert out["launcher"] == "square"
    assert out["signature"] == {
        "out_ptr": "*fp32",
        "in_ptr": "*fp32",
        "n_elements": "i32",
        "BLOCK_SIZE": "constexpr",
    }
    assert out["constexprs"] == {"BLOCK_SIZE": 1024}
    assert ".target sm_90a" in out["asm"]
    # The README's and the tour's `PTX · 22 regs · 0 spills · sm_90`: ptxas of triton 3.7.1
    # (requirements-dev.txt) for sm_90, BLOCK_SIZE 1024.
    assert out["registers"] == 22
    assert out["spills"] == 0
    ptx = out["asm"].splitlines()
    by_line = {m["source_line"]: m["asm_lines"] for m in out["line_map"]}
    load_line = _lineno(TRITON_SQUARE, "tl.load(")
    store_line = _lineno(TRITON_SQUARE, "tl.store(")
    assert any("ld.global" in ptx[i - 1] for i in by_line[load_line])
    assert any("st.global" in ptx[i - 1] for i in by_line[store_line])
    assert not any("ld.global" in ptx[i - 1] for i in by_line[store_line])


@pytest.mark.parametrize(
    "stage, marker", [("ttir", "tt.load"), ("ttgir", "ttg."), ("llir", "define"), ("sass", "LDG")]
)
def test_every_stage_has_text_and_a_line_map(stage: str, marker: str) -> None:
    code, out, err = run_cli("asm", f"{TRITON_SQUARE}::square_kernel", "--stage", stage, "--json")
    assert code == 0, err
    assert marker in out["asm"]
    lines = {m["source_line"] for m in out["line_map"]}
    assert _lineno(TRITON_SQUARE, "tl.load(") in lines


def test_kernel_without_a_launcher_says_why(tmp_path: Path) -> None:
    src = tmp_path / "lonely.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr):\n    tl.store(x_ptr, 1.0)\n"
    )
    code, out, _ = run_cli("asm", f"{src}::k", "--json")
    assert code == 1
    assert out["error"]["kind"] == "not-found"
    assert "launches k[grid]" in out["error"]["message"]


def test_file_without_kernels() -> None:
    code, out, _ = run_cli("asm", f"{EXAMPLES}/errors.py", "--json")
    assert code == 1 and "no @triton.jit kernel" in out["error"]["message"]


def test_a_kernel_the_script_launches_at_module_level_compiles_from_that_launch(
    tmp_path: Path,
) -> None:
    """No launcher function: the script runs as __main__ up to the kernel's first launch,
    which gives the types; the launch and the rest of the script do not run."""
    src = EXAMPLES / "scripts" / "triton_module_launch.py"
    path = tmp_path / src.name
    path.write_text(src.read_text())
    code, out, err = run_cli("asm", f"{path}::scale_kernel", "--arch", "90", "--json")
    assert code == 0, err
    assert out["launcher"] == "<script>"
    assert out["signature"] == {
        "out_ptr": "*fp32",
        "in_ptr": "*fp32",
        "n": "i32",
        "factor": "fp32",
        "BLOCK": "constexpr",
    }
    assert out["constexprs"] == {"BLOCK": 512}
    assert ".target sm_90a" in out["asm"]
    assert not (tmp_path / "after_launch.txt").exists()
