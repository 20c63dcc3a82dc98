"""On a GPU: Check Memory (``kernel-lens memcheck``) finds a planted out-of-bounds write under
compute-sanitizer, in a Triton kernel and in a ``load_inline`` kernel, on the right line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.gpu

TRITON_OOB_WRITE = """
import torch
import triton
import triton.language as tl


@triton.jit
def shifted_copy(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs + 1, x, mask=offs < n)


# kernel-lens: inputs = (torch.randn(4096, device="cuda"),)
def copy(x):
    out = torch.empty_like(x)
    shifted_copy[(triton.cdiv(x.numel(), 1024),)](out, x, x.numel(), BLOCK=1024)
    return out
"""

INLINE_OOB_WRITE = '''
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
__global__ void shifted_copy_kernel(const float* in, float* out, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        out[i + 1] = in[i];
    }
}

torch::Tensor shifted_copy(torch::Tensor x) {
    auto out = torch::empty_like(x);
    long n = x.numel();
    shifted_copy_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

module = load_inline(
    name="kernel_lens_gpu_oob_write",
    cpp_sources="torch::Tensor shifted_copy(torch::Tensor x);",
    cuda_sources=CUDA_SOURCE,
    functions=["shifted_copy"],
    extra_cuda_cflags=["-lineinfo"],
)


# kernel-lens: inputs = (torch.randn(4096, device="cuda"),)
def copy(x):
    return module.shifted_copy(x)
'''


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _check(path: Path, line_text: str) -> None:
    code, out, err = run_cli("memcheck", f"{path}::copy", "--json", timeout=900)
    if code != 0 and "compute-sanitizer was not found" in str(out):
        pytest.skip("compute-sanitizer is not installed")
    assert code == 0, (out, err)
    assert out["tool"] == "memcheck" and out["errors"] >= 1
    writes = [f for f in out["findings"] if "write" in f["kind"]]
    assert writes, out["findings"]
    assert {f["py_line"] for f in writes} == {_line(path, line_text)}, writes
    assert writes[0]["block"] is not None and writes[0]["thread"] is not None


def test_memcheck_finds_a_triton_kernels_write_past_the_end(tmp_path: Path) -> None:
    path = tmp_path / "triton_oob_write.py"
    path.write_text(TRITON_OOB_WRITE)
    _check(path, "tl.store(out_ptr + offs + 1")


def test_memcheck_finds_a_load_inline_kernels_write_past_the_end(tmp_path: Path) -> None:
    path = tmp_path / "inline_oob_write.py"
    path.write_text(INLINE_OOB_WRITE)
    _check(path, "out[i + 1] = in[i];")
