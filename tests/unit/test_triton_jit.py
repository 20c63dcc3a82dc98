"""The version-guarded reader of Triton's JIT cache (agent/stages/triton_jit.py): a stand-in
shaped like a launched ``CompiledKernel``, a real kernel triton 3.7.1 compiles ahead of time
without a GPU, an autotuner's choice, and the launch's specialisation."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kernel_lens.agent.stages.triton_jit import (
    autotune_info,
    cached_kernels,
    divisibility_attrs,
    read_compiled,
    specialize,
)


def _launched() -> Any:
    """What a launch on an H200 leaves: metadata (a namedtuple in 3.x), the asm dict, and
    n_regs/n_spills set by ``_init_handles``."""
    target = SimpleNamespace(backend="cuda", arch=90, warp_size=32)
    metadata = SimpleNamespace(
        name="outerk_matmul_kernel", target=target, shared=98304, num_warps=4, num_stages=3
    )
    asm = {"ttir": "module {}", "ptx": ".target sm_90a", "cubin": b"\x7fELF", "json": "{}"}
    return SimpleNamespace(metadata=metadata, asm=asm, n_regs=96, n_spills=0)


def test_a_launched_kernel_is_read_with_the_drivers_counts() -> None:
    k = read_compiled(_launched())
    assert k is not None
    assert (k.name, k.arch, k.registers, k.spill_bytes) == ("outerk_matmul_kernel", 90, 96, 0)
    assert (k.shared_bytes, k.num_warps, k.num_stages) == (98304, 4, 3)
    assert k.asm == {"ttir": "module {}", "ptx": ".target sm_90a"}
    assert k.cubin == b"\x7fELF"
    # Not loaded on a device (no GPU here): the counts are unknown, not invented.
    unloaded = _launched()
    del unloaded.n_regs, unloaded.n_spills
    k2 = read_compiled(unloaded)
    assert k2 is not None and k2.registers is None and k2.spill_bytes is None
    # A dict metadata (with the target as JSON) reads the same.
    as_dict = _launched()
    as_dict.metadata = {"name": "k", "target": {"arch": 80}, "shared": 0, "num_warps": 8}
    k3 = read_compiled(as_dict)
    assert k3 is not None and (k3.arch, k3.num_warps, k3.num_stages) == (80, 8, None)
    # The interpreter's launch returns no compiled kernel.
    assert read_compiled(None) is None and read_compiled(object()) is None


def test_the_cache_of_each_triton_layout() -> None:
    a, b = _launched(), _launched()
    new = SimpleNamespace(device_caches={0: ({"key1": a, "key2": b}, {}, None, None, None)})
    assert cached_kernels(new) == [a, b]
    old = SimpleNamespace(cache={0: {"key": a}})
    assert cached_kernels(old) == [a]
    assert cached_kernels(object()) == []


@pytest.mark.slow
def test_a_real_kernel_compiled_ahead_of_time_by_triton() -> None:
    triton = pytest.importorskip("triton")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):  # noqa: N803
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    src = ASTSource(
        fn=add_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 256},
        attrs=divisibility_attrs([0, 1, 2]),
    )
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 2})
    k = read_compiled(compiled)
    assert k is not None
    assert k.name == "add_kernel" and k.arch == 90
    assert (k.num_warps, k.num_stages) == (2, 3)
    assert k.shared_bytes is not None and k.shared_bytes >= 0
    assert set(k.asm) == {"ttir", "ttgir", "llir", "ptx"} and k.cubin
    assert "tt.divisibility = 16" in k.asm["ttir"]
    # Never loaded on a device here: the driver's counts are unknown.
    assert k.registers is None


def test_the_launch_specialisation_as_tritons_jit_makes_it() -> None:
    torch = pytest.importorskip("torch")
    aligned = torch.empty(64)
    assert specialize(aligned) == ("*fp32", "D")
    assert specialize(aligned[1:])[1] == ""
    assert specialize(1) == ("constexpr", None)
    assert specialize(1, specialize_ints=False)[0] != "constexpr"
    assert specialize(4096)[1] == "D" and specialize(4097)[1] == ""
    assert divisibility_attrs([0, 2]) == {
        (0,): [["tt.divisibility", 16]],
        (2,): [["tt.divisibility", 16]],
    }


def test_an_autotuners_choice_and_each_configs_time() -> None:
    triton = pytest.importorskip("triton")
    fast = triton.Config({"BLOCK_M": 128}, num_warps=4, num_stages=3)
    slow = triton.Config({"BLOCK_M": 64}, num_warps=8, num_stages=4)
    tuner = SimpleNamespace(
        configs=[slow, fast],
        best_config=fast,
        configs_timings={slow: [0.5, 0.49, 0.51], fast: [0.0123, 0.012, 0.013]},
    )
    info = autotune_info(tuner)
    assert info == {
        "chosen": "BLOCK_M=128, num_warps=4, num_stages=3",
        "chosen_kwargs": {"BLOCK_M": 128, "num_warps": 4, "num_stages": 3},
        "configs": [
            {
                "config": "BLOCK_M=128, num_warps=4, num_stages=3",
                "ms": 0.0123,
                "chosen": True,
                "kwargs": {"BLOCK_M": 128, "num_warps": 4, "num_stages": 3},
            },
            {
                "config": "BLOCK_M=64, num_warps=8, num_stages=4",
                "ms": 0.5,
                "chosen": False,
                "kwargs": {"BLOCK_M": 64, "num_warps": 8, "num_stages": 4},
            },
        ],
    }
    # One config only: the autotuner benchmarks nothing, the choice is still said.
    single = SimpleNamespace(configs=[fast], best_config=fast, configs_timings=None)
    assert autotune_info(single)["configs"] == []  # type: ignore[index]
    assert autotune_info(SimpleNamespace(configs=[fast])) is None  # never ran
    assert autotune_info(object()) is None
