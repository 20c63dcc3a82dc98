"""What a run keeps: a history entry made from a profile result, its summary for a list, its
key, and whether a stored value is a run a comparison can read.

An entry keeps what a later comparison needs and what tells runs apart: time, the function's
text and the file's hash (as they were when the job started), the git commit and whether the
file was dirty, device, versions, an inputs description, the timing (raw samples thinned to
:data:`MAX_SAMPLES` quantiles) and the per-line ops, kernels and device time. Standard library
only (``git`` is run as a subprocess, bounded by :data:`GIT_TIMEOUT_S`).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
from typing import Any

__all__ = [
    "GIT_TIMEOUT_S",
    "MAX_SAMPLES",
    "decode",
    "entry_summary",
    "function_key",
    "git_state",
    "make_entry",
    "shape_problem",
    "thin_samples",
]

#: Raw timing samples kept per run (quantiles of the sorted samples beyond this).
MAX_SAMPLES = 1000
#: Seconds a ``git`` call may take before the entry goes without git state.
GIT_TIMEOUT_S = 2.0


def thin_samples(samples: list[float], limit: int = MAX_SAMPLES) -> list[float]:
    """``samples`` if there are at most ``limit``, else ``limit`` evenly spaced quantiles of them
    (the distribution, and so the statistics of a comparison, is kept; the order is not)."""
    if len(samples) <= limit:
        return list(samples)
    ordered = sorted(samples)
    n = len(ordered)
    return [ordered[min(n - 1, int((i + 0.5) * n / limit))] for i in range(limit)]


def git_state(path: str) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the repository holding ``path`` (``dirty``: the file differs
    from the commit), or ``None`` outside a repository or without git."""
    folder = os.path.dirname(os.path.abspath(path))

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", folder, *args],
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    status = git("status", "--porcelain", "--", os.path.abspath(path))
    return {"commit": commit.strip(), "dirty": bool(status and status.strip())}


def _inputs_text(inputs: Any, path: str | None) -> str | None:
    from kernel_lens.analysis.lens_text import inputs_args_text, inputs_text

    where = inputs_text(inputs, path)
    if where is None:
        return inputs if isinstance(inputs, str) else None
    args = "; ".join(inputs_args_text(inputs))
    return f"{where} · {args}" if args else where


#: The timing's keys an entry keeps (its samples are thinned apart).
_TIMING_KEPT = (
    "median_ms",
    "spread_pct",
    "reps",
    "method",
    "q1_ms",
    "q3_ms",
    "min_ms",
    "max_ms",
    "warning",
    "policy",  # how it was timed, and the GPU's clocks: runs timed differently are
    "clocks",  # not compared (issue 25)
    "graph",
)  # fmt: skip


def make_entry(
    result: dict[str, Any],
    *,
    text: list[str] | None = None,
    file_text: str | None = None,
    git: dict[str, Any] | None = None,
    now: datetime.datetime | None = None,
) -> dict[str, Any]:
    """A history entry from a profile result (without ``id``; :meth:`History.add` gives it one).

    Args:
        result: the profile JSON (``function``, ``path``, ``timing``, ``lines``, ``kernels``…).
        text: the function's lines as profiled (default: the lines in ``result``).
        file_text: the whole file as profiled, for its hash.
        git: :func:`git_state` of the file, if known.
        now: the time of the run (default: now, UTC).
    """
    timing = dict(result.get("timing") or {})
    samples = timing.pop("samples_ms", None)
    keep = {k: timing[k] for k in _TIMING_KEPT if k in timing}
    if isinstance(samples, list) and samples:
        keep["samples_ms"] = thin_samples([float(s) for s in samples])
    when = now or datetime.datetime.now(datetime.UTC)
    lines = (
        text if text is not None else [str(x.get("source", "")) for x in result.get("lines") or []]
    )
    return {
        "time": when.isoformat(timespec="seconds"),
        "path": result.get("path"),
        "function": result.get("function"),
        "first_line": result.get("first_line"),
        "text": list(lines),
        "file_hash": hashlib.sha256(file_text.encode()).hexdigest()[:16] if file_text else None,
        "git": git,
        "device": result.get("device"),
        "device_kind": result.get("device_kind"),
        "versions": result.get("versions") or {},
        "inputs": _inputs_text(result.get("inputs"), result.get("path")),
        "timing": keep,
        "lines": result.get("lines") or [],
        "kernels": result.get("kernels") or [],
        **_memory_kept(result),
        # A result restored from the history (a reopen, a restart) shows its trace while the
        # file is still in the cache, and the same share of time on lines as when it ran.
        **{k: result[k] for k in ("trace_path", "accounting") if result.get(k) is not None},
    }


def _memory_kept(result: dict[str, Any]) -> dict[str, Any]:
    """A profile with memory: each device's peak and its line (the lines keep their own
    allocations); the live-at-peak lists and the timeline are not kept."""
    memory = result.get("memory")
    if not isinstance(memory, dict):
        return {}
    devices = [
        {
            k: dev.get(k)
            for k in (
                "device",
                "label",
                "peak_bytes",
                "peak_line",
                "peak_in_backward",
                "peak_host_line",
            )
        }  # fmt: skip
        for dev in memory.get("devices") or []
    ]
    return {"memory": {"devices": devices, "source": memory.get("source")}}


def entry_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry without its bulky parts (lines, kernels, samples): what a list shows."""
    timing = {k: v for k, v in (entry.get("timing") or {}).items() if k != "samples_ms"}
    return {
        "id": entry["id"],
        "time": entry.get("time"),
        "function": entry.get("function"),
        "path": entry.get("path"),
        "device": entry.get("device"),
        "device_kind": entry.get("device_kind"),
        "git": entry.get("git"),
        "file_hash": entry.get("file_hash"),
        "versions": entry.get("versions") or {},
        "inputs": entry.get("inputs"),
        "timing": timing,
        "kernel_count": sum(
            float(k.get("calls") or 1)
            for line in entry.get("lines") or []
            for op in line.get("ops") or []
            for k in op.get("kernels") or []
            if k.get("kind", "kernel") == "kernel"
        ),
        **(
            {"peak_bytes": {str(d.get("device")): d.get("peak_bytes") for d in memory["devices"]}}
            if isinstance(memory := entry.get("memory"), dict) and memory.get("devices")
            else {}
        ),
    }


def function_key(path: str, function: str) -> str:
    """The key of a function's runs: a hash of its file's absolute path and its qualified name
    (the legacy JSON-lines files were named by it too)."""
    return hashlib.sha256(f"{os.path.abspath(path)}::{function}".encode()).hexdigest()[:16]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def shape_problem(entry: Any) -> str | None:
    """Why ``entry`` is not a run a comparison can read (``None``: it is one)."""
    if not isinstance(entry, dict):
        return f"not a run (a JSON {type(entry).__name__}, not an object)"
    timing = entry.get("timing")
    if not isinstance(timing, dict) or not _is_number(timing.get("median_ms")):
        return "not a run (no timing.median_ms)"
    for key in ("lines", "kernels", "text"):
        if entry.get(key) is not None and not isinstance(entry[key], list):
            return f"not a run ({key} is not a list)"
    return None


def decode(raw: bytes) -> tuple[Any, str | None]:
    """A JSON value from UTF-8 bytes, or why it cannot be read."""
    try:
        return json.loads(raw.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at {exc.start})"
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"not JSON ({getattr(exc, 'msg', type(exc).__name__)})"
