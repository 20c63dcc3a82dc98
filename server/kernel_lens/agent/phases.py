"""A per-phase log of an agent's life, for the cold-click benchmark (issue 36).

With ``$KERNEL_LENS_PHASE_LOG`` naming a file, each phase of an agent (its process started, its
modules imported, torch imported, the CUDA context made, the profiler's first start, ready, a
job received, each stage's progress and partial result, the result sent) appends one JSON line
``{"pid", "phase", "t"}`` (``t``: seconds since the epoch, comparable across processes) to it;
``benchmarks/bench_agent_warm.py --phases`` reads them back against the click. Without the
variable nothing is written. Stdlib only; never raises.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["mark", "process_start"]

#: Environment variable naming the log file.
PHASE_LOG = "KERNEL_LENS_PHASE_LOG"


def process_start() -> float | None:
    """When this process started (seconds since the epoch; Linux ``/proc``), else None."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        # (btime has whole seconds; the uptime, hundredths)
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def mark(phase: str, t: float | None = None) -> None:
    """Append ``phase`` at ``t`` (default now) to the log, when there is one."""
    path = os.environ.get(PHASE_LOG)
    if not path:
        return
    line = json.dumps({"pid": os.getpid(), "phase": phase, "t": time.time() if t is None else t})
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass
