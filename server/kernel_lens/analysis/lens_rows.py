"""The rows of code lenses, as data: which lenses a function, a line, a Triton kernel or a
script's run gets, in which order, with which titles and command arguments (pure: no pygls;
``lsp/code_lens.py`` answers the request, ``lsp/lens_json.py`` turns each :class:`Lens` into
an LSP ``CodeLens`` and a row into its JSON).

One row per function, short enough for half an editor's width:

- before a run: ``Profile`` and at most two more actions (a ``Sweep P`` for an int parameter
  that reaches a kernel launch, ``Generated Code``); any others behind ``…``;
- after a run: the summary (the number), ``Re-profile``, ``Report`` and ``…``, a quick pick of
  the rest (Generated Code, Nsight Compute, sweeps), where an action that cannot work here is
  listed with the reason instead of failing after the click; the per-line lenses below;
- a Triton kernel: ``Show Assembly`` (its numbers once compiled) and ``…`` (*Compare
  Assembly…*).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from kernel_lens.analysis.compare import line_delta
from kernel_lens.analysis.distributed_text import distributed_line_text
from kernel_lens.analysis.error_actions import CMD_SHOW_ERROR, error_actions
from kernel_lens.analysis.functions import FunctionInfo
from kernel_lens.analysis.interp_text import values_lens_title
from kernel_lens.analysis.lens_targets import LensTarget
from kernel_lens.analysis.lens_text import (
    LONGER_BUDGET_SCALE,
    compared_lens_title,
    error_lens_title,
    line_lens_title,
    line_shares,
    noise_hint,
    running_lens_title,
    share_text,
    summary_lens_title,
)
from kernel_lens.analysis.memory_text import oom_lines
from kernel_lens.analysis.package_share import suggestion
from kernel_lens.analysis.scripts import script_share_text
from kernel_lens.wire.lsp import (
    CMD_ATTRIBUTE_INSIDE,
    CMD_CHECK_MEMORY,
    CMD_COMPARE_ASSEMBLY,
    CMD_DEBUG_KERNEL,
    CMD_MORE_ACTIONS,
    CMD_PROFILE,
    CMD_PROFILE_KERNEL_LINES,
    CMD_RUN_NCU,
    CMD_SET_BASELINE_AT_CURSOR,
    CMD_SHOW_ASSEMBLY,
    CMD_SHOW_GENERATED_CODE,
    CMD_SHOW_REPORT,
    CMD_SHOW_VALUES,
    CMD_SWEEP,
    AttributeInsideArgs,
)

__all__ = [
    "MAX_ROW_ACTIONS",
    "MORE_TITLE",
    "PROFILING_TITLE",
    "TRUST_COMMAND",
    "TRUST_TITLE",
    "Lens",
    "before_run_row",
    "error_row",
    "inside_lenses",
    "kernel_row",
    "line_lenses",
    "more_actions",
    "profile_lens",
    "ranks_lens",
    "result_row",
    "running_row",
    "script_line_lenses",
]

TRUST_COMMAND = "workbench.trust.manage"
#: The trust lens of a function in an untrusted workspace.
TRUST_TITLE = "$(shield) Kernel Lens: trust this workspace to profile"
#: Actions on a function's row besides its status or summary; the rest go behind ``…``.
MAX_ROW_ACTIONS = 2
MORE_TITLE = "More…"
PROFILING_TITLE = "$(sync~spin) Profiling…"
#: Why torch.compile's actions are not offered for a kernel run by Triton's interpreter.
_INTERPRETED = "torch.compile cannot trace Triton kernels run by Triton's interpreter (no GPU)"
_NO_GPU = "needs an NVIDIA GPU: this function ran on the CPU"


class Lens(NamedTuple):
    """One code lens: its 0-based line, title, command (``""``: text only), the command's
    arguments and a tooltip."""

    line0: int
    title: str
    command: str = ""
    arguments: list[Any] | None = None
    tooltip: str | None = None


def profile_lens(uri: str, info: FunctionInfo, title: str) -> Lens:
    """``Profile`` (or ``Re-profile``) of a function."""
    return Lens(info.first_line - 1, title, CMD_PROFILE, [{"uri": uri, "function": info.qualname}])


def _reprofile_lens(
    uri: str, info: FunctionInfo, result: Mapping[str, Any], budget_ms: float
) -> Lens:
    """*Re-profile*; *Re-profile longer* (the timing budget × 4 for that run) when the timing is
    too noisy to read or compare, with what would help in its tooltip."""
    hint = noise_hint(dict(result), budget_ms)
    if hint is None:
        return profile_lens(uri, info, "$(refresh) Re-profile")
    args = {"uri": uri, "function": info.qualname, "budget_scale": LONGER_BUDGET_SCALE}
    return Lens(info.first_line - 1, "$(refresh) Re-profile longer", CMD_PROFILE, [args], hint)


def _action(title: str, command: str, args: dict[str, Any], detail: str = "") -> dict[str, Any]:
    """One action of a row or of its ``…`` quick pick."""
    return {"label": title, "detail": detail, "command": command, "arguments": [args]}


def _disabled(title: str, reason: str) -> dict[str, Any]:
    """An action that cannot work here, listed with why (never offered as a click that fails)."""
    return {"label": title, "disabled": reason}


def _gpu_actions(args: dict[str, Any], ncu_ok: bool | None) -> list[dict[str, Any]]:
    """Nsight Compute and Check Memory after a run: disabled after a run on the CPU."""
    if ncu_ok is False:
        return [
            _disabled("$(pulse) Nsight Compute", _NO_GPU),
            _disabled("$(shield) Check Memory", _NO_GPU),
        ]
    return [
        _action(
            "$(pulse) Nsight Compute",
            CMD_RUN_NCU,
            args,
            "why each kernel is not faster: Speed of Light, occupancy, rule hints",
        ),
        _action(
            "$(shield) Check Memory",
            CMD_CHECK_MEMORY,
            args,
            "compute-sanitizer: out-of-bounds and misaligned accesses, on their lines",
        ),
    ]


def more_actions(
    uri: str,
    target: LensTarget,
    result: Mapping[str, Any] | None,
    *,
    ncu_ok: bool | None = None,
) -> list[dict[str, Any]]:
    """A function's actions in the order they are offered, the first ones on its row.

    Args:
        uri: the document.
        target: the function and its lens facts.
        result: its last successful profile's result (``None``: no successful run).
        ncu_ok: whether Nsight Compute can run for it: ``False`` after a run without a GPU,
            ``None`` when not known yet (no run).
    """
    info = target.info
    args = {"uri": uri, "function": info.qualname}
    ok = result is not None
    sweeps = [
        _action(
            f"$(settings) Sweep {param}",
            CMD_SWEEP,
            {**args, "param": param},
            f"time {info.qualname} over values of {param} and show the fastest",
        )
        for param in target.sweep_params
    ]
    generated = _action(
        "$(symbol-namespace) Generated Code",
        CMD_SHOW_GENERATED_CODE,
        args,
        "what torch.compile generates for this function, beside the source",
    )
    compare = _action(
        "$(zap) Eager vs Compiled",
        CMD_PROFILE,
        {**args, "compare_compiled": True},
        "profile it eager and torch.compile'd: per line what compilation changed, the speed-up",
    )
    if ok and "Triton interpreter" in str((result or {}).get("device", "")):
        # Dynamo cannot trace a kernel that Triton's interpreter runs: say so, don't fail later.
        generated = _disabled("$(symbol-namespace) Generated Code", _INTERPRETED)
        compare = _disabled("$(zap) Eager vs Compiled", _INTERPRETED)
    if not ok:
        # behind "…" before a run (the row keeps its two actions)
        return [*sweeps, generated, compare]
    report = _action(
        "$(graph) Report",
        CMD_SHOW_REPORT,
        args,
        "timeline, ops and kernels, Nsight Compute and sweeps of this function",
    )
    # Profile Memory: in the row's "…" after a run (a row before one keeps its two actions);
    # before a run it is the palette's *Profile Memory of Function at Cursor*.
    memory = _action(
        "$(database) Profile Memory",
        CMD_PROFILE,
        {**args, "memory": True},
        "what each line allocates and frees, the peak and what is alive at it, by line",
    )
    baseline = _action(
        "$(pinned) Set as Baseline",
        CMD_SET_BASELINE_AT_CURSOR,
        args,
        "compare later runs of this function with this one (a toast offers Undo)",
    )
    return [report, generated, *sweeps, *_gpu_actions(args, ncu_ok), memory, compare, baseline]


def _more(first0: int, qualname: str, rest: list[dict[str, Any]]) -> Lens:
    return Lens(first0, MORE_TITLE, CMD_MORE_ACTIONS, [{"function": qualname, "items": rest}])


def _row(first0: int, head: list[Lens], actions: list[dict[str, Any]], qualname: str) -> list[Lens]:
    """``head`` (status or summary lenses), then at most :data:`MAX_ROW_ACTIONS` enabled
    actions, then ``…`` with the rest when there is more."""
    shown = [a for a in actions if "disabled" not in a][:MAX_ROW_ACTIONS]
    rest = [a for a in actions if a not in shown]
    row = list(head)
    row.extend(Lens(first0, a["label"], a["command"], a["arguments"]) for a in shown)
    if rest:
        row.append(_more(first0, qualname, rest))
    return row


def ranks_lens(uri: str, info: FunctionInfo, nproc: int) -> Lens:
    """*Profile on N ranks*: the function under torchrun, each rank profiled, merged."""
    return Lens(
        info.first_line - 1,
        f"$(server-process) Profile on {nproc} ranks",
        CMD_PROFILE,
        [{"uri": uri, "function": info.qualname, "nproc_per_node": nproc}],
    )


def before_run_row(uri: str, target: LensTarget, ranks: list[Lens]) -> list[Lens]:
    """A function's row before any run: ``Profile`` (and *Profile on N ranks*), its actions."""
    info = target.info
    head = [profile_lens(uri, info, "$(play) Profile"), *ranks]
    return _row(info.first_line - 1, head, more_actions(uri, target, None), info.qualname)


