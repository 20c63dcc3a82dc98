"""A failed job in full, in one place, with the one or two actions that can fix it.

The lens of a failed profile is one clipped line; its click (``kernelLens.showError``, the
extension's) and the hover on the function show the whole error — the message, the user's frames
of the traceback only, once — and the actions that fit its kind: open the setting that would fix
it (``kernelLens.agentCommand`` for code that needs a GPU, ``kernelLens.timeoutSeconds`` for a
timeout), choose the interpreter (a missing module), go to the failing line (where a directive's
quick fix is offered), or the output channel.

Pure: the actions are VS Code command ids and JSON arguments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kernel_lens.analysis.safe_text import md_code, md_fence, md_text
from kernel_lens.wire.lsp import (
    CMD_CHOOSE_DRIVER,
    CMD_CHOOSE_INTERPRETER,
    CMD_REVEAL_LINE,
    CMD_SCRIPT_ARGUMENTS,
    CMD_SHOW_ERROR,
    CMD_SHOW_OUTPUT,
    ErrorAction,
)

__all__ = [
    "CMD_REVEAL_LINE",
    "CMD_SHOW_ERROR",
    "error_actions",
    "error_markdown",
    "user_traceback",
]

_OPEN_SETTINGS = "workbench.action.openSettings"

_NEEDS_GPU = re.compile(
    r"needs an NVIDIA GPU|Torch not compiled with CUDA|no CUDA|CUDA (driver|device)|"
    r"0 active drivers|nvcc is not|ncu is not",
    re.I,
)
_MISSING_MODULE = re.compile(r"No module named|ModuleNotFoundError|neither torch nor", re.I)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _action(label: str, command: str, *arguments: Any) -> ErrorAction:
    return {"label": label, "command": command, "arguments": list(arguments)}


def error_actions(error: Mapping[str, Any], *, uri: str) -> list[ErrorAction]:
    """The actions that can fix ``error`` (an ``ErrorObject``), the likeliest first, then the
    output channel; at most four."""
    kind = str(error.get("kind", ""))
    message = str(error.get("message", ""))
    line = error.get("line")
    actions: list[ErrorAction] = []
    arguments = error.get("arguments")
    if isinstance(arguments, Mapping) and arguments.get("uri"):
        # the script exited on its arguments, or needs a device it was not given: give them
        # (prefilled with the CPU ones), then run again what failed
        suggested = arguments.get("suggested")
        name = str(arguments.get("name") or "the script")
        label = f"Run {name} on the CPU…" if suggested else f"Arguments of {name}…"
        actions.append(
            _action(
                label,
                CMD_SCRIPT_ARGUMENTS,
                {
                    "uri": str(arguments["uri"]),
                    "argv": [str(a) for a in arguments.get("argv") or []],
                    "suggested": suggested,
                    "then": arguments.get("then"),
                },
            )
        )
    choice = error.get("driver_choice")
    driver: ErrorAction | None = None
    if isinstance(choice, Mapping) and choice.get("function") and kind != "cancelled":
        label = "Change the Driver…" if choice.get("shown") else "Take the Inputs from…"
        driver = _action(
            label,
            CMD_CHOOSE_DRIVER,
            {"uri": str(choice.get("uri") or uri), "function": str(choice["function"])},
        )
        # first where the inputs are the question (no inputs, a device they lack, a driver in
        # use); after the line of a plain exception in the function's own body
        if kind in ("inputs", "unsupported") or choice.get("shown"):
            actions.append(driver)
            driver = None
    if kind == "unsupported" or _NEEDS_GPU.search(message):
        actions.append(_action("Run on a GPU Machine…", _OPEN_SETTINGS, "kernelLens.agentCommand"))
    if kind == "import" and _MISSING_MODULE.search(message):
        actions.append(_action("Choose Interpreter", CMD_CHOOSE_INTERPRETER))
    if kind == "timeout":
        setting = (
            "kernelLens.compileTimeoutSeconds"
            if "compileTimeoutSeconds" in message
            else "kernelLens.timeoutSeconds"
        )
        actions.append(_action("Raise the Time Limit", _OPEN_SETTINGS, setting))
    if isinstance(line, int) and line > 0:
        label = (
            f"Go to Line {line} (quick fix)"
            if error.get("suggested_directive")
            else f"Go to Line {line}"
        )
        actions.append(_action(label, CMD_REVEAL_LINE, {"uri": uri, "line": line}))
    if driver is not None:
        actions.append(driver)
    # two fixes, three when one of them is the run's own arguments or driver
    own = sum(a["command"] in (CMD_SCRIPT_ARGUMENTS, CMD_CHOOSE_DRIVER) for a in actions)
    return [*actions[: 3 if own else 2], _action("Show Output", CMD_SHOW_OUTPUT)]


def user_traceback(traceback: str | None, path: str | None) -> list[str]:
    """The traceback's frames in the user's file (``path``) with their code lines, and its last
    line (the exception); nothing of torch's, Kernel Lens's or the standard library's."""
    if not traceback:
        return []
    lines = traceback.rstrip().splitlines()
    out: list[str] = []
    keep_next = False
    for text in lines:
        match = _FRAME.match(text)
        if match:
            keep_next = path is not None and match.group("file") == path
            if keep_next:
                out.append(text.strip())
            continue
        if keep_next and text.startswith("    ") and not set(text.strip()) <= set("^~ "):
            out.append("    " + text.strip())
        keep_next = False
    last = next((x for x in reversed(lines) if x.strip() and not x.startswith(" ")), "")
    if last and not last.startswith("Traceback"):
        out.append(last.strip())
    return out


def error_markdown(
    error: Mapping[str, Any],
    *,
    function: str,
    path: str | None,
    links: list[str],
) -> str:
    """The hover of a failed function: the whole message, the user's frames, the actions
    (``links``: Markdown command links, made by the caller)."""
    kind = str(error.get("kind", "error"))
    message = str(error.get("message", "")).strip()
    # Every stored string is data: code-spanned, escaped, or in a fence it cannot close.
    out = [f"**Kernel Lens** · {md_code(function)} failed: {md_text(kind)}", ""]
    body = message.splitlines() or ["(no message)"]
    memory = error.get("memory")
    if isinstance(memory, Mapping):
        # an out-of-memory: what was alive at the failure, by line (the allocator's snapshot)
        from kernel_lens.analysis.memory_text import oom_lines

        body += ["", *oom_lines(memory)]
    out.extend(md_fence(body))
    frames = user_traceback(error.get("traceback"), path)
    if len(frames) > 1:  # more than the exception line, which the message already says
        out += ["", "Your code, innermost last:", *md_fence(frames)]
    if error.get("suggested_directive"):
        directive = md_code(error["suggested_directive"])
        out += ["", f"Suggested: {directive} (the quick fix inserts it)"]
    if links:
        out += ["", " · ".join(links)]
    return "\n".join(out)
