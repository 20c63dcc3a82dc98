"""``kernel-lens inline``: load_inline's CUDA source to PTX and nvcc errors on the Python lines."""

from pathlib import Path

import pytest

from kernel_lens.agent.stages.inline_ext import find_nvcc
from tests.conftest import EXAMPLES, KERNELS, run_cli

INLINE = KERNELS / "inline_square.py"
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not installed")


def _lineno(path: Path, text: str) -> int:
    return next(i for i, x in enumerate(path.read_text().splitlines(), 1) if text in x)


def test_without_nvcc_the_message_says_so() -> None:
    code, out, _ = run_cli("inline", str(INLINE), "--json", env={"CUDA_HOME": "/nonexistent"})
    assert code == 1
    assert out["error"]["kind"] == "unsupported"
    assert out["error"]["message"].startswith("needs CUDA and nvcc: nvcc was not found")
    assert out["error"]["line"] == _lineno(INLINE, "return load_inline(")


@pytest.mark.slow
@needs_nvcc
def test_ptx_of_the_cuda_string_maps_to_its_python_lines() -> None:
    code, out, err = run_cli("inline", str(INLINE), "--json", timeout=900)
    assert code == 0, err
    (module,) = out["modules"]
    assert module["name"] == "kernel_lens_inline_square"
    assert module["files"]["cuda.cu"].startswith("#include <torch/types.h>\n#include <cuda.h>")
    assert (
        'm.def("square", torch::wrap_pybind_function(square), "square");'
        in (module["files"]["main.cpp"])
    )
    assert module["errors"] == []
    ptx = module["ptx"].splitlines()
    by_line = {m["source_line"]: m["asm_lines"] for m in module["line_map"]}
    load = _lineno(INLINE, "float v = in[i];")
    store = _lineno(INLINE, "out[i] = v * v;")
    assert any("ld.global" in ptx[i - 1] for i in by_line[load])
    assert any("st.global" in ptx[i - 1] for i in by_line[store])


@pytest.mark.slow
@needs_nvcc
def test_nvcc_error_lands_on_the_python_line() -> None:
    path = EXAMPLES / "inline_typo.py"
    code, out, err = run_cli("inline", str(path), "--json", timeout=900)
    assert code == 0, err
    (module,) = out["modules"]
    assert module["ptx"] is None
    errors = [e for e in module["errors"] if e["severity"] == "error"]
    assert errors and 'identifier "undefined_name" is undefined' in errors[0]["message"]
    assert errors[0]["line"] == _lineno(path, "undefined_name;")
