"""The out-of-memory watch of *Profile memory*: the allocator's snapshot taken at the failure.

While the function's first call runs (the call every stage starts with, where an out-of-memory
shows first), CUDA's caching allocator records each allocation's Python stack
(``torch.cuda.memory._record_memory_history(stacks="python")``) and an out-of-memory observer
takes a snapshot the moment an allocation fails, before the exception unwinds and frees the
frames' tensors. :func:`kernel_lens.analysis.memory.oom_from_snapshot` reads it: what was alive,
by the user's line that allocated it, and the allocation that failed. Nothing is re-run.

The recording is off again before timing (it costs every allocation a stack walk). The private
torch entry points are used here only, behind ``getattr`` guards: without them (an old torch, no
CUDA) the watch does nothing and an out-of-memory is reported as any error is.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

__all__ = ["OomWatch"]

#: Entries the allocator keeps while recording (a ring buffer; the snapshot's blocks are exact).
MAX_ENTRIES = 100_000

_active: list[OomWatch] = []
_attached = False


def _observer(device: int, alloc: int, device_allocated: int, device_free: int) -> None:
    """The allocator's out-of-memory callback: snapshot for the watch that is on."""
    if not _active:
        return
    watch = _active[-1]
    if watch.snapshot is not None:
        return
    import torch

    try:
        watch.snapshot = torch.cuda.memory._snapshot()
    except Exception:  # a snapshot that cannot be taken leaves the error as it is
        watch.snapshot = None
    watch.observed = {
        "device": device,
        "alloc": alloc,
        "allocated": device_allocated,
        "free": device_free,
    }


class OomWatch:
    """A context manager: allocation stacks recorded and out-of-memory snapshots taken inside.

    Attributes:
        snapshot: the allocator's snapshot at the first out-of-memory inside, or ``None``.
        observed: the observer's arguments (``device``, ``alloc`` bytes, ``allocated``,
            ``free``), or ``None``.
    """

    def __init__(self) -> None:
        self.snapshot: dict[str, Any] | None = None
        self.observed: dict[str, int] | None = None
        self._recording = False

    def __enter__(self) -> OomWatch:
        global _attached
        import torch

        if not torch.cuda.is_available():
            return self
        record: Callable[..., None] | None = getattr(
            torch.cuda.memory, "_record_memory_history", None
        )
        attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
        if record is None or attach is None:
            return self
        if not _attached:
            attach(_observer)
            _attached = True
        record(max_entries=MAX_ENTRIES, stacks="python")
        self._recording = True
        _active.append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self in _active:
            _active.remove(self)
        if self._recording:
            import torch

            self._recording = False
            torch.cuda.memory._record_memory_history(enabled=None)
