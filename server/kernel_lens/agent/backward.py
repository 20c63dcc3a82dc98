"""*Profile with backward*: a forward function called, then its output back-propagated.

What a model author wants to know about ``h = self.fc1(x)`` is its forward and its backward
cost. The call becomes: the function, then ``torch.autograd.backward`` of every tensor it returned
that requires grad, seeded with ones (the gradient of their sum) — inside a
``record_function(BACKWARD_SEED_RANGE)`` range, so the attribution tells the seed's own work
from the backward nodes, which it puts on the forward lines that made them.

Runs in the user's interpreter (torch is imported lazily).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kernel_lens.analysis.line_attribution import BACKWARD_SEED_RANGE

__all__ = ["BACKWARD_SEED_RANGE", "NoGradOutputError", "grad_outputs", "with_backward"]


class NoGradOutputError(ValueError):
    """The function returned no tensor that requires grad: there is no backward to run."""


def grad_outputs(value: Any) -> list[Any]:
    """The tensors in ``value`` (nested tuples, lists, dicts, dataclass-like ``__dict__``-less
    values are skipped) that require grad, in order."""
    import torch

    found: list[Any] = []
    stack = [value]
    while stack and len(found) < 1024:
        item = stack.pop(0)
        if isinstance(item, torch.Tensor):
            if item.requires_grad and item.grad_fn is not None:
                found.append(item)
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def with_backward(fn: Callable[..., Any], *, qualname: str) -> Callable[..., Any]:
    """``fn`` followed by the backward of its output (see the module docstring); the same
    signature (``functools.wraps``), so every stage calls it as it would call ``fn``.

    Raises (when the returned callable runs):
        NoGradOutputError: the output has no tensor that requires grad (the message says how
            to get one: inputs or parameters with ``requires_grad=True``, grad mode on).
    """

    @functools.wraps(fn)
    def forward_and_backward(*args: Any, **kwargs: Any) -> Any:
        import torch
        from torch.autograd.profiler import record_function

        out = fn(*args, **kwargs)
        tensors = grad_outputs(out)
        if not tensors:
            raise NoGradOutputError(
                f"{qualname} returned no tensor that requires grad, so there is no backward to "
                "profile: its inputs or parameters need requires_grad=True, and grad mode must "
                "be on (not under torch.no_grad or inference_mode)"
            )
        with record_function(BACKWARD_SEED_RANGE):
            torch.autograd.backward(tensors, grad_tensors=[torch.ones_like(t) for t in tensors])
        return out

    return forward_and_backward
