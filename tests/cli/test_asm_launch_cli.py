"""``kernel-lens asm`` on kernels laid out like a real library's (issues 34 and 44): the kernel's
file is loaded as its package's member, its launch is caught wherever it happens, and the
assembly is compiled for the launch's own types — or the right error kind says why not.

The packages are under ``tests/data/launch_libs`` (its README says which cause each holds).
No GPU here: launches run in Triton's interpreter and the kernel is compiled ahead of time for
sm_90; ``tests/gpu/test_gpu_asm_library.py`` checks registers against Nsight Compute."""

import ast
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import HAS_CUDA, run_cli

LIBS = Path(__file__).resolve().parent.parent / "data" / "launch_libs"

pytestmark = pytest.mark.skipif(HAS_CUDA, reason="CPU behaviour: the interpreter's launches")


def _asm(target: str, *extra: str) -> dict:
    code, out, err = run_cli("asm", str(LIBS / target), "--arch", "90", "--json", *extra)
    assert code == 0, (out, err)
    assert ".target sm_90a" in out["asm"]
    return out


def test_absolute_import_of_its_own_package_libdevice_alias_floats_and_a_none_pointer() -> None:
    """pkg/ops/x.py importing `scale` (a @triton.jit helper), `rsqrt` (libdevice under an alias
    in a try/except) and a tl.constexpr global from pkg.ops.utils absolutely — the file used to
    fail with NameError('scale is not defined'). The launch's bf16 tensors, float scalars
    (eps, gate), float constexpr (OFFSET) and optional pointer passed as None are the types."""
    out = _asm("normlib/ops/absolute.py::rms_norm_kernel")
    assert out["launcher"] == "rms_norm" and out["types_from"] == "launch"
    assert out["signature"] == {
        "y_ptr": "*bf16",
        "x_ptr": "*bf16",
        "w_ptr": "*bf16",
        "bias_ptr": "constexpr",
        "n_cols": "i32",
        "eps": "fp32",
        "gate": "fp32",
        "BLOCK": "constexpr",
        "OFFSET": "constexpr",
    }
    assert out["constexprs"] == {"bias_ptr": None, "BLOCK": 256, "OFFSET": 0.5}
    assert out["divisible"] == ["y_ptr", "x_ptr", "w_ptr", "n_cols"]
    assert isinstance(out["registers"], int) and out["registers"] > 0
    assert "rsqrt" in out["asm"]  # libdevice's, linked in
    assert out["types_note"] is None


def test_a_relative_import_and_a_launch_through_a_local_alias() -> None:
    """`from .utils import scale` works (the file is its package's member, not __main__), and
    `fn = shift_kernel if shift else scale_kernel; fn[grid](…)` is caught at the launch."""
    out = _asm("normlib/ops/relative.py::scale_kernel")
    assert out["launcher"] == "apply"
    assert out["signature"] == {
        "out_ptr": "*fp16",
        "in_ptr": "*fp16",
        "n": "i32",
        "factor": "fp32",
        "BLOCK": "constexpr",
    }
    assert out["constexprs"] == {"BLOCK": 128}


def test_a_kernel_made_by_assignment() -> None:
    out = _asm("normlib/ops/relative.py::twice_kernel")
    assert out["launcher"] == "twice"
    assert out["signature"]["in_ptr"] == "*i32" and out["constexprs"] == {"BLOCK": 64}


def test_a_kernel_launched_only_from_another_module_of_its_package() -> None:
    """The kernel in kernels/forward.py, its only launch in interface.py (imported under an
    alias, relatively)."""
    out = _asm("gluepkg/kernels/forward.py::fwd_kernel")
    assert out["launcher"] == "interface.py::attention"
    assert out["signature"] == {
        "o_ptr": "*fp16",
        "q_ptr": "*fp16",
        "n": "i32",
        "scale": "fp32",
        "BLOCK": "constexpr",
    }
    assert out["constexprs"] == {"BLOCK": 256}


def test_a_src_layout() -> None:
    out = _asm("srclayout/src/srcpkg/copy.py::copy_kernel")
    assert out["signature"]["src_ptr"] == "*fp64" and out["constexprs"] == {"BLOCK": 512}


