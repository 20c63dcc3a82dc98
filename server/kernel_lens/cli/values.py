"""``kernel-lens values PATH::KERNEL``: a ``@triton.jit`` kernel's launch run under Triton's
interpreter, with what each line of its body assigned for one program, and the out-of-bounds
loads and stores of every program."""

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
from kernel_lens.wire.jobs import ValuesRequest


def run(args: argparse.Namespace) -> int:
    """Print each line's values (``--json``: the result object)."""
    path, kernel = split_target(args.target)
    if not kernel:
        return usage_error(args, "give the kernel: PATH::KERNEL")
    driver = driver_request(args)
    if isinstance(driver, int):
        return driver
    request = ValuesRequest(
        path=os.path.abspath(path),
        kernel=kernel,
        program=args.pid,
        iteration=args.iteration,
        driver=driver["driver"],
        argv=driver["argv"],
    )
    result = job(request, args)
    if isinstance(result, int):
        return result
    if args.json:
        say(json.dumps(result))
        return 0
    for line in values_text(result, _source_lines(path)):
        say(line)
    return 0


def _source_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().splitlines()
    except OSError:
        return []


def values_text(result: dict[str, Any], source: list[str]) -> list[str]:
    """The terminal's view: a header, then each kernel line with its values under it."""
    pid = ", ".join(map(str, result["pid"]))
    grid = " × ".join(map(str, result["grid"]))
    out = [
        f"# {result['kernel']} · program ({pid}) of grid {grid} · launched by "
        f"{result.get('launcher') or '?'}",
        f"# {result['label']}",
    ]
    if not result.get("in_grid", True):
        out.append(f"# program ({pid}) is outside the grid: no line ran for it")
    by_line = {row["line"]: row for row in result["lines"]}
    problems: dict[int, list[str]] = {}
    for p in result.get("oob", []):
        problems.setdefault(p["line"], []).append(p["message"])
    error = result.get("error")
    if error and error.get("line"):
        problems.setdefault(error["line"], []).append(error["message"])
    for number in sorted(set(by_line) | set(problems)):
        text = source[number - 1].rstrip() if 0 < number <= len(source) else ""
        out.append(f"{number:5d}  {text}")
        row = by_line.get(number)
        if row is not None:
            passes = f" (pass {row['hit']} of {row['hits']})" if row["hits"] > 1 else ""
            for value in row["values"]:
                out.append(f"       = {value['text']}{passes}")
        for message in problems.get(number, []):
            out.append(f"       ! {message}")
    if error and not error.get("line"):
        out.append(f"! {error['message']}")
    return out


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    v = sub.add_parser(
        "values",
        help="a Triton kernel's values per line for one program, under Triton's interpreter",
    )
    v.add_argument("target", help="PATH::KERNEL")
    v.add_argument(
        "--pid",
        default="first",
        metavar="first|last|X[,Y[,Z]]",
        help="the program whose values are shown (default: first)",
    )
    v.add_argument(
        "--iteration",
        default="first",
        metavar="first|last|N",
        help="for a line that ran several times (a loop's body): which pass to show",
    )
    v.add_argument("--json", action="store_true")
    driver_option(v)
    timeout_option(v)
    v.set_defaults(func=run)
