"""Write the SASS listings in this folder (no GPU needed): the CUDA kernels of
``../cuda_strided.py`` with nvcc, the Triton kernels of ``../tl_*.py`` ahead of time for
sm_90, each disassembled with ``cuobjdump -sass``.

    PATH=/usr/local/cuda-13.0/bin:$PATH python tests/data/inside/sass/make_sass.py

``cuobjdump`` is the one shipped in the triton wheel (``triton/backends/nvidia/bin``).
"""

import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
INSIDE = os.path.dirname(HERE)
sys.path.insert(0, INSIDE)
os.environ["TRITON_INTERPRET"] = "0"

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
CUOBJDUMP = os.path.join(BIN, "cuobjdump")


def cuda() -> None:
    """The ``__global__`` kernels of the inline string (the host wrappers need torch)."""
    text = open(os.path.join(INSIDE, "cuda_strided.py")).read()
    source = re.search(r'CUDA_SRC = r"""(.*?)"""', text, re.S).group(1)
    kernels = source.split("torch::Tensor run_strided_sum")[0]
    with tempfile.TemporaryDirectory() as tmp:
        cu = os.path.join(tmp, "kernels.cu")
        cubin = os.path.join(tmp, "kernels.cubin")
        with open(cu, "w") as fh:
            fh.write(kernels)
        subprocess.run(
            ["nvcc", "-cubin", "-arch=sm_90", "-lineinfo", "-O3", "-o", cubin, cu], check=True
        )
        sass = subprocess.run(
            [CUOBJDUMP, "-sass", cubin], capture_output=True, text=True, check=True
        ).stdout
        # the same cubin as Show Assembly disassembles it, with the encodings (-hex)
        nvdisasm = subprocess.run(
            [os.path.join(BIN, "nvdisasm"), "-g", "-hex", "-c", cubin],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    with open(os.path.join(HERE, "cuda_strided.sass"), "w") as fh:
        fh.write(sass)
    with open(os.path.join(HERE, "cuda_strided.nvdisasm"), "w") as fh:
        fh.write(nvdisasm.replace(os.path.dirname(cu), "/tmp"))


def _divisible(indices: list[int]) -> dict:
    return {(i,): [["tt.divisibility", 16]] for i in indices}


def triton_kernels() -> None:
    import tl_matmul
    import tl_strided
    import tl_vector_add

    fp32 = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    jobs = {
        "tl_strided": (
            tl_strided.strided_sum_kernel,
            {**fp32, "STRIDE": "constexpr", "BLOCK": "constexpr"},
            {"STRIDE": 32, "BLOCK": 1024},
            [0, 1, 2, 3],
        ),
        "tl_vector_add": (
            tl_vector_add.add_kernel,
            {**fp32, "BLOCK": "constexpr"},
            {"BLOCK": 1024},
            [0, 1, 2, 3],
        ),
        "tl_matmul": (
            tl_matmul.matmul_kernel,
            {
                "a_ptr": "*fp16",
                "b_ptr": "*fp16",
                "c_ptr": "*fp16",
                "M": "i32",
                "N": "i32",
                "K": "i32",
                "BLOCK_M": "constexpr",
                "BLOCK_N": "constexpr",
                "BLOCK_K": "constexpr",
            },
            {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32},
            [0, 1, 2, 3, 4, 5],
        ),
    }
    for name, (fn, signature, constexprs, divisible) in jobs.items():
        order = list(signature)
        src = ASTSource(
            fn=fn,
            signature=signature,
            constexprs={(order.index(k),): v for k, v in constexprs.items()},
            attrs=_divisible(divisible),
        )
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
        with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
            fh.write(compiled.asm["cubin"])
            fh.flush()
            sass = subprocess.run(
                [CUOBJDUMP, "-sass", fh.name], capture_output=True, text=True, check=True
            ).stdout
        with open(os.path.join(HERE, f"{name}.sass"), "w") as out:
            out.write(sass)


if __name__ == "__main__":
    cuda()
    triton_kernels()
