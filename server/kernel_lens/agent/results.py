"""The one builder of a profile result (the CLI's ``--json`` object): its head (what ran, where,
on which device), the per-line part from a profiled pass, and the per-kernel totals.

A leaf below the runner (:mod:`kernel_lens.agent.runner`, for functions and whole scripts) and
the magic (:mod:`kernel_lens.notebook.magic`, for a cell or one call in the user's kernel),
which both build their results here, so the keys and their order are the same wherever a result
comes from.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kernel_lens.analysis.line_attribution import FILE_STRIDE, all_ops, split_line_key
from kernel_lens.analysis.memory import attribute_memory
from kernel_lens.wire.results import ProfileHead

__all__ = ["device_of_run", "kernel_totals", "line_results", "profile_head", "profile_result"]


def device_of_run() -> tuple[str, str]:
    """``("cuda", <device name>)`` once the run has used CUDA, else ``("cpu", "CPU")``."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return "cuda", torch.cuda.get_device_name()
    return "cpu", "CPU"


def kernel_totals(
    lines_json: list[dict[str, Any]], other_files: Iterable[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """Each kernel's device time and calls over every line (the result's ``kernels``), the
    longest first, with the lines that launched it (``other_files``: lines of a deep run's
    other files, counted but not listed among the lines)."""
    totals: dict[str, dict[str, Any]] = {}
    own = len(lines_json)
    for i, line in enumerate([*lines_json, *other_files]):
        # a line's own ops and the backward its forward caused: every kernel counts once
        for op in all_ops(line):
            for k in op["kernels"]:
                row = totals.setdefault(
                    k["name"],
                    {
                        "name": k["name"],
                        "short_name": k["short_name"],
                        "kind": k["kind"],
                        "device_us": 0.0,
                        "calls": 0.0,
                        "lines": [],
                    },
                )
                row["device_us"] += k["device_us"]
                row["calls"] += k["calls"]
                if i < own and line["line"] not in row["lines"]:
                    row["lines"].append(line["line"])
    out = sorted(totals.values(), key=lambda r: -r["device_us"])
    for row in out:
        row["device_us"] = round(row["device_us"], 3)
        calls = row["calls"]
        row["calls"] = int(calls) if float(calls).is_integer() else round(calls, 3)
    return out


def line_results(
    trace: dict[str, Any],
    *,
    runs: int,
    source_of: Callable[[int], str],
    within: tuple[int, int] | None = None,
    only_with_ops: bool = False,
    in_line_order: bool = False,
    files: Sequence[str] | None = None,
    sources: Callable[[str, int], str] | None = None,
    compiled: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``lines``, ``kernels``, ``unattributed`` and ``accounting`` keys of a result, from a
    profiled pass's Chrome trace (numbers per run): each line with the backward its forward ops
    caused, and where every microsecond of the trace's device time went (on the kept lines, or
    a named remainder — lines outside ``within`` are one).

    Args:
        trace: the pass's trace, loaded.
        runs: calls the pass made (the numbers are divided by it).
        source_of: the stripped source text of a 1-based line.
        within: ``(first, last)`` lines kept (``None``: every attributed line).
        only_with_ops: leave out lines that ran no op (a script's ``import``/``def`` lines).
        in_line_order: the lines sorted by number (else in the attribution's order).
        files: a deep whole run's files (:mod:`kernel_lens.agent.stages.deep`), the profiled
            one first: the lines of the others go under ``files`` (``{path: [lines…]}``).
        sources: the stripped text of a line of one of ``files``.
        compiled: the run's compiled graphs by key
            (:func:`kernel_lens.analysis.compiled_lines.compiled_graphs`): their kernels on the
            lines of the nodes they fused, kept even outside ``within``.
    """
    from kernel_lens.analysis.line_attribution import attribute_trace

    found = attribute_trace(
        trace,
        runs=runs,
        first_line=within[0] if within is not None else None,
        last_line=within[1] if within is not None else None,
        compiled=compiled,
    )
    lines = found.lines
    kept = found.compiled_lines
    items: Iterable[tuple[int, Any]] = sorted(lines.items()) if in_line_order else lines.items()
    # A pass with profile_memory: what each line allocated, and the peak.
    per_line, memory = attribute_memory(
        trace,
        runs=runs,
        source_of=source_of,
        first_line=within[0] if within is not None else None,
        last_line=within[1] if within is not None else None,
    )
    rows: list[dict[str, Any]] = []
    others: dict[str, list[dict[str, Any]]] = {}
    for key, stat in items:
        index, no = split_line_key(key)
        mem = per_line.get(key)
        if only_with_ops and not (
            stat.ops or stat.backward or stat.backward_pass or stat.shared or mem
        ):
            continue
        if index == 0:
            if within is None or within[0] <= no <= within[1] or key in kept:
                row = stat.to_json(source_of(no))
                if mem:
                    row["memory"] = mem
                _compiled_lines(row, 0, files)
                rows.append(row)
            continue
        if files is None or index >= len(files):
            continue
        path = files[index]
        row = stat.to_json(sources(path, no) if sources is not None else "")
        row["line"] = no
        if mem:
            row["memory"] = mem
        _local_lines(row, index)
        _compiled_lines(row, index, files)
        others.setdefault(path, []).append(row)
    for row in rows:
        _local_lines(row, 0)
    out: dict[str, Any] = {"lines": rows}
    if files is not None:
        out["files"] = others
    out["kernels"] = kernel_totals(rows, [r for file_rows in others.values() for r in file_rows])
    out["unattributed"] = [k.to_json() for k in found.unattributed]
    out["accounting"] = found.accounting.to_json()
    if memory is not None:
        out["memory"] = memory
    return out


def _compiled_lines(row: dict[str, Any], index: int, files: Sequence[str] | None) -> None:
    """A row's compiled kernels' ``compiled.lines`` (attribution keys) as the lines of the row's
    own file (``lines``) and the others (``elsewhere``: ``{"path", "line"}``), and
    ``shared_with`` / ``counted_on``: the kernel's other lines, and where it is counted."""
    key_of_row = index * FILE_STRIDE + int(row["line"])
    for op in [*all_ops(row), *(row.get("shared") or [])]:
        info = op.get("compiled")
        if not isinstance(info, dict):
            continue
        keys = [int(k) for k in info.get("lines") or []]
        local: list[int] = []
        elsewhere: list[dict[str, Any]] = []
        for key in keys:
            i, no = split_line_key(key)
            if i == index:
                local.append(no)
            elif files is not None and i < len(files):
                elsewhere.append({"path": files[i], "line": no})
        info["lines"] = local
        if elsewhere:
            info["elsewhere"] = elsewhere
        info["shared_with"] = [
            split_line_key(k)[1] for k in keys if k != key_of_row and split_line_key(k)[0] == index
        ]
        if keys and keys[0] != key_of_row:
            i, no = split_line_key(keys[0])
            info["counted_on"] = {
                "line": no,
                **({"path": files[i]} if files and i != index and i < len(files) else {}),
            }


def _local_lines(row: dict[str, Any], index: int = 0) -> None:
    """A row's ``backward_pass.lines`` as the lines of the row's own file (the ``index``-th of
    the run's; the pass's lines in other files are on those files' rows)."""
    bpass = row.get("backward_pass")
    if isinstance(bpass, dict) and bpass.get("lines"):
        keys = [split_line_key(k) for k in bpass["lines"]]
        bpass["lines"] = sorted({no for i, no in keys if i == index})
        others = len({i for i, _ in keys if i != index})
        if others:
            bpass["other_files"] = others


def profile_result(
    *,
    function: str,
    path: str,
    def_line: int,
    first_line: int,
    last_line: int,
    device: str,
    device_kind: str,
    inputs: Mapping[str, Any],
    stages: list[str],
    call_style: str,
    triton_interpreter: bool | None = None,
    **parts: Any,
) -> dict[str, Any]:
    """A profile result: its head in a fixed order, then ``parts`` (``timing``, ``trace_path``,
    ``lines``…) in the order given.

    Args:
        function: the qualified name (``<script>``, ``cell``… for what is not a function).
        path: the file (or pseudo file) the lines are of.
        def_line: 1-based line of the ``def``; first_line/last_line: the lines it spans.
        device: the device's name (``CPU``, ``NVIDIA H200``…); device_kind: ``cpu`` or ``cuda``.
        inputs: where the inputs came from (the ``inputs`` object).
        stages: the stages that ran.
        call_style: how the body ran (``called``, ``awaited``, ``consumed``, ``script``…).
        triton_interpreter: whether Triton kernels ran under the interpreter (left out: unknown).
        parts: the stages' keys.
    """
    result: dict[str, Any] = dict(
        profile_head(
            function=function,
            path=path,
            def_line=def_line,
            first_line=first_line,
            last_line=last_line,
            device=device,
            device_kind=device_kind,
            inputs=inputs,
            stages=stages,
            call_style=call_style,
            triton_interpreter=triton_interpreter,
        )
    )
    result.update(parts)
    return result


def profile_head(
    *,
    function: str,
    path: str,
    def_line: int,
    first_line: int,
    last_line: int,
    device: str,
    device_kind: str,
    inputs: Mapping[str, Any],
    stages: list[str],
    call_style: str,
    triton_interpreter: bool | None = None,
) -> ProfileHead:
    """A profile result's head, the wire's ``ProfileHead`` (the arguments are
    :func:`profile_result`'s)."""
    import torch

    head: ProfileHead = {
        "function": function,
        "path": path,
        "def_line": def_line,
        "first_line": first_line,
        "last_line": last_line,
        "device": device,
        "device_kind": device_kind,
        "inputs": dict(inputs),
        "versions": {"torch": str(torch.__version__), "python": platform.python_version()},
        "stages": stages,
        "call_style": call_style,
    }
    if triton_interpreter is not None:
        head["triton_interpreter"] = triton_interpreter
    return head
