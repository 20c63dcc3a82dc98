"""The calling context of a captured call, kept and replayed.

A function called by the script under ``torch.autocast("cuda", dtype=torch.bfloat16)`` and
``torch.no_grad()`` is a different program from the same function called bare: other kernels
(bf16 tensor-core GEMMs instead of fp32 ones), other dtypes, no autograd graph. So the capture
takes, at the call, everything of torch's thread and process state that changes what the
function runs — autocast per device type (enabled, dtype, cache), grad mode (``no_grad``,
``inference_mode``), the ``torch.backends`` flags, float32 matmul precision, the current CUDA
device — and every stage runs under it (:meth:`CallContext.applied`). A ``# kernel-lens: context
= …`` directive above the ``def`` gives one where there is no capture.

Runs in the user's interpreter (imports torch lazily, inside the functions).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from kernel_lens.wire.results import AutocastInfo, CallContextInfo

__all__ = ["CallContext", "from_directive", "snapshot"]

#: Autocast device types whose state is taken (``cpu`` and ``cuda`` are what users run).
_AUTOCAST_DEVICES = ("cuda", "cpu")
#: ``torch.backends`` flags that change which kernels run, as ``(label, getter path)``.
_BACKEND_FLAGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cuda.matmul.allow_tf32", ("cuda", "matmul", "allow_tf32")),
    (
        "cuda.matmul.allow_fp16_reduced_precision_reduction",
        ("cuda", "matmul", "allow_fp16_reduced_precision_reduction"),
    ),
    (
        "cuda.matmul.allow_bf16_reduced_precision_reduction",
        ("cuda", "matmul", "allow_bf16_reduced_precision_reduction"),
    ),
    ("cudnn.enabled", ("cudnn", "enabled")),
    ("cudnn.benchmark", ("cudnn", "benchmark")),
    ("cudnn.deterministic", ("cudnn", "deterministic")),
    ("cudnn.allow_tf32", ("cudnn", "allow_tf32")),
)


#: torch's grad mode at a call.
GradMode = Literal["enabled", "no_grad", "inference_mode"]


@dataclass(frozen=True)
class CallContext:
    """What of torch's state a call ran under.

    Attributes:
        autocast: the device types with autocast enabled (the wire's ``AutocastInfo``:
            ``torch.autocast(device_type, dtype, enabled, cache_enabled)``).
        grad: ``enabled``, ``no_grad`` or ``inference_mode``.
        matmul_precision: ``torch.get_float32_matmul_precision()`` (``highest``, ``high``,
            ``medium``).
        backends: the ``torch.backends`` flags of :data:`_BACKEND_FLAGS`, by label.
        cuda_device: the current CUDA device index, None without CUDA.
        source: ``captured`` (taken at the script's call) or ``directive``.
        directive: for ``directive``: makes the context managers to enter, outermost first
            (evaluated anew for each block, so generator-based managers work too).
    """

    autocast: tuple[AutocastInfo, ...] = ()
    grad: GradMode = "enabled"
    matmul_precision: str = "highest"
    backends: tuple[tuple[str, bool], ...] = ()
    cuda_device: int | None = None
    source: str = "captured"
    directive: Callable[[], tuple[Any, ...]] | None = field(default=None, compare=False)

    def changes(self, default: CallContext) -> list[str]:
        """What differs from ``default`` (the agent's own state), as short labels:
        ``autocast cuda bfloat16``, ``no_grad``, ``matmul precision high``, ``cudnn.benchmark``."""
        out = [f"autocast {a['device_type']} {a['dtype']}" for a in self.autocast if a["enabled"]]
        if self.grad != "enabled":
            out.append(self.grad)
        if self.matmul_precision != default.matmul_precision:
            out.append(f"matmul precision {self.matmul_precision}")
        base = dict(default.backends)
        for name, value in self.backends:
            if base.get(name, value) != value:
                out.append(f"{name}={value}")
        if (
            self.cuda_device is not None
            and default.cuda_device is not None
            and self.cuda_device != default.cuda_device
        ):
            out.append(f"cuda:{self.cuda_device}")
        return out

    def to_json(self, default: CallContext | None = None) -> CallContextInfo:
        """The result's ``inputs.context`` object; ``label`` lists what differs from the
        agent's own state (``autocast cuda bfloat16 · no_grad``), empty when nothing does."""
        changes = self.changes(default or snapshot())
        return {
            "source": "directive" if self.source == "directive" else "captured",
            "label": " · ".join(changes),
            "autocast": [AutocastInfo(**a) for a in self.autocast],
            "grad": self.grad,
            "matmul_precision": self.matmul_precision,
            "backends": dict(self.backends),
            "cuda_device": self.cuda_device,
        }

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Run the block under this context; everything is put back after it."""
        import torch

        with contextlib.ExitStack() as stack:
            if self.directive is not None:
                for manager in self.directive():
                    stack.enter_context(manager)
                yield
                return
            previous_precision = torch.get_float32_matmul_precision()
            previous_flags = [(path, _get_flag(torch, path)) for _, path in _BACKEND_FLAGS]
            stack.callback(torch.set_float32_matmul_precision, previous_precision)
            stack.callback(_set_flags, torch, previous_flags)
            torch.set_float32_matmul_precision(self.matmul_precision)
            wanted = dict(self.backends)
            _set_flags(torch, [(path, wanted.get(label)) for label, path in _BACKEND_FLAGS])
            if self.cuda_device is not None and torch.cuda.is_available():
                stack.enter_context(torch.cuda.device(self.cuda_device))
            if self.grad == "inference_mode":
                stack.enter_context(torch.inference_mode())
            elif self.grad == "no_grad":
                stack.enter_context(torch.no_grad())
            else:
                stack.enter_context(torch.enable_grad())
            for a in self.autocast:
                stack.enter_context(
                    torch.autocast(
                        a["device_type"],
                        dtype=getattr(torch, a["dtype"]),
                        enabled=a["enabled"],
                        cache_enabled=a["cache_enabled"],
                    )
                )
            yield


def _get_flag(torch: Any, path: tuple[str, ...]) -> bool | None:
    obj: Any = torch.backends
    try:
        for name in path:
            obj = getattr(obj, name)
    except AttributeError:
        return None
    return obj if isinstance(obj, bool) else None


def _set_flags(torch: Any, flags: list[tuple[tuple[str, ...], bool | None]]) -> None:
    for path, value in flags:
        if value is None:
            continue
        obj: Any = torch.backends
        try:
            for name in path[:-1]:
                obj = getattr(obj, name)
            setattr(obj, path[-1], value)
        except (AttributeError, RuntimeError):
            continue  # a flag this torch build does not have, or cannot set here


def snapshot() -> CallContext:
    """The calling thread's torch state now (at a captured call: the call's context)."""
    import torch

    autocast: list[AutocastInfo] = []
    for device_type in _AUTOCAST_DEVICES:
        try:
            enabled = bool(torch.is_autocast_enabled(device_type))
        except (TypeError, RuntimeError):  # torch < 2.4 takes no device type
            continue
        if not enabled:
            continue
        dtype = torch.get_autocast_dtype(device_type)
        autocast.append(
            {
                "device_type": device_type,
                "dtype": str(dtype).removeprefix("torch."),
                "enabled": True,
                "cache_enabled": bool(torch.is_autocast_cache_enabled()),
            }
        )
    grad: GradMode
    if torch.is_inference_mode_enabled():
        grad = "inference_mode"
    elif not torch.is_grad_enabled():
        grad = "no_grad"
    else:
        grad = "enabled"
    backends = tuple(
        (label, value)
        for label, path in _BACKEND_FLAGS
        if (value := _get_flag(torch, path)) is not None
    )
    device: int | None = None
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        device = int(torch.cuda.current_device())
    return CallContext(
        autocast=tuple(autocast),
        grad=grad,
        matmul_precision=torch.get_float32_matmul_precision(),
        backends=backends,
        cuda_device=device,
    )


def _managers(value: Any) -> tuple[Any, ...]:
    managers = tuple(value) if isinstance(value, tuple | list) else (value,)
    for m in managers:
        if not (hasattr(m, "__enter__") and hasattr(m, "__exit__")):
            raise TypeError(f"{type(m).__name__} is not a context manager")
    return managers


def from_directive(make: Callable[[], Any]) -> CallContext:
    """A ``# kernel-lens: context = …`` directive — ``make`` evaluates its expression: one
    context manager or a tuple of them (``torch.autocast("cuda", dtype=torch.bfloat16),
    torch.no_grad()``) — as a context, labelled by what it does once entered (entered here
    once to read it, then left).

    Raises:
        TypeError: a value that is not a context manager.
    """
    with contextlib.ExitStack() as stack:
        for m in _managers(make()):
            stack.enter_context(m)
        seen = snapshot()
    return CallContext(
        autocast=seen.autocast,
        grad=seen.grad,
        matmul_precision=seen.matmul_precision,
        backends=seen.backends,
        cuda_device=seen.cuda_device,
        source="directive",
        directive=lambda: _managers(make()),
    )
