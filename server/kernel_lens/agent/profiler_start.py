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

__all__ = ["install"]

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
