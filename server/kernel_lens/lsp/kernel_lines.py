"""``kernelLens/kernelLines`` (Profile Kernel Lines, issue 35): Nsight Compute's source counters of
a kernel's launches, per line of the kernel — its share of the warp-stall samples and of the
executed instructions, the dominant stall, the line's SASS — for the extension to put on the
kernel's own lines (decorations, a gutter heat bar, hovers).

The launch is the one Show Assembly and Show Values use: the function asked for, else the
kernel's launcher in its file, with its inputs (a directive, a factory, the script's run, or
the driver remembered for it). Running it runs user code: trusted workspaces only, as a
cancellable job with the job timeout. A recorded report (``report``) is read here, in the
server, off the event loop (no user code runs, no GPU needed).

Each kernel's last result is kept per document, so the next run of the same kernel (after an
edit, or another ``BLOCK_SIZE``) says each line's share before and now (``before_pct``).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, cast

from lsprotocol import types

from kernel_lens.analysis.interp_text import kernel_launchers
from kernel_lens.analysis.kernel_lines import kernel_span
from kernel_lens.lsp.common import (
    document_source,
    driver_fields,
    request_failed,
    require_trusted,
    resolve_target,
    uri_to_path,
)
from kernel_lens.lsp.jobs import agent_call
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import KernelLinesRequest
from kernel_lens.wire.lsp import REQ_KERNEL_LINES, KernelLinesParams, KernelLinesResult

__all__ = ["read_report", "setup", "with_before"]


def read_report(path: str, source: str, report: str, kernel: str | None) -> dict[str, Any]:
    """A recorded report's kernels folded onto ``source`` (blocking: run off the loop)."""
    from kernel_lens.analysis.ncu import NcuError
    from kernel_lens.traces.ncu_files import read_kernel_lines

    try:
        kernels = read_kernel_lines(report, path, source, kernel=kernel)
    except NcuError as exc:
        if "ncu_report" in str(exc):
            raise ProfileError("unsupported", str(exc)) from None
        raise ProfileError("not-found", str(exc)) from None
    return {
        "report_path": report,
        "function": None,
        "kernel": kernel,
        "repeat": None,
        "kernels": kernels,
    }


def with_before(result: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """Each line's share in the kernel's previous result, and its time then: two versions of
    the kernel side by side (an edit, another ``BLOCK_SIZE``)."""
    if not previous:
        return result
    earlier = {k["kernel"]: k for k in previous.get("kernels", [])}
    for k in result.get("kernels", []):
        old = earlier.get(k["kernel"])
        if old is None:
            continue
        shares = {row["line"]: row["share_pct"] for row in old["lines"]}
        k["before_duration_us"] = old.get("duration_us")
        for row in k["lines"]:
            row["before_pct"] = shares.get(row["line"])
            was = row["before_pct"]
            row["text"] += " · was " + ("-" if was is None else f"{was:.0f}%")
    return result


def _kernel_name(source: str, params: KernelLinesParams) -> str | None:
    if params.kernel is not None:
        return params.kernel
    if params.position is None:
        return None
    try:
        return resolve_target(source, name=None, position=params.position, kind="kernel")
    except Exception:  # a position in a load_inline file's CUDA string: its __global__ kernel
        line = int(params.position.line) + 1
        for name in re.findall(r"__global__\s+[\w\s\*<>:,]*?\b(\w+)\s*\(", source):
            span = kernel_span(source, name)
            if span is not None and span[0] <= line <= span[1]:
                return str(name)
        return None


def setup(ls: KernelLensServer) -> None:
    """Register the request; each document's kernels' last results live in the closure."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}

    async def kernel_lines(ls: KernelLensServer, params: KernelLinesParams) -> KernelLinesResult:
        try:
            path, source = uri_to_path(params.uri), document_source(ls, params.uri)
        except ProfileError as err:
            raise request_failed(err) from None
        kernel = _kernel_name(source, params)
        try:
            if params.report:
                result = await asyncio.to_thread(read_report, path, source, params.report, kernel)
            else:
                require_trusted(ls)
                function = params.function
                fields = driver_fields(ls, params.uri, function) if function else {}
                if function is None and kernel is not None:
                    # the driver a quick fix remembered for one of the kernel's launchers
                    for launcher in kernel_launchers(source, kernel):
                        fields = driver_fields(ls, params.uri, launcher)
                        if fields:
                            function = launcher
                            break
                ls.log(f"kernel lines of {kernel or function} (Nsight Compute source counters)")
                result = await agent_call(
                    ls,
                    KernelLinesRequest(
                        path=path,
                        function=function,
                        kernel=kernel,
                        text=source,
                        timeout=ls.settings.timeout_seconds * 0.95,
                        **fields,
                    ),
                )
        except ProfileError as err:
            ls.log(f"kernel lines of {kernel}: {err}", types.MessageType.Error)
            raise request_failed(err) from None
        key = (params.uri, kernel or "*")
        previous = latest.get(key)
        latest[key] = {
            "kernels": [
                {
                    "kernel": k["kernel"],
                    "duration_us": k["duration_us"],
                    "lines": [{"line": r["line"], "share_pct": r["share_pct"]} for r in k["lines"]],
                }
                for k in result["kernels"]
            ]
        }
        with_before(result, previous)
        for k in result["kernels"]:
            top = k["lines"][0] if k["lines"] else None
            ls.log(
                f"{k['kernel']}: {k['sampling']}"
                + (f"; hottest line {top['line']}: {top['text']}" if top else ""),
                types.MessageType.Info,
            )
        return cast(KernelLinesResult, result)

    ls.feature(REQ_KERNEL_LINES)(kernel_lines)
