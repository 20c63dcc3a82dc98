"""Issue 25's pure rules, pinned without a GPU: which functions are timed in a CUDA graph (the
launch-bound rule), the flush subtraction's arithmetic, the stability rule, the reasons a
capture failed, NVML readings from a stand-in (throttling and a clock drop are warnings, no
``pynvml`` is a clear note), the thermal wait, and the text the lens, hover and CLI show."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest

from kernel_lens.agent import gpu_clocks
from kernel_lens.analysis.lens_text import (
    hover_markdown,
    summary_lens_title,
    timing_policy_lines,
    timing_warning_short,
    timing_warning_text,
)
from kernel_lens.analysis.report_text import format_profile
from kernel_lens.analysis.timing_policy import (
    GRAPH_CALLS,
    capture_reason,
    clock_warnings,
    clocks_differ,
    graph_calls,
    graph_per_call_ms,
    graph_text,
    is_stable,
    kernels_us_per_call,
    launch_bound,
    make_policy,
    needs_cooldown,
    relative_stdev_pct,
    throttle_names,
)

# -- the launch-bound rule ------------------------------------------------------------------


def test_a_median_under_20_us_is_launch_bound() -> None:
    assert launch_bound(0.00358) == "median 3.58 µs < 20 µs"
    assert launch_bound(0.0199, kernels_us=19.0) == "median 19.9 µs < 20 µs"


def test_an_idle_device_is_launch_bound_even_above_20_us() -> None:
    # 100 small ops: 250 µs per call, the kernels 40 µs of it
    assert launch_bound(0.25, kernels_us=40.0) == (
        "device idle 84% of the call (kernels 40 µs of 250 µs)"
    )


def test_busy_kernels_above_20_us_are_not_launch_bound() -> None:
    assert launch_bound(0.192, kernels_us=190.0) is None
    assert launch_bound(0.192, kernels_us=96.0) is None  # exactly half: busy enough
    assert launch_bound(0.192) is None  # kernels unknown: only the median decides
    assert launch_bound(0.0) is None and launch_bound(math.nan) is None


def test_kernel_time_per_call_from_the_ops_stage() -> None:
    assert kernels_us_per_call({"accounting": {"device_us": 0.83}}) == 0.83
    assert kernels_us_per_call({"kernels": [{"device_us": 1.0}, {"device_us": 2.5}]}) == 3.5
    assert kernels_us_per_call({"kernels": [{"device_us": 1.0, "kind": "memcpy"}]}) is None
    assert kernels_us_per_call({}) is None


def test_graph_calls_shrink_for_many_kernels_per_call() -> None:
    assert graph_calls(None) == GRAPH_CALLS == graph_calls(1)
    assert graph_calls(100) == 40  # 4000 kernels at most
    assert graph_calls(10_000) == 10  # never under 10 calls


# -- the flush subtraction ------------------------------------------------------------------


def test_the_flush_only_graph_is_subtracted_per_retry() -> None:
    # 100 calls each after a 65 µs flush: 6.612 ms with the calls, 6.5 ms of flushes alone
    per_call = graph_per_call_ms([6.612, 6.62], [6.5, 6.5], 100)
    assert per_call == pytest.approx([0.00112, 0.0012])


def test_without_a_flush_nothing_is_subtracted() -> None:
    assert graph_per_call_ms([0.112, 0.11], [], 100) == pytest.approx([0.00112, 0.0011])


def test_a_flush_slower_than_the_total_is_clamped_to_zero_and_shapes_must_match() -> None:
    assert graph_per_call_ms([6.4], [6.5], 100) == [0.0]
    with pytest.raises(ValueError):
        graph_per_call_ms([1.0, 1.0], [0.5], 10)
    with pytest.raises(ValueError):
        graph_per_call_ms([1.0], [], 0)


# -- stability ------------------------------------------------------------------------------


def test_stable_is_a_relative_standard_deviation_under_2_percent() -> None:
    assert is_stable([1.0, 1.01, 0.99, 1.0])
    samples = [1.0, 1.03, 0.97, 1.0]  # σ 2.45% of the mean
    assert relative_stdev_pct(samples) == pytest.approx(2.449, abs=1e-3)
    assert not is_stable(samples)
    assert not is_stable([1.0])  # one sample says nothing
    assert relative_stdev_pct([0.0, 0.0]) is None


def test_the_policy_says_how_the_number_was_made() -> None:
    policy = make_policy(
        method="cuda-events", l2_flushed=True, reps=812, samples_ms=[1.0, 1.004, 0.996]
    )
    assert policy["l2"] == "cold" and policy["mode"] == "eager"
    assert policy["cpu_overhead"] == "included" and policy["stable"] is True
    assert (
        policy["text"]
        == "eager · L2 cold · CPU launch overhead included · 812 reps · stable (σ 0.4%)"
    )
    no_nvml = "GPU clocks not read: nvidia-ml-py (pynvml) is not installed"
    warm = make_policy(
        method="cuda-events", l2_flushed=False, reps=3, samples_ms=[1, 2, 3], nvml=no_nvml
    )
    assert warm["l2"] == "warm" and warm["stable"] is False and "nvml" in warm
    cpu = make_policy(method="perf-counter", l2_flushed=False, reps=3, samples_ms=[1, 1, 1])
    assert cpu["l2"] == "n/a" and cpu["cpu_overhead"] == "n/a"
    assert cpu["text"] == "eager · 3 reps · stable (σ 0.0%)"


# -- capture failures -----------------------------------------------------------------------


def test_capture_failures_get_a_short_reason() -> None:
    sync = RuntimeError("CUDA error: operation not permitted when stream is capturing\nmore")
    assert capture_reason(sync).startswith("host sync during capture (.item()")
    copy = RuntimeError("Cannot copy between CPU and CUDA tensors during CUDA graph capture")
    assert capture_reason(copy) == "a copy between CPU and CUDA memory during capture"
    gone = RuntimeError("CUDA error: operation failed due to a previous error during capture")
    assert capture_reason(gone).startswith("capture invalidated")
    other = ValueError("x" * 300)
    assert capture_reason(other).startswith("ValueError: xxx") and capture_reason(other)[-1] == "…"
    assert capture_reason(KeyError()) == "KeyError"


# -- NVML through a stand-in ----------------------------------------------------------------


class StandInNvml:
    """The few ``pynvml`` calls :func:`read_gpu` makes, answering from a script."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1

    def __init__(self, readings: list[dict[str, Any]]) -> None:
        self.readings = readings
        self.at = 0
        self.handles: list[int] = []

    def now(self) -> dict[str, Any]:
        return self.readings[min(self.at, len(self.readings) - 1)]

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802 - NVML's name
        self.handles.append(index)
        return f"gpu{index}"

    def nvmlDeviceGetClockInfo(self, handle: str, which: int) -> int:  # noqa: N802
        return int(self.now()["sm" if which == 1 else "mem"])

    def nvmlDeviceGetTemperature(self, handle: str, sensor: int) -> int:  # noqa: N802
        self.at += 1  # one reading per call of read_gpu: the temperature is read once
        return int(self.readings[min(self.at - 1, len(self.readings) - 1)]["temp"])

    def nvmlDeviceGetTemperatureThreshold(self, handle: str, which: int) -> int:  # noqa: N802
        return 87

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: str) -> int:  # noqa: N802
        return int(self.now().get("throttle", 0))

    def nvmlDeviceGetPowerUsage(self, handle: str) -> int:  # noqa: N802
        raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")


