"""A run's lines with the named packages in them: each line's ``inside`` shares (how much of it
went into an installed package's code), the ``packages`` named and where the time is, file by
file (``by_file``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from kernel_lens.analysis.line_attribution import FILE_STRIDE
from kernel_lens.analysis.package_share import package_shares

__all__ = ["add_package_parts"]


def _row_us(row: Mapping[str, Any]) -> tuple[float, float]:
    """A line's own CPU time and its forward + backward device time, µs per call."""
    cpu = float(row.get("cpu_us") or 0.0)
    device = float(row.get("device_us") or 0.0)
    bpass = row.get("backward_pass")
    if isinstance(bpass, Mapping):
        # (``loss.backward()``'s own time holds the pass, which its forward lines carry)
        cpu = max(0.0, cpu - float(bpass.get("cpu_us") or 0.0))
    backward = row.get("backward")
    if isinstance(backward, Mapping):
        cpu += float(backward.get("cpu_us") or 0.0)
        device += float(backward.get("device_us") or 0.0)
    return cpu, device


def add_package_parts(
    result: dict[str, Any],
    *,
    trace_events: Sequence[Mapping[str, Any]],
    files: Sequence[str],
    packages: Mapping[str, str],
    main_path: str,
    runs: int = 1,
) -> None:
    """Add ``inside`` to the rows of ``result`` (``lines`` and ``files``), and ``packages``
    and ``by_file`` to it.

    Args:
        result: the run's lines part (``lines``, ``files``), changed in place.
        trace_events: the run's trace events (the tracer's ranges as ``user_annotation``).
        files: the run's files in attribution order (the script first).
        packages: the named packages' folders, by name.
        main_path: the script (its rows are ``lines``).
        runs: the profiled calls the trace holds (a line's ``inside`` is per call, as its
            times are).
    """
    shares = package_shares(trace_events)
    index_of = {os.path.abspath(p): i for i, p in enumerate(files)}

    def decorate(rows: object, index: int) -> None:
        if not isinstance(rows, list):
            return
        for row in rows:
            if isinstance(row, dict) and "line" in row:
                found = shares.get(index * FILE_STRIDE + int(row["line"]))
                if found is None:
                    continue
                row["inside"] = [
                    {**f, "cpu_us": round(float(f["cpu_us"]) / max(1, runs), 3)} for f in found
                ]

    decorate(result.get("lines"), 0)
    others = result.get("files")
    if isinstance(others, dict):
        for path, rows in others.items():
            index = index_of.get(os.path.abspath(str(path)))
            if index is not None:
                decorate(rows, index)
    if packages:
        result["packages"] = dict(packages)
    if len(files) > 1:
        result["file_order"] = [os.path.abspath(p) for p in files]

    def package_of(path: str) -> str | None:
        real = os.path.realpath(path)
        for name, root in packages.items():
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                return name
        return None

    by_file: list[dict[str, Any]] = []
    groups: list[tuple[str, object]] = [(main_path, result.get("lines"))]
    if isinstance(others, dict):
        groups += [(str(p), rows) for p, rows in others.items()]
    for path, rows in groups:
        if not isinstance(rows, list) or not rows:
            continue
        cpu = device = 0.0
        for row in rows:
            if isinstance(row, Mapping):
                c, d = _row_us(row)
                cpu += c
                device += d
        by_file.append(
            {
                "path": path,
                "package": package_of(path),
                "cpu_us": round(cpu, 3),
                "device_us": round(device, 3),
            }
        )
    by_file.sort(key=lambda f: (-(f["device_us"] or f["cpu_us"]), f["path"]))
    if packages or len(by_file) > 1:
        result["by_file"] = by_file