def test_autotune_over_heuristics_runs_its_first_config_under_the_interpreter() -> None:
    """No GPU to benchmark on: the first config runs (said so), the heuristic's value is the
    one computed for it, and `--config 1` shows the other config's launch."""
    out = _asm("normlib/ops/tuned.py::add_kernel")
    assert out["types_from"] == "launch" and out["launcher"] == "add"
    assert out["signature"]["alpha"] == "fp32" and out["signature"]["a_ptr"] == "*fp32"
    assert out["constexprs"] == {"BLOCK": 128, "EVEN_N": False}  # 1000 % 128 != 0
    assert out["num_warps"] == 4
    tuned = out["autotune"]
    assert tuned["chosen"] == "BLOCK=128, num_warps=4, num_stages=3"
    assert "not benchmarked" in tuned["note"]
    assert [row["ms"] for row in tuned["configs"]] == [None, None]
    other = _asm("normlib/ops/tuned.py::add_kernel", "--config", "1")
    assert other["constexprs"] == {"BLOCK": 256, "EVEN_N": False}
    assert other["num_warps"] == 8
    assert other["autotune"]["shown"] == "BLOCK=256, num_warps=8, num_stages=3"


def test_a_package_whose_init_imports_a_missing_module_is_an_import_error() -> None:
    code, out, _ = run_cli("asm", f"{LIBS}/brokenpkg/ops.py::neg_kernel", "--json")
    assert code == 1
    error = out["error"]
    assert error["kind"] == "import"
    assert "kernel_lens_not_installed_anywhere" in error["message"]
    assert sys.executable in error["message"] or "python" in error["message"]
    assert "inputs" not in error["message"]


def test_profile_of_a_package_member_and_of_an_autotuned_launcher_on_cpu() -> None:
    """Profile loads the file the same way; an autotuned kernel runs without a GPU."""
    code, out, err = run_cli("profile", f"{LIBS}/normlib/ops/relative.py::apply", "--json")
    assert code == 0, err
    code, out, err = run_cli("profile", f"{LIBS}/normlib/ops/tuned.py::add", "--json")
    assert code == 0, err
    assert out["device"] == "CPU · Triton interpreter"
    code, out, _ = run_cli("profile", f"{LIBS}/brokenpkg/ops.py::neg", "--json")
    assert code == 1 and out["error"]["kind"] == "import"


def test_from_a_driver_with_its_arguments() -> None:
    """`--from DRIVER -- ARGS`: the driver's launch gives bf16 (its argument), where the
    launcher's own inputs would give fp16; a kernel launched only on a path the launcher's
    defaults do not take (`shift=True`) is reached, past a kernel the interpreter cannot run."""
    out = _asm(
        "normlib/ops/relative.py::shift_kernel", "--from", str(LIBS / "drive.py"), "--", "--bf16"
    )
    assert out["launcher"] == "drive.py"
    assert out["signature"]["out_ptr"] == "*bf16" and out["signature"]["delta"] == "fp32"
    assert any("interpreter could not run fwd_kernel" in w for w in out["warnings"])
    code, out, _ = run_cli("asm", f"{LIBS}/normlib/ops/relative.py::shift_kernel", "--json")
    assert code == 1 and out["error"]["kind"] == "not-found"
    assert "was not launched by apply" in out["error"]["message"]


def test_every_kernel_of_a_file_however_made_from_a_driver() -> None:
    code, out, err = run_cli(
        "asm", f"{LIBS}/normlib/ops/relative.py", "--from", f"{LIBS}/drive.py", "--json"
    )
    assert code == 0, err
    assert [k["kernel"] for k in out] == ["scale_kernel", "shift_kernel", "twice_kernel"]
    assert all(k["types_from"] == "launch" and k["launcher"] == "drive.py" for k in out)
    assert out[2]["signature"]["in_ptr"] == "*i32"


