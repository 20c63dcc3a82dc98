"""``kernel-lens``: the profiling engine from a terminal.

    kernel-lens profile PATH::FUNC [--json] [--stages timing,ops,trace] [--reps N]
    kernel-lens profile PATH --line N
    kernel-lens trace summarize FILE.json [--json]
    kernel-lens asm PATH::KERNEL [--stage ptx|sass|ttir|ttgir|llir] [--arch 90] [--json]
    kernel-lens inline PATH [--arch 90] [--build] [--json]
    kernel-lens sweep PATH::FUNC --param NAME [--values 64,128,…] [--json]
    kernel-lens ncu run PATH::FUNC [--set basic|full] [--json]
    kernel-lens ncu show FILE.ncu-rep [--json]

Exit status: 0 on success, 1 when the profiled code failed (syntax error, exception, missing
function: the error names the user's line), 2 for bad command-line usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

__all__ = ["main"]


def _split_target(spec: str) -> tuple[str, str | None]:
    if "::" in spec:
        path, func = spec.split("::", 1)
        return path, func or None
    return spec, None


def _emit_error(err: dict[str, Any], as_json: bool, path: str | None) -> None:
    if as_json:
        print(json.dumps({"error": err}))
        return
    where = f" at {path}:{err['line']}" if err.get("line") and path else ""
    print(f"error ({err['kind']}){where}: {err['message']}", file=sys.stderr)
    # An "unsupported" result is a fact about the machine, not a bug to debug: no traceback.
    if err.get("traceback") and err.get("kind") != "unsupported":
        print(err["traceback"], file=sys.stderr)


def _cmd_profile(args: argparse.Namespace) -> int:
    from kernel_lens.agent.errors import ProfileError

    path, func = _split_target(args.target)
    if func is None and args.line is None:
        print("give PATH::FUNC or PATH --line N", file=sys.stderr)
        return 2
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    try:
        from kernel_lens.agent.runner import ProfileRequest, run_profile

        request = ProfileRequest(
            path=path,
            function=func,
            line=args.line,
            stages=stages,
            reps=args.reps,
            warmup_ms=args.warmup_ms,
            budget_ms=args.budget_ms,
            profile_runs=args.runs,
            trace_dir=args.trace_dir,
            keep_samples=args.samples,
        )

        def progress(stage: str, message: str) -> None:
            if not args.json and not args.quiet:
                print(f"[{stage}] {message}", file=sys.stderr)

        from kernel_lens.agent.stdio import stdout_to_stderr

        # User prints (Python and C level) must not corrupt the --json output on stdout.
        with stdout_to_stderr():
            result = run_profile(request, progress)
    except ProfileError as exc:
        _emit_error(exc.to_json(), args.json, os.path.abspath(path))
        return 1
    except ImportError as exc:
        _emit_error(
            {"kind": "unsupported", "message": f"{exc} (is torch installed?)", "line": None},
            args.json,
            None,
        )
        return 1
    if args.json:
        print(json.dumps(result))
    else:
        from kernel_lens.analysis.report_text import format_profile

        print(format_profile(result))
    return 0


def _cmd_trace_summarize(args: argparse.Namespace) -> int:
    from kernel_lens.analysis.trace_summary import (
        TraceError,
        format_trace_summary,
        load_trace,
        summarize_trace,
    )

    try:
        summary = summarize_trace(load_trace(args.file), top=args.top)
    except TraceError as exc:
        _emit_error({"kind": "trace", "message": str(exc), "line": None}, args.json, None)
        return 1
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(format_trace_summary(summary))
    return 0


def _cmd_asm(args: argparse.Namespace) -> int:
    from kernel_lens.agent.errors import ProfileError

    path, kernel = _split_target(args.target)
    try:
        from kernel_lens.agent.stages.triton_ir import compile_file_kernels
        from kernel_lens.agent.stdio import stdout_to_stderr

        with stdout_to_stderr():
            results = compile_file_kernels(path, kernel=kernel, arch=args.arch)
    except ProfileError as exc:
        _emit_error(exc.to_json(), args.json, os.path.abspath(path))
        return 1
    except ImportError as exc:
        _emit_error(
            {"kind": "unsupported", "message": f"{exc} (is triton installed?)", "line": None},
            args.json,
            None,
        )
        return 1
    if args.json:
        payload = [r.to_json(args.stage) for r in results]
        print(json.dumps(payload[0] if kernel else payload))
        return 0
    for r in results:
        j = r.to_json(args.stage)
        print(
            f"// {j['kernel']} · {args.stage.upper()} · {j['arch']} · {j['registers']} registers · "
            f"{j['spills']} bytes spilled · launched by {j['launcher']} with {j['constexprs']}"
        )
        print(j["asm"])
    return 0


def _cmd_inline(args: argparse.Namespace) -> int:
    from kernel_lens.agent.errors import ProfileError

    path, _ = _split_target(args.target)
    try:
        from kernel_lens.agent.stages.inline_ext import analyze_inline
        from kernel_lens.agent.stdio import stdout_to_stderr

        with stdout_to_stderr():
            result = analyze_inline(path, arch=args.arch, build=args.build)
    except ProfileError as exc:
        _emit_error(exc.to_json(), args.json, os.path.abspath(path))
        return 1
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
    from kernel_lens.agent.errors import ProfileError

    path, func = _split_target(args.target)
    if func is None:
        print("give PATH::FUNC", file=sys.stderr)
        return 2
    values = [int(v) for v in args.values.split(",")] if args.values else []
    try:
        from kernel_lens.agent.runner import ProfileRequest, run_profile
        from kernel_lens.agent.stdio import stdout_to_stderr

        request = ProfileRequest(
            path=path,
            function=func,
            stages=("sweep",),
            budget_ms=args.budget_ms,
            warmup_ms=args.warmup_ms,
            extra={"sweep_param": args.param, "sweep_values": values},
        )
        with stdout_to_stderr():
            result = run_profile(request)
    except ProfileError as exc:
        _emit_error(exc.to_json(), args.json, os.path.abspath(path))
        return 1
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
        mark = "  ← best" if row["value"] == sweep["best"]["value"] else ""
        gbps = f"{row['gb_per_s']:.3g}" if row.get("gb_per_s") else "-"
        print(
            f"{row['value']:>10}  {row['median_ms']:>8.4f}ms  {row['spread_pct']:>5.1f}%  "
            f"{gbps:>8}{mark}"
        )
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
    from kernel_lens.agent.errors import ProfileError
    from kernel_lens.analysis.ncu import NcuError, read_ncu_file

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
    try:
        from kernel_lens.agent.stages.ncu import run_ncu
        from kernel_lens.agent.stages.ops import default_trace_dir

        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        result = run_ncu(
            path, text, func, section_set=args.set,
            report_dir=os.path.join(os.path.dirname(default_trace_dir()), "ncu"),
        )  # fmt: skip
    except (ProfileError, OSError) as exc:
        err = (
            exc.to_json()
            if isinstance(exc, ProfileError)
            else {"kind": "not-found", "message": str(exc), "line": None}
        )
        _emit_error(err, args.json, os.path.abspath(path))
        return 1
    if args.json:
        print(json.dumps(result))
    else:
        print(f"report {result['report_path']} ({result['set']} set)")
        _print_ncu(result["kernels"])
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(
        prog="kernel-lens", description="Profile PyTorch functions: time, ops and kernels per line."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("profile", help="profile one function")
    p.add_argument("target", help="PATH::FUNC (FUNC may be Class.method) or PATH with --line")
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
    p.set_defaults(func=_cmd_profile)

    a = sub.add_parser("asm", help="Triton kernels compiled to TTIR/TTGIR/LLIR/PTX/SASS")
    a.add_argument("target", help="PATH::KERNEL, or PATH for every @triton.jit kernel")
    a.add_argument("--stage", default="ptx", choices=["ttir", "ttgir", "llir", "ptx", "sass"])
    a.add_argument("--arch", type=int, default=None, help="compute capability, e.g. 90 (sm_90)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=_cmd_asm)

    n = sub.add_parser("ncu", help="Nsight Compute: run on a function, or read a report")
    nsub = n.add_subparsers(dest="ncu_command", required=True)
    nr = nsub.add_parser("run", help="profile PATH::FUNC's kernels under ncu")
    nr.add_argument("target")
    nr.add_argument("--set", default="basic", choices=["basic", "detailed", "full"])
    nr.add_argument("--json", action="store_true")
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
    w.set_defaults(func=_cmd_sweep)

    i = sub.add_parser("inline", help="load_inline modules: generated sources, PTX, nvcc errors")
    i.add_argument("target", help="PATH of a file that calls load_inline")
    i.add_argument("--arch", type=int, default=90, help="compute capability for the PTX")
    i.add_argument("--build", action="store_true", help="also build it with load_inline (log)")
    i.add_argument("--json", action="store_true")
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
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
