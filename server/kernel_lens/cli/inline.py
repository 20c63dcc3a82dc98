"""``kernel-lens inline PATH``: every ``load_inline`` module of the file — generated sources,
PTX, each kernel's registers (``ptxas -v``), nvcc's errors on the Python lines (``--build``: the
real build's log; ``--sass``: the SASS too)."""

from __future__ import annotations

import argparse
import json
import os

from kernel_lens.cli.common import job, say, split_target, timeout_option
from kernel_lens.wire.jobs import InlineRequest


def run(args: argparse.Namespace) -> int:
    """The load_inline modules of the file: sources, PTX, nvcc's errors."""
    path, _ = split_target(args.target)
    request = InlineRequest(
        path=os.path.abspath(path), arch=args.arch, build=args.build, sass=args.sass
    )
    result = job(request, args)
    if isinstance(result, int):
        return result
    if args.json:
        say(json.dumps(result))
        return 0
    for m in result["modules"]:
        say(f"// load_inline {m['name']} (line {m['call_line']}) · {m['arch']} · {m['nvcc']}")
        for err in m["errors"]:
            say(f"{path}:{err['line']}: {err['severity']}: {err['message']}")
        for k in m.get("kernels") or []:
            say(
                f"// {k['entry']}: {k['registers']} registers · {k['spills']} bytes spilled · "
                f"{k['shared_bytes']} B shared"
            )
        if m["ptx"]:
            say(m["ptx"])
        if m.get("sass"):
            say(m["sass"])
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    i = sub.add_parser("inline", help="load_inline modules: generated sources, PTX, nvcc errors")
    i.add_argument("target", help="PATH of a file that calls load_inline")
    i.add_argument("--arch", type=int, default=90, help="compute capability for the PTX")
    i.add_argument("--build", action="store_true", help="also build it with load_inline (log)")
    i.add_argument("--sass", action="store_true", help="also the SASS (ptxas, then nvdisasm -g)")
    i.add_argument("--json", action="store_true")
    timeout_option(i)
    i.set_defaults(func=run)