def test_a_gpu_only_launcher_in_a_package_compiles_from_the_text_and_says_so() -> None:
    """The launcher cannot run here (a device probe at import): the types are read from the
    text, the package's globals resolve (no NameError), floats stay floats, and the registers
    are labelled as not the launch's."""
    out = _asm("normlib/ops/gpu_only.py::gate_norm_kernel")
    assert out["types_from"] == "text"
    assert out["signature"]["eps"] == "fp32" and out["signature"]["gate"] == "fp32"
    assert "Torch not compiled with CUDA enabled" in out["types_note"]
    assert any("not the launch's" in w for w in out["warnings"])


def test_no_degenerate_compile_from_a_guess_of_one(tmp_path: Path) -> None:
    src = tmp_path / "flagged.py"
    src.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n"
        'DEVICE = torch.device("cuda", torch.cuda.current_device())\n\n\n'
        "@triton.jit\n"
        "def k(x_ptr, n, BLOCK: tl.constexpr, HAS_TAIL: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    if HAS_TAIL:\n"
        "        tl.store(x_ptr + offs, 1.0, mask=offs < n)\n\n\n"
        "def launch(x):\n"
        "    k[(1,)](x, x.numel(), BLOCK=128, HAS_TAIL=x.numel() % 128 != 0)\n"
    )
    code, out, _ = run_cli("asm", f"{src}::k", "--json")
    assert code == 1
    assert out["error"]["kind"] == "inputs"
    assert "HAS_TAIL" in out["error"]["message"] and "--types" in out["error"]["message"]
    code, out, err = run_cli("asm", f"{src}::k", "--types", "HAS_TAIL=True", "--json")
    assert code == 0, err
    assert out["types_from"] == "user" and out["constexprs"]["HAS_TAIL"] is True


def test_kernels_in_text_finds_every_way_of_making_one() -> None:
    from kernel_lens.agent.stages.triton_launch import kernels_in_text

    tree = ast.parse((LIBS / "normlib/ops/relative.py").read_text())
    made = kernels_in_text(tree)
    assert {"scale_kernel", "shift_kernel", "twice_kernel"} <= set(made)
    tree = ast.parse(
        "import triton\n\ndef _impl(x):\n    pass\n\n"
        "fast = triton.autotune(configs=[], key=[])(triton.jit(_impl))\n"
    )
    made = kernels_in_text(tree)
    assert made["fast"].def_name == "_impl" and made["_impl"].def_line == 3


def test_a_launcher_without_inputs_runs_on_suggested_inputs_checked_to_run_and_says_so(
    tmp_path: Path,
) -> None:
    """No directive, no factory, no call in the script: the launcher's suggested inputs (from
    its type hints, checked to run) launch the kernel, and the result says they are a guess."""
    src = tmp_path / "sug.py"
    src.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def mul_kernel(out_ptr, x_ptr, n, factor, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    mask = offs < n\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)\n\n\n"
        "def mul(x: torch.Tensor, factor: float):\n"
        "    out = torch.empty_like(x)\n"
        "    mul_kernel[(triton.cdiv(x.numel(), 128),)](out, x, x.numel(), factor, BLOCK=128)\n"
        "    return out\n"
    )
    code, out, err = run_cli("asm", f"{src}::mul_kernel", "--json")
    assert code == 0, err
    assert out["types_from"] == "suggested" and out["launcher"] == "mul"
    assert out["signature"]["factor"] == "fp32"
    assert "suggested inputs" in out["types_note"] and "checked: it runs" in out["types_note"]
    assert "a guess" in out["types_note"]


def test_argument_types_may_leave_an_optional_pointer_out() -> None:
    """`--types bias_ptr=None` (Argument Types… offers None for a pointer): the kernel compiles
    with the optional pointer a constexpr None, and back to a pointer type with `*bf16`."""
    out = _asm("normlib/ops/absolute.py::rms_norm_kernel", "--types", "bias_ptr=*bf16")
    assert out["signature"]["bias_ptr"] == "*bf16" and out["types_from"] == "user"
    out = _asm("normlib/ops/absolute.py::rms_norm_kernel", "--types", "bias_ptr=None")
    assert out["signature"]["bias_ptr"] == "constexpr" and out["constexprs"]["bias_ptr"] is None


