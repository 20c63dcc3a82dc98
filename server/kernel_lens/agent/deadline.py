"""The running job's deadline, as the parent set it (the envelope's ``timeout``): a long
whole-script run is cut shortly before it, so that what was profiled is kept (labelled partial)
instead of the job being killed with nothing.
"""

from __future__ import annotations

import threading
import time

__all__ = ["remaining_s", "request_stop", "set_job_timeout", "stop_requested"]

_stop = threading.Event()

_deadline: float | None = None
_timeout: float | None = None


def set_job_timeout(timeout_s: float | None) -> None:
    """The job that starts now ends at ``timeout_s`` (``None``: no limit)."""
    global _deadline, _timeout
    _stop.clear()
    _timeout = timeout_s
    _deadline = None if timeout_s is None else time.monotonic() + timeout_s


def remaining_s() -> tuple[float, float] | None:
    """``(seconds left, the job's whole limit)``, or ``None`` without a limit."""
    if _deadline is None or _timeout is None:
        return None
    return _deadline - time.monotonic(), _timeout


def request_stop() -> None:
    """The user cancelled (the server's ``stop``): a whole-script run ends at its next line."""
    _stop.set()


def stop_requested() -> bool:
    """Whether the running job was asked to stop early."""
    return _stop.is_set()