def error_row(uri: str, info: FunctionInfo, error: Mapping[str, Any]) -> list[Lens]:
    """A failed run's row: the clipped reason (its click shows the whole error with what can
    fix it) and ``Profile``."""
    failure: dict[str, Any] = {k: error[k] for k in ("kind", "message", "line") if k in error}
    memory = error.get("memory")
    if isinstance(memory, dict):
        # an out-of-memory: what was alive at the failure, by line, under the message
        failure["message"] = "\n".join([str(failure.get("message", "")), "", *oom_lines(memory)])
    detail: dict[str, Any] = {
        "function": info.qualname,
        "error": failure,
        "actions": error_actions(dict(error), uri=uri),
    }
    return [
        Lens(info.first_line - 1, error_lens_title(dict(error)), CMD_SHOW_ERROR, [detail]),
        profile_lens(uri, info, "$(play) Profile"),
    ]


def result_row(
    uri: str,
    target: LensTarget,
    result: Mapping[str, Any],
    *,
    budget_ms: float,
    ranks: list[Lens],
) -> list[Lens]:
    """A function's row after a run placed on the current text: the summary (a restored run
    says so), *Re-profile*, the first other action and ``…``."""
    info = target.info
    first0 = info.first_line - 1
    title = summary_lens_title(dict(result))
    summary = Lens(
        first0,
        ("$(history) " if result.get("restored") else "") + title,
        tooltip="Set as Baseline (More…, the palette) compares later runs with this one",
    )
    head = [summary, _reprofile_lens(uri, info, result, budget_ms), *ranks]
    # Re-profile is one of the row's two actions: the first other one (Report) joins it.
    cuda = result.get("device_kind") == "cuda"
    actions = more_actions(uri, target, result, ncu_ok=cuda)
    shown = actions[: MAX_ROW_ACTIONS - 1]
    lenses = head + [Lens(first0, a["label"], a["command"], a["arguments"]) for a in shown]
    rest = actions[MAX_ROW_ACTIONS - 1 :]
    if rest:
        lenses.append(_more(first0, info.qualname, rest))
    return lenses


