"""``kernel-lens``: the profiling engine from a terminal.

    kernel-lens profile PATH::FUNC [--json] [--stages timing,ops,trace] [--reps N] [--timeout S]
    kernel-lens profile PATH --line N
    kernel-lens profile PATH           (the whole script, run once as __main__)
    kernel-lens profile PATH::FUNC --compare previous|baseline
    kernel-lens history PATH::FUNC [--json] [--baseline ID|--clear-baseline]
    kernel-lens compare A B [--json]   (A, B: PATH::FUNC#ID, #-1, #baseline, or profile JSONs)
    kernel-lens trace summarize FILE.json [--json]
    kernel-lens asm PATH::KERNEL [--stage ptx|sass|ttir|ttgir|llir] [--arch 90] [--json]
    kernel-lens inline PATH [--arch 90] [--build] [--json]
    kernel-lens sweep PATH::FUNC --param NAME [--values 64,128,…] [--json]
    kernel-lens ncu run PATH::FUNC [--set basic|full] [--json]
    kernel-lens ncu show FILE.ncu-rep [--json]

The commands that run user code (profile, asm, inline, sweep, ncu run) run it the way the editor
does: in a fresh agent process (``python -m kernel_lens.agent``) through the same client and
engine, so however the code ends — an exception, ``sys.exit``, ``os._exit``, a segfault, Ctrl-C
raised by the code, a hang past ``--timeout``, threads left running — the command ends with the
same error contract. ``trace summarize`` and ``ncu show`` read files and run in-process.

Exit status: 0 on success, 1 when the job failed (``{"error": {"kind", "message", "line"}}``
with ``--json``, one line on stderr without; the kinds are
:data:`kernel_lens.wire.errors.ERROR_KINDS`), 2 for bad command-line usage, 130 when the CLI
itself is interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from kernel_lens.wire.errors import ErrorObject, ProfileError
from kernel_lens.wire.jobs import (
    AsmRequest,
    InlineRequest,
    JobRequest,
    NcuRequest,
    ProfileRequest,
    SweepRequest,
)

__all__ = ["main"]

#: Seconds a job may run before its agent is stopped (``--timeout``).
DEFAULT_TIMEOUT_S = 600.0


def _split_target(spec: str) -> tuple[str, str | None]:
    if "::" in spec:
        path, func = spec.split("::", 1)
        return path, func or None
    return spec, None


def _emit_error(err: ErrorObject, as_json: bool, path: str | None) -> None:
    if as_json:
        print(json.dumps({"error": err}), flush=True)
        return
    where = f" at {path}:{err['line']}" if err.get("line") and path else ""
    print(f"error ({err['kind']}){where}: {err['message']}", file=sys.stderr)
    # An "unsupported" result is a fact about the machine, not a bug to debug: no traceback.
    if err.get("traceback") and err.get("kind") != "unsupported":
        print(err["traceback"], file=sys.stderr)


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _for_the_cli(err: ProfileError) -> ProfileError:
    """The client's words for the editor (a setting, a restart) put in the CLI's terms."""
    message = err.message.replace("(kernelLens.timeoutSeconds)", "(--timeout)")
    for tail in (
        "; the agent was stopped and will restart for the next job",
        "; the agent was stopped and will restart",
    ):
        message = message.replace(tail, "")
    err.message = message
    return err


async def _run_in_agent(request: JobRequest, *, timeout: float, progress: bool) -> dict[str, Any]:
    from kernel_lens.agent.client import AgentClient

    def on_progress(stage: str, message: str) -> None:
        if progress:
            _stderr_line(f"[{stage}] {message}")

    # One job, one agent (no spare): it is stopped, with its process group, when the job ends,
    # whatever threads the user's code left running.
    client = AgentClient([sys.executable], _stderr_line, local=True, spare=False)
    try:
        return await client.run(
            request.to_json(), timeout=timeout, on_progress=on_progress, method=request.method
        )
    finally:
        await client.kill()


def _job(request: JobRequest, args: argparse.Namespace) -> dict[str, Any] | int:
    """Run ``request`` in a fresh agent: its result, or the exit status after printing the error.

    The user's output (the agent's stderr) goes to stderr, so ``--json`` stays one object.
    """
    path = os.path.abspath(request.path)
    if not os.path.isfile(path):
        reason = "Is a directory" if os.path.isdir(path) else "No such file or directory"
        err = ProfileError("not-found", f"cannot read {path}: {reason}")
        _emit_error(err.to_json(), args.json, None)
        return 1
    progress = not args.json and not getattr(args, "quiet", False)
    try:
        return asyncio.run(_run_in_agent(request, timeout=args.timeout, progress=progress))
    except ProfileError as exc:
        _emit_error(_for_the_cli(exc).to_json(), args.json, path)
        return 1


def _cmd_profile(args: argparse.Namespace) -> int:
    path, func = _split_target(args.target)
    # PATH alone: the whole script, run once as __main__.
    script = func is None and args.line is None
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    request = ProfileRequest(
        path=os.path.abspath(path),
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
    )
    result = _job(request, args)
    if isinstance(result, int):
        return result
    # A script's one run has no samples to compare: it is not put in a history.
    comparison = None if script else _record_history(result, path, args)
    if args.json:
        if comparison is not None:
            result["comparison"] = comparison
        print(json.dumps(result))
    else:
        from kernel_lens.analysis.lens_text import inputs_args_text, inputs_text
        from kernel_lens.analysis.report_text import format_profile

        print(format_profile(result))
        source = inputs_text(result.get("inputs"), result.get("path"))
        if source is not None and not script:
            args_text = "; ".join(inputs_args_text(result.get("inputs")))
            print(f"inputs: {source}" + (f" · {args_text}" if args_text else ""))
        if comparison is not None:
            from kernel_lens.analysis.compare import format_comparison

            ref = comparison["reference"]
            print(format_comparison(comparison, before=f"{ref} (run {comparison['reference_id']})",
                                    after="this run"))  # fmt: skip
        elif args.compare:
            print(f"compare: no {args.compare} run of {result.get('function')} to compare with")
    return 0


def _record_history(
    result: dict[str, Any], path: str, args: argparse.Namespace
) -> dict[str, Any] | None:
    """Put a profile into its function's history (unless ``--no-history``) and, with
    ``--compare previous|baseline``, the comparison with that run (``None`` when there is none).
    A history that cannot be written is a warning, never the profile's failure."""
    from kernel_lens.analysis.compare import compare_results
    from kernel_lens.history import History, HistoryError, git_state, make_entry

    if not args.history and not args.compare:
        return None
    timing = result.get("timing")
    if not result.get("function") or not isinstance(timing, dict) or "median_ms" not in timing:
        return None  # a whole-script run, or no timing: nothing to keep or compare
    function = str(result.get("function"))
    file = os.path.abspath(path)
    history = History.default(file)
    try:
        reference = (
            history.baseline(file, function)
            if args.compare == "baseline"
            else next(reversed(history.entries(file, function)), None)
        )
        try:
            file_text = open(file, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            file_text = None
        text = None
        if file_text is not None and result.get("first_line") and result.get("last_line"):
            text = file_text.splitlines()[int(result["first_line"]) - 1 : int(result["last_line"])]
        entry = make_entry(result, text=text, file_text=file_text, git=git_state(file))
        stored = history.add(file, function, entry) if args.history else entry
    except (OSError, HistoryError) as exc:
        _stderr_line(f"history: not recorded ({exc})")
        return None
    if not args.compare or reference is None:
        return None
    return compare_results(
        reference, stored, reference=args.compare, reference_id=str(reference["id"])
    )


def _history_run(spec: str) -> tuple[dict[str, Any], str]:
    """A run named on the command line: ``PATH::FUNC#ID`` (``#-1`` latest, ``#baseline``;
    no ``#``: the latest) or a ``profile --json`` file; with its label.

    Raises:
        ValueError: the run or file cannot be found or read (the message says which).
    """
    from kernel_lens.history import History, HistoryError

    if "::" not in spec:
        try:
            with open(spec, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read {spec}: {exc}") from None
        if not isinstance(data, dict) or "timing" not in data:
            raise ValueError(f"{spec} is not a profile (no 'timing'): use `profile --json`")
        return data, os.path.basename(spec)
    target, _, run = spec.partition("#")
    path, func = _split_target(target)
    if func is None:
        raise ValueError(f"give PATH::FUNC#RUN, not {spec!r}")
    try:
        entry = History.default(path).get(os.path.abspath(path), func, run or "-1")
    except HistoryError as exc:
        raise ValueError(str(exc)) from None
    return entry, f"{func} run {entry['id']}"


def _cmd_history(args: argparse.Namespace) -> int:
    from kernel_lens.analysis.compare import compare_timing
    from kernel_lens.history import History, HistoryError, entry_summary

    path, func = _split_target(args.target)
    if func is None:
        print("give PATH::FUNC", file=sys.stderr)
        return 2
    file = os.path.abspath(path)
    history = History.default(file)
    try:
        if args.baseline or args.clear_baseline:
            history.set_baseline(file, func, None if args.clear_baseline else args.baseline)
        entries = history.entries(file, func)
    except HistoryError as exc:
        _emit_error({"kind": "not-found", "message": str(exc), "line": None}, args.json, None)
        return 1
    baseline = history.baseline_id(file, func)
    rows = []
    for i, entry in enumerate(entries):
        row = entry_summary(entry)
        before = entries[i - 1] if i else None
        row["verdict"] = (
            compare_timing(before["timing"], entry["timing"]).to_json()
            if before is not None
            else None
        )
        rows.append(row)
    if args.json:
        print(json.dumps({"function": func, "path": file, "baseline": baseline, "runs": rows}))
        return 0
    if not rows:
        print(f"{func}: no runs yet in {history.root}")
        return 0
    print(
        f"{func} · {file} · {len(rows)} runs" + (f" · baseline run {baseline}" if baseline else "")
    )
    for row in rows:
        t = row["timing"]
        git = row.get("git") or {}
        commit = (git.get("commit") or "")[:8] + ("+dirty" if git.get("dirty") else "")
        verdict = (row["verdict"] or {}).get("text") or ""
        pin = " (baseline)" if row["id"] == baseline else ""
        print(
            f"{row['id']:>4}  {row.get('time') or '':<25}  {t['median_ms']:>9.4f} ms "
            f"±{float(t.get('spread_pct') or 0):.1f}%  {row['kernel_count']:g} kernels  "
            f"{row.get('device') or '?'}  {commit}  {verdict}{pin}".rstrip()
        )
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from kernel_lens.analysis.compare import compare_results, format_comparison

    try:
        before, before_label = _history_run(args.before)
        after, after_label = _history_run(args.after)
    except ValueError as exc:
        _emit_error({"kind": "not-found", "message": str(exc), "line": None}, args.json, None)
        return 1
    comparison = compare_results(
        before, after, reference=before_label, reference_id=before.get("id")
    )
    if args.json:
        print(json.dumps(comparison))
    else:
        print(format_comparison(comparison, before=before_label, after=after_label))
    return 0


def _cmd_trace_summarize(args: argparse.Namespace) -> int:
    from kernel_lens.analysis.trace_summary import (
        TraceError,
        format_trace_summary,
        summarize_file,
    )

    try:
        # Read straight into columns (msgspec when installed; gzip too): 1M events in seconds.
        summary = summarize_file(args.file, top=args.top)
    except TraceError as exc:
        _emit_error({"kind": "trace", "message": str(exc), "line": None}, args.json, None)
        return 1
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(format_trace_summary(summary))
    return 0


def _cmd_asm(args: argparse.Namespace) -> int:
    path, kernel = _split_target(args.target)
    request = AsmRequest(
        path=os.path.abspath(path), kernel=kernel, arch=args.arch, stage=args.stage
    )
    result = _job(request, args)
    if isinstance(result, int):
        return result
    rows: list[dict[str, Any]] = [result] if kernel else list(result["kernels"])
    if args.json:
        print(json.dumps(rows[0] if kernel else rows))
        return 0
    for j in rows:
        print(
            f"// {j['kernel']} · {args.stage.upper()} · {j['arch']} · {j['registers']} registers · "
            f"{j['spills']} bytes spilled · launched by {j['launcher']} with {j['constexprs']}"
        )
        print(j["asm"])
    return 0


def _cmd_inline(args: argparse.Namespace) -> int:
    path, _ = _split_target(args.target)
    request = InlineRequest(path=os.path.abspath(path), arch=args.arch, build=args.build)
    result = _job(request, args)
    if isinstance(result, int):
        return result
    if args.json:
        print(json.dumps(result))
        return 0
    for m in result["modules"]:
        print(f"// load_inline {m['name']} (line {m['call_line']}) · {m['arch']} · {m['nvcc']}")
        for err in m["errors"]:
            print(f"{path}:{err['line']}: {err['severity']}: {err['message']}")
        if m["ptx"]:
            print(m["ptx"])
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    path, func = _split_target(args.target)
    if func is None:
        print("give PATH::FUNC", file=sys.stderr)
        return 2
    try:
        values = [int(v) for v in args.values.split(",")] if args.values else []
    except ValueError:
        print(f"--values takes integers, e.g. 64,128,256 (got {args.values!r})", file=sys.stderr)
        return 2
    request = SweepRequest(
        path=os.path.abspath(path),
        function=func,
        param=args.param,
        values=values,
        budget_ms=args.budget_ms,
        warmup_ms=args.warmup_ms,
    )
    result = _job(request, args)
    if isinstance(result, int):
        return result
    sweep = result["sweep"]
    if args.json:
        print(json.dumps({"function": result["function"], "device": result["device"], **sweep}))
        return 0
    print(f"{result['function']} · sweep {sweep['param']} · {result['device']}")
    print(f"{sweep['param']:>10}  {'median':>10}  {'±':>6}  {'GB/s':>8}")
    for row in sweep["rows"]:
        if row.get("error"):
            print(f"{row['value']:>10}  failed: {row['error']}")
            continue
        best = (sweep.get("best") or {}).get("value")
        ties = sweep.get("ties") or []
        # Under Triton's interpreter the fastest value says nothing of a GPU: no "best" mark.
        # Values equal within noise are all marked as such, none as *the* best (issue 11).
        mark = (
            ""
            if sweep.get("note")
            else "  ← best within noise"
            if row["value"] in ties
            else "  ← best"
            if row["value"] == best and not ties
            else ""
        )
        gbps = f"{row['gb_per_s']:.3g}" if row.get("gb_per_s") else "-"
        print(
            f"{row['value']:>10}  {row['median_ms']:>8.4f}ms  {row['spread_pct']:>5.1f}%  "
            f"{gbps:>8}{mark}"
        )
    if sweep.get("verdict") and not sweep.get("note"):
        print(sweep["verdict"])
    if sweep.get("note"):
        print(f"note: {sweep['note']}")
    return 0


def _print_ncu(kernels: list[dict[str, Any]]) -> None:
    from kernel_lens.analysis.names import short_kernel_name

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}%"

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    for k in kernels:
        where = f" · line {k['line']}" if k.get("line") else ""
        duration = "-" if k["duration_us"] is None else f"{k['duration_us']:.2f} µs"
        print(f"{short_kernel_name(k['demangled'])}{where} · {duration}")
        print(
            f"  compute {pct(k['compute_throughput_pct'])} · memory "
            f"{pct(k['memory_throughput_pct'])} · DRAM {pct(k['dram_throughput_pct'])} · "
            f"occupancy {pct(k['achieved_occupancy_pct'])} of "
            f"{pct(k['theoretical_occupancy_pct'])} · {num(k['registers'])} regs · grid "
            f"{num(k['grid_size'])} × block {num(k['block_size'])} · {num(k['waves'])} waves"
        )
        for h in k["hints"]:
            gain = (
                f" (est. {h['speedup_type']} speedup {h['speedup_pct']:.0f}%)"
                if h["speedup_pct"]
                else ""
            )
            print(f"  [{h['kind']}] {h['title']}{gain}: {h['message'][:160]}")


def _cmd_ncu(args: argparse.Namespace) -> int:
    from kernel_lens.analysis.ncu import NcuError
    from kernel_lens.ncu_files import read_ncu_file

    if args.ncu_command == "show":
        try:
            kernels, reader = read_ncu_file(args.file)
        except NcuError as exc:
            _emit_error({"kind": "ncu", "message": str(exc), "line": None}, args.json, None)
            return 1
        rows = [k.to_json() for k in kernels]
        if args.json:
            print(json.dumps({"report_path": args.file, "reader": reader, "kernels": rows}))
        else:
            _print_ncu(rows)
        return 0
    path, func = _split_target(args.target)
    if func is None:
        print("give PATH::FUNC", file=sys.stderr)
        return 2
    request = NcuRequest(
        path=os.path.abspath(path),
        function=func,
        set=args.set,
        # ncu itself stops a little before the job's own deadline, so its error is the one seen.
        timeout=args.timeout * 0.95,
    )
    result = _job(request, args)
    if isinstance(result, int):
        return result
    if args.json:
        print(json.dumps(result))
    else:
        print(f"report {result['report_path']} ({result['set']} set)")
        _print_ncu(result["kernels"])
    return 0


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"stop the job (and its agent) after this long (default {DEFAULT_TIMEOUT_S:g})",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(
        prog="kernel-lens", description="Profile PyTorch functions: time, ops and kernels per line."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("profile", help="profile one function")
    p.add_argument(
        "target",
        help="PATH::FUNC (FUNC may be Class.method), PATH with --line, or PATH alone: the whole "
        "script, run once as __main__",
    )
    p.add_argument("--line", type=int, help="1-based line inside the function to profile")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--stages", default="timing,ops,trace", help="comma list: timing,ops,trace,compiled"
    )
    p.add_argument("--reps", type=int, default=0, help="timed repetitions (0 = adaptive)")
    p.add_argument("--warmup-ms", type=float, default=25.0, help="timing warm-up, ms")
    p.add_argument("--budget-ms", type=float, default=500.0, help="timing budget, ms")
    p.add_argument("--runs", type=int, default=3, help="calls under the profiler (ops/trace)")
    p.add_argument("--trace-dir", help="folder for the Chrome trace")
    p.add_argument("--no-samples", dest="samples", action="store_false", help="omit raw samples")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument(
        "--compare",
        choices=["previous", "baseline"],
        help="compare with the function's previous run or its pinned baseline (see `history`)",
    )
    p.add_argument(
        "--no-history", dest="history", action="store_false", help="do not keep this run"
    )
    _timeout_option(p)
    p.set_defaults(func=_cmd_profile)

    hi = sub.add_parser("history", help="the kept runs of a function, each against the one before")
    hi.add_argument("target", help="PATH::FUNC")
    hi.add_argument("--json", action="store_true")
    pin = hi.add_mutually_exclusive_group()
    pin.add_argument("--baseline", metavar="ID", help="pin run ID (-1: the latest) as baseline")
    pin.add_argument("--clear-baseline", action="store_true", help="unpin the baseline")
    hi.set_defaults(func=_cmd_history)

    c = sub.add_parser("compare", help="compare two runs: time verdict, lines and kernels")
    c.add_argument("before", help="PATH::FUNC#ID (#-1 latest, #-2, #baseline) or a profile JSON")
    c.add_argument("after", help="the same forms")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_cmd_compare)

    a = sub.add_parser("asm", help="Triton kernels compiled to TTIR/TTGIR/LLIR/PTX/SASS")
    a.add_argument("target", help="PATH::KERNEL, or PATH for every @triton.jit kernel")
    a.add_argument("--stage", default="ptx", choices=["ttir", "ttgir", "llir", "ptx", "sass"])
    a.add_argument("--arch", type=int, default=None, help="compute capability, e.g. 90 (sm_90)")
    a.add_argument("--json", action="store_true")
    _timeout_option(a)
    a.set_defaults(func=_cmd_asm)

    n = sub.add_parser("ncu", help="Nsight Compute: run on a function, or read a report")
    nsub = n.add_subparsers(dest="ncu_command", required=True)
    nr = nsub.add_parser("run", help="profile PATH::FUNC's kernels under ncu")
    nr.add_argument("target")
    nr.add_argument("--set", default="basic", choices=["basic", "detailed", "full"])
    nr.add_argument("--json", action="store_true")
    _timeout_option(nr)
    nr.set_defaults(func=_cmd_ncu)
    ns = nsub.add_parser("show", help="kernels, metrics and hints of a .ncu-rep or CSV file")
    ns.add_argument("file")
    ns.add_argument("--json", action="store_true")
    ns.set_defaults(func=_cmd_ncu)

    w = sub.add_parser("sweep", help="time a function across values of an int parameter")
    w.add_argument("target", help="PATH::FUNC")
    w.add_argument("--param", required=True, help="the integer parameter, e.g. BLOCK_SIZE")
    w.add_argument("--values", help="comma list (default: powers of two around the current)")
    w.add_argument("--budget-ms", type=float, default=200.0, help="timing budget per value, ms")
    w.add_argument("--warmup-ms", type=float, default=25.0)
    w.add_argument("--json", action="store_true")
    _timeout_option(w)
    w.set_defaults(func=_cmd_sweep)

    i = sub.add_parser("inline", help="load_inline modules: generated sources, PTX, nvcc errors")
    i.add_argument("target", help="PATH of a file that calls load_inline")
    i.add_argument("--arch", type=int, default=90, help="compute capability for the PTX")
    i.add_argument("--build", action="store_true", help="also build it with load_inline (log)")
    i.add_argument("--json", action="store_true")
    _timeout_option(i)
    i.set_defaults(func=_cmd_inline)

    t = sub.add_parser("trace", help="work with torch.profiler Chrome traces")
    tsub = t.add_subparsers(dest="trace_command", required=True)
    ts = tsub.add_parser("summarize", help="summarise a Chrome trace file")
    ts.add_argument("file")
    ts.add_argument("--json", action="store_true")
    ts.add_argument("--top", type=int, default=20)
    ts.set_defaults(func=_cmd_trace_summarize)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kernel-lens`` console script."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        # Ctrl-C on the CLI itself: the agent was stopped on the way out (asyncio.run cancels
        # the job, and the client kills the agent's process group).
        err: ErrorObject = {"kind": "interrupted", "message": "interrupted (Ctrl-C)", "line": None}
        _emit_error(err, bool(getattr(args, "json", False)), None)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
