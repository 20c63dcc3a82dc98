"""``kernel-lens ncu run PATH::FUNC`` (Nsight Compute on the function's kernels), ``kernel-lens
ncu show FILE.ncu-rep`` (a report's kernels, metrics and hints; in-process) and ``kernel-lens ncu
lines PATH::FUNC`` (inside the kernel: source-counter samples and instructions per kernel line;
``--report`` reads a recorded report in-process)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from kernel_lens.cli.common import (
    driver_option,
    driver_request,
    emit_error,
    job,
    say,
    split_target,
    timeout_option,
)
from kernel_lens.wire.jobs import KernelLinesRequest, NcuRequest


def _print_ncu(kernels: Sequence[Mapping[str, Any]]) -> None:
    from kernel_lens.analysis.names import short_kernel_name

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}%"

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    for k in kernels:
        where = f" · line {k['line']}" if k.get("line") else ""
        duration = "-" if k["duration_us"] is None else f"{k['duration_us']:.2f} µs"
        say(f"{short_kernel_name(k['demangled'])}{where} · {duration}")
        say(
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
            say(f"  [{h['kind']}] {h['title']}{gain}: {h['message'][:160]}")


def run(args: argparse.Namespace) -> int:
    """``ncu show``: a report's kernels; ``ncu run``: Nsight Compute on the function."""
    from kernel_lens.analysis.ncu import NcuError
    from kernel_lens.traces.ncu_files import read_ncu_file

    if args.ncu_command == "show":
        try:
            kernels, reader = read_ncu_file(args.file)
        except NcuError as exc:
            emit_error({"kind": "ncu", "message": str(exc), "line": None}, args.json, None)
            return 1
        rows = [k.to_json() for k in kernels]
        if args.json:
            say(json.dumps({"report_path": args.file, "reader": reader, "kernels": rows}))
        else:
            _print_ncu(rows)
        return 0
    path, func = split_target(args.target)
    if func is None:
        say("give PATH::FUNC", file=sys.stderr)
        return 2
    driver = driver_request(args)
    if isinstance(driver, int):
        return driver
    request = NcuRequest(
        path=os.path.abspath(path),
        function=func,
        set=args.set,
        # ncu itself stops a little before the job's own deadline, so its error is the one seen.
        timeout=args.timeout * 0.95,
        driver=driver["driver"],
        argv=driver["argv"],
    )
    result = job(request, args)
    if isinstance(result, int):
        return result
    if args.json:
        say(json.dumps(result))
    else:
        say(f"report {result['report_path']} ({result['set']} set)")
        _print_ncu(result["kernels"])
    return 0


def _print_lines(result: dict[str, Any], path: str, before: dict[str, Any] | None) -> None:
    """Each kernel's lines, hottest first, with the remedy of the hottest line."""
    from kernel_lens.analysis.names import short_kernel_name

    name = os.path.basename(path)
    earlier = {k["kernel"]: k for k in (before or {}).get("kernels", [])}
    for k in result["kernels"]:
        duration = "" if k["duration_us"] is None else f" · {k['duration_us']:.2f} µs"
        say(f"{short_kernel_name(k['demangled'])}{duration} · {k['sampling']}")
        old = earlier.get(k["kernel"])
        old_share = {r["line"]: r["share_pct"] for r in old["lines"]} if old else {}
        if old is not None:
            was = "" if old["duration_us"] is None else f"{old['duration_us']:.2f} µs"
            say(f"  before: {was} · {old['sampling']}")
        for row in k["lines"]:
            compare = ""
            if old is not None:
                prior = old_share.get(row["line"])
                compare = " · before " + ("-" if prior is None else f"{prior:.0f}%")
            say(f"  {name}:{row['line']}  {row['text']}{compare}")
        for note in k["notes"]:
            say(f"  note: {note}")
        fix = k.get("remedy")
        if fix and k["lines"]:
            say(f"  hottest line {k['lines'][0]['line']}: {fix['text']}")
            if fix.get("rule_message"):
                link = f" ({fix['rule_url']})" if fix.get("rule_url") else ""
                say(f"  Nsight Compute ({fix['rule_title']}): {fix['rule_message'][:300]}{link}")


