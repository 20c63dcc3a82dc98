"""``kernel-lens asm``: Triton compiled ahead of time for sm_90 on a machine without a GPU."""

import re
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, HAS_CUDA, KERNELS, run_cli

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
    # The README's and the tour's `PTX · 18 regs · 0 spills · sm_90`: ptxas of triton 3.7.1
    # (requirements-dev.txt) for sm_90, BLOCK_SIZE 1024, with the launch's specialisation (both
    # pointers and n_elements divisible by 16). Nsight Compute counted the same 18 registers for
    # this launch on the H200 (tests/data/h200/triton_square_small.ncu-rep); compiled without
    # the divisibility hints it was 22.
    assert out["divisible"] == ["out_ptr", "in_ptr", "n_elements"]
    assert out["registers"] == 18
    assert out["spills"] == 0
    if HAS_CUDA:  # on an H200: the launch's own kernel (same count, from the driver)
        assert out["compiled_from"] == "launch" and out["compiled_note"] is None
    else:  # no GPU: labelled as compiled ahead of time, not read from the launch
        assert out["compiled_from"] == "ahead_of_time"
        assert out["compiled_note"] == (
            "compiled ahead of time for sm_90, not the launch "
            "(no GPU: the launch ran in Triton's interpreter)"
        )
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
    assert "launches k;" in out["error"]["message"]
    assert "--from DRIVER" in out["error"]["message"]


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


GPU_ONLY = Path(__file__).resolve().parent.parent / "data" / "gpu_only"


@pytest.mark.skipif(HAS_CUDA, reason="the launch runs on a GPU machine: its types are exact there")
def test_a_gpu_only_tutorial_compiles_with_types_read_from_its_launch() -> None:
    """Shaped like the public tutorials: the device comes from Triton's driver and the tensors
    are made on it at module level, so the launcher cannot run without a GPU; the types are read
    from the launch's text, and what was assumed is said."""
    path = GPU_ONLY / "vector_add_cuda.py"
    code, out, err = run_cli("asm", f"{path}::add_kernel", "--arch", "90", "--json")
    assert code == 0, err
    assert out["types_from"] == "text"
    assert out["signature"] == {
        "x_ptr": "*fp32",
        "y_ptr": "*fp32",
        "output_ptr": "*fp32",
        "n_elements": "i32",
        "BLOCK_SIZE": "constexpr",
    }
    assert out["constexprs"] == {"BLOCK_SIZE": 1024}
    launch = _lineno(path, "add_kernel[grid](")
    assert out["launcher"] == f"line {launch}"
    note = out["types_note"]
    assert f"read from the launch at line {launch}" in note
    assert "Torch not compiled with CUDA enabled at line 30" in note  # the .cuda() line
    assert "assumed *fp32 for x_ptr, y_ptr, output_ptr" in note
    assert out["warnings"][0] == note
    ptx = out["asm"]
    assert ".target sm_90a" in ptx and "ld.global" in ptx
    by_line = {m["source_line"]: m["asm_lines"] for m in out["line_map"]}
    assert _lineno(path, "x = tl.load(") in by_line

    # The user's picks go over the text's: fp16 loads, another block size, the note updated.
    code, out, err = run_cli(
        "asm",
        f"{path}::add_kernel",
        "--types",
        "x_ptr=*fp16,y_ptr=*fp16",
        "--types",
        "BLOCK_SIZE=256",
        "--json",
    )
    assert code == 0, err
    assert out["types_from"] == "user"
    assert out["signature"]["x_ptr"] == "*fp16" and out["constexprs"] == {"BLOCK_SIZE": 256}
    assert "assumed *fp32 for output_ptr" in out["types_note"]
    assert "picked x_ptr=*fp16, y_ptr=*fp16, BLOCK_SIZE=256" in out["types_note"]
    assert re.search(r"ld\.global(\.v\d)?\.b16", out["asm"]), "fp16 loads"

    code, out, _ = run_cli("asm", f"{path}::add_kernel", "--types", "z_ptr=*fp16", "--json")
    assert code == 1 and "has no parameter 'z_ptr'" in out["error"]["message"]


