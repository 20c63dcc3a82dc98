"""The cost of memory recording (issue 29): the profiled pass with and without ``profile_memory``,
and the first call with and without the out-of-memory watch (``_record_memory_history``).

    python benchmarks/bench_memory.py [--device cpu|cuda] [--repeats 7] [--runs 3]

For each workload — ``kernels/train_step.py::train_step`` (CPU: 16× smaller, as the example
scales itself; CUDA: batch 4096, 1024 → 4096 → 1024) and ``kernels/memory.py::grow`` — the
agent's profiled pass (:func:`kernel_lens.agent.stages.ops.profile_pass`: one unrecorded warm-up
step, ``--runs`` recorded calls with line tags, the trace exported and loaded) is run
``--repeats`` times with ``memory=False`` and ``memory=True``, alternating, and the median wall
time of each (perf_counter, synchronised on CUDA) is printed with the overhead in percent; then
the attribution of the memory events (:func:`kernel_lens.analysis.memory.attribute_memory`).
On CUDA, one call of the step is timed (CUDA events) plain and under the out-of-memory watch
(allocation stacks recorded), the cost the watch adds to the first call of *Profile memory*.
The issue's rule: memory is on by default where its pass costs under 10% more.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "kernels"))
sys.path.insert(0, str(ROOT / "server"))

import torch  # noqa: E402

from kernel_lens.agent.stages.ops import profile_pass  # noqa: E402
from kernel_lens.analysis.memory import attribute_memory, format_bytes  # noqa: E402


def _workloads(device: str) -> dict[str, tuple[Callable[[], Any], Any]]:
    import memory
    import train_step

    model, opt, x, y = train_step.make()
    return {
        "train_step": (lambda: train_step.train_step(model, opt, x, y), train_step.train_step),
        "grow": (lambda: memory.grow(), memory.grow),
    }


def _pass_ms(fn: Callable[[], Any], code: Any, *, device: str, runs: int, memory: bool) -> float:
    with tempfile.TemporaryDirectory() as folder:
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        profile_pass(fn, code, device=device, runs=runs, trace_dir=folder, memory=memory)
        return (time.perf_counter() - t0) * 1e3


def _call_ms(fn: Callable[[], Any], reps: int = 20) -> float:
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device")
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    print(f"{name} · torch {torch.__version__} · {args.runs} profiled calls per pass, "
          f"median of {args.repeats} passes")  # fmt: skip
    print()
    print("| workload | pass, no memory (ms) | pass, profile_memory (ms) | overhead | "
          "memory events | attribution (ms) | peak |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, (fn, code) in _workloads(device).items():
        code = code.__code__
        fn()  # the first call: warm-up, as the runner makes
        plain: list[float] = []
        recorded: list[float] = []
        for _ in range(args.repeats):
            plain.append(_pass_ms(fn, code, device=device, runs=args.runs, memory=False))
            recorded.append(_pass_ms(fn, code, device=device, runs=args.runs, memory=True))
        with tempfile.TemporaryDirectory() as folder:
            passed = profile_pass(fn, code, device=device, runs=args.runs, trace_dir=folder,
                                  memory=True)  # fmt: skip
        events = sum(1 for e in passed.trace["traceEvents"] if e.get("name") == "[memory]")
        t0 = time.perf_counter()
        _, memory = attribute_memory(passed.trace, runs=passed.runs)
        attribution_ms = (time.perf_counter() - t0) * 1e3
        peak = memory["devices"][0]["peak_bytes"] if memory else 0
        a, b = statistics.median(plain), statistics.median(recorded)
        print(f"| {label} | {a:.1f} | {b:.1f} | {100 * (b - a) / a:+.1f}% | {events} | "
              f"{attribution_ms:.1f} | {format_bytes(peak)} |")  # fmt: skip
    if device == "cuda":
        from kernel_lens.agent.memory import OomWatch

        fn, _ = _workloads(device)["train_step"]
        fn()
        bare = _call_ms(fn)
        with OomWatch():
            watched = _call_ms(fn)
        print()
        print("| train_step call | plain (ms) | under the OOM watch (ms) | overhead |")
        print("|---|---:|---:|---:|")
        print(f"| CUDA events, median of 20 | {bare:.3f} | {watched:.3f} | "
              f"{100 * (watched - bare) / bare:+.1f}% |")  # fmt: skip


if __name__ == "__main__":
    main()