def test_whole_file_mode_lists_every_kernel_and_why_one_did_not_compile() -> None:
    code, out, err = run_cli("asm", f"{LIBS}/normlib/ops/relative.py", "--json")
    assert code == 0, err
    by_name = {k["kernel"]: k for k in out}
    assert set(by_name) == {"scale_kernel", "shift_kernel", "twice_kernel"}
    assert by_name["twice_kernel"]["types_from"] == "launch"  # made by triton.jit(k)
    # The launcher's defaults take the other branch of the alias: said, not guessed.
    assert by_name["shift_kernel"]["error"]["kind"] == "not-found"
    assert "asm" not in by_name["shift_kernel"]


def test_the_text_never_types_a_float_as_an_integer_silently(tmp_path: Path) -> None:
    """A GPU-only launcher (types from the text): a scalar the launcher annotates `float` is
    fp32; one nothing types is fp32 when its name says float (eps) and i32 otherwise, both said
    in the note."""
    src = tmp_path / "scalars.py"
    src.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n"
        'DEVICE = torch.device("cuda", torch.cuda.current_device())\n\n\n'
        "@triton.jit\n"
        "def k(x_ptr, n, eps, gate, steps, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(x_ptr + offs, x * gate + eps * steps, mask=offs < n)\n\n\n"
        "def launch(x, eps, gate: float, steps):\n"
        "    k[(1,)](x, x.numel(), eps, gate, steps, BLOCK=128)\n"
    )
    code, out, err = run_cli("asm", f"{src}::k", "--json")
    assert code == 0, err
    assert out["types_from"] == "text"
    assert out["signature"]["eps"] == "fp32" and out["signature"]["gate"] == "fp32"
    assert out["signature"]["steps"] == "i32"
    note = out["types_note"]
    assert "eps" in note and "steps" in note and "gate" not in note


def test_a_kernel_whose_helpers_come_from_a_conditional_module_level_import() -> None:
    """Liger-Kernel's rms_norm shape (issue 41): `rsqrt` comes from `if compare_version(…) and
    not is_npu_available(): try: from triton.language.extra.libdevice import rsqrt …`, whose
    test's helpers cannot be imported here (their module probes the device). The kernel is
    compiled with the module's own `rsqrt` (no NameError), and `eps`/`offset` — passed through
    from a caller's `offset=0.0` — are fp32, said as read from the text."""
    out = _asm("normlib/ops/conditional.py::_rms_norm_forward_kernel")
    assert out["types_from"] == "text"
    assert out["signature"]["eps"] == "fp32" and out["signature"]["offset"] == "fp32"
    assert out["signature"]["n_cols"] == "i32"
    assert "offset" in out["types_note"]  # a guess from the file, said
    assert "rsqrt.approx" in out["asm"] or "rsqrt" in out["asm"]


def test_a_global_whose_definition_failed_here_is_named_with_its_line(tmp_path: Path) -> None:
    """When the module's own definition of a helper cannot run here, the compile's NameError
    says which line defines it and why that line failed, not only `rsqrt is not defined`."""
    src = tmp_path / "needs_helper.py"
    src.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n"
        "from normlib.ops.platform_probe import is_npu_available as rsqrt\n\n\n"
        "@triton.jit\n"
        "def k(x_ptr, n, eps, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
        "    tl.store(x_ptr + offs, rsqrt(x + eps), mask=offs < n)\n\n\n"
        "def launch(x, eps=1e-6):\n"
        "    assert x.is_cuda\n"
        "    k[(1,)](x, x.numel(), eps, BLOCK=128)\n"
    )
    path = os.pathsep.join(p for p in (str(LIBS), os.environ.get("PYTHONPATH", "")) if p)
    code, out, _ = run_cli("asm", f"{src}::k", "--json", env={"PYTHONPATH": path})
    assert code == 1
    message = out["error"]["message"]
    assert "rsqrt is not defined" in message
    assert "rsqrt is defined at line 5" in message
    assert "Torch not compiled with CUDA enabled" in message