@pytest.mark.skipif(HAS_CUDA, reason="the launch runs on a GPU machine: its types are exact there")
def test_an_autotuned_gpu_only_matmul_compiles_from_its_first_config() -> None:
    path = GPU_ONLY / "matmul_autotuned_cuda.py"
    code, out, err = run_cli("asm", f"{path}::matmul_kernel", "--arch", "90", "--json")
    assert code == 0, err
    sig = out["signature"]
    # Pointers are what the body loads and stores through; sizes and strides are integers.
    assert [k for k, v in sig.items() if v.startswith("*")] == ["a_ptr", "b_ptr", "c_ptr"]
    assert sig["c_ptr"] == "*fp16"  # c = torch.empty(..., dtype=torch.float16) in the launcher
    assert all(sig[k] == "i32" for k in ("M", "N", "K", "stride_am", "stride_cn"))
    # constexprs: the first triton.Config, and the launcher's default for ACTIVATION.
    assert out["constexprs"] == {
        "BLOCK_SIZE_M": 64,
        "BLOCK_SIZE_N": 64,
        "BLOCK_SIZE_K": 32,
        "GROUP_SIZE_M": 8,
        "ACTIVATION": "",
    }
    assert out["options"] == {"num_warps": 4, "num_stages": 3}
    assert "wgmma" in out["asm"] or "mma" in out["asm"]


@pytest.mark.skipif(HAS_CUDA, reason="the launch runs on a GPU machine: its types are exact there")
def test_a_kernel_compiled_by_warmup_takes_that_calls_types_and_options() -> None:
    """Triton's fused-softmax tutorial compiles with ``kernel.warmup(…, grid=(1,))`` and then
    launches the compiled kernel: the warmup call is the launch the text gives, its keywords
    Triton's compile options too, the launcher's ``num_warps = 8`` read and its
    ``num_stages = 4 if … else 2`` taken as 4 and said."""
    path = GPU_ONLY / "softmax_warmup_cuda.py"
    code, out, err = run_cli("asm", f"{path}::row_softmax", "--arch", "90", "--json")
    assert code == 0, err
    assert out["types_from"] == "text"
    assert out["launcher"] == f"line {_lineno(path, 'row_softmax.warmup(')}"
    assert [k for k, v in out["signature"].items() if v.startswith("*")] == ["out_ptr", "in_ptr"]
    assert out["constexprs"] == {"BLOCK": 64, "num_stages": 4}
    assert out["options"] == {"num_warps": 8, "num_stages": 4}
    assert "num_stages=4 (or 2: chosen at run time; the first taken)" in out["types_note"]
    assert "BLOCK=64 (computed at run time)" in out["types_note"]
    assert ".reqntid 256" in out["asm"]  # 8 warps


def test_a_kernel_no_text_launches_compiles_from_the_types_given(tmp_path: Path) -> None:
    """No launch anywhere: refused, with the signature's guess to start from (the editor's
    Argument Types… reads it), then compiled once the user gives the types."""
    src = tmp_path / "lonely.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, n, scale, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, scale, mask=offs < n)\n"
    )
    code, out, _ = run_cli("asm", f"{src}::k", "--json")
    assert code == 1 and out["error"]["kind"] == "not-found"
    assert out["error"]["message"].endswith(
        "to start from: x_ptr: *fp32, n: i32, scale: fp32, BLOCK=64"
    ), out["error"]["message"]
    code, out, err = run_cli("asm", f"{src}::k", "--types", "x_ptr=*fp16,BLOCK=128", "--json")
    assert code == 0, err
    assert out["types_from"] == "user" and out["launcher"] is None
    assert out["constexprs"] == {"BLOCK": 128}
    assert "picked x_ptr=*fp16, BLOCK=128" in out["types_note"]
    assert "i32 for n" in out["types_note"] and "fp32 for scale" in out["types_note"]
    assert re.search(r"st\.global(\.v\d)?\.b16", out["asm"]), "fp16 stores"


@pytest.mark.skipif(HAS_CUDA, reason="the launch runs on a GPU machine: its types are exact there")
def test_a_tutorial_that_asks_the_driver_runs_its_launch_under_the_interpreter() -> None:
    """The public tutorials ask Triton's driver for their device at module level and the
    matmul tutorial picks its ``@triton.autotune`` configs by asking it for the backend
    (``is_cuda()``). With no GPU driver here the driver says the interpreter's device (the CPU)
    and CUDA: the script runs to the launch, whose types are the launch's own, with the CUDA
    config."""
    path = GPU_ONLY / "autotune_by_driver.py"
    code, out, err = run_cli("asm", f"{path}::scale_kernel", "--arch", "90", "--json")
    assert code == 0, err
    assert out["types_from"] == "launch" and out["launcher"] == "scale"
    assert "the launch ran in Triton's interpreter" in out["compiled_note"]
    assert out["constexprs"] == {"BLOCK": 512}
    assert out["options"]["num_warps"] == 8 and out["options"]["num_stages"] == 3
    assert out["signature"]["x_ptr"] == "*fp16"
    assert ".reqntid 256" in out["asm"]  # 8 warps
