"""``kernel-lens profile PATH::FUNC`` (``--line N``; ``PATH`` alone: the whole script, run once
as ``__main__``): timing, ops and kernels per line, the trace; kept in the function's history
and, with ``--compare previous|baseline``, compared with that run."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kernel_lens.cli.common import (
    job,
    saved_args,
    say,
    split_target,
    stderr_line,
    timeout_option,
    usage_error,
)
from kernel_lens.wire.jobs import ProfileRequest
from kernel_lens.wire.lsp import DEFAULT_BUDGET_MS, DEFAULT_WARMUP_MS


def run(args: argparse.Namespace) -> int:
    """Profile the target; print the result (``--json``: one object); the exit status."""
    path, func = split_target(args.target)
    # PATH alone: the whole script, run once as __main__.
    script = func is None and args.line is None
    argv = list(getattr(args, "script_args", []) or [])
    driver = os.path.abspath(args.driver) if args.driver else None
    problem = _usage_problem(args, script=script, driver=driver, argv=argv)
    if problem is not None:
        return usage_error(args, problem)
    if getattr(args, "light", False):
        return _run_light(args, path, argv)
    if script or driver is not None:
        argv = saved_args(args, driver or os.path.abspath(path), argv)
    try:
        after_s = parse_seconds(args.after) if args.after is not None else None
    except ValueError as exc:
        return usage_error(args, f"--after: {exc}")
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    if args.compare_compiled:
        if script:
            return usage_error(args, "--compare-compiled compares a function: PATH::FUNC")
        # The eager side is the profile's own lines and timing: they run too.
        stages += tuple(s for s in ("timing", "ops", "compare_compiled") if s not in stages)
    # The text measured is the text kept: read once, now, and given to the job (a file edited
    # during the run is stored as it was run, not as it is afterwards).
    measured = None if script or driver is not None else _read_source(os.path.abspath(path))
    request = _request(
        args,
        path,
        func,
        measured,
        stages=stages,
        script=script,
        argv=argv,
        driver=driver,
        after_s=after_s,
    )
    result = job(request, args)
    if isinstance(result, int):
        return result
    # A script's one run has no samples to compare: it is not put in a history.
    comparison = None if script else _record_history(result, path, args, measured)
    if args.json:
        if comparison is not None:
            result["comparison"] = comparison
        say(json.dumps(result))
    else:
        _print_result(result, args, script=script, comparison=comparison)
    partial = (result.get("script") or {}).get("partial")
    if isinstance(partial, dict) and partial.get("reason") == "cancelled":
        return 130  # Ctrl-C: what ran is printed above, and the status still says interrupted
    return 0


def _usage_problem(
    args: argparse.Namespace, *, script: bool, driver: str | None, argv: list[str]
) -> str | None:
    """What is wrong with the command line's combination of options (``None``: nothing)."""
    if driver is not None and script:
        return "--from DRIVER needs a function: PATH::FUNC --from DRIVER"
    if driver is not None and not os.path.isfile(driver):
        return f"--from: no such file {args.driver}"
    window = args.skip or args.steps is not None or args.after is not None
    if getattr(args, "light", False):
        if not script or window or driver is not None:
            return "--light profiles a whole run: PATH alone, without --skip/--steps/--after"
        return None
    if window and not script:
        return "--skip/--steps/--after cut a whole script's run: PATH alone"
    if argv and not script and driver is None:
        return "arguments after -- are a script's: PATH alone, or PATH::FUNC --from DRIVER"
    return None


