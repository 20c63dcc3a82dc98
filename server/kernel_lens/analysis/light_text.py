"""How a light whole-run profile (*Profile Script (Light)*, Triton's Proton; issue 36) is shown:
the lenses of the script's first line and of each line with kernel time, and the hover, always
labelled as light and saying what it leaves out (:data:`LIGHT_LABEL`), with the deep trace of a
window one click away.

Pure: a :class:`~kernel_lens.wire.results.LightResult` (or one file's rows of it) in, lens rows
(:class:`~kernel_lens.analysis.lens_rows.Lens`) and Markdown out.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from kernel_lens.analysis.error_actions import CMD_SHOW_ERROR, error_actions
from kernel_lens.analysis.lens_rows import MORE_TITLE, Lens
from kernel_lens.analysis.light_lines import LIGHT_LABEL
from kernel_lens.analysis.names import short_kernel_name
from kernel_lens.analysis.report_text import format_us
from kernel_lens.analysis.safe_text import md_code, md_text
from kernel_lens.wire.lsp import (
    CMD_MORE_ACTIONS,
    CMD_PROFILE,
    CMD_PROFILE_SCRIPT_LIGHT,
    CMD_PROFILE_SCRIPT_WINDOW,
    ErrorAction,
)

__all__ = [
    "LIGHT_LABEL",
    "LIGHT_NAME",
    "LIGHT_SHORT",
    "NO_GPU_HINT",
    "light_before_run",
    "light_error_row",
    "light_file_lenses",
    "light_head_title",
    "light_hover",
    "light_line_title",
    "light_summary_title",
    "no_gpu",
    "script_actions",
    "script_more",
]

#: The record of a script's light run (never a valid Python name, so never a function's).
LIGHT_NAME = "<light>"
#: What every light lens starts with.
LIGHT_SHORT = "$(pulse) light"
#: Kernels named on a line's lens at most.
MAX_LENS_KERNELS = 1
#: Said with a light profile that cannot run without CUDA.
NO_GPU_HINT = (
    "The light profile records CUDA kernels through Triton's Proton and needs a CUDA GPU; "
    "Profile Script (the deep profile, torch.profiler) works on the CPU too"
)


def _lens_text(value: object, width: int = 48) -> str:
    """A stored string (a kernel's name) for a lens title: one line, clipped, and no ``$(``
    that the editor would draw as an icon."""
    text = " ".join(str(value).split()).replace("$(", "$\u200b(")
    return text if len(text) <= width else text[: width - 1] + "…"


def _share(us: float, total_us: float) -> str:
    if total_us <= 0:
        return ""
    pct = 100.0 * us / total_us
    return f" ({'<1' if 0 < pct < 1 else f'{pct:.0f}'}%)"


def light_summary_title(result: Mapping[str, Any]) -> str:
    """``$(pulse) light · whole run 12.3 s · 4.12 ms of kernels on 23 lines · NVIDIA H200``."""
    wall = float(result.get("wall_s") or 0.0)
    files = result.get("files") or {}
    lines = sum(len(rows) for rows in files.values())
    total = float(result.get("total_kernel_us") or 0.0)
    run = f"{wall:.1f} s" if wall >= 1 else format_us(wall * 1e6)
    text = (
        f"{LIGHT_SHORT} · whole run {run} · {format_us(total)} of kernels on "
        f"{lines} line{'s' if lines != 1 else ''}"
    )
    device = result.get("device")
    return f"{text} · {_lens_text(device, 32)}" if device else text


def light_head_title(script: str, lines: int, stamp: str, edited: int) -> str:
    """``$(pulse) light · from train.py, 12:03 · 4 lines (1 edited since)``: another file's
    first line, with the lines a light run of ``script`` gave it."""
    text = f"{LIGHT_SHORT} · from {_lens_text(script, 40)}, {stamp} · {lines} line"
    text += "s" if lines != 1 else ""
    return f"{text} ({edited} edited since)" if edited else text


def light_line_title(row: Mapping[str, Any], total_us: float) -> str:
    """``$(pulse) light · 1.23 ms (41%) · 40 launches · ampere_sgemm_128x64_nn +1``: a line's
    kernel time over the whole run, its share of the run's kernel time, its kernels."""
    us = float(row.get("kernel_us") or 0.0)
    launches = int(row.get("launches") or 0)
    kernels = list(row.get("kernels") or [])
    text = f"{LIGHT_SHORT} · {format_us(us)}{_share(us, total_us)} · {launches} launch"
    text += "es" if launches != 1 else ""
    if kernels:
        names = [_lens_text(short_kernel_name(str(k.get("name", "")))) for k in kernels]
        text += " · " + ", ".join(names[:MAX_LENS_KERNELS])
        if len(names) > MAX_LENS_KERNELS:
            text += f" +{len(names) - MAX_LENS_KERNELS}"
    return text


def _command_link(title: str, command: str, args: object) -> str:
    encoded = urllib.parse.quote(json.dumps([args]), safe="")
    return f"[{md_text(title)}](command:{command}?{encoded})"


def script_actions(run_uri: str, *, light_done: bool) -> list[dict[str, Any]]:
    """The script's actions of its ``More…`` (and the light row's): the light profile, the deep
    trace of a window, the deep profile of the whole run."""
    args = {"uri": run_uri}
    light = {
        "label": "$(pulse) Re-run Light" if light_done else "$(pulse) Profile Script (Light)",
        "detail": "each line's kernel time, whole run, a few % overhead (Proton, CUDA); "
        "no op names",
        "command": CMD_PROFILE_SCRIPT_LIGHT,
        "arguments": [args],
    }
    window = {
        "label": "$(search) Deep Trace of a Window…",
        "detail": "steps or seconds of the run under torch.profiler: ops, kernels, backward "
        "on the forward lines, the timeline",
        "command": CMD_PROFILE_SCRIPT_WINDOW,
        "arguments": [args],
    }
    deep = {
        "label": "$(run-all) Profile Script",
        "detail": "the whole run under torch.profiler (the deep profile)",
        "command": CMD_PROFILE,
        "arguments": [{"uri": run_uri, "script": True}],
    }
    return [light, window, deep]


def _more(line0: int, script: str, items: list[dict[str, Any]]) -> Lens:
    return Lens(line0, MORE_TITLE, CMD_MORE_ACTIONS, [{"function": script, "items": items}])


def script_more(uri: str, script: str) -> Lens:
    """The script's ``More…``: the light profile and the deep trace of a window."""
    return _more(0, script, script_actions(uri, light_done=False)[:2])


def light_before_run(uri: str, script: str) -> list[Lens]:
    """Beside *Profile Script* before a light run: ``Light`` and ``More…`` (the light profile
    and the deep trace of a window, each with what it is)."""
    actions = script_actions(uri, light_done=False)
    light = actions[0]
    return [
        Lens(0, LIGHT_SHORT.replace("light", "Light"), light["command"], light["arguments"],
             tooltip="Profile Script (Light): " + str(light["detail"])),
        script_more(uri, script),
    ]  # fmt: skip


def no_gpu(error: Mapping[str, Any]) -> bool:
    """Whether a light run failed for want of a CUDA GPU."""
    return error.get("kind") == "unsupported" and "no CUDA GPU" in str(error.get("message"))


def light_error_row(uri: str, script: str, error: Mapping[str, Any]) -> list[Lens]:
    """A failed light run's first lens: why, clipped (its click shows the whole message with
    what can fix it: *Profile Script* first when there is no CUDA GPU), then ``Light`` again."""
    if no_gpu(error):
        title = "$(warning) Light profile: needs a CUDA GPU (none here) · Profile Script works"
    else:
        message = str(error.get("message") or "").splitlines()
        first = message[0] if message else ""
        first = first if len(first) <= 80 else first[:79] + "…"
        title = f"$(warning) Light profile failed: {error.get('kind', 'error')} — {first}"
    deep: ErrorAction = {
        "label": "Profile Script Instead",
        "command": CMD_PROFILE,
        "arguments": [{"uri": uri, "script": True}],
    }
    actions = error_actions(dict(error), uri=uri)
    if no_gpu(error):
        actions = [deep, *actions]
    else:
        # another CUPTI client, Proton missing: a GPU machine is not what would fix it
        actions = [a for a in actions if a["command"] != "workbench.action.openSettings"]
    failure = {k: error[k] for k in ("kind", "message", "line") if k in error}
    detail = {"function": f"{script} (light)", "error": failure, "actions": actions}
    again = script_actions(uri, light_done=False)[0]
    return [
        Lens(0, title, CMD_SHOW_ERROR, [detail]),
        Lens(0, "$(pulse) Light", again["command"], again["arguments"]),
    ]


def light_file_lenses(
    result: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    current: Sequence[str],
    *,
    run_uri: str,
    head: str | None,
) -> list[Lens]:
    """A file's lenses from a light run: on its first line ``head`` (``None``: the caller's own
    first row) with *Deep Trace of a Window…* and ``More…``; on each line whose text is still
    the one that ran, its kernel time. ``current``: the file's lines now."""
    total = float(result.get("total_kernel_us") or 0.0)
    script = str(result.get("path") or run_uri).rsplit("/", 1)[-1]
    out: list[Lens] = []
    if head is not None:
        actions = script_actions(run_uri, light_done=True)
        out.append(Lens(0, head, tooltip=str(result.get("label") or LIGHT_LABEL)))
        window = actions[1]
        out.append(Lens(0, window["label"], window["command"], window["arguments"]))
        out.append(_more(0, script, [actions[0], actions[2]]))
    for row in rows:
        no = int(row.get("line") or 0)
        if not 1 <= no <= len(current) or current[no - 1].strip() != row.get("source"):
            continue
        out.append(
            Lens(no - 1, light_line_title(row, total), tooltip=str(result.get("label") or ""))
        )
    return out


def light_hover(
    result: Mapping[str, Any], row: Mapping[str, Any], *, run_uri: str, origin: str = ""
) -> str:
    """A line's hover from a light run: its kernels (time, share, launches), what the light
    profile leaves out, and the deep trace of a window one click away (``origin``: ``from
    train.py, 12:03`` on another file's line)."""
    total = float(result.get("total_kernel_us") or 0.0)
    us = float(row.get("kernel_us") or 0.0)
    launches = int(row.get("launches") or 0)
    head = f"**Kernel Lens · light profile** (whole run, Triton's Proton){origin and ' · '}"
    head += md_text(origin)
    out = [
        head,
        "",
        f"{format_us(us)} of GPU kernels{_share(us, total)} over {launches} "
        f"launch{'es' if launches != 1 else ''}",
        "",
        "| kernel | time | launches |",
        "|---|---:|---:|",
    ]
    for kernel in list(row.get("kernels") or [])[:12]:
        out.append(
            f"| {md_code(short_kernel_name(str(kernel.get('name', ''))))} | "
            f"{format_us(float(kernel.get('us') or 0.0))} | {int(kernel.get('count') or 0)} |"
        )
    more = len(row.get("kernels") or []) - 12
    if more > 0:
        out.append(f"| +{more} more | | |")
    out += ["", f"*{md_text(result.get('label') or LIGHT_LABEL)}.*", ""]
    links = [
        _command_link("Deep Trace of a Window…", CMD_PROFILE_SCRIPT_WINDOW, {"uri": run_uri}),
        _command_link("Profile Script (deep)", CMD_PROFILE, {"uri": run_uri, "script": True}),
    ]
    out.append(" · ".join(links))
    return "\n".join(out)
