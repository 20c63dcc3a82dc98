"""Line attribution at its edges: the JSON's rounding, what is skipped, launches found by their
external id, range names with a file, kernels sorted by time."""

from __future__ import annotations

from typing import Any

from kernel_lens.analysis.line_attribution import (
    LINE_RANGE_RE,
    KernelStat,
    attribute_lines,
    line_range_name,
)


def _x(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
    ev: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur}
    ev.update(pid=1, tid=1)
    if args:
        ev["args"] = args
    return ev


def _device(name: str, ts: float, dur: float, cat: str = "kernel", **args: Any) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 0,
        "tid": 7,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def test_range_names() -> None:
    assert line_range_name(12) == "src:12"
    assert LINE_RANGE_RE.match("src:12")["line"] == "12"  # type: ignore[index]
    assert LINE_RANGE_RE.match("src:/w/a.py:12")["line"] == "12"  # type: ignore[index]
    assert LINE_RANGE_RE.match("src:12x") is None
    assert LINE_RANGE_RE.match("xsrc:12") is None


def test_json_rounds_to_three_decimals_and_counts_are_ints_when_whole() -> None:
    events = [
        _x("user_annotation", "src:3", 0, 10.12345),
        _x("cpu_op", "aten::mul", 1, 5.55555, **{"External id": 4}),
        _x("cuda_runtime", "cudaLaunchKernel", 2, 1, correlation=9),
        _device("k_small", 100, 1.23456, correlation=9),
        _device("k_big", 110, 2.5, correlation=9),
        _device("Memset (Device)", 120, 0.5, cat="gpu_memset", correlation=9),
    ]
    lines, _ = attribute_lines({"traceEvents": events}, runs=3)
    out = lines[3].to_json("y = x * 2")
    assert out == {
        "line": 3,
        "source": "y = x * 2",
        "hits": 0.333,
        "cpu_us": round(10.12345 / 3, 3),
        "device_us": round((1.23456 + 2.5 + 0.5) / 3, 3),
        "ops": [
            {
                "name": "aten::mul",
                "calls": 0.333,
                "cpu_us": round(5.55555 / 3, 3),
                "device_us": round((1.23456 + 2.5 + 0.5) / 3, 3),
                "dispatch": [],
                "kernels": [
                    {
                        "name": "k_big",
                        "short_name": "k_big",
                        "device_us": round(2.5 / 3, 3),
                        "calls": 0.333,
                        "kind": "kernel",
                    },
                    {
                        "name": "k_small",
                        "short_name": "k_small",
                        "device_us": round(1.23456 / 3, 3),
                        "calls": 0.333,
                        "kind": "kernel",
                    },
                    {
                        "name": "Memset (Device)",
                        "short_name": "Memset (Device)",
                        "device_us": round(0.5 / 3, 3),
                        "calls": 0.333,
                        "kind": "memset",
                    },
                ],
            }
        ],
    }
    whole, _ = attribute_lines({"traceEvents": events}, runs=1)
    assert whole[3].to_json()["hits"] == 1 and isinstance(whole[3].to_json()["hits"], int)
    assert whole[3].to_json()["source"] == ""
    # runs below one count as one.
    zero, _ = attribute_lines({"traceEvents": events}, runs=0)
    assert zero[3].to_json() == whole[3].to_json()


def test_launch_found_by_external_id_when_no_runtime_call_has_its_correlation() -> None:
    events = [
        _x("user_annotation", "src:5", 0, 50),
        _x("cpu_op", "aten::add", 10, 20, **{"External id": 77}),
        _x("cpu_op", "aten::copy_", 40, 5, **{"External id": 77}),  # the first one wins
        _device("add_kernel", 100, 4.0, correlation=1, **{"External id": 77}),
        # Neither a correlation nor an external id that is known: unattributed.
        _device("stray", 200, 3.0, correlation=2, **{"External id": 78}),
        _device("stray", 210, 5.0),
    ]
    lines, unattributed = attribute_lines({"traceEvents": events})
    assert list(lines[5].ops["aten::add"].kernels) == ["add_kernel"]
    assert [(k.name, k.device_us, k.calls) for k in unattributed] == [("stray", 8.0, 2)]


def test_events_that_are_not_complete_are_ignored() -> None:
    events: list[Any] = [
        _x("user_annotation", "src:1", 0, 30),
        _x("cpu_op", "aten::relu", 5, 10),
        {"ph": "B", "cat": "cpu_op", "name": "aten::begin", "ts": 6, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::no_dur", "ts": 7, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::no_ts", "dur": 1, "pid": 1, "tid": 1},
        "not an event",
        _x("python_function", "f", 8, 1),
    ]
    lines, _ = attribute_lines({"traceEvents": events})
    assert list(lines[1].ops) == ["aten::relu"]
    assert attribute_lines({}) == ({}, [])


