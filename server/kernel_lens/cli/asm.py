"""``kernel-lens asm PATH::KERNEL`` (``PATH``: every ``@triton.jit`` kernel): TTIR, TTGIR, LLIR,
PTX or SASS for an architecture, with registers and spills."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from kernel_lens.cli.common import (
    driver_option,
    driver_request,
    job,
    say,
    split_target,
    timeout_option,
)
from kernel_lens.wire.jobs import AsmRequest


def run(args: argparse.Namespace) -> int:
    """The kernel's (or every kernel's) assembly for the stage and architecture."""
    path, kernel = split_target(args.target)
    overrides: dict[str, str] = {}
    for item in [x for arg in args.types or [] for x in arg.split(",") if x.strip()]:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            say(
                f"kernel-lens asm: --types takes NAME=TYPE (x_ptr=*fp16, BLOCK=256), not {item!r}",
                file=sys.stderr,
            )
            return 2
        overrides[name.strip()] = value.strip()
    driver = driver_request(args)
    if isinstance(driver, int):
        return driver
    request = AsmRequest(
        path=os.path.abspath(path),
        kernel=kernel,
        arch=args.arch,
        stage=args.stage,
        overrides=overrides or None,
        driver=driver["driver"],
        argv=driver["argv"],
        config=args.config,
    )
    result = job(request, args)
    if isinstance(result, int):
        return result
    rows: list[dict[str, Any]] = [result] if kernel else list(result["kernels"])
    failed: list[dict[str, Any]] = [] if kernel else list(result.get("failed") or [])
    if args.json:
        # Every kernel of the file: one that did not compile is {"kernel", "error"}.
        say(json.dumps(rows[0] if kernel else rows + failed))
        return 0
    for f in failed:
        say(f"// {f['kernel']}: not compiled ({f['error']['kind']}): {f['error']['message']}")
    for j in rows:
        say(
            f"// {j['kernel']} · {args.stage.upper()} · {j['arch']} · {_registers(j)} · "
            f"{j['spills']} bytes spilled · "
            + (f"launched by {j['launcher']} with " if j.get("launcher") else "constexprs ")
            + f"{j['constexprs']}"
        )
        say(f"// {asm_origin(j)}")
        if j.get("types_note"):
            say(f"// {j['types_note']}")
        tuned = j.get("autotune")
        if tuned:
            if tuned.get("shown"):
                say(f"// autotuned: config {args.config} picked, {tuned['shown']}")
            else:
                say(f"// autotuned: chose {tuned['chosen']}")
            if tuned.get("note"):
                say(f"// {tuned['note']}")
            for i, row in enumerate(tuned["configs"]):
                ms = "not timed" if row["ms"] is None else f"{row['ms']:.4g} ms"
                say(f"//   {'*' if row['chosen'] else ' '} [{i}] {row['config']}: {ms}")
        say(j["asm"])
    return 0


def _registers(j: dict[str, Any]) -> str:
    """``10 registers (16 in Nsight Compute)``: used, and ncu's figure when it differs."""
    used, allocated = j.get("registers"), j.get("registers_allocated")
    if used is None:
        return "registers unknown"
    if allocated is not None and allocated != used:
        return f"{used} registers ({allocated} in Nsight Compute)"
    return f"{used} registers"


def asm_origin(j: dict[str, Any]) -> str:
    """``from the launch · 4 warps · 3 stages · 0 B shared`` or the ahead-of-time label."""
    if j.get("compiled_from") == "launch":
        parts = ["from the launch"]
    else:
        parts = [j.get("compiled_note") or f"compiled ahead of time for {j['arch']}"]
    if j.get("num_warps") is not None:
        parts.append(f"{j['num_warps']} warps")
    if j.get("num_stages") is not None:
        parts.append(f"{j['num_stages']} stages")
    if j.get("shared_bytes") is not None:
        parts.append(f"{j['shared_bytes']} B shared")
    return " · ".join(parts)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    a = sub.add_parser("asm", help="Triton kernels compiled to TTIR/TTGIR/LLIR/PTX/SASS")
    a.add_argument("target", help="PATH::KERNEL, or PATH for every @triton.jit kernel")
    a.add_argument("--stage", default="ptx", choices=["ttir", "ttgir", "llir", "ptx", "sass"])
    a.add_argument("--arch", type=int, default=None, help="compute capability, e.g. 90 (sm_90)")
    a.add_argument(
        "--types",
        action="append",
        metavar="NAME=TYPE",
        help="an argument's type (x_ptr=*fp16, n=i64) or a constexpr's value (BLOCK=256), over "
        "those of the launch; repeatable, or comma-separated",
    )
    a.add_argument(
        "--config",
        type=int,
        default=None,
        metavar="N",
        help="an @triton.autotune kernel's config N (0 = the first it lists) instead of the "
        "chosen one",
    )
    a.add_argument("--json", action="store_true")
    driver_option(
        a,
        "compile KERNEL for its first launch in a run of DRIVER (`python DRIVER ARGS…`, ARGS "
        "after --), wherever the driver launches it from",
    )
    timeout_option(a)
    a.set_defaults(func=run)
