"""``kernel-lens ncu run PATH::FUNC`` (Nsight Compute on the function's kernels) and ``kernel-lens
ncu show FILE.ncu-rep`` (a report's kernels, metrics and hints; in-process)."""

from __future__ import annotations

import argparse
import json
import os
import sys
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
from kernel_lens.wire.jobs import NcuRequest


def _print_ncu(kernels: list[dict[str, Any]]) -> None:
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
    from kernel_lens.ncu_files import read_ncu_file

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
    ns = nsub.add_parser("show", help="kernels, metrics and hints of a .ncu-rep or CSV file")
    ns.add_argument("file")
    ns.add_argument("--json", action="store_true")
    ns.set_defaults(func=run)
