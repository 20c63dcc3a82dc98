"""On a CUDA GPU (issue 29): exact bytes on the lines of a function allocating known sizes, a
training step's peak equal to ``torch.cuda.max_memory_allocated()``, and a deliberate
out-of-memory (1 GiB chunks past the device's memory) with its line and the live memory by line,
read from the allocator's snapshot at the failure.

Run on the lent H200 (see docs/benchmarks.md); skipped without CUDA.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KERNELS, line_starting, profile_json, run_cli

pytestmark = pytest.mark.gpu

MIB = 1 << 20


def _cuda(line: dict[str, Any]) -> dict[str, Any]:
    (entry,) = [e for e in line["memory"] if e["device"].startswith("cuda")]
    return entry  # type: ignore[no-any-return]


def test_known_sizes_are_exact_on_the_lines(tmp_path: Any) -> None:
    result = profile_json(f"{KERNELS}/memory.py::grow", tmp_path, "--memory", "--no-history")
    assert result["device_kind"] == "cuda"
    a = _cuda(line_starting(result, "a = torch.ones"))
    b = _cuda(line_starting(result, "b = torch.ones"))
    c = _cuda(line_starting(result, "c = torch.cat"))
    assert (a["allocated_bytes"], b["allocated_bytes"], c["allocated_bytes"]) == (
        16 * MIB,
        8 * MIB,
        24 * MIB,
    )
    assert c["live_bytes"] - a["live_bytes"] == 32 * MIB
    freed = _cuda(line_starting(result, "del a"))
    assert freed["freed_bytes"] == 16 * MIB
    (dev,) = result["memory"]["devices"]
    assert (
        dev["device"] == "cuda:0"
        and dev["peak_line"] == line_starting(result, "c = torch.cat")["line"]
    )
    alive = {r["source"].split(" =")[0]: r["bytes"] for r in dev["live_at_peak"]}
    assert (alive["c"], alive["a"], alive["b"]) == (24 * MIB, 16 * MIB, 8 * MIB)


def test_a_training_steps_peak_is_max_memory_allocated(tmp_path: Path) -> None:
    import torch

    from kernel_lens.agent.stages.ops import profile_pass
    from kernel_lens.analysis.memory import attribute_memory

    sys.path.insert(0, str(KERNELS))
    try:
        import train_step as mod
    finally:
        sys.path.remove(str(KERNELS))
    model, opt, x, y = mod.make()
    mod.train_step(model, opt, x, y)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    passed = profile_pass(
        lambda: mod.train_step(model, opt, x, y), mod.train_step.__code__, device="cuda",
        runs=3, trace_dir=str(tmp_path), memory=True,
    )  # fmt: skip
    peak = torch.cuda.max_memory_allocated()
    _, memory = attribute_memory(passed.trace, runs=passed.runs)
    assert memory is not None
    (dev,) = memory["devices"]
    # the unrecorded warm-up step of the pass reaches the same peak as the recorded ones
    assert dev["peak_bytes"] == peak
    assert dev["peak_in_backward"]
    assert any(r.get("kind") == "saved for backward" for r in dev["live_at_peak"])


OOM = textwrap.dedent(
    """\
    import torch


    def fill():
        held = []
        for _ in range(1000):
            held.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
        return held
    """
)


def test_an_out_of_memory_names_its_line_and_what_was_alive_by_line(tmp_path: Path) -> None:
    script = tmp_path / "fill.py"
    script.write_text(OOM)
    code, out, err = run_cli(
        "profile", f"{script}::fill", "--json", "--memory", "--no-history",
        "--trace-dir", str(tmp_path / "traces"),
    )  # fmt: skip
    assert code != 0, out
    error = out["error"]
    assert error["kind"] == "runtime" and "OutOfMemoryError" in error["message"]
    assert error["line"] == 7
    memory = error["memory"]
    assert memory["failed_bytes"] == 1 << 30
    assert memory["failed_line"] == 7
    top = memory["live_by_line"][0]
    import torch

    total = torch.cuda.get_device_properties(0).total_memory
    assert top["line"] == 7 and top["source"].startswith("held.append")
    # every chunk that fitted, held by that line when the next one failed
    assert top["bytes"] % (1 << 30) == 0 and top["bytes"] > total - (8 << 30)


def test_a_cpu_function_on_a_gpu_machine_stays_cpu_with_memory_on(tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text("import torch\n\n\ndef host():\n    a = torch.ones(1 << 20)\n    return a\n")
    code, out, err = run_cli(
        "profile", f"{script}::host", "--json", "--memory", "--no-history",
        "--trace-dir", str(tmp_path / "traces"),
    )  # fmt: skip
    assert code == 0, (out, err)
    assert out["device_kind"] == "cpu", out["device"]
    (entry,) = out["lines"][0]["memory"]
    assert (entry["device"], entry["allocated_bytes"]) == ("cpu", 4 * MIB)


def test_memory_is_recorded_by_default_on_cuda_and_not_with_no_memory(tmp_path: Path) -> None:
    # Its measured cost on CUDA is under 10% (docs/benchmarks.md): on by default there.
    result = profile_json(f"{KERNELS}/memory.py::grow", tmp_path / "a", "--no-history")
    assert result["device_kind"] == "cuda"
    assert _cuda(line_starting(result, "c = torch.cat"))["allocated_bytes"] == 24 * MIB
    assert result["memory"]["devices"][0]["device"] == "cuda:0"
    off = profile_json(f"{KERNELS}/memory.py::grow", tmp_path / "b", "--no-history", "--no-memory")
    assert "memory" not in off
    assert not any("memory" in line for line in off["lines"])
