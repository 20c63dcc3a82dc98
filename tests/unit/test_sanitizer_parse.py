"""The compute-sanitizer report reader on reports in NVIDIA's documented text format (the
memcheck layout of the Compute Sanitizer guide and of cuda-memcheck before it); the reports of a
real run are checked on a GPU in tests/gpu/test_gpu_sanitizer.py."""

from pathlib import Path

import pytest

from kernel_lens.analysis.sanitizer import SanitizerFinding, parse_sanitizer

REPORT = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at shifted_copy+0x270 in /w/k.py:11
=========     by thread (0,0,0) in block (3,0,0)
=========     Address 0x7f3a0e010000 is out of bounds
=========     and is 0 bytes after the nearest allocation at 0x7f3a0e00c000 of size 16384 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f1c8] in libcuda.so.1
=========
========= Invalid __global__ write of size 4 bytes
=========     at shifted_copy+0x270 in /w/k.py:11
=========     by thread (1,0,0) in block (3,0,0)
=========     Address 0x7f3a0e010004 is out of bounds
=========
========= Invalid __global__ read of size 8
========= at 0x000000c8 in /home/u/src/helper.cuh:75:void projection<double>(double*, int)
========= by thread (9,0,0) in block (0,0,0)
========= Address 0x000370e8 is out of bounds
=========
========= ERROR SUMMARY: 3 errors
"""


def test_reports_grouped_by_line_with_the_first_thread_and_block() -> None:
    findings, errors = parse_sanitizer(REPORT)
    assert errors == 3
    write, read = findings
    assert (write.kind, write.file, write.line, write.count) == (
        "Invalid __global__ write of size 4 bytes",
        "/w/k.py",
        11,
        2,
    )
    assert write.function == "shifted_copy"
    assert write.block == [3, 0, 0] and write.thread == [0, 0, 0]
    assert write.detail[0] == "Address 0x7f3a0e010000 is out of bounds"
    assert write.message() == (
        "compute-sanitizer: Invalid __global__ write of size 4 bytes · block (3, 0, 0) thread "
        "(0, 0, 0) · Address 0x7f3a0e010000 is out of bounds · 2 reports"
    )
    assert (read.file, read.line, read.function) == ("/home/u/src/helper.cuh", 75, None)


def test_a_clean_run_has_no_findings() -> None:
    assert parse_sanitizer("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n") == (
        [],
        0,
    )
    assert parse_sanitizer("no sanitizer output at all") == ([], None)


def test_the_checked_child_runs_without_pytorchs_caching_allocator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write past a tensor's end inside the caching allocator's block is invisible to memcheck
    (0 errors on the H200 for a planted one): the child gets each tensor its own allocation."""
    from kernel_lens.agent.stages.sanitizer import sanitizer_env

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "0")
    env = sanitizer_env({"KEEP": "me"})
    assert env["PYTORCH_NO_CUDA_MEMORY_CACHING"] == "1"
    assert "TRITON_INTERPRET" not in env and env["KEEP"] == "me"


def test_a_finding_named_by_base_name_lands_on_the_python_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """compute-sanitizer names files by base name (``in cuda.cu:8``, ``triton_oob_write.py:11``
    on the H200): the profiled file's own name is its line; ``cuda.cu`` is the extension's
    generated file, found under the extensions' folder and matched to the Python line by text."""
    from kernel_lens.agent.stages.sanitizer import _python_line

    py = tmp_path / "inline_oob_write.py"
    lines = ["import torch", 'CUDA = r"""', "__global__ void k(float* out) {",
             "        out[i + 1] = in[i];", "}", '"""']  # fmt: skip
    py.write_text("\n".join(lines))
    ext = tmp_path / "ext" / "kernel_lens_gpu_oob_write"
    ext.mkdir(parents=True)
    (ext / "cuda.cu").write_text(
        "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n\n"
        "__global__ void k(float* out) {\n        out[i + 1] = in[i];\n}\n"
    )
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    cu = SanitizerFinding("Invalid __global__ write", "cuda.cu", 6, "k")
    assert _python_line(cu, str(py), lines) == 4
    own = SanitizerFinding("Invalid __global__ write", "inline_oob_write.py", 4, "k")
    assert _python_line(own, str(py), lines) == 4
    elsewhere = SanitizerFinding("Invalid __global__ write", "other.cu", 6, "k")
    assert _python_line(elsewhere, str(py), lines) is None
