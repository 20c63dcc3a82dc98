"""``kernel-lens values``: a Triton kernel's launch under Triton's interpreter (real triton, CPU),
each body line's values for a chosen program, loop passes, and out-of-bounds accesses on their
line."""

from pathlib import Path
from typing import Any

from tests.conftest import KERNELS, run_cli

INSIDE = KERNELS / "triton_inside.py"
OOB = KERNELS / "triton_oob.py"


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _values(result: dict[str, Any], line: int) -> dict[str, dict[str, Any]]:
    row = next(r for r in result["lines"] if r["line"] == line)
    return {v["name"]: v for v in row["values"]}


def _row(result: dict[str, Any], line: int) -> dict[str, Any]:
    return next(r for r in result["lines"] if r["line"] == line)


def test_masked_vector_kernel_first_and_last_program() -> None:
    first_code, first, err = run_cli("values", f"{INSIDE}::scale_kernel", "--json")
    assert first_code == 0, err
    last_code, last, err = run_cli("values", f"{INSIDE}::scale_kernel", "--pid", "last", "--json")
    assert last_code == 0, err
    # 4072 elements in blocks of 1024: four programs, the last one 24 lanes short.
    assert first["grid"] == [4, 1, 1] and first["pid"] == [0, 0, 0]
    assert last["pid"] == [3, 0, 0] and last["programs_run"] == 4
    assert first["launcher"] == "scale" and first["interpreter"] is True
    assert "interpreter" in first["label"] and "not its performance" in first["label"]
    offs = _line(INSIDE, "offs = pid * BLOCK")
    mask = _line(INSIDE, "mask = offs < n")
    load = _line(INSIDE, "x = tl.load(in_ptr + offs")
    scaled = _line(INSIDE, "y = x * factor")
    assert _values(first, offs)["offs"]["text"] == "offs: int32[1024] 0 1 2 … 1023"
    assert _values(last, offs)["offs"]["text"] == "offs: int32[1024] 3072 3073 3074 … 4095"
    assert _values(first, mask)["mask"]["masked"] == 0
    last_mask = _values(last, mask)["mask"]
    assert last_mask["masked"] == 24 and last_mask["text"] == "mask: bool[1024] · 24 lanes masked"
    assert last_mask["data"][:1000] == [True] * 1000 and last_mask["data"][1000:] == [False] * 24
    assert _values(last, _line(INSIDE, "pid = tl.program_id"))["pid"]["text"] == "pid: int32 3"
    x = _values(first, load)["x"]
    y = _values(first, scaled)["y"]
    assert x["dtype"] == "float32" and x["shape"] == [1024] and len(x["data"]) == 1024
    # y = x * 2, lane by lane (both rounded to 4 significant digits)
    pairs = zip(x["data"], y["data"], strict=True)
    assert all(abs(b - 2 * a) <= 1e-3 * max(1.0, abs(b)) for a, b in pairs)
    assert abs(y["max"] - 2 * x["max"]) <= 1e-3 * abs(y["max"])
    # the parameters, on the def line
    params = _values(first, _line(INSIDE, "def scale_kernel"))
    assert params["n"]["text"] == "n: int32 4072"
    assert params["in_ptr"]["text"] == "in_ptr: *float32 → in_ptr + 0"
    assert first["oob"] == [] and first["error"] is None


def test_tiled_2d_kernel_grid_blocks_and_loop_passes() -> None:
    code, last, err = run_cli(
        "values", f"{INSIDE}::matmul_kernel", "--pid", "last", "--iteration", "last", "--json"
    )
    assert code == 0, err
    code, second, err = run_cli(
        "values", f"{INSIDE}::matmul_kernel", "--pid", "1,0", "--iteration", "2", "--json"
    )
    assert code == 0, err
    assert last["grid"] == [3, 2, 1] and last["pid"] == [2, 1, 0] and last["programs_run"] == 6
    loop = _line(INSIDE, "for k in range(0, K, BK)")
    rk = _line(INSIDE, "rk = k + tl.arange")
    a_mask = _line(INSIDE, "a_mask = (rm[:, None]")
    tile = _line(INSIDE, "a = tl.load(a_ptr")
    acc = _line(INSIDE, "acc += tl.dot(a, b)")
    # K = 40 in steps of 16: three passes of the body (the for line is checked a fourth time)
    assert _row(last, rk)["hits"] == 3 and _row(last, rk)["hit"] == 3
    assert _row(last, loop)["hits"] == 4
    assert _values(last, loop)["k"]["text"] == "k: 32"
    assert _values(last, rk)["rk"]["text"] == "rk: int32[16] 32 33 34 … 47"
    # rows 40…47 and k 40…47 are past M = K = 40: 8·16 + 16·8 − 8·8 lanes masked
    masked = _values(last, a_mask)["a_mask"]
    assert masked["shape"] == [16, 16] and masked["masked"] == 192
    assert masked["text"] == "a_mask: bool[16×16] · 192 lanes masked"
    block = _values(last, tile)["a"]
    assert block["shape"] == [16, 16] and len(block["data"]) == 256
    # masked lanes were loaded as other=0.0: row 8 onwards (rows 40…47) is all zeros
    assert all(v == 0 for v in block["data"][8 * 16 :])
    assert _values(last, acc)["acc"]["shape"] == [16, 16]
    # program (1, 0), second pass: k = 16, no lane masked for rows 16…31, k 16…31
    assert second["pid"] == [1, 0, 0]
    assert _values(second, loop)["k"]["text"] == "k: 16"
    assert _row(second, rk)["hit"] == 2
    assert _values(second, a_mask)["a_mask"]["masked"] == 0


