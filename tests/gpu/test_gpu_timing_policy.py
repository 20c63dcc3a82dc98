"""On a CUDA GPU: launch-bound functions timed in a CUDA graph, and the policy on every number
(issue 25). The graph's time per call without the flush agrees with
``triton.testing.do_bench_cudagraph`` (hot L2, no flush), with the flush subtracted it is close
above it, and it is at least the summed kernel time; a function that calls ``.item()`` says why it
cannot be captured and keeps its eager number, and the stages after it still run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.gpu

FILE = ROOT / "tests" / "data" / "gpu_only" / "launch_bound.py"
#: Agreement with do_bench_cudagraph: within 25%, or 0.3 µs for the tiniest.
REL, ABS_MS = 0.25, 0.0003


def _profile(name: str, tmp: Path, *stages: str) -> dict[str, Any]:
    args = ["profile", f"{FILE}::{name}", "--json", "--trace-dir", str(tmp)]
    if stages:
        args += ["--stages", ",".join(stages)]
    code, out, err = run_cli(*args, env={"KERNEL_LENS_HISTORY": str(tmp / "h")}, timeout=600)
    assert code == 0, err
    assert isinstance(out, dict)
    return out


def _call(name: str) -> Any:
    """The function of the data file with its inputs bound, imported in this process."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("launch_bound", FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, name)
    args = (module.X, module.Y) if name == "add" else (module.X,)
    return lambda: fn(*args)


def _do_bench_cudagraph(call: Any) -> float:
    """``do_bench_cudagraph``'s median of the call, ms (hot L2: no flush)."""
    import torch
    import triton.testing

    with torch.cuda.stream(torch.cuda.Stream()):
        return float(triton.testing.do_bench_cudagraph(call, return_mode="median"))


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= max(REL * b, ABS_MS)


@pytest.mark.parametrize("name", ["add", "small_ops"])
def test_the_graph_agrees_with_do_bench_cudagraph(name: str) -> None:
    from kernel_lens.agent.stages.timing import time_in_graph

    call = _call(name)
    reference = _do_bench_cudagraph(call)
    # like with like: our graph without the flush (hot L2) against do_bench_cudagraph
    warm = time_in_graph(call, flush_l2=False).median_ms
    assert warm is not None and _close(warm, reference), (warm, reference)
    # with the flush in the graph and the flush-only graph subtracted: cold L2 costs a little
    # more, never less than warm by more than the noise, and the flush is not counted (a
    # 256 MiB flush is tens of µs per call)
    cold = time_in_graph(call, flush_l2=True).median_ms
    assert cold is not None and cold >= warm - ABS_MS, (cold, warm)
    assert cold <= max(2 * warm, warm + 0.002), (cold, warm)


@pytest.mark.parametrize(
    "name",
    [
        "add",
        pytest.param(
            "small_ops",
            marks=pytest.mark.xfail(
                strict=True,
                reason="H200, 2026-12-05: 110.4 µs per call against do_bench_cudagraph's 92.5 µs "
                "(+19%) for a loop of 100 small ops, with CUPTI released after the profiler (the "
                "vector add: 0.944 against 0.922 µs); our graph holds 40 calls, "
                "do_bench_cudagraph's ~180: not yet explained nor fixed",
            ),
        ),
    ],
)
def test_a_launch_bound_function_is_timed_in_a_graph(name: str, tmp_path: Path) -> None:
    out = _profile(name, tmp_path)
    timing = out["timing"]
    graph = timing["graph"]
    assert graph.get("why"), graph  # launch-bound, and why
    assert graph.get("median_ms") is not None, graph
    # the graph's per call time: at least the kernels, and under the eager per-call time (the
    # launch overhead is what a graph removes)
    kernels_ms = graph["kernels_us"] / 1000
    assert graph["median_ms"] >= 0.8 * kernels_ms, graph
    assert graph["median_ms"] < timing["median_ms"], (graph, timing["median_ms"])
    assert graph["policy"]["mode"] == "graph" and graph["policy"]["l2"] == "warm"
    # issue 34 item 4: the number shown agrees with do_bench_cudagraph on the same inputs
    # within 10% (no flush in the timed window)
    reference = _do_bench_cudagraph(_call(name))
    print(f"{name}: graph {graph['median_ms'] * 1000:.3f} µs, do_bench_cudagraph "
          f"{reference * 1000:.3f} µs")  # fmt: skip
    assert abs(graph["median_ms"] - reference) <= max(0.10 * reference, ABS_MS), (graph, reference)
    assert timing["policy"]["mode"] == "eager" and timing["policy"]["l2"] == "cold"
    assert isinstance(timing["policy"]["stable"], bool)


def test_item_is_not_capturable_keeps_its_eager_number_and_later_stages_run(
    tmp_path: Path,
) -> None:
    out = _profile("with_item", tmp_path, "timing", "ops", "trace")
    timing = out["timing"]
    assert timing["median_ms"] > 0
    graph = timing["graph"]
    assert "median_ms" not in graph and graph["reason"], graph
    assert "host sync" in graph["reason"] or "capture" in graph["reason"], graph
    # the stages after the failed capture ran on a sane CUDA context
    assert out["lines"] and out["kernels"]


def test_clocks_are_read_or_the_reason_is_said(tmp_path: Path) -> None:
    timing = _profile("add", tmp_path, "timing")["timing"]
    try:
        import pynvml  # noqa: F401
    except ImportError:
        assert "nvidia-ml-py" in timing["policy"]["nvml"]
        return
    before = timing["clocks"]["before"]
    assert before["sm_mhz"] > 0 and before["temperature_c"] > 0
