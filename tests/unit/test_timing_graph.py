"""Timing in a CUDA graph, pinned on a stand-in ``torch`` with a virtual device clock: the
flush runs inside the graph before each call and a flush-only graph is subtracted; warm-up runs
on the side stream; a capture that fails (``.item()``'s host sync) is always ended and the
device settled, so later stages do not inherit a capturing stream (issue 25)."""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kernel_lens.agent.stages.timing import time_in_graph

FLUSH_MS = 0.065
CALL_MS = 0.0011


class Device:
    """A virtual device: ``clock`` in ms, what is being captured, what each graph holds."""

    def __init__(self) -> None:
        self.clock = 0.0
        self.capturing: list[str] | None = None
        self.log: list[str] = []
        self.stream = "default"

    def run(self, op: str, ms: float) -> None:
        if self.capturing is not None:
            self.capturing.append(op)
        else:
            self.clock += ms
            self.log.append(f"{op}@{self.stream}")


def stand_in(device: Device) -> types.ModuleType:
    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            self.at = 0.0

        def record(self) -> None:
            self.at = device.clock

        def synchronize(self) -> None:
            pass

        def elapsed_time(self, end: Event) -> float:
            return end.at - self.at

    class Graph:
        def __init__(self) -> None:
            self.ops: list[str] = []
            self.ended = False

        def capture_begin(self, capture_error_mode: str = "global") -> None:
            assert capture_error_mode == "thread_local"
            assert device.stream == "side", "capture on the side stream"
            device.capturing = self.ops

        def capture_end(self) -> None:
            device.capturing = None
            self.ended = True
            device.log.append("capture_end")
            if any(op == "sync" for op in self.ops):
                raise RuntimeError("operation failed due to a previous error during capture")

        def replay(self) -> None:
            for op in self.ops:
                device.run(op, FLUSH_MS if op == "flush" else CALL_MS)

    class Stream:
        def wait_stream(self, other: Any) -> None:
            pass

    @contextlib.contextmanager
    def stream(s: Any) -> Iterator[None]:
        was, device.stream = device.stream, "side"
        try:
            yield
        finally:
            device.stream = was

    class Buffer:
        def zero_(self) -> None:
            device.run("flush", FLUSH_MS)

    cuda = types.SimpleNamespace(
        Event=Event,
        CUDAGraph=Graph,
        Stream=Stream,
        stream=stream,
        current_stream=lambda: Stream(),
        synchronize=lambda: device.log.append("synchronize"),
        empty_cache=lambda: device.log.append("empty_cache"),
    )
    module = types.ModuleType("torch")
    module.cuda = cuda  # type: ignore[attr-defined]
    module.int32 = "int32"  # type: ignore[attr-defined]
    module.empty = lambda *a, **k: Buffer()  # type: ignore[attr-defined]
    return module


@pytest.fixture
def device(monkeypatch: pytest.MonkeyPatch) -> Device:
    dev = Device()
    monkeypatch.setitem(sys.modules, "torch", stand_in(dev))
    return dev


def kernel(device: Device) -> Callable[[], None]:
    return lambda: device.run("kernel", CALL_MS)


@pytest.mark.slow
def test_the_flush_is_in_the_graph_and_subtracted(device: Device) -> None:
    timed = time_in_graph(kernel(device), calls=100, retries=3, flush_l2=True)
    assert timed.reason is None and timed.calls == 100 and len(timed.per_call_ms) == 3
    assert timed.median_ms == pytest.approx(CALL_MS)  # the flush is neither counted …
    assert timed.flush_ms == pytest.approx(FLUSH_MS)  # … nor skipped: it ran, and was measured
    graph_ops = [op for op in device.log if op.startswith(("flush", "kernel"))]
    # warm-up: 3 calls on the side stream; then each replay alternates flush and call
    assert graph_ops[:3] == ["kernel@side"] * 3
    assert graph_ops[3:7] == ["flush@side", "kernel@side", "flush@side", "kernel@side"]
    out = timed.to_json(why="median 3.58 µs < 20 µs", kernels_us=0.83)
    assert out["median_ms"] == pytest.approx(CALL_MS) and out["kernels_us"] == 0.83
    assert out["policy"]["mode"] == "graph" and out["policy"]["cpu_overhead"] == "excluded"
    assert out["policy"]["l2"] == "cold"


def test_without_the_flush_no_flush_graph(device: Device) -> None:
    timed = time_in_graph(kernel(device), calls=10, retries=2, flush_l2=False)
    assert timed.median_ms == pytest.approx(CALL_MS) and timed.flush_ms is None
    assert not any(op.startswith("flush") for op in device.log)
    assert timed.to_json()["policy"]["l2"] == "warm"


def test_a_host_sync_is_not_capturable_and_the_capture_is_ended(device: Device) -> None:
    def item() -> None:
        device.run("kernel", CALL_MS)
        if device.capturing is not None:
            device.run("sync", 0.0)
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")

    timed = time_in_graph(item, calls=10, retries=2)
    assert timed.median_ms is None and timed.per_call_ms == ()
    assert timed.reason is not None and timed.reason.startswith("host sync during capture")
    assert device.capturing is None and device.stream == "default"
    assert device.log.count("capture_end") == 1
    assert device.log[-2:] == ["synchronize", "empty_cache"]  # settled for the next stage
    assert "median_ms" not in timed.to_json() and timed.to_json()["reason"] == timed.reason


def test_an_interrupt_still_ends_the_capture(device: Device) -> None:
    def interrupted() -> None:
        if device.capturing is not None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        time_in_graph(interrupted, calls=10, retries=2)
    assert device.capturing is None and device.stream == "default"
    assert "capture_end" in device.log


def test_the_runner_says_cpu_does_not_apply_and_skips_busy_functions() -> None:
    from kernel_lens.agent.runner import _graph_timing

    calls: list[str] = []
    report = lambda stage, message: calls.append(message)  # noqa: E731
    cpu: dict[str, Any] = {"timing": {"median_ms": 0.001}}
    _graph_timing(cpu, None, "cpu", report)  # type: ignore[arg-type]
    assert cpu["timing"]["graph"] == {"reason": "not applicable on CPU"}
    busy: dict[str, Any] = {"timing": {"median_ms": 0.192}, "accounting": {"device_us": 190.0}}
    _graph_timing(busy, None, "cuda", report)  # type: ignore[arg-type]
    assert "graph" not in busy["timing"] and calls == []
