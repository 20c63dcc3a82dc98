"""``kernel-lens asm PATH::KERNEL`` (``PATH``: every ``@triton.jit`` kernel): TTIR, TTGIR, LLIR,
PTX or SASS for an architecture, with registers and spills."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kernel_lens.cli.common import job, split_target, timeout_option
from kernel_lens.wire.jobs import AsmRequest


def run(args: argparse.Namespace) -> int:
    """The kernel's (or every kernel's) assembly for the stage and architecture."""
    path, kernel = split_target(args.target)
    request = AsmRequest(
        path=os.path.abspath(path), kernel=kernel, arch=args.arch, stage=args.stage
    )
    result = job(request, args)
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


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    a = sub.add_parser("asm", help="Triton kernels compiled to TTIR/TTGIR/LLIR/PTX/SASS")
    a.add_argument("target", help="PATH::KERNEL, or PATH for every @triton.jit kernel")
    a.add_argument("--stage", default="ptx", choices=["ttir", "ttgir", "llir", "ptx", "sass"])
    a.add_argument("--arch", type=int, default=None, help="compute capability, e.g. 90 (sm_90)")
    a.add_argument("--json", action="store_true")
    timeout_option(a)
    a.set_defaults(func=run)
