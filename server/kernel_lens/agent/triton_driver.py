"""Triton's active driver where this machine has none (no GPU): a stand-in that answers the
questions a file asks of the driver *while it is defined or run for something that needs no
GPU*, and nothing else.

Triton's public tutorials ask the driver for their device at module level
(``DEVICE = triton.runtime.driver.active.get_active_torch_device()``) and pick their
``@triton.autotune`` configs by asking it for the backend (``is_cuda()``). On a machine without
a GPU, Triton has no active driver and those lines raise, so nothing of such a file could be
looked at. Two stand-ins, each installed only for the work it serves and removed after:

- :func:`compile_target`: while a file's definitions run for an ahead-of-time compile for
  ``sm_<arch>`` (Show Assembly from the launch's text), the driver says that target.
- :func:`interpreter_device`: while kernels run under Triton's interpreter (Profile, Show
  Values and Debug Kernel on a CPU machine), the driver says the interpreter's device, the CPU
  (the tensors the file makes on ``DEVICE`` are CPU tensors, which the interpreter runs on), and
  CUDA as the backend (the configs a GPU would run).

Anything else asked of them (device properties, a benchmarker) raises an error that says the
file asked the GPU for it and that there is none here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["compile_target", "hold_interpreter_device", "interpreter_device"]


class _StandIn:
    """A driver that says its target and device; any other question is an error that says
    why there is no answer."""

    def __init__(self, arch: int, device: str, why: str) -> None:
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("cuda", arch, 32)
        self.device = device
        self.why = why

    def is_active(self) -> bool:
        return True

    def get_current_target(self) -> Any:
        return self.target

    def get_active_torch_device(self) -> Any:
        import torch

        return torch.device(self.device)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"triton.runtime.driver.active.{name}: this file asks the GPU's driver for it, and "
            f"there is no GPU here ({self.why})"
        )


@contextlib.contextmanager
def _stand_in(make: Any) -> Iterator[bool]:
    """``make()`` as Triton's active driver while the block runs, when Triton has none here;
    yields whether it stood in."""
    try:
        from triton.runtime import driver
    except Exception:
        yield False
        return
    try:
        driver.active  # noqa: B018 (creates the real driver, or raises: none here)
    except Exception:
        pass
    else:
        yield False  # a real GPU driver: it answers
        return
    if not hasattr(driver, "_active"):
        yield False
        return
    before = driver._active
    driver.set_active(make())
    try:
        yield True
    finally:
        driver._active = before


def compile_target(arch: int) -> contextlib.AbstractContextManager[bool]:
    """Triton's driver says ``sm_<arch>`` (CUDA) while a file's definitions run for an
    ahead-of-time compile, when there is no GPU driver here."""
    return _stand_in(
        lambda: _StandIn(arch, "cuda:0", f"compiled ahead of time for sm_{arch} on a CPU machine")
    )


def interpreter_device() -> contextlib.AbstractContextManager[bool]:
    """Triton's driver says the CPU while kernels run under Triton's interpreter, when there is
    no GPU driver here."""
    return _stand_in(lambda: _StandIn(90, "cpu", "the kernels run under Triton's interpreter"))


_HELD: list[contextlib.ExitStack] = []


def hold_interpreter_device(on: bool) -> bool:
    """:func:`interpreter_device` from now on while ``on`` (a job whose kernels run under the
    interpreter: it stays for the job, as the interpreter does), released when not; whether it
    stands in."""
    if not on:
        while _HELD:
            _HELD.pop().close()
        return False
    if _HELD:
        return True
    stack = contextlib.ExitStack()
    if stack.enter_context(interpreter_device()):
        _HELD.append(stack)
        return True
    stack.close()
    return False
