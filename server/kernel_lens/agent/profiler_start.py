"""The profiler's first start without importing torch.compile's compiler.

``torch.profiler``'s ``prepare_trace`` reads one flag of Inductor's (``triton.cudagraphs``)
behind ``hasattr(torch, "_inductor")`` — and ``torch``'s module ``__getattr__`` answers that
question by importing ``torch._inductor``, which imports Dynamo, sympy, ``torch.distributed``
and ``torch.onnx``: about 800 modules, 2–5 s, on every fresh agent's first profile (measured
in ``benchmarks/bench_cold_start.py``). When the user's code has not imported Inductor, the
flag is its default (``False``) and nothing needs importing: :func:`install` makes the check
see Inductor only when it is loaded. Version-guarded: a torch without that shape is left
alone.
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any

__all__ = ["install", "release_cupti_after_each_profile"]

_lock = threading.Lock()
_installed = False


def install() -> None:
    """Patch ``torch.profiler``'s ``prepare_trace`` once (idempotent, thread-safe)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
        try:
            import torch
            import torch.profiler.profiler as profiler_module
        except ImportError:
            return
        kineto = getattr(profiler_module, "_KinetoProfile", None)
        original = getattr(kineto, "prepare_trace", None)
        lazy = torch.__dict__.get("__getattr__")
        if kineto is None or original is None or not callable(lazy):
            return

        @functools.wraps(original)
        def prepare_trace(self: Any) -> None:
            if "torch._inductor" in sys.modules:
                original(self)
                return
            current = torch.__dict__.get("__getattr__")

            def lookup(name: str) -> Any:
                if name == "_inductor":  # not loaded: its cudagraphs flag is the default
                    raise AttributeError(name)
                return lazy(name)

            torch.__getattr__ = lookup  # type: ignore[attr-defined]
            try:
                original(self)
            finally:
                if current is not None:
                    torch.__getattr__ = current  # type: ignore[attr-defined]

        kineto.prepare_trace = prepare_trace


def release_cupti_after_each_profile(environ: Any = None, cuda_version: str | None = None) -> bool:
    """Have Kineto release CUPTI when each profiler session ends (``TEARDOWN_CUPTI=1``), so that
    what is timed after the profiler pass is not slowed by it.

    Without it Kineto leaves CUPTI attached after the session (pytorch/pytorch#144455: training
    10–20% slower after profiling ended); on the H200 a launch-bound function's graph time taken
    in the agent after its profiler pass read 37–43% above ``do_bench_cudagraph`` (0.35–0.4 µs
    more per kernel), and equal in a process that never profiled. Teardown is what torch itself
    deems safe from CUDA 12.6 (before it, re-initialising CUPTI after a teardown could crash with
    CUDA graphs: torch turns teardown off there, and so does this). A value the user set is kept.
    Reads ``torch.version.cuda`` unless ``cuda_version`` is given; returns whether it is on.
    """
    import os

    env = os.environ if environ is None else environ
    if "TEARDOWN_CUPTI" in env:
        return bool(env["TEARDOWN_CUPTI"] == "1")
    if cuda_version is None:
        try:
            import torch

            cuda_version = getattr(torch.version, "cuda", None)
        except ImportError:
            return False
    try:
        major, minor = (int(x) for x in str(cuda_version).split(".")[:2])
    except ValueError:
        return False
    if (major, minor) < (12, 6):
        return False
    env["TEARDOWN_CUPTI"] = "1"
    return True