def line_lenses(
    result: Mapping[str, Any],
    current_line: Callable[[int], int],
    cuda: bool,
    uri: str | None = None,
    function: str | None = None,
) -> list[Lens]:
    """A result's per-line lenses, each on the line it was measured on where it is now
    (``current_line``: the run's 1-based line → the text's); with ``uri`` and ``function``, a
    line mostly inside an installed package offers to attribute inside it."""
    lenses: list[Lens] = []
    as_dict = dict(result)
    timing = result.get("timing") or {}
    median_ms = timing.get("median_ms")
    shares = line_shares(as_dict) if isinstance(median_ms, int | float) and median_ms > 0 else {}
    for line in result.get("lines") or []:
        no = int(line["line"])
        share = shares.get(no)
        line_title = line_lens_title(
            line,
            cuda=cuda,
            share=share_text(share, float(median_ms)) if share is not None and median_ms else None,
            memory_first=not (result.get("memory") or {}).get("auto"),
        )
        compared = compared_lens_title(as_dict, no)
        if compared is not None:  # Eager vs Compiled: what compilation changed on the line
            lenses.append(Lens(current_line(line["line"]) - 1, compared))
        delta = line_delta(as_dict, no)  # what changed since the reference run
        if delta:
            line_title = f"{line_title} · {delta}" if line_title else delta
        distributed = distributed_line_text(line)  # rank 0, the slowest rank, the skew
        if distributed:
            line_title = f"{line_title} · {distributed}" if line_title else distributed
        if line_title is not None:
            lenses.append(Lens(current_line(line["line"]) - 1, line_title))
        if uri is not None and line.get("inside"):
            named = list((result.get("packages") or {}).keys())
            at = current_line(line["line"]) - 1
            lenses.extend(inside_lenses(at, line, uri, function, named))
    return lenses


