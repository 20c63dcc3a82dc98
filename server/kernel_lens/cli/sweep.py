"""``kernel-lens sweep PATH::FUNC --param NAME``: the function timed across values of an int
parameter, the best named only when it beats the runner-up beyond noise."""

from __future__ import annotations

import argparse
import json
import os
import sys

from kernel_lens.cli.common import (
    driver_option,
    driver_request,
    job,
    say,
    split_target,
    timeout_option,
)
from kernel_lens.wire.jobs import SweepRequest
from kernel_lens.wire.lsp import DEFAULT_SWEEP_BUDGET_MS, DEFAULT_WARMUP_MS


def run(args: argparse.Namespace) -> int:
    """The sweep's table and, beyond noise, its best value."""
    path, func = split_target(args.target)
    if func is None:
        say("give PATH::FUNC", file=sys.stderr)
        return 2
    try:
        values = [int(v) for v in args.values.split(",")] if args.values else []
    except ValueError:
        say(f"--values takes integers, e.g. 64,128,256 (got {args.values!r})", file=sys.stderr)
        return 2
    driver = driver_request(args)
    if isinstance(driver, int):
        return driver
    request = SweepRequest(
        path=os.path.abspath(path),
        function=func,
        param=args.param,
        values=values,
        budget_ms=args.budget_ms,
        warmup_ms=args.warmup_ms,
        driver=driver["driver"],
        argv=driver["argv"],
    )
    result = job(request, args)
    if isinstance(result, int):
        return result
    sweep = result["sweep"]
    if args.json:
        # With the inputs it was timed on (a driver's call's, with --from).
        say(
            json.dumps(
                {
                    "function": result["function"],
                    "device": result["device"],
                    "inputs": result.get("inputs"),
                    **sweep,
                }
            )
        )
        return 0
    say(f"{result['function']} · sweep {sweep['param']} · {result['device']}")
    say(f"{sweep['param']:>10}  {'median':>10}  {'±':>6}  {'GB/s':>8}")
    for row in sweep["rows"]:
        if row.get("error"):
            say(f"{row['value']:>10}  failed: {row['error']}")
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
        say(
            f"{row['value']:>10}  {row['median_ms']:>8.4f}ms  {row['spread_pct']:>5.1f}%  "
            f"{gbps:>8}{mark}"
        )
    if sweep.get("verdict") and not sweep.get("note"):
        say(sweep["verdict"])
    if sweep.get("note"):
        say(f"note: {sweep['note']}")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    w = sub.add_parser("sweep", help="time a function across values of an int parameter")
    w.add_argument("target", help="PATH::FUNC")
    w.add_argument("--param", required=True, help="the integer parameter, e.g. BLOCK_SIZE")
    w.add_argument("--values", help="comma list (default: powers of two around the current)")
    w.add_argument(
        "--budget-ms",
        type=float,
        default=DEFAULT_SWEEP_BUDGET_MS,
        help="timing budget per value, ms",
    )
    w.add_argument("--warmup-ms", type=float, default=DEFAULT_WARMUP_MS)
    w.add_argument("--json", action="store_true")
    driver_option(w)
    timeout_option(w)
    w.set_defaults(func=run)