def test_a_reading_from_nvml() -> None:
    nvml = StandInNvml([{"sm": 1980, "mem": 3201, "temp": 41, "throttle": 0}])
    reading = gpu_clocks.read_gpu(0, nvml=nvml)
    assert reading == {
        "sm_mhz": 1980, "mem_mhz": 3201, "temperature_c": 41, "slowdown_c": 87,
        "throttle": 0, "power_w": None,  # not supported: None, never an exception
    }  # fmt: skip


def test_cuda_visible_devices_maps_to_the_nvml_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    nvml = StandInNvml([{"sm": 1, "mem": 1, "temp": 1}])
    gpu_clocks.read_gpu(1, nvml=nvml)
    assert nvml.handles == [5]


def test_a_clock_drop_while_timing_is_a_warning() -> None:
    before = {"sm_mhz": 1980, "mem_mhz": 3201, "throttle": 0}
    after = {"sm_mhz": 1410, "mem_mhz": 3201, "throttle": 0}
    assert clock_warnings(before, after) == ["SM clock dropped 29% while timing (1980 → 1410 MHz)"]
    assert clock_warnings(before, {**after, "sm_mhz": 1900}) == []  # 4%: within the rule


def test_thermal_or_power_throttling_is_a_warning_idle_is_not() -> None:
    before = {"sm_mhz": 1980, "throttle": 0x1}  # GPU idle: not a slowdown
    after = {"sm_mhz": 1980, "throttle": 0x20 | 0x4, "temperature_c": 84}
    assert throttle_names(0x1) == []
    assert clock_warnings(before, after) == [
        "GPU throttled while timing (power cap, thermal (software)) at 84 °C"
    ]
    assert clock_warnings(None, after) == []


