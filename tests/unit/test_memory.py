"""Memory on the line (issue 29), read from what an H200 recorded (``tests/data/h200/training/``):
a ``profile_memory`` trace of ``kernels/train_step.py::train_step`` (batch 1024, 512 → 2048 →
512, fp32), and allocator snapshots of an out-of-memory; plus the words they are shown in.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.compare import compare_memory, summary_delta
from kernel_lens.analysis.lens_text import error_lens_title, line_lens_title, summary_lens_title
from kernel_lens.analysis.memory import attribute_memory, format_bytes, oom_from_snapshot
from kernel_lens.analysis.memory_text import live_group_text, oom_lines
from kernel_lens.history import make_entry

DATA = Path(__file__).resolve().parents[1] / "data" / "h200" / "training"
KERNELS = Path(__file__).resolve().parents[2] / "kernels"
MIB = 1 << 20
#: The recorded step's lines (kernels/train_step.py at the recording).
FIRST, LAST = 43, 49
OUT, LOSS, ZERO, BACKWARD = 44, 45, 46, 47


def _facts() -> dict[str, Any]:
    return json.loads((DATA / "memory_facts.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def step() -> tuple[dict[int, list[dict[str, Any]]], dict[str, Any]]:
    trace = json.loads((DATA / "memory_step-trace.json").read_text())
    source = (KERNELS / "train_step.py").read_text().splitlines()
    per_line, memory = attribute_memory(
        trace, runs=1, source_of=lambda n: source[n - 1].strip(), first_line=FIRST, last_line=LAST
    )
    assert memory is not None
    return per_line, memory


def test_the_peak_is_the_allocators_max_memory_allocated(step: Any) -> None:
    _, memory = step
    (dev,) = memory["devices"]
    assert dev["device"] == "cuda:0" and dev["label"] == "GPU 0"
    # the same step measured by torch.cuda.max_memory_allocated() on the H200: to the byte
    assert dev["peak_bytes"] == _facts()["max_memory_allocated"] == 128998400
    # reached while loss.backward() ran, by the backward of `out = model(x)`
    assert (dev["peak_line"], dev["peak_host_line"], dev["peak_in_backward"]) == (
        OUT,
        BACKWARD,
        True,
    )


def test_each_line_carries_what_it_allocated_and_the_backward_lands_on_the_forward_line(
    step: Any,
) -> None:
    per_line, _ = step
    (out,) = per_line[OUT]
    # the forward's activations (1024×2048 fp32 = 8 MiB, twice; 1024×512 = 2 MiB) and the
    # gradients its backward made (weights 4 MiB ×2, activations 8 MiB ×2 …)
    assert out["allocated_bytes"] == 65022976
    assert out["backward_allocated_bytes"] == 46148608
    assert out["allocated_bytes"] - out["backward_allocated_bytes"] == 18874368  # 18 MiB forward
    assert out["freed_bytes"] == 56624128
    (loss,) = per_line[LOSS]
    assert loss["backward_allocated_bytes"] == 2 * MIB  # MseLossBackward0: d out, 2 MiB
    # zero_grad(set_to_none=True) frees the previous step's gradients and allocates nothing
    (zero,) = per_line[ZERO]
    assert zero["allocated_bytes"] == 0 and zero["freed_bytes"] == 8398848
    # the backward's allocations are not on the loss.backward() line: only its seed is
    (bwd,) = per_line[BACKWARD]
    assert bwd["allocated_bytes"] == 512


def test_what_was_alive_at_the_peak_is_grouped_by_line_largest_first(step: Any) -> None:
    _, memory = step
    (dev,) = memory["devices"]
    rows = dev["live_at_peak"]
    assert [r["bytes"] for r in rows] == sorted((r["bytes"] for r in rows), reverse=True)
    first = rows[0]
    assert (first["line"], first["source"], first["bytes"], first["kind"]) == (
        OUT,
        "out = model(x)",
        18 * MIB,
        "saved for backward",
    )
    assert {r.get("kind") for r in rows if r["line"] == OUT} == {"saved for backward", "backward"}
    # what no profiled allocation explains was there before: parameters, momentum, x, y
    tracked = sum(r["bytes"] for r in rows) + dev["outside_bytes"]
    assert dev["before_bytes"] == dev["peak_bytes"] - tracked == 89149440
    assert live_group_text(first) == "18 MiB from line 44 (out = model(x)) · saved for backward"
    # the memory lane's points hold the peak, on the timeline's clock past the trace's start
    assert max(b for _, b in dev["timeline"]) == dev["peak_bytes"]
    assert dev["timeline"][0][0] == 0 and 0 < dev["timeline_offset_us"] < 10_000


def test_a_trace_without_profile_memory_has_no_memory() -> None:
    trace = json.loads((DATA / "train_step-train_step-trace.json").read_text())
    assert attribute_memory(trace, runs=3) == ({}, None)


def test_an_out_of_memory_says_what_was_alive_by_line_and_the_allocation_that_failed() -> None:
    facts = _facts()
    snapshot = pickle.loads((DATA / "memory_oom.pickle").read_bytes())
    script = "/work/main/benchmarks/record_memory.py"  # the recorder's path on the H200
    oom = oom_from_snapshot(
        snapshot,
        path=script,
        first_line=22,
        last_line=72,
        source_of=lambda n: "held.append(…)" if n == 62 else "",
        device=facts["oom"]["device"],
        failed_bytes=facts["oom"]["alloc"],
    )
    assert oom["failed_bytes"] == 1 << 30
    assert oom["failed_line"] == 62
    assert oom["device_free_bytes"] == facts["oom"]["free"]
    # 138 chunks of 1 GiB held by line 62 when the 139th failed
    top = oom["live_by_line"][0]
    assert (top["line"], top["bytes"]) == (62, facts["held_gib"] << 30)
    assert oom["live_bytes"] == top["bytes"] + oom["no_frame_bytes"]
    assert error_lens_title({"kind": "runtime", "message": "x", "memory": oom}) == (
        "$(warning) Profile failed: out of memory on GPU 0 allocating 1 GiB · 138 GiB alive, "
        "138 GiB from line 62"
    )
    assert oom_lines(oom)[1] == "  138 GiB from line 62 (held.append(…))"


def test_the_snapshot_of_a_step_has_no_oom_and_no_frames_of_another_file() -> None:
    snapshot = pickle.loads((DATA / "memory_step.pickle").read_bytes())
    oom = oom_from_snapshot(snapshot, path="/elsewhere.py", device=0)
    assert oom["failed_bytes"] is None and oom["live_by_line"] == []
    assert oom["no_frame_bytes"] == oom["live_bytes"] > 0


@pytest.mark.parametrize(
    ("n", "sign", "text"),
    [
        (64 * MIB, True, "+64 MiB"),
        (int(1.2 * (1 << 30)), False, "1.2 GiB"),
        (-2048, True, "\u22122 KiB"),
        (512, False, "512 B"),
        (0, True, "+0 B"),
        (int(10.5 * MIB), False, "10.5 MiB"),
    ],
)
def test_bytes_read_in_binary_units(n: int, sign: bool, text: str) -> None:
    assert format_bytes(n, sign=sign) == text


def _result(peak: int, *, device: str = "cuda:0") -> dict[str, Any]:
    return {
        "function": "f",
        "device": "NVIDIA H200",
        "device_kind": "cuda",
        "timing": {"median_ms": 1.0, "spread_pct": 0.1, "reps": 10},
        "lines": [
            {
                "line": 3,
                "source": "h = self.fc1(x)",
                "ops": [],
                "memory": [
                    {
                        "device": device,
                        "allocated_bytes": 64 * MIB,
                        "freed_bytes": 0,
                        "live_bytes": int(1.2 * (1 << 30)),
                    }
                ],
            }
        ],
        "kernels": [],
        "memory": {
            "devices": [
                {
                    "device": device,
                    "label": "GPU 0",
                    "peak_bytes": peak,
                    "peak_line": 3,
                    "peak_in_backward": False,
                    "peak_host_line": 3,
                    "live_at_peak": [],
                    "outside_bytes": 0,
                    "before_bytes": 0,
                    "timeline": [],
                }
            ],
            "source": "profile_memory",
        },
    }


def test_the_lens_says_what_a_line_allocated_and_the_live_total() -> None:
    result = _result(int(1.9 * (1 << 30)))
    assert line_lens_title(result["lines"][0], cuda=True) == "$(database) +64 MiB · live 1.2 GiB"
    assert "peak 1.9 GiB at line 3 · NVIDIA H200" in summary_lens_title(result)


def test_a_cpu_line_is_labelled_cpu() -> None:
    result = _result(48 * MIB, device="cpu")
    assert line_lens_title(result["lines"][0], cuda=False) == (
        "$(database) CPU +64 MiB · live 1.2 GiB"
    )


def test_a_peaks_change_is_said_with_its_figures_and_no_change_is_not() -> None:
    before, after = _result(int(1.9 * (1 << 30))), _result(int(1.2 * (1 << 30)))
    (delta,) = compare_memory(before, after)
    assert delta["text"] == "peak \u221237% (1.9 \u2192 1.2 GiB)"
    assert delta["before_bytes"] - delta["after_bytes"] == int(1.9 * (1 << 30)) - int(
        1.2 * (1 << 30)
    )
    assert compare_memory(before, before) == []
    assert compare_memory({"lines": []}, after) == []  # the earlier run had no memory
    with_comparison = {**after, "comparison": {"verdict": {"text": "≈ same"}, "memory": [delta]}}
    assert summary_delta(with_comparison) == "≈ same · peak \u221237% (1.9 \u2192 1.2 GiB)"


def test_the_history_keeps_each_devices_peak_not_the_lists() -> None:
    entry = make_entry(_result(48 * MIB), text=["def f(x):"])
    (dev,) = entry["memory"]["devices"]
    assert dev["peak_bytes"] == 48 * MIB and dev["peak_line"] == 3
    assert "timeline" not in dev and "live_at_peak" not in dev
    # and an entry compares as a result does
    assert compare_memory(entry, _result(24 * MIB))[0]["change_pct"] == -50.0


def test_an_out_of_memory_crosses_the_envelope_and_reads_in_the_diagnostic() -> None:
    from kernel_lens.lsp.profiling import _error_diagnostic
    from kernel_lens.wire.envelope import error_from_object, error_object
    from kernel_lens.wire.errors import ProfileError

    snapshot = pickle.loads((DATA / "memory_oom.pickle").read_bytes())
    oom = oom_from_snapshot(snapshot, path="/work/main/benchmarks/record_memory.py", device=0)
    err = ProfileError("runtime", "fill raised OutOfMemoryError: CUDA out of memory.", 62)
    err.memory = oom
    back = error_from_object(json.loads(json.dumps(error_object(err))))
    assert back.memory == oom
    lines = ["x"] * 70
    diagnostic = _error_diagnostic(back, lines, 1)
    assert diagnostic.range.start.line == 61
    assert diagnostic.message.splitlines()[1] == (
        "out of memory on GPU 0 allocating 1 GiB; 138 GiB alive, 138 GiB from line 62 "
        "(the failed allocation: line 62):"
    )
    # without memory, the message is as it was
    plain = ProfileError("runtime", "boom", 3)
    assert error_from_object(error_object(plain)).memory is None
    assert "\n" not in _error_diagnostic(plain, lines, 1).message


def test_a_lines_allocation_change_is_in_its_delta_only_when_both_runs_had_memory() -> None:
    from kernel_lens.analysis.compare import compare_results

    before, after = _result(48 * MIB), _result(48 * MIB)
    after["lines"][0]["memory"][0]["allocated_bytes"] = 16 * MIB
    (delta,) = compare_results(before, after)["lines"]
    assert delta["text"] == "alloc +64 MiB → +16 MiB"
    assert (delta["alloc_before_bytes"], delta["alloc_after_bytes"]) == (64 * MIB, 16 * MIB)
    # a line that stopped allocating in a run with memory: it has no entry, and that is 0
    del after["lines"][0]["memory"]
    (delta,) = compare_results(before, after)["lines"]
    assert delta["text"] == "alloc +64 MiB → +0 B"
    # an earlier run without memory compares no allocations
    plain = {k: v for k, v in before.items() if k != "memory"}
    (delta,) = compare_results(plain, after)["lines"]
    assert delta["text"] is None and "alloc_before_bytes" not in delta


def test_an_out_of_memory_is_in_the_failed_functions_hover() -> None:
    from kernel_lens.analysis.error_actions import error_markdown

    snapshot = pickle.loads((DATA / "memory_oom.pickle").read_bytes())
    oom = oom_from_snapshot(snapshot, path="/work/main/benchmarks/record_memory.py", device=0)
    error = {"kind": "runtime", "message": "fill raised OutOfMemoryError", "memory": oom}
    text = error_markdown(error, function="fill", path=None, links=[])
    assert "  138 GiB from line 62" in text
    assert "out of memory on GPU 0 allocating 1 GiB" in text


def test_memory_recorded_by_default_follows_the_time_and_asked_for_leads() -> None:
    line = {
        "line": 3,
        "source": "y = x * 2",
        "device_us": 188.0,
        "ops": [
            {
                "name": "aten::mul",
                "dispatch": [],
                "calls": 1,
                "device_us": 188.0,
                "kernels": [
                    {
                        "name": "vectorized_elementwise_kernel",
                        "short_name": "vectorized_elementwise_kernel",
                        "device_us": 188.0,
                        "calls": 1,
                    }
                ],
            }
        ],
        "memory": [
            {
                "device": "cuda:0",
                "allocated_bytes": 64 * MIB,
                "freed_bytes": 0,
                "live_bytes": 128 * MIB,
            }
        ],
    }
    asked = line_lens_title(line, cuda=True)
    assert asked is not None and asked.startswith(
        "$(database) +64 MiB · live 128 MiB  |  aten::mul"
    )
    auto = line_lens_title(line, cuda=True, memory_first=False)
    assert auto is not None and auto.startswith("aten::mul")
    assert auto.endswith("  |  $(database) +64 MiB · live 128 MiB")
