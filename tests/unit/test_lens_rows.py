"""The row layout of the lenses (``analysis/lens_rows.py``, pure): which actions a function's
row offers before and after a run, which are disabled and why, what goes behind ``More…``."""

from __future__ import annotations

from typing import Any

from kernel_lens.analysis.document_model import analyze
from kernel_lens.analysis.lens_rows import (
    MAX_ROW_ACTIONS,
    MORE_TITLE,
    PROFILING_TITLE,
    Lens,
    before_run_row,
    kernel_row,
    more_actions,
    result_row,
    running_row,
)
from kernel_lens.analysis.lens_targets import LensTarget
from kernel_lens.wire.lsp import CMD_MORE_ACTIONS, CMD_PROFILE, CMD_SHOW_ASSEMBLY

URI = "file:///w/k.py"
SOURCE = (
    "import torch\n\ndef f(x, BLOCK: int = 128):\n    k[(1,)](x, BLOCK)\n    return torch.relu(x)\n"
)


def _target(show_all: bool = True) -> LensTarget:
    model = analyze(SOURCE, show_all=show_all)
    return next(t for t in model.targets if t.info.qualname == "f")


def _labels(actions: list[dict[str, Any]]) -> list[str]:
    return [a["label"] for a in actions]


def _result(device: str = "NVIDIA H200", kind: str = "cuda") -> dict[str, Any]:
    return {
        "function": "f",
        "device": device,
        "device_kind": kind,
        "timing": {"median_ms": 0.2, "spread_pct": 0.3, "reps": 100},
        "lines": [],
        "kernels": [],
    }


def test_before_a_run_the_row_is_profile_and_two_actions_then_more() -> None:
    target = _target()
    row = before_run_row(URI, target, [])
    assert row[0] == Lens(2, "$(play) Profile", CMD_PROFILE, [{"uri": URI, "function": "f"}])
    shown = [lens for lens in row[1:] if lens.command != CMD_MORE_ACTIONS]
    assert len(shown) == MAX_ROW_ACTIONS
    assert row[-1].title == MORE_TITLE
    rest = row[-1].arguments[0]["items"]  # type: ignore[index]
    assert _labels(rest)[-1] == "$(zap) Eager vs Compiled"


def test_after_a_cpu_run_the_gpu_actions_are_listed_disabled_with_why() -> None:
    actions = more_actions(URI, _target(), _result("cpu", "cpu"), ncu_ok=False)
    disabled = {a["label"]: a["disabled"] for a in actions if "disabled" in a}
    assert set(disabled) == {"$(pulse) Nsight Compute", "$(shield) Check Memory"}
    assert all("needs an NVIDIA GPU" in why for why in disabled.values())
    assert _labels(actions)[0] == "$(graph) Report"
    assert _labels(actions)[-1] == "$(pinned) Set as Baseline"


def test_a_kernel_run_by_the_interpreter_offers_no_torch_compile() -> None:
    actions = more_actions(URI, _target(), _result("Triton interpreter (CPU)", "cpu"))
    disabled = [a["label"] for a in actions if "disabled" in a]
    assert "$(symbol-namespace) Generated Code" in disabled
    assert "$(zap) Eager vs Compiled" in disabled
    # before a run nothing is known of the device: both are offered
    assert not [a for a in more_actions(URI, _target(), None) if "disabled" in a]


def test_after_a_run_the_row_is_summary_reprofile_report_and_more() -> None:
    row = result_row(URI, _target(), _result(), budget_ms=500.0, ranks=[])
    titles = [lens.title for lens in row]
    assert titles[0] == "$(watch) 0.200 ms ±0.3% · 0 kernels · NVIDIA H200"
    assert titles[1] == "$(refresh) Re-profile"
    assert titles[2] == "$(graph) Report"
    assert titles[3] == MORE_TITLE and len(row) == 4
    restored = result_row(URI, _target(), {**_result(), "restored": "t"}, budget_ms=500, ranks=[])
    assert restored[0].title.startswith("$(history) ")


def test_a_running_profile_is_one_spinner_until_its_lines_can_be_placed() -> None:
    assert running_row(2, None, "", None) == [Lens(2, PROFILING_TITLE)]
    assert running_row(2, _result(), "timing", None) == [Lens(2, PROFILING_TITLE)]
    placed = running_row(2, _result(), "timing", lambda line: int(line))
    assert len(placed) == 1 and placed[0].title != PROFILING_TITLE


def test_a_kernel_row_says_its_last_compile() -> None:
    info = _target().info
    plain = kernel_row(URI, info, None, None)
    assert (
        plain[0].title == "$(file-binary) Show Assembly" and plain[0].command == CMD_SHOW_ASSEMBLY
    )
    compiled = kernel_row(
        URI, info, None, {"registers": 32, "spills": 0, "arch": "sm_90", "types_from": "user"}
    )
    assert compiled[0].title == "$(file-binary) PTX · 32 regs · 0 spills · sm_90 · types picked"
    assert compiled[-1].title == MORE_TITLE