def test_threads_nest_separately() -> None:
    # An op on another thread (or another process) inside the line range's time is not on the
    # line.
    other_thread = _x("cpu_op", "aten::other_thread", 15, 5)
    other_thread["tid"] = 2
    other_process = _x("cpu_op", "aten::other_process", 22, 5)
    other_process["pid"] = 2
    events = [
        _x("user_annotation", "src:1", 0, 30),
        _x("cpu_op", "aten::mine", 5, 5),
        other_thread,
        other_process,
    ]
    lines, _ = attribute_lines({"traceEvents": events})
    assert list(lines[1].ops) == ["aten::mine"]


def test_same_start_the_longer_event_is_the_parent() -> None:
    # The op and the line range start together: the longer one (the range) contains the other.
    events = [_x("cpu_op", "aten::mul", 0, 10), _x("user_annotation", "src:2", 0, 20)]
    lines, _ = attribute_lines({"traceEvents": events})
    assert list(lines[2].ops) == ["aten::mul"]


def test_unattributed_sorted_by_device_time() -> None:
    events = [
        _device("a", 0, 1.0),
        _device("b", 10, 5.0),
        _device("c", 20, 3.0),
        _device("Memcpy HtoD (Pageable -> Device)", 30, 2.0, cat="gpu_memcpy"),
    ]
    _, unattributed = attribute_lines({"traceEvents": events})
    assert [k.name for k in unattributed] == ["b", "c", "Memcpy HtoD (Pageable -> Device)", "a"]
    assert unattributed[2].kind == "memcpy"
    assert KernelStat("k").to_json()["calls"] == 0


def test_an_event_without_a_time_is_skipped_and_the_rest_still_read() -> None:
    events: list[Any] = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::no_ts", "dur": 1, "pid": 1, "tid": 1},
        _x("user_annotation", "src:1", 0, 30),
        _x("cpu_op", "aten::relu", 5, 10),
    ]
    lines, _ = attribute_lines({"traceEvents": events})
    assert list(lines) == [1] and list(lines[1].ops) == ["aten::relu"]


def test_a_runtime_call_without_a_correlation_is_no_launcher() -> None:
    events = [
        _x("user_annotation", "src:2", 0, 30),
        _x("cuda_runtime", "cudaStreamSynchronize", 5, 10),  # no args at all
        _x("cpu_op", "aten::mul", 20, 5, correlation=4),  # not a runtime call: no launcher
        _device("k", 100, 2.0, correlation=4),
    ]
    lines, unattributed = attribute_lines({"traceEvents": events})
    assert list(lines[2].ops) == ["aten::mul"] and lines[2].ops["aten::mul"].kernels == {}
    assert lines[2].device_us == 0.0
    assert [(k.name, k.device_us) for k in unattributed] == [("k", 2.0)]


def test_a_launch_whose_external_id_is_the_line_range_is_on_that_line() -> None:
    # A launch inside the line's range but outside any op: the profiler gives the kernel the
    # range's own external id.
    events = [
        _x("user_annotation", "src:4", 0, 30, **{"External id": 9}),
        _device("triton_poi_fused_0", 100, 3.0, correlation=5, **{"External id": 9}),
    ]
    lines, unattributed = attribute_lines({"traceEvents": events})
    assert unattributed == []
    assert lines[4].device_us == 3.0
    assert [k.name for op in lines[4].ops.values() for k in op.kernels.values()] == [
        "triton_poi_fused_0"
    ]


def test_an_op_around_the_line_range_is_not_the_lines_op() -> None:
    # The profiled function called from inside an op (a custom op calling back into Python):
    # the line's ops are those inside its range, not the one around it.
    events = [
        _x("cpu_op", "custom::outer", 0, 100),
        _x("user_annotation", "src:6", 10, 50),
        _x("cpu_op", "aten::mul", 20, 10),
        _x("cuda_runtime", "cudaLaunchKernel", 22, 2, correlation=3),
        _device("mul_kernel", 200, 4.0, correlation=3),
    ]
    lines, unattributed = attribute_lines({"traceEvents": events})
    assert unattributed == []
    assert list(lines[6].ops) == ["aten::mul"]
    mul = lines[6].ops["aten::mul"]
    assert (mul.calls, mul.device_us, list(mul.kernels)) == (1, 4.0, ["mul_kernel"])


def test_a_device_event_without_name_or_duration() -> None:
    events = [{"ph": "X", "cat": "kernel", "ts": 0, "pid": 0, "tid": 7}]
    _, unattributed = attribute_lines({"traceEvents": events})
    assert [(k.name, k.device_us, k.calls) for k in unattributed] == [("", 0.0, 1)]