def running_row(
    first0: int,
    result: Mapping[str, Any] | None,
    stage: str,
    current_line: Callable[[int], int] | None,
) -> list[Lens]:
    """A running profile: one summary lens on the function's row (replaced as the job streams
    its result, never added to), and the per-line lenses as soon as its lines are known, on the
    lines they will keep (``current_line``: ``None`` while they cannot be placed)."""
    if not result or current_line is None:
        return [Lens(first0, PROFILING_TITLE)]
    try:
        cuda = result.get("device_kind") == "cuda"
        return [
            Lens(first0, running_lens_title(dict(result), stage)),
            *line_lenses(result, current_line, cuda),
        ]
    except Exception:  # a part that cannot be shown yet: the spinner until the whole result
        return [Lens(first0, PROFILING_TITLE)]


def inside_lenses(
    line0: int, row: Mapping[str, Any], uri: str, function: str | None, named: list[str]
) -> list[Lens]:
    """A line whose time is mostly inside an installed package (``out = model(x)`` → 98%
    inside ``transformers``): say so, and offer *Attribute inside transformers* (the same run
    again with the package named; see ``analysis/package_share.py``)."""
    found = suggestion(row.get("inside"), named)
    if found is None:
        return []
    package = str(found["package"])
    share = float(found["share"])
    args: AttributeInsideArgs = {
        "uri": uri,
        "package": package,
        "function": function,
        "packages": list(named),
    }
    tooltip = (
        f"{share:.0%} of this line's time was in {package}'s code: run again with its lines "
        f"attributed (kernelLens.attributeInPackages), then open its files to see them"
    )
    title = f"$(package) {share:.0%} inside {package} · Attribute inside {package}"
    return [Lens(line0, title, CMD_ATTRIBUTE_INSIDE, [args], tooltip)]


