"""``kernel-lens memcheck PATH::FUNC``: Check Memory — one call of the function under NVIDIA's
``compute-sanitizer`` (memcheck; ``--tool racecheck`` for shared-memory hazards), each report on
the source line it names. Needs a GPU and the CUDA toolkit's compute-sanitizer."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kernel_lens.cli.common import (
    driver_option,
    driver_request,
    job,
    say,
    split_target,
    timeout_option,
    usage_error,
)
from kernel_lens.wire.jobs import SanitizerRequest


def run(args: argparse.Namespace) -> int:
    """Print each finding under its line (``--json``: the result object)."""
    path, function = split_target(args.target)
    if not function:
        return usage_error(args, "give the function: PATH::FUNC")
    driver = driver_request(args)
    if isinstance(driver, int):
        return driver
    request = SanitizerRequest(
        path=os.path.abspath(path),
        function=function,
        tool=args.tool,
        timeout=args.timeout,
        driver=driver["driver"],
        argv=driver["argv"],
    )
    result = job(request, args)
    if isinstance(result, int):
        return result
    if args.json:
        say(json.dumps(result))
        return 0
    for line in memcheck_text(result, os.path.basename(path)):
        say(line)
    return 0


def memcheck_text(result: dict[str, Any], name: str) -> list[str]:
    """``file.py:27  compute-sanitizer: Invalid __global__ write …`` per finding."""
    out = [f"# compute-sanitizer --tool {result['tool']}: {result['errors']} error(s)"]
    for finding in result["findings"]:
        if finding.get("py_line"):
            where = f"{name}:{finding['py_line']}"
        elif finding.get("file"):
            where = f"{finding['file']}:{finding.get('line')}"
        else:
            where = "(no line information)"
        out.append(f"{where}  {finding['message']}")
    return out


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    m = sub.add_parser(
        "memcheck", help="Check Memory: PATH::FUNC's call under compute-sanitizer (a GPU)"
    )
    m.add_argument("target", help="PATH::FUNC")
    m.add_argument(
        "--tool", default="memcheck", choices=["memcheck", "racecheck", "initcheck", "synccheck"]
    )
    m.add_argument("--json", action="store_true")
    driver_option(m)
    timeout_option(m)
    m.set_defaults(func=run)
