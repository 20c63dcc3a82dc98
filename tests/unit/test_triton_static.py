"""The launch as the text writes it (agent/stages/triton_static.py ``static_launch``): the
signature and constexprs Show Assembly compiles with when the launcher cannot run here, read
from a real module of ``@triton.jit`` kernels — each way a type is found, and each guess said."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict
from types import ModuleType
from typing import Any

import pytest

from kernel_lens.agent.stages.triton_static import static_launch

KERNELS = """\
import torch
import triton
import triton.language as tl

LIMIT = 3


@triton.jit
def scale_kernel(x_ptr, y_ptr, out, n, big, flag, alpha, eps, count, offset, width, ratio,
                 act: tl.constexpr, BLOCK: tl.constexpr, GROUP: tl.constexpr = 4,
                 STEPS: tl.constexpr = 1):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.load(y_ptr + offs, mask=offs < n)
    tl.store(out + offs, x * alpha + y + eps + offset * width, mask=offs < n)


def launch(x, n: int, width: float, ratio, offset=0.0, activation="relu"):
    y = torch.empty(8, dtype=torch.float16)
    res = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    scale_kernel[(1,)](x, y, res, n, 1099511627776, True, 0.5, e, c, offset, width, ratio,
                       activation, block, STEPS=LIMIT, num_warps=8, num_stages=LIMIT)
    return res


def main():
    launch(torch.ones(4), 4, 2.0, ratio=0.5)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4, num_stages=2)], key=["n"])
@triton.jit
def tuned_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def run_tuned(a, b, n):
    tuned_kernel[(1,)](a, b, n, num_warps=2)


@triton.jit
def never_launched(p_ptr, scale, n, BLOCK_M: tl.constexpr, K: tl.constexpr):
    tl.store(p_ptr, scale)


@triton.jit
def softmax_like(out_ptr, in_ptr, stride, n_cols, BLOCK_SIZE: tl.constexpr,
                 num_stages: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(in_ptr + row * stride + offs, mask=offs < n_cols)
    tl.store(out_ptr + row * stride + offs, x, mask=offs < n_cols)


def softmax(x, big_smem):
    # As Triton's fused-softmax tutorial: compiled by warmup(), then the compiled kernel runs.
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if big_smem else 2
    y = torch.empty_like(x)
    kernel = softmax_like.warmup(y, x, x.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                 num_stages=num_stages, num_warps=num_warps, grid=(1,))
    kernel[(n_rows, 1, 1)](y, x, x.stride(0), n_cols, BLOCK_SIZE, num_stages)
    return y


@triton.jit
def grouped(lock_ptr, n, GROUP_SIZE_M: tl.constexpr, BLOCK: tl.constexpr):
    tl.atomic_xchg(lock_ptr + tl.program_id(0) % GROUP_SIZE_M, n)


def backward(w, n):
    # As the layer-norm tutorial's backward: a size set by a ladder of ifs.
    GROUP_SIZE_M = 64
    if n <= 8192: GROUP_SIZE_M = 96
    if n <= 1024: GROUP_SIZE_M = 256
    BLOCK = 128
    BLOCK += 0  # bound another way: not a literal any more
    locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32)
    grouped[(n,)](locks, n, GROUP_SIZE_M=GROUP_SIZE_M, BLOCK=BLOCK)
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    path = tmp_path_factory.mktemp("static") / "kernels_static.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("kernels_static", path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def _read(module: ModuleType, kernel: str) -> dict[str, Any]:
    return asdict(static_launch(KERNELS, kernel, getattr(module, kernel), module))


def test_each_argument_typed_from_the_launch_or_said_to_be_assumed(module: ModuleType) -> None:
    got = _read(module, "scale_kernel")
    assert got["line"] == 22
    assert got["call"] == (
        "scale_kernel[1,](x, y, res, n, 1099511627776, True, 0.5, e, c, offset, width, ratio, "
        "activation, block, STEPS=LIMIT, num_warps=8, num_stages=LIMIT)"
    )
    assert got["signature"] == {
        "x_ptr": "*fp32",  # a pointer by its name, its tensor's dtype not in the text
        "y_ptr": "*fp16",  # torch.empty(..., dtype=torch.float16)
        "out": "*fp32",  # a pointer by its use (tl.store), empty_like says no dtype
        "n": "i32",  # the launcher's `n: int`
        "big": "i64",  # an int literal past 2**31
        "flag": "i1",
        "alpha": "fp32",
        "eps": "fp32",  # nothing says: a float-named scalar
        "count": "i32",  # nothing says: any other
        "offset": "fp32",  # the launcher's default 0.0
        "width": "fp32",  # the launcher's `width: float`
        "ratio": "fp32",  # a call in the file passes ratio=0.5
        "act": "constexpr",
        "BLOCK": "constexpr",
        "GROUP": "constexpr",
        "STEPS": "constexpr",
    }
    # The launcher's default string, a module constant, the kernel's default, a run-time size.
    assert got["constexprs"] == {"act": "relu", "BLOCK": 64, "GROUP": 4, "STEPS": 3}
    assert got["options"] == {"num_warps": 8, "num_stages": 3}
    assert got["assumed"] == {
        "x_ptr": "*fp32",
        "out": "*fp32",
        "eps": "fp32",
        "count": "i32",
        "ratio": "fp32",
        "BLOCK": "BLOCK=64 (computed at run time)",
    }