def script_line_lenses(result: Mapping[str, Any], uri: str) -> list[Lens]:
    """A whole script's run: a lens on each module-level line that did work (its share of the
    ops' time on a CPU run) and the *Attribute inside* offers."""
    lenses: list[Lens] = []
    cuda = result.get("device_kind") == "cuda"
    named = list((result.get("packages") or {}).keys())
    shares = line_shares(dict(result))  # a CPU run: each line's part of the ops' time (issue 41)
    for line in result.get("lines") or []:
        no = int(line["line"])
        share = shares.get(no)
        line_title = line_lens_title(
            line, cuda=cuda, share=None if share is None else script_share_text(share)
        )
        if line_title is not None:
            lenses.append(Lens(no - 1, line_title))
        lenses.extend(inside_lenses(no - 1, line, uri, None, named))
    return lenses


def kernel_row(
    uri: str,
    info: FunctionInfo,
    values: Mapping[str, Any] | None,
    assembly: Mapping[str, Any] | None,
) -> list[Lens]:
    """``Show Assembly`` (with its numbers once compiled: ``assembly``, the latest), ``Show
    Values`` (what it showed last: ``values``) and ``Debug Kernel`` above a Triton kernel, and
    ``…`` with *Compare Assembly…* (this kernel against another, or itself at another
    BLOCK_SIZE) and *Profile Kernel Lines*."""
    args: dict[str, Any] = {"uri": uri, "kernel": info.qualname}
    line0 = info.first_line - 1
    shown = (
        Lens(line0, values_lens_title(dict(values)), CMD_SHOW_VALUES, [{**args, "pick": True}])
        if values
        else Lens(line0, "$(symbol-variable) Show Values", CMD_SHOW_VALUES, [args])
    )
    debug = Lens(line0, "$(debug-alt) Debug Kernel", CMD_DEBUG_KERNEL, [args])
    compare = _action(
        "$(diff) Compare Assembly…",
        CMD_COMPARE_ASSEMBLY,
        args,
        "this kernel's PTX or SASS beside another's (a load_inline CUDA kernel, another "
        "BLOCK_SIZE, the last commit), normalised, with a summary of each",
    )
    lines = _action(
        "$(flame) Profile Kernel Lines",
        CMD_PROFILE_KERNEL_LINES,
        args,
        "Nsight Compute's source counters: each line's share of the warp stalls and of the "
        "instructions, on the kernel's own lines (a GPU)",
    )
    more = _more(line0, info.qualname, [compare, lines])
    return [_assembly_lens(uri, info, assembly), shown, debug, more]


def _assembly_lens(uri: str, info: FunctionInfo, latest: Mapping[str, Any] | None) -> Lens:
    """``Show Assembly`` above a Triton kernel, with its numbers once compiled."""
    title = (
        f"$(file-binary) PTX · {latest['registers']} regs · {latest['spills']} spills · "
        f"{latest['arch']}"
        if latest
        else "$(file-binary) Show Assembly"
    )
    # Numbers of a compile not for the launch's own types say so where they are shown.
    said = {"text": "types read from the source", "suggested": "suggested inputs"}
    if latest and latest.get("types_from") in said:
        title += f" · {said[latest['types_from']]}"
    elif latest and latest.get("types_from") == "user":
        title += " · types picked"
    return Lens(
        info.first_line - 1, title, CMD_SHOW_ASSEMBLY, [{"uri": uri, "kernel": info.qualname}]
    )