def _request(
    args: argparse.Namespace,
    path: str,
    func: str | None,
    measured: str | None,
    *,
    stages: tuple[str, ...],
    script: bool,
    argv: list[str],
    driver: str | None,
    after_s: float | None,
) -> ProfileRequest:
    """The agent's job for the command line."""
    return ProfileRequest(
        path=os.path.abspath(path),
        text=measured,
        function=func,
        line=args.line,
        stages=stages,
        reps=args.reps,
        warmup_ms=args.warmup_ms,
        budget_ms=args.budget_ms,
        profile_runs=args.runs,
        # Resolved here, against the CLI's folder: user code may os.chdir before the trace.
        trace_dir=os.path.abspath(args.trace_dir) if args.trace_dir else None,
        keep_samples=args.samples,
        script=script,
        backward=args.backward,
        argv=argv,
        driver=driver,
        workspace=[os.path.abspath(w) for w in args.workspace or []],
        packages=list(args.in_package or []),
        skip=args.skip,
        steps=args.steps,
        after_s=after_s,
        memory=bool(args.memory),
        # Neither --memory nor --no-memory: on where it costs under 10% (a CUDA run).
        memory_auto=args.memory is None,
        nproc_per_node=args.nproc_per_node,
    )


def _print_result(
    result: dict[str, Any],
    args: argparse.Namespace,
    *,
    script: bool,
    comparison: dict[str, Any] | None,
) -> None:
    """The result as text: the profile, the ranks, eager against compiled, the inputs and the
    comparison with an earlier run."""
    from kernel_lens.analysis.lens_text import inputs_args_text, inputs_text
    from kernel_lens.analysis.report_text import format_profile

    say(format_profile(result))
    if result.get("distributed"):
        from kernel_lens.analysis.distributed_text import distributed_lines

        for text in distributed_lines(result):
            say(text)
    compared = result.get("compare_compiled")
    if isinstance(compared, dict):
        from kernel_lens.analysis.compiled_compare import compare_text_rows

        for text in compare_text_rows(compared, cuda=result.get("device_kind") == "cuda"):
            say(text)
    source = inputs_text(result.get("inputs"), result.get("path"))
    if source is not None and not script:
        args_text = "; ".join(inputs_args_text(result.get("inputs")))
        say(f"inputs: {source}" + (f" · {args_text}" if args_text else ""))
    if comparison is not None:
        from kernel_lens.analysis.compare import format_comparison

        ref = comparison["reference"]
        say(format_comparison(comparison, before=f"{ref} (run {comparison['reference_id']})",
                                after="this run"))  # fmt: skip
    elif args.compare:
        say(f"compare: no {args.compare} run of {result.get('function')} to compare with")


def _read_source(file: str) -> str | None:
    """The file's text as Python reads it (PEP 263), or ``None`` when it cannot be read (the
    job then reads it, and says why it cannot)."""
    import importlib.util

    from kernel_lens.analysis.regular_files import read_regular

    try:
        # a regular file only, bounded: a FIFO is refused here and by the job, never waited on
        return importlib.util.decode_source(read_regular(file, 64 << 20))
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None


def _record_history(
    result: dict[str, Any], path: str, args: argparse.Namespace, file_text: str | None
) -> dict[str, Any] | None:
    """Put a profile into its function's history (unless ``--no-history``) and, with
    ``--compare previous|baseline``, the comparison with that run (``None`` when there is none).
    ``file_text``: the file as the job measured it (read when it started). A history that
    cannot be read or written is a warning on stderr, never the profile's failure."""
    from kernel_lens.history import record_run

    if not args.history and not args.compare:
        return None
    timing = result.get("timing")
    if not result.get("function") or not isinstance(timing, dict) or "median_ms" not in timing:
        return None  # a whole-script run, or no timing: nothing to keep or compare
    function = str(result.get("function"))
    file = os.path.abspath(path)
    try:
        text = None
        if file_text is not None and result.get("first_line") and result.get("last_line"):
            text = file_text.splitlines()[int(result["first_line"]) - 1 : int(result["last_line"])]
        recorded = record_run(
            file,
            function,
            result,
            text=text,
            file_text=file_text,
            compare_with=args.compare,
            keep=args.history,
        )
    except Exception as exc:  # the profile stands without its history
        stderr_line(f"history: not recorded ({exc})")
        return None
    for warning in recorded.warnings:
        stderr_line(f"history: {warning}")
    return recorded.comparison


