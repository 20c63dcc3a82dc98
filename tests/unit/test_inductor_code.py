"""Kernels found in inductor output code recorded on the H200 (the compiled stage's parser)."""

from pathlib import Path

from kernel_lens.agent.stages.compiled import _kernels_in_code

DATA = Path(__file__).parent.parent / "data" / "h200"


def test_square_square_has_one_fused_triton_kernel_called_once() -> None:
    code = (DATA / "inductor_square_square.py.txt").read_text()
    kernels = _kernels_in_code(code)
    assert [(k["name"], k["kind"]) for k in kernels] == [("triton_poi_fused_pow_0", "triton")]
    lines = code.splitlines()
    assert "triton_poi_fused_pow_0 = async_compile.triton(" in lines[kernels[0]["def_line"] - 1]
    assert "triton_poi_fused_pow_0.run(" in lines[kernels[0]["call_line"] - 1]


def test_matmul_relu_has_an_extern_gemm_then_the_fused_kernel() -> None:
    code = (DATA / "inductor_matmul_relu_code.py.txt").read_text()
    kernels = _kernels_in_code(code)
    assert [k["kind"] for k in kernels] == ["extern", "triton"]
    assert kernels[0]["name"] == "extern_kernels.mm"
    assert kernels[1]["name"] == "triton_poi_fused_add_relu_0"
    assert kernels[0]["call_line"] < kernels[1]["call_line"]
