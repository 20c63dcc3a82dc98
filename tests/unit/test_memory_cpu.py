"""Memory on the line on CPU torch, with the real profiler (``profile_memory=True``): exact bytes
of a function with known tensor sizes, its peak line, and a CPU training step whose saved
activations are on its forward lines (the CPU allocator's figures, labelled CPU).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KERNELS, run_cli

torch = pytest.importorskip("torch")

from kernel_lens.agent.stages.ops import profile_pass  # noqa: E402
from kernel_lens.analysis.memory import attribute_memory  # noqa: E402

MIB = 1 << 20


def _line(result: dict[str, Any], start: str) -> dict[str, Any]:
    return next(x for x in result["lines"] if x["source"].startswith(start))


def _cpu(line: dict[str, Any]) -> dict[str, Any]:
    (entry,) = line["memory"]
    assert entry["device"] == "cpu"
    return entry  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def grow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    trace_dir = tmp_path_factory.mktemp("traces")
    code, out, err = run_cli(
        "profile", f"{KERNELS}/memory.py::grow", "--json", "--memory", "--no-history",
        "--no-samples", "--trace-dir", str(trace_dir), "--stages", "timing,ops",
    )  # fmt: skip
    assert code == 0, (out, err)
    return out  # type: ignore[no-any-return]


@pytest.mark.slow
def test_each_line_shows_the_exact_bytes_it_allocated_and_freed(grow: dict[str, Any]) -> None:
    a = _cpu(_line(grow, "a = torch.ones"))
    assert (a["allocated_bytes"], a["freed_bytes"], a["live_bytes"]) == (16 * MIB, 0, 16 * MIB)
    b = _cpu(_line(grow, "b = torch.ones"))
    assert (b["allocated_bytes"], b["live_bytes"]) == (8 * MIB, 24 * MIB)
    c = _cpu(_line(grow, "c = torch.cat"))
    assert (c["allocated_bytes"], c["live_bytes"]) == (24 * MIB, 48 * MIB)
    # a line that runs no op still frees: `del a`
    freed = _cpu(_line(grow, "del a"))
    assert (freed["allocated_bytes"], freed["freed_bytes"], freed["live_bytes"]) == (
        0,
        16 * MIB,
        32 * MIB,
    )


def test_the_peak_is_on_the_cat_line_with_what_was_alive_by_line(grow: dict[str, Any]) -> None:
    (dev,) = grow["memory"]["devices"]
    assert (dev["device"], dev["label"]) == ("cpu", "CPU")
    assert dev["peak_bytes"] == 48 * MIB
    assert dev["peak_line"] == _line(grow, "c = torch.cat")["line"]
    alive = [(r["source"].split(" =")[0], r["bytes"]) for r in dev["live_at_peak"]]
    assert alive == [("c", 24 * MIB), ("a", 16 * MIB), ("b", 8 * MIB)]


@pytest.mark.slow
def test_the_cli_text_shows_the_lines_memory_and_the_peak(tmp_path: Path) -> None:
    code, out, err = run_cli(
        "profile", f"{KERNELS}/memory.py::grow", "--memory", "--no-history", "-q",
        "--trace-dir", str(tmp_path), "--stages", "timing,ops",
    )  # fmt: skip
    assert code == 0, err
    assert "CPU +24 MiB · live 48 MiB" in out
    assert "peak CPU: 48 MiB at line" in out
    assert "24 MiB from line" in out


@pytest.mark.slow
def test_without_memory_a_profile_has_no_memory_keys(tmp_path: Path) -> None:
    # The default (neither --memory nor --no-memory) records memory on CUDA only: a CPU run
    # is left alone, since the CPU allocator's recording costs more than 10% (benchmarks).
    code, out, err = run_cli(
        "profile", f"{KERNELS}/memory.py::grow", "--json", "--no-history", "--no-samples",
        "--trace-dir", str(tmp_path), "--stages", "ops",
    )  # fmt: skip
    assert code == 0, err
    assert "memory" not in out
    assert not any("memory" in line for line in out["lines"])


def test_a_cpu_training_steps_saved_activations_are_on_its_forward_lines(tmp_path: Path) -> None:
    sys.path.insert(0, str(KERNELS))
    try:
        import train_step as mod
    finally:
        sys.path.remove(str(KERNELS))
    batch, dim, hidden = 64, 32, 128
    model, opt, x, y = mod.make(batch=batch, dim=dim, hidden=hidden)
    step = mod.train_step
    step(model, opt, x, y)
    passed = profile_pass(
        lambda: step(model, opt, x, y), step.__code__, device="cpu", runs=2,
        trace_dir=str(tmp_path), memory=True,
    )  # fmt: skip
    import inspect

    lines, first = inspect.getsourcelines(step)
    number = {text.strip(): first + i for i, text in enumerate(lines)}
    out_line, backward_line = number["out = model(x)"], number["loss.backward()"]
    per_line, memory = attribute_memory(
        passed.trace, runs=passed.runs, first_line=first, last_line=first + len(lines) - 1
    )
    assert memory is not None
    (out,) = per_line[out_line]
    # the forward made fc1's output and the gelu's (batch × hidden fp32 each) and fc2's
    activations = 2 * batch * hidden * 4 + batch * dim * 4
    assert out["allocated_bytes"] - out.get("backward_allocated_bytes", 0) == activations
    # the backward of those ops allocated on the forward line, not on loss.backward()
    assert out["backward_allocated_bytes"] > 0
    assert per_line[backward_line][0].get("backward_allocated_bytes", 0) == 0
    (dev,) = memory["devices"]
    assert dev["peak_in_backward"] and dev["peak_host_line"] == backward_line
    saved = [r for r in dev["live_at_peak"] if r.get("kind") == "saved for backward"]
    assert saved and saved[0]["line"] == out_line
    assert saved[0]["bytes"] == activations


@pytest.mark.slow
def test_a_whole_script_with_memory_puts_its_allocations_on_its_lines(tmp_path: Path) -> None:
    script = tmp_path / "alloc.py"
    script.write_text("import torch\na = torch.ones(1 << 20)\nb = torch.ones(1 << 19)\ndel a\n")
    code, out, err = run_cli(
        "profile", str(script), "--json", "--memory", "--trace-dir", str(tmp_path / "t"),
    )  # fmt: skip
    assert code == 0, (out, err)
    by_line = {x["line"]: _cpu(x) for x in out["lines"] if x.get("memory")}
    assert by_line[2]["allocated_bytes"] == 4 * MIB
    assert by_line[3]["allocated_bytes"] == 2 * MIB
    assert by_line[4]["freed_bytes"] == 4 * MIB
    assert out["memory"]["devices"][0]["peak_bytes"] == 6 * MIB