def _run_light(args: argparse.Namespace, path: str, argv: list[str]) -> int:
    """``--light``: `kernel_lens.agent.light` in this interpreter, its lines printed."""
    import subprocess
    import sys

    from kernel_lens.analysis.light_lines import LIGHT_LABEL, light_answer

    command = [sys.executable, "-m", "kernel_lens.agent.light", os.path.abspath(path)]
    for folder in args.workspace or []:
        command += ["--workspace", os.path.abspath(folder)]
    if args.trace_dir:
        command += ["--out", os.path.abspath(args.trace_dir)]
    command += ["--", *argv]
    try:
        done = subprocess.run(
            command, stdout=subprocess.PIPE, text=True, timeout=args.timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return usage_error(args, f"the light profile ran past --timeout {args.timeout:g} s")
    answer, printed = light_answer(done.stdout)
    # The script's own output, on stderr (stdout carries the answer).
    if printed and not args.quiet:
        sys.stderr.write("\n".join(printed).strip("\n") + "\n")
    if answer is None:
        stderr_line(
            f"kernel-lens: the light profile ended without an answer (exit {done.returncode})"
        )
        return 1
    if args.json:
        say(json.dumps(answer["result"] if answer.get("ok") else {"error": answer["error"]}))
        return 0 if answer.get("ok") else 1
    if not answer.get("ok"):
        error = answer["error"]
        stderr_line(f"kernel-lens: {error['kind']}: {error['message']}")
        return 1
    result = answer["result"]
    say(f"{os.path.basename(path)} · {LIGHT_LABEL}")
    kernels_ms, other_ms = result["total_kernel_us"] / 1e3, result["other_us"] / 1e3
    say(
        f"run {result['wall_s']:.2f} s · kernels {kernels_ms:.1f} ms in {result['launches']:,} "
        f"launches · other (no workspace line) {other_ms:.1f} ms · stored "
        f"{result['stored_bytes'] / 1e3:.0f} kB"
    )
    rows = [
        (file, int(line), got)
        for file, by_line in result["files"].items()
        for line, got in by_line.items()
    ]
    rows.sort(key=lambda r: -r[2]["kernel_us"])
    for file, line, got in rows[:40]:
        top = got["kernels"][0]["name"] if got["kernels"] else ""
        say(f"  {os.path.relpath(file)}:{line}  {got['kernel_us'] / 1e3:9.2f} ms  "
            f"{got['launches']:>7,} launches  {top[:60]}")  # fmt: skip
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    p = sub.add_parser("profile", help="profile one function")
    _add_target_options(p)
    _add_measure_options(p)
    _add_history_options(p)
    _add_code_options(p)
    _add_window_options(p)
    timeout_option(p)
    p.set_defaults(func=run, takes_script_args=True)


def _add_target_options(p: argparse.ArgumentParser) -> None:
    """What is profiled, by which stages, printed how."""
    p.add_argument(
        "target",
        help="PATH::FUNC (FUNC may be Class.method), PATH with --line, or PATH alone: the whole "
        "script, run once as __main__",
    )
    p.add_argument("--line", type=int, help="1-based line inside the function to profile")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--stages",
        default="timing,ops,trace",
        help="comma list: timing,ops,trace,compiled,compare_compiled,sweep",
    )
    p.add_argument(
        "--compare-compiled",
        action="store_true",
        help="eager against torch.compile'd: the function also compiled, profiled and timed the "
        "same way; per line what compilation changed (time, kernels fused), and the speed-up "
        "(the stage compare_compiled, with timing and ops for the eager side)",
    )