def test_unmasked_load_past_the_end_is_reported_on_its_line() -> None:
    code, result, err = run_cli("values", f"{OOB}::shift_kernel", "--json")
    assert code == 0, err
    load = _line(OOB, "x = tl.load(in_ptr + offs + 1)")
    assert len(result["oob"]) == 1
    problem = result["oob"][0]
    assert problem["line"] == load and problem["op"] == "load" and problem["arg"] == "in_ptr"
    assert problem["pid"] == [3, 0, 0] and problem["lane"] == [1023]
    assert problem["offset"] == 4096 and problem["numel"] == 4096
    assert problem["lanes"] == 1 and problem["programs"] == 1
    assert "past its end" in problem["message"] and "no mask" in problem["message"]
    # the run went on: every program ran, and the chosen one's lines are there
    assert result["programs_run"] == 4 and result["error"] is None
    assert _values(result, load)["x"]["shape"] == [1024]


def test_text_output_puts_values_and_problems_under_their_lines() -> None:
    code, out, err = run_cli("values", f"{OOB}::shift_kernel", "--pid", "last")
    assert code == 0, err
    lines = out.splitlines() if isinstance(out, str) else []
    assert lines[0].startswith("# shift_kernel · program (3, 0, 0) of grid 4 × 1 × 1")
    assert "Triton interpreter" in lines[1]
    at = next(i for i, line in enumerate(lines) if "x = tl.load(in_ptr + offs + 1)" in line)
    assert lines[at + 1].strip().startswith("= x: float32[1024]")
    assert lines[at + 2].strip().startswith("! out-of-bounds load of in_ptr (float32[4096])")


def test_bad_program_id_is_a_clear_error() -> None:
    code, out, err = run_cli("values", f"{INSIDE}::scale_kernel", "--pid", "a,b", "--json")
    assert code == 1
    assert out["error"]["kind"] == "inputs" and "program id" in out["error"]["message"]


_STRIDED = """
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch
import triton
import triton.language as tl


@triton.jit
def copy_rows(out_ptr, in_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * stride + cols - 1, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, x, mask=mask)


# kernel-lens: inputs = (torch.randn(4, 8),)
def copy(x):
    out = torch.empty_like(x)
    copy_rows[(x.shape[0],)](out, x, x.shape[1], x.shape[1] + 1, BLOCK=8)
    return out
"""


def test_negative_offset_and_wrong_stride_under_a_mask(tmp_path: Path) -> None:
    path = tmp_path / "strided.py"
    path.write_text(_STRIDED)
    code, result, err = run_cli("values", f"{path}::copy_rows", "--json")
    assert code == 0, err
    [problem] = result["oob"]
    assert problem["line"] == _line(path, "x = tl.load(in_ptr")
    # program 0 lane 0 reads offset -1 (the "- 1"), before the tensor's start, mask on
    assert problem["pid"] == [0, 0, 0] and problem["lane"] == [0] and problem["offset"] == -1
    assert "before its start" in problem["message"] and "no mask" not in problem["message"]
    # with a stride of 9 for rows of 8, the last row reads offsets 26…33: two past the end (32)
    assert problem["lanes"] == 1 + 2 and problem["programs"] == 2
    assert result["programs_run"] == 4


_ASM_KERNEL = """
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch
import triton
import triton.language as tl


@triton.jit
def asm_kernel(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(in_ptr + offs, mask=offs < n)
    y = tl.inline_asm_elementwise(
        "mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1
    )
    tl.store(out_ptr + offs, y, mask=offs < n)


def run(x):
    out = torch.empty_like(x)
    asm_kernel[(triton.cdiv(x.numel(), 64),)](out, x, x.numel(), BLOCK=64)
    return out
"""

_DRIVER = """
import torch
from asm_kernels import run

run(torch.arange(100, dtype=torch.float32))
"""


def test_inputs_from_a_driver_and_what_the_interpreter_cannot_run_on_its_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "asm_kernels.py"
    path.write_text(_ASM_KERNEL)
    (tmp_path / "drive.py").write_text(_DRIVER)
    code, result, err = run_cli(
        "values", f"{path}::asm_kernel", "--from", str(tmp_path / "drive.py"), "--json"
    )
    assert code == 0, err
    # the driver's tensor: arange(100), so x of program 0 runs 0 … 63
    x = _values(result, _line(path, "x = tl.load(in_ptr"))["x"]
    assert x["min"] == 0 and x["max"] == 63 and result["grid"] == [2, 1, 1]
    assert _values(result, _line(path, "def asm_kernel"))["n"]["text"] == "n: int32 100"
    stop = result["error"]
    assert stop["line"] == _line(path, "y = tl.inline_asm_elementwise(")
    assert "inline_asm not supported in interpreter mode" in stop["message"]
