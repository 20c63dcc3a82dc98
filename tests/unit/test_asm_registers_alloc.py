"""Registers used against what Nsight Compute's "Registers Per Thread" reads: on the H200 a
Triton kernel whose cubin uses 10 read 16 in ncu, one using 28 read 28
(tests/gpu/test_gpu_asm_library)."""

from kernel_lens.agent.stages.triton_ir import allocated_registers
from kernel_lens.cli.asm import _registers


def test_nsight_computes_figure_has_a_floor_of_16() -> None:
    assert [allocated_registers(n) for n in (1, 10, 16, 17, 28, 190)] == [16, 16, 16, 17, 28, 190]
    assert allocated_registers(None) is None


def test_the_cli_header_says_both_when_they_differ() -> None:
    assert _registers({"registers": 10, "registers_allocated": 16}) == (
        "10 registers (16 in Nsight Compute)"
    )
    assert _registers({"registers": 28, "registers_allocated": 28}) == "28 registers"
    assert _registers({"registers": None, "registers_allocated": None}) == "registers unknown"