def _add_measure_options(p: argparse.ArgumentParser) -> None:
    """How the function is timed and profiled."""
    p.add_argument("--reps", type=int, default=0, help="timed repetitions (0 = adaptive)")
    p.add_argument("--warmup-ms", type=float, default=DEFAULT_WARMUP_MS, help="timing warm-up, ms")
    p.add_argument("--budget-ms", type=float, default=DEFAULT_BUDGET_MS, help="timing budget, ms")
    p.add_argument("--runs", type=int, default=3, help="calls under the profiler (ops/trace)")
    p.add_argument("--trace-dir", help="folder for the Chrome trace")
    p.add_argument("--no-samples", dest="samples", action="store_false", help="omit raw samples")
    p.add_argument(
        "--backward",
        action="store_true",
        help="profile with backward: back-propagate the function's output (a gradient of ones) "
        "after each call, so each line shows its forward and its backward",
    )
    p.add_argument(
        "--memory",
        action="store_true",
        default=None,
        help="profile memory: what each line allocates and frees on each device, the peak and "
        "what is alive at it, by line (on CUDA, an out-of-memory's live memory by line); "
        "default: on when the function runs on CUDA, where it costs under 10%%",
    )
    p.add_argument(
        "--no-memory",
        dest="memory",
        action="store_false",
        help="do not record memory, not even on CUDA",
    )
    p.add_argument(
        "--nproc-per-node",
        type=int,
        default=0,
        metavar="N",
        help="profile on N ranks, launched as `torchrun --nproc-per-node N FILE` would (the "
        "file calls init_process_group; gloo on CPU without GPUs): per rank, merged",
    )


def _add_history_options(p: argparse.ArgumentParser) -> None:
    """What is said while it runs, and what is kept and compared afterwards."""
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument(
        "--compare",
        choices=["previous", "baseline"],
        help="compare with the function's previous run or its pinned baseline (see `history`)",
    )
    p.add_argument(
        "--no-history", dest="history", action="store_false", help="do not keep this run"
    )


def _add_code_options(p: argparse.ArgumentParser) -> None:
    """Where the inputs come from, and which code counts as the user's."""
    p.add_argument(
        "--from",
        dest="driver",
        metavar="DRIVER",
        help="take FUNC's inputs, self and calling context from its first call in a run of "
        "DRIVER (`python DRIVER ARGS…`, ARGS after --), in whatever workspace module FUNC is",
    )
    p.add_argument(
        "--in-package",
        action="append",
        metavar="NAME",
        help="an installed package whose code counts as yours (repeatable: transformers, timm…): "
        "a whole run, a window and a function profile attribute to the innermost line in the "
        "workspace or in its files (found through the interpreter), never torch's own",
    )
    p.add_argument(
        "--workspace",
        action="append",
        metavar="FOLDER",
        help="a workspace folder (repeatable): a whole run's lines are those of its files "
        "(default: the enclosing git checkout, else the script's folder)",
    )


def _add_window_options(p: argparse.ArgumentParser) -> None:
    """A whole script's run: the window profiled, or the light profile."""
    p.add_argument(
        "--skip",
        type=int,
        default=0,
        metavar="N",
        help="whole script: run N steps unprofiled first (steps: optimizer.step(), the "
        "profiler's step(), a `# kernel-lens: step` marker line)",
    )
    p.add_argument(
        "--steps",
        type=int,
        metavar="M",
        help="whole script: profile M steps, then stop the script",
    )
    p.add_argument(
        "--after",
        metavar="TIME",
        help="whole script: start profiling no earlier than TIME into the run (30s, 2m)",
    )
    p.add_argument(
        "--light",
        action="store_true",
        help="whole script: the light profile (Triton's Proton, CUDA): every line's GPU kernel "
        "time for the whole run at a few percent of its time and a few kB stored; no ATen op "
        "names, backward's kernels not on the forward lines (the default deep profile, or a "
        "window with --steps, has both)",
    )


def parse_seconds(text: str) -> float:
    """``30``, ``30s``, ``1.5m``, ``200ms`` in seconds.

    Raises:
        ValueError: anything else, or a negative time.
    """
    value = text.strip().lower()
    scale = 1.0
    for suffix, factor in (("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if value.endswith(suffix):
            value, scale = value[: -len(suffix)], factor
            break
    try:
        seconds = float(value) * scale
    except ValueError:
        raise ValueError(f"not a time: {text!r} (30s, 2m, 200ms)") from None
    if seconds < 0:
        raise ValueError(f"a negative time: {text!r}")
    return seconds
