"""Registers used against registers allocated (what Nsight Compute's "Registers Per Thread" is):
on the H200 a Triton kernel whose cubin uses 10 read 16 in ncu (tests/gpu/test_gpu_asm_library)."""

from kernel_lens.agent.stages.triton_ir import allocated_registers
from kernel_lens.cli.asm import _registers


def test_registers_are_allocated_eight_per_thread_at_a_time() -> None:
    assert [allocated_registers(n) for n in (1, 8, 10, 16, 17, 190, 255)] == [
        8, 8, 16, 16, 24, 192, 256,
    ]  # fmt: skip
    assert allocated_registers(None) is None


def test_the_cli_header_says_both_when_they_differ() -> None:
    assert _registers({"registers": 10, "registers_allocated": 16}) == "10 registers (16 allocated)"
    assert _registers({"registers": 16, "registers_allocated": 16}) == "16 registers"
    assert _registers({"registers": None, "registers_allocated": None}) == "registers unknown"
