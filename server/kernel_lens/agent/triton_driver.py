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

And triton.language's own ``@jit`` helpers (``tl.zeros``, ``tl.sum``…): where triton was imported
before the interpreter was on (the language server's warm template imports it, so every agent
forked from it has it), they are compiled ``JITFunction``s, which an interpreted kernel cannot
call. :func:`interpreted_language` swaps in interpreted copies; :func:`hold_interpreter` keeps
both for a job whose kernels run under the interpreter, and :func:`compiled_language` puts the
compiled helpers back while Show Assembly compiles ahead of time.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

__all__ = [
    "compile_target",
    "compiled_language",
    "hold_interpreter",
    "interpreted_language",
    "interpreter_device",
    "scoped_device_calls",
]


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
    """``make()`` as Triton's active driver while the block runs, when Triton has none here
    (or only another stand-in: the compile target inside an interpreted job); yields whether it
    stood in."""
    try:
        from triton.runtime import driver
    except Exception:
        yield False
        return
    try:
        real = not isinstance(driver.active, _StandIn)  # creates the real one, or raises
    except Exception:
        real = False
    if real:
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


def interpreted_language() -> list[tuple[types.ModuleType, str, Any]]:
    """Interpreted copies of triton.language's own ``@jit`` helpers (``tl.zeros``, ``tl.cdiv``,
    ``tl.sum``…) where triton was imported before the interpreter was on: they were made then as
    compiled ``JITFunction``s, which an interpreted kernel cannot call ("Cannot call
    @triton.jit'd outside of the scope of a kernel"; an agent forked from a process that had
    imported triton met it). Returns ``(module, name, original)`` for each swap, to undo."""
    modules = [
        module
        for name, module in list(sys.modules.items())
        if module is not None and (name == "triton.language" or name.startswith("triton.language."))
    ]
    if not modules:
        return []
    try:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction
    except ImportError:
        return []
    copies: dict[int, Any] = {}
    swapped: list[tuple[types.ModuleType, str, Any]] = []
    for module in modules:
        for name, value in list(vars(module).items()):
            if not isinstance(value, JITFunction):
                continue
            copy = copies.get(id(value))
            if copy is None:
                copy = copies[id(value)] = InterpretedFunction(value.fn)
            setattr(module, name, copy)
            swapped.append((module, name, value))
    return swapped


#: What :func:`hold_interpreter` holds: the driver stand-in's exit, and the language swaps.
_HELD: list[contextlib.ExitStack] = []
_SWAPPED: list[tuple[types.ModuleType, str, Any]] = []


def _undo(swapped: list[tuple[types.ModuleType, str, Any]]) -> None:
    for module, name, original in swapped:
        setattr(module, name, original)


@contextlib.contextmanager
def scoped_device_calls() -> Iterator[None]:
    """An interpreted ``@jit`` function called from a kernel (a device function: a user's
    helper, ``tl.zeros``) patches triton.language for the interpreter and never puts it back
    (Triton 3.7's ``InterpretedFunction.__call__``), so that nothing compiles in that process
    afterwards (``'ir.value' object has no attribute 'dtype'``): Show Assembly compiles after
    its launchers ran. While the block runs, each such call undoes its own patches when it
    returns (the kernel's own, under them, stay until the kernel ends)."""
    try:
        from triton.runtime import interpreter as interp

        patch = interp._patch_lang
        cls = interp.InterpretedFunction
        error = interp.InterpreterError
    except (ImportError, AttributeError):
        yield
        return
    original = cls.__call__

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        scope = patch(self.fn)
        fn = self.rewrite()
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise error(repr(e)) from e
        finally:
            scope.restore()

    cls.__call__ = call
    try:
        yield
    finally:
        cls.__call__ = original


def hold_interpreter(on: bool) -> None:
    """For a job whose kernels run under the interpreter (``on``; it stays for the job, as the
    interpreter does): :func:`interpreter_device`, :func:`scoped_device_calls` and
    :func:`interpreted_language` from now on; undone when not ``on``."""
    if not on:
        while _HELD:
            _HELD.pop().close()
        _undo(_SWAPPED)
        _SWAPPED.clear()
        return
    if not _HELD:
        stack = contextlib.ExitStack()
        stack.enter_context(interpreter_device())
        stack.enter_context(scoped_device_calls())
        _HELD.append(stack)
    _SWAPPED.extend(interpreted_language())


@contextlib.contextmanager
def compiled_language() -> Iterator[None]:
    """triton.language's compiled helpers back while the block compiles ahead of time (the
    compiler needs ``JITFunction``s), the held interpreted copies after."""
    held = list(_SWAPPED)
    copies = [(module, name, getattr(module, name)) for module, name, _ in held]
    _undo(held)
    try:
        yield
    finally:
        _undo(copies)