def test_without_pynvml_the_note_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_clocks, "_STATE", {})
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    assert gpu_clocks.read_gpu(0) is None
    assert gpu_clocks.nvml_note() == "GPU clocks not read: nvidia-ml-py (pynvml) is not installed"


def test_nvml_that_does_not_start_is_a_note_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def nvmlInit(self) -> None:  # noqa: N802
            raise RuntimeError("Driver Not Loaded")

    monkeypatch.setattr(gpu_clocks, "_STATE", {})
    monkeypatch.setitem(sys.modules, "pynvml", Broken())
    assert gpu_clocks.read_gpu(0) is None
    assert "NVML did not start (RuntimeError: Driver Not Loaded)" in str(gpu_clocks.nvml_note())


def test_the_thermal_wait_waits_for_headroom_and_is_bounded() -> None:
    # slowdown at 87 °C: 80 °C leaves 7 °C (hot), wait until 47 °C (40 °C of headroom)
    nvml = StandInNvml([{"sm": 1, "mem": 1, "temp": t} for t in (80, 70, 55, 46)])
    now = [0.0]
    waited = gpu_clocks.thermal_wait(
        0, nvml=nvml, timeout_s=30, poll_s=1, sleep=lambda s: now.__setitem__(0, now[0] + s),
        clock=lambda: now[0],
    )  # fmt: skip
    assert waited == {"waited_s": 3.0, "from_c": 80, "to_c": 46, "cooled": True}
    nvml = StandInNvml([{"sm": 1, "mem": 1, "temp": 80}])
    now = [0.0]
    waited = gpu_clocks.thermal_wait(
        0, nvml=nvml, timeout_s=2, poll_s=1, sleep=lambda s: now.__setitem__(0, now[0] + s),
        clock=lambda: now[0],
    )  # fmt: skip
    assert waited is not None and waited["cooled"] is False and waited["waited_s"] == 2.0
    cool = StandInNvml([{"sm": 1, "mem": 1, "temp": 50}])
    assert gpu_clocks.thermal_wait(0, nvml=cool) is None


def test_needs_cooldown_without_a_slowdown_threshold() -> None:
    assert needs_cooldown({"temperature_c": 81})
    assert not needs_cooldown({"temperature_c": 75})
    assert needs_cooldown({"temperature_c": 75}, cooling=True)  # not yet 70
    assert not needs_cooldown(None) and not needs_cooldown({"temperature_c": None})


def test_runs_on_different_clocks_are_told_apart() -> None:
    a = {"before": {"sm_mhz": 1980}, "after": {"sm_mhz": 1980, "mem_mhz": 3201}}
    b = {"before": {"sm_mhz": 1410}, "after": {"sm_mhz": 1410, "mem_mhz": 3201}}
    assert clocks_differ(a, b) == "different GPU clocks (SM 1980 → 1410 MHz)"
    assert clocks_differ(a, a) is None
    assert clocks_differ(a, None) is None  # an older run without readings


# -- what the user reads --------------------------------------------------------------------

GRAPHED = {
    "median_ms": 0.00358,
    "spread_pct": 4.0,
    "reps": 812,
    "method": "cuda-events",
    "warnings": [],
    "warning": None,
    "policy": make_policy(
        method="cuda-events", l2_flushed=True, reps=812, samples_ms=[0.0035, 0.0036, 0.0037]
    ),
    "clocks": {
        "before": {"sm_mhz": 1980, "mem_mhz": 3201, "temperature_c": 34},
        "after": {"sm_mhz": 1980, "mem_mhz": 3201, "temperature_c": 35},
    },
    "graph": {
        "calls": 100,
        "why": "median 3.58 µs < 20 µs",
        "median_ms": 0.00112,
        "kernels_us": 0.83,
        "policy": {
            "text": "CUDA graph of 100 calls · L2 cold (flush in the graph, flush-only "
            "graph subtracted) · CPU launch overhead excluded · 10 replays"
        },
    },  # fmt: skip
}
RESULT = {
    "function": "add",
    "device": "NVIDIA H200",
    "device_kind": "cuda",
    "timing": GRAPHED,
    "kernels": [
        {
            "name": "add_kernel",
            "short_name": "add_kernel",
            "calls": 1,
            "device_us": 0.83,
            "lines": [5],
        }
    ],
    "lines": [
        {
            "line": 5,
            "source": "add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)",
            "device_us": 0.83,
            "ops": [
                {
                    "name": "add_kernel",
                    "dispatch": [],
                    "calls": 1,
                    "device_us": 0.83,
                    "cpu_us": 3.0,
                    "kernels": [
                        {
                            "name": "add_kernel",
                            "short_name": "add_kernel",
                            "device_us": 0.83,
                            "calls": 1,
                        }
                    ],
                }
            ],
        }
    ],  # fmt: skip
}