def test_an_autotuned_kernel_takes_its_first_config(module: ModuleType) -> None:
    got = _read(module, "tuned_kernel")
    assert got["line"] == 39
    assert got["call"] == "tuned_kernel[1,](a, b, n, num_warps=2)"
    assert got["signature"] == {"src": "*fp32", "dst": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    assert got["constexprs"] == {"BLOCK": 128}
    # The launch's own num_warps wins over the config's; num_stages comes from the config.
    assert got["options"] == {"num_warps": 2, "num_stages": 2}
    assert got["assumed"] == {"src": "*fp32", "dst": "*fp32", "n": "i32"}


def test_a_kernel_never_launched_is_all_guesses(module: ModuleType) -> None:
    got = _read(module, "never_launched")
    assert (got["line"], got["call"], got["options"]) == (None, None, {})
    assert got["signature"] == {
        "p_ptr": "*fp32",
        "scale": "fp32",
        "n": "i32",
        "BLOCK_M": "constexpr",
        "K": "constexpr",
    }
    assert got["constexprs"] == {"BLOCK_M": 64, "K": 1}
    assert got["assumed"] == {
        "p_ptr": "*fp32",
        "scale": "fp32",
        "n": "i32",
        "BLOCK_M": "BLOCK_M=64 (not given)",
        "K": "K=1 (not given)",
    }


def test_a_warmup_call_is_the_launch_and_the_launchers_locals_are_read(module: ModuleType) -> None:
    got = _read(module, "softmax_like")
    assert got["line"] == 63
    assert got["call"].startswith("softmax_like.warmup(y, x, x.stride(0), n_cols")
    assert got["signature"] == {
        "out_ptr": "*fp32",
        "in_ptr": "*fp32",
        "stride": "i32",
        "n_cols": "i32",
        "BLOCK_SIZE": "constexpr",
        "num_stages": "constexpr",
    }
    # `num_warps = 8` read; `num_stages = 4 if big_smem else 2`: the first, said; a keyword
    # that is also the kernel's parameter is still Triton's compile option.
    assert got["constexprs"] == {"BLOCK_SIZE": 64, "num_stages": 4}
    assert got["options"] == {"num_warps": 8, "num_stages": 4}
    assert got["assumed"]["num_stages"] == (
        "num_stages=4 (or 2: chosen at run time; the first taken)"
    )
    assert got["assumed"]["BLOCK_SIZE"] == "BLOCK_SIZE=64 (computed at run time)"


def test_a_size_set_by_a_ladder_of_ifs_takes_its_first_value_and_says_the_others(
    module: ModuleType,
) -> None:
    got = _read(module, "grouped")
    assert got["signature"] == {
        "lock_ptr": "*i32",  # torch.zeros(..., dtype=torch.int32) in the launcher
        "n": "i32",
        "GROUP_SIZE_M": "constexpr",
        "BLOCK": "constexpr",
    }
    assert got["constexprs"] == {"GROUP_SIZE_M": 64, "BLOCK": 64}
    assert got["assumed"] == {
        "n": "i32",
        "GROUP_SIZE_M": "GROUP_SIZE_M=64 (or 96, 256: chosen at run time; the first taken)",
        "BLOCK": "BLOCK=64 (computed at run time)",
    }


def test_the_target_driver_answers_only_while_the_definitions_run(tmp_path: Any) -> None:
    from triton.runtime import driver

    try:
        driver.active  # noqa: B018
    except RuntimeError:
        pass
    else:
        pytest.skip("a GPU driver is active here: no stand-in is needed")
    from kernel_lens.agent.stages.triton_static import definitions_module

    path = tmp_path / "asks.py"
    path.write_text(
        "import triton\n\n\ndef backend():\n"
        "    return triton.runtime.driver.active.get_current_target()\n\n\n"
        "class Seen:\n    target = backend()\n"
    )
    module, skipped = definitions_module(str(path), path.read_text(), arch=100)
    assert skipped == []
    assert (module.Seen.target.backend, module.Seen.target.arch) == ("cuda", 100)
    with pytest.raises(RuntimeError, match="0 active drivers"):
        driver.active  # noqa: B018
    _, skipped = definitions_module(str(path), path.read_text())  # no arch: no stand-in
    assert skipped == [8]
    # Inside an interpreted job (the interpreter's stand-in says sm_90), the compile's target
    # still says the arch asked for.
    from kernel_lens.agent.triton_driver import interpreter_device

    with interpreter_device():
        module, _ = definitions_module(str(path), path.read_text(), arch=100)
        assert module.Seen.target.arch == 100
        assert driver.active.get_active_torch_device().type == "cpu"
    with pytest.raises(RuntimeError, match="0 active drivers"):
        driver.active  # noqa: B018
