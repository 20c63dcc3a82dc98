"""``kernel-lens asm-diff A B``: two kernels' PTX or SASS side by side — a Triton kernel against
the ``load_inline`` CUDA kernel that does the same work, or against itself with other constexprs —
normalised (registers, labels, parameters, addresses canonicalised) and summarised (instructions
by class, load/store widths, registers, spills, shared memory, block size, what differs most).

A and B are each ``PATH::NAME`` with an optional ``[K=V,…]``: ``NAME`` a ``@triton.jit`` kernel
(``[BLOCK_SIZE=64]`` picks constexpr values or argument types, as ``asm --types``), or — in a
file that calls ``load_inline`` — a CUDA kernel of its source or the host function that
launches one. Each side compiles in its own fresh agent, as ``asm`` and ``inline`` do.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import re
import sys
from typing import Any, Literal

from kernel_lens.analysis.asm_diff import Side, compare, inline_side, target_kind, triton_side
from kernel_lens.cli.common import emit_error, for_the_cli, run_in_agent, say, timeout_option
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import AsmRequest, InlineRequest, JobRequest

__all__ = ["add_parser", "parse_side", "run"]

_SPEC = re.compile(r"^(?P<path>.+?)::(?P<name>[A-Za-z_]\w*)(?:\[(?P<picks>[^\]]*)\])?$")


def parse_side(spec: str) -> tuple[str, str, dict[str, str]]:
    """``PATH::NAME[K=V,…]`` as ``(PATH, NAME, {K: V})``.

    Raises:
        ValueError: another form.
    """
    m = _SPEC.match(spec.strip())
    if m is None:
        raise ValueError(f"{spec!r} is not PATH::KERNEL or PATH::KERNEL[NAME=VALUE,…]")
    picks: dict[str, str] = {}
    for item in [x for x in (m.group("picks") or "").split(",") if x.strip()]:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{spec!r}: [{m.group('picks')}] takes NAME=VALUE pairs")
        picks[key.strip()] = value.strip()
    return m.group("path"), m.group("name"), picks


def _request(
    path: str, name: str, picks: dict[str, str], kind: str, stage: str, arch: int | None
) -> JobRequest:
    if kind == "triton":
        return AsmRequest(
            path=path, kernel=name, arch=arch, stage=stage, overrides=dict(picks) or None
        )
    return InlineRequest(path=path, arch=arch or 90, sass=stage == "sass")


async def _both(requests: list[JobRequest], timeout: float) -> list[dict[str, Any]]:
    jobs = [run_in_agent(r, timeout=timeout, progress=False) for r in requests]
    return list(await asyncio.gather(*jobs))


def run(args: argparse.Namespace) -> int:
    """Compile both sides, then print the summary and the diff (or the JSON)."""
    sides: list[tuple[str, str, dict[str, str], str]] = []
    for spec in (args.a, args.b):
        try:
            path, name, picks = parse_side(spec)
        except ValueError as exc:
            say(f"kernel-lens asm-diff: {exc}", file=sys.stderr)
            return 2
        path = os.path.abspath(path)
        try:
            with open(path, encoding="utf-8") as fh:
                source = fh.read()
        except OSError as exc:
            err = ProfileError("not-found", f"cannot read {path}: {exc.strerror}")
            emit_error(err.to_json(), args.json, None)
            return 1
        kind = target_kind(source, name)
        if kind is None:
            err = ProfileError(
                "not-found",
                f"{name} is no @triton.jit kernel of {os.path.basename(path)}, and the file "
                "calls no load_inline",
            )
            emit_error(err.to_json(), args.json, None)
            return 1
        if kind == "inline" and picks:
            say(
                "kernel-lens asm-diff: [NAME=VALUE] picks a Triton kernel's constexprs; "
                f"{name} is a load_inline kernel",
                file=sys.stderr,
            )
            return 2
        sides.append((path, name, picks, kind))
    requests = [_request(p, n, k, kind, args.stage, args.arch) for p, n, k, kind in sides]
    try:
        results = asyncio.run(_both(requests, args.timeout))
    except ProfileError as exc:
        emit_error(for_the_cli(exc).to_json(), args.json, None)
        return 1
    built: list[Side] = []
    for (path, name, _picks, kind), result in zip(sides, results, strict=True):
        try:
            if kind == "triton":
                built.append(triton_side(result, path, args.stage))
            else:
                built.append(inline_side(result, path, name, args.stage))
        except ValueError as exc:
            emit_error(ProfileError("not-found", str(exc)).to_json(), args.json, None)
            return 1
    diff = compare(built[0], built[1], args.stage)
    if args.json:
        say(json.dumps(diff))
        return 0
    mode: Literal["original", "normalised"] = "original" if args.original else "normalised"
    for key in ("a", "b"):
        for line in diff[key]["header"][:-2]:
            say(line)
    say(f"// differs most: {diff['verdict']}")
    if diff["identical"] and not args.original:
        return 0
    header_len = len(diff["a"]["header"])
    bodies = [diff[k][mode]["text"].splitlines()[header_len:] for k in ("a", "b")]
    for line in difflib.unified_diff(
        bodies[0],
        bodies[1],
        fromfile=f"A: {diff['a']['title']} ({mode})",
        tofile=f"B: {diff['b']['title']} ({mode})",
        lineterm="",
        n=args.context,
    ):
        say(line)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    d = sub.add_parser(
        "asm-diff",
        help="two kernels' PTX/SASS normalised and diffed, with a summary of each",
        description="A and B: PATH::KERNEL (a @triton.jit kernel; PATH::KERNEL[BLOCK_SIZE=64] "
        "picks constexprs or types), or PATH::NAME in a file that calls load_inline (a CUDA "
        "kernel, or the host function that launches it). Quote the [..] form in a shell.",
    )
    d.add_argument("a", metavar="A", help="PATH::KERNEL[NAME=VALUE,…]")
    d.add_argument("b", metavar="B", help="PATH::KERNEL[NAME=VALUE,…]")
    d.add_argument("--stage", default="ptx", choices=["ptx", "sass"])
    d.add_argument("--arch", type=int, default=None, help="compute capability (default: 90)")
    d.add_argument(
        "--original", action="store_true", help="diff the texts as compiled, not normalised"
    )
    d.add_argument("--context", type=int, default=3, help="lines of context in the diff")
    d.add_argument("--json", action="store_true")
    timeout_option(d)
    d.set_defaults(func=run)