def test_the_graph_text_as_the_issue_writes_it() -> None:
    assert graph_text(GRAPHED) == "3.58 µs per call · 1.12 µs in a CUDA graph · kernels 0.83 µs"
    assert graph_text({"median_ms": 1.0}) is None
    cpu = {"median_ms": 1.0, "graph": {"reason": "not applicable on CPU"}}
    assert graph_text(cpu) is None  # said in the JSON, not on the lens


def test_the_lens_reads_per_call_graph_and_kernels() -> None:
    assert summary_lens_title(RESULT).startswith(
        "$(watch) 3.58 µs per call ±4.0% · 1.12 µs in a CUDA graph · kernels 0.83 µs · 1 kernel"
    )


def test_a_function_that_cannot_be_captured_keeps_its_eager_number() -> None:
    timing = {**GRAPHED, "graph": {"calls": 100, "why": "median 3.58 µs < 20 µs",
              "reason": "host sync during capture (.item(), .cpu(), .tolist(), a synchronize)",
              "kernels_us": 0.83}}  # fmt: skip
    title = summary_lens_title({**RESULT, "timing": timing})
    assert title.startswith("$(watch) 3.58 µs per call ±4.0% · no CUDA graph: host sync")
    assert graph_text(timing) == (
        "3.58 µs per call · not capturable in a CUDA graph: host sync during capture (.item(), "
        ".cpu(), .tolist(), a synchronize) · kernels 0.83 µs"
    )


def test_the_hover_says_how_each_time_was_made() -> None:
    hover = hover_markdown(RESULT, 5)
    assert hover is not None
    lines = timing_policy_lines(GRAPHED)
    assert (
        lines[1]
        == "Timed: eager · L2 cold · CPU launch overhead included · 812 reps · calls vary (σ 2.8%)"
    )
    assert lines[2] == (
        # the policy's text is stored data: its `<` is escaped so it can start no HTML
        "- 1.12 µs in a CUDA graph · kernels 0.83 µs (launch-bound: median 3.58 µs \\< 20 µs)"
    )
    assert lines[3].startswith("- graph: CUDA graph of 100 calls · L2 cold (flush in the graph")
    assert lines[4] == "- GPU: SM 1980 MHz · memory 3201 MHz · 34 → 35 °C"
    assert all(line in hover for line in lines[1:])
    assert timing_policy_lines({"median_ms": 1.0}) == []  # an older result: nothing invented


def test_the_cli_report_has_the_policy_and_graph_rows() -> None:
    text = format_profile({**RESULT, "path": "v.py", "def_line": 3,
                           "timing": {**GRAPHED, "min_ms": 0.0034}})  # fmt: skip
    assert "how    eager · L2 cold · CPU launch overhead included · 812 reps" in text
    cpu = {
        **RESULT,
        "path": "v.py",
        "def_line": 3,
        "device_kind": "cpu",
        "timing": {**GRAPHED, "min_ms": 0.0034, "graph": {"reason": "not applicable on CPU"}},
    }
    assert "graph  " not in format_profile(cpu)  # fmt: skip
    assert (
        "graph  1.12 µs per call in a CUDA graph of 100 calls (launch-bound: median 3.58 µs < "
        "20 µs) · kernels 0.83 µs" in text
    )


def test_a_clock_warning_reaches_the_lens_and_the_hover() -> None:
    timing = {**GRAPHED, "warnings": ["SM clock dropped 29% while timing (1980 → 1410 MHz)"]}
    assert timing_warning_short(timing) == "clock dropped"
    assert timing_warning_text(timing) == "SM clock dropped 29% while timing (1980 → 1410 MHz)"
    throttled = {**GRAPHED, "warnings": ["GPU throttled while timing (power cap) at 84 °C"]}
    assert timing_warning_short(throttled) == "GPU throttled"
    assert "$(warning) GPU throttled" in summary_lens_title({**RESULT, "timing": throttled})