def run_lines(args: argparse.Namespace) -> int:
    """``ncu lines``: a kernel's source counters on its lines (a recorded ``--report`` read
    here; otherwise ncu runs in the agent's child)."""
    path, func = split_target(args.target)
    abspath = os.path.abspath(path)
    if args.report is not None or args.compare is not None:
        from kernel_lens.analysis.ncu import NcuError
        from kernel_lens.traces.ncu_files import read_kernel_lines

        try:
            with open(abspath, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            say(f"cannot read {path}: {exc.strerror}", file=sys.stderr)
            return 1
        results: list[dict[str, Any]] = []
        kernel = args.kernel or func
        for report in [r for r in (args.compare, args.report) if r is not None]:
            try:
                kernels = read_kernel_lines(report, abspath, text, kernel=kernel, sass=args.sass)
            except NcuError as exc:
                emit_error({"kind": "ncu", "message": str(exc), "line": None}, args.json, None)
                return 1
            results.append({"report_path": report, "function": None, "kernel": kernel,
                            "repeat": None, "kernels": kernels})  # fmt: skip
        before = results[0] if len(results) == 2 else None
        result = results[-1]
        if args.json:
            say(json.dumps({**result, "before": before} if before else result))
        else:
            _print_lines(result, path, before)
        return 0
    if func is None and args.kernel is None:
        say("give PATH::FUNC (a function, or the kernel itself)", file=sys.stderr)
        return 2
    driver = driver_request(args)
    if isinstance(driver, int):
        return driver
    request = KernelLinesRequest(
        path=abspath,
        function=func,
        kernel=args.kernel,
        launches=args.launches,
        sass=args.sass,
        timeout=args.timeout * 0.95,
        driver=driver["driver"],
        argv=driver["argv"],
    )
    job_result = job(request, args)
    if isinstance(job_result, int):
        return job_result
    if args.json:
        say(json.dumps(job_result))
    else:
        say(f"report {job_result['report_path']} (source counters)")
        _print_lines(job_result, path, None)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    n = sub.add_parser("ncu", help="Nsight Compute: run on a function, or read a report")
    nsub = n.add_subparsers(dest="ncu_command", required=True)
    nr = nsub.add_parser("run", help="profile PATH::FUNC's kernels under ncu")
    nr.add_argument("target")
    nr.add_argument("--set", default="basic", choices=["basic", "detailed", "full"])
    nr.add_argument("--json", action="store_true")
    driver_option(nr)
    timeout_option(nr)
    nr.set_defaults(func=run)
    nl = nsub.add_parser(
        "lines",
        help="inside the kernel: warp-stall samples and instructions per kernel line "
        "(Nsight Compute source counters)",
    )
    nl.add_argument("target", help="PATH::FUNC (a function that launches the kernel, or the "
                    "@triton.jit kernel itself); with --report, PATH alone")  # fmt: skip
    nl.add_argument("--kernel", help="only this kernel's launches (its name)")
    nl.add_argument("--launches", type=int, default=3, help="launches profiled at most")
    nl.add_argument("--report", help="read a recorded .ncu-rep (no GPU needed)")
    nl.add_argument(
        "--compare", metavar="REPORT", help="an earlier report: each line's share then and now"
    )
    nl.add_argument("--sass", help="cuobjdump -sass of the kernel's binary (for the blame)")
    nl.add_argument("--json", action="store_true")
    driver_option(nl)
    timeout_option(nl)
    nl.set_defaults(func=run_lines)
    ns = nsub.add_parser("show", help="kernels, metrics and hints of a .ncu-rep or CSV file")
    ns.add_argument("file")
    ns.add_argument("--json", action="store_true")
    ns.set_defaults(func=run)
