"""short_kernel_name on the kernel names of recorded traces and on hand-written signatures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel_lens.analysis.names import short_kernel_name

H200_TRACE = Path(__file__).parents[1] / "data" / "h200" / "matmul_relu_trace.json"

GEMM = (
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_"
    "alignc4_execute_kernel__5x_cublas"
)
ADD = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, "
    "std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, "
    "std::array<char*, 2ul>)"
)


def test_fixture_kernel_names() -> None:
    trace = json.loads(H200_TRACE.read_text())
    names = [e["name"] for e in trace["traceEvents"] if e.get("cat") == "kernel"]

    assert [short_kernel_name(n) for n in names] == [
        GEMM,
        "vectorized_elementwise_kernel",
        "vectorized_elementwise_kernel",
    ]
    # The clamp kernel's name carries lambdas and `(anonymous namespace)` in its template and
    # parameter lists: the case the bracket matching exists for.
    assert "{lambda(float)#1}" in names[1] and "(anonymous namespace)" in names[1]
    assert names[2] == ADD


@pytest.mark.parametrize(
    ("name", "short"),
    [
        (ADD, "vectorized_elementwise_kernel"),
        (GEMM, GEMM),
        ("triton_poi_fused_add_relu_0", "triton_poi_fused_add_relu_0"),
        ("Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)"),
        ("Memset (Device)", "Memset (Device)"),
        (
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>"
            "(cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params)",
            "cutlass_80_simt_sgemm_128x64_8x5_nn_align1",
        ),
        (
            "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, "
            "int, int, int>, cutlass::gemm::collective::CollectiveMma<int> > >"
            "(cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int> >::Params)",
            "GemmUniversal",
        ),
        (
            "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel"
            "<float, 4, at::native::(anonymous namespace)::normal_kernel(at::TensorBase const&)"
            "::{lambda(float)#1}>(long, at::PhiloxCudaState, "
            "at::native::(anonymous namespace)::normal_kernel(at::TensorBase const&)"
            "::{lambda(int, float)#1})",
            "distribution_elementwise_grid_stride_kernel",
        ),
        ("void cub::CUB_200200_800_NS::DeviceReduceKernel<int>(int)", "DeviceReduceKernel"),
        ("square_kernel(float const*, float*, long)", "square_kernel"),
        ("std::enable_if<true, void>::type at::native::bar_kernel<float>(float*)", "bar_kernel"),
        ("void (anonymous namespace)::baz_kernel<(anonymous namespace)::Op>(int)", "baz_kernel"),
        ("at::native::foo::{lambda(int)#1}", "foo"),
        ("", ""),
    ],
)
def test_short_kernel_name(name: str, short: str) -> None:
    assert short_kernel_name(name) == short


@pytest.mark.parametrize("name", ["unbalanced<(x", "foo(", "x" * 100 + "<(", "(int)"])
def test_unparseable_names_fall_back_to_80_characters(name: str) -> None:
    assert short_kernel_name(name) == name[:80]
