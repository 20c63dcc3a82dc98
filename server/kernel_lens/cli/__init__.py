"""``kernel-lens``: the profiling engine from a terminal.

    kernel-lens profile PATH::FUNC [--json] [--stages timing,ops,trace] [--reps N] [--timeout S]
    kernel-lens profile PATH --line N
    kernel-lens profile PATH [-- ARGS…]  (the whole script, run once as __main__, per line of
                                          every workspace file it runs)
    kernel-lens profile PATH --skip N --steps M [--after 30s]  (a window of a long run)
    kernel-lens profile PATH::FUNC --from DRIVER.py [-- ARGS…]  (inputs from the driver's call)
    kernel-lens profile PATH::FUNC --compare previous|baseline
    kernel-lens history PATH::FUNC [--json] [--baseline ID|--clear-baseline]
    kernel-lens compare A B [--json]   (A, B: PATH::FUNC#ID, #-1, #baseline, or profile JSONs)
    kernel-lens trace summarize FILE.json [--json]
    kernel-lens asm PATH::KERNEL [--stage ptx|sass|ttir|ttgir|llir] [--arch 90] [--json]
    kernel-lens values PATH::KERNEL [--pid first|last|X,Y,Z] [--iteration first|last|N]
                       [--from DRIVER] [--json]  (values per line, Triton's interpreter)
    kernel-lens asm-diff A B [--stage ptx|sass] [--original] [--json]  (A, B: PATH::KERNEL,
                                          PATH::KERNEL[BLOCK_SIZE=64], a load_inline kernel)
    kernel-lens inline PATH [--arch 90] [--build] [--json]
    kernel-lens sweep PATH::FUNC --param NAME [--values 64,128,…] [--from DRIVER] [--json]
    kernel-lens ncu run PATH::FUNC [--set basic|full] [--from DRIVER [-- ARGS…]] [--json]
    kernel-lens ncu show FILE.ncu-rep [--json]
    kernel-lens memcheck PATH::FUNC [--tool memcheck|racecheck] [--from DRIVER] [--json]
                                    (compute-sanitizer on a GPU)

The commands that run user code (profile, asm, asm-diff, values, inline, sweep, ncu run, memcheck)
run it the way the editor does: in a fresh agent process (``python -m kernel_lens.agent``) through
the same client and engine, so however the code ends — an exception, ``sys.exit``, ``os._exit``, a
segfault, Ctrl-C raised by the code, a hang past ``--timeout``, threads left running — the command
ends with the same error contract. ``trace summarize`` and ``ncu show`` read files and run in-
process. Exit status: 0 on success, 1 when the job failed (``{"error": {"kind", "message",
"line"}}`` with ``--json``, one line on stderr without; the kinds are
:data:`kernel_lens.wire.errors.ERROR_KINDS`), 2 for bad command-line usage, 130 when the CLI itself
is interrupted (Ctrl-C). Each command is one module of this package (``profile``, ``history`` with
``compare``, ``asm``, ``asm_diff``, ``ncu``, ``sweep``, ``inline``, ``trace``) with an
``add_parser`` that registers its parser and the function it runs; this module only composes them
(``common`` holds what they share).
"""

from __future__ import annotations

import argparse
import sys

from kernel_lens.cli import (
    asm,
    asm_diff,
    history,
    inline,
    memcheck,
    ncu,
    profile,
    sweep,
    trace,
    values,
)
from kernel_lens.cli.common import emit_error
from kernel_lens.wire.errors import ErrorObject

__all__ = ["COMMANDS", "build_parser", "main"]

#: The commands' modules, in the order ``kernel-lens --help`` lists them.
COMMANDS = (profile, history, asm, asm_diff, values, ncu, memcheck, sweep, inline, trace)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(
        prog="kernel-lens", description="Profile PyTorch functions: time, ops and kernels per line."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kernel-lens`` console script.

    Everything after the first ``--`` is the profiled script's ``sys.argv[1:]``
    (``kernel-lens profile bench.py -- --batch_size=8``)."""
    words = list(sys.argv[1:] if argv is None else argv)
    script_args: list[str] = []
    given = "--" in words
    if given:
        cut = words.index("--")
        words, script_args = words[:cut], words[cut + 1 :]
    parser = build_parser()
    args = parser.parse_args(words)
    if script_args and not getattr(args, "takes_script_args", False):
        parser.error(f"arguments after -- are the profiled script's: `{args.command}` runs none")
    args.script_args = script_args
    # `--` alone: no arguments (not the ones kept for the script, see cli/common.saved_args)
    args.script_args_given = given
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        # Ctrl-C on the CLI itself: the agent was stopped on the way out (asyncio.run cancels
        # the job, and the client kills the agent's process group).
        err: ErrorObject = {"kind": "interrupted", "message": "interrupted (Ctrl-C)", "line": None}
        emit_error(err, bool(getattr(args, "json", False)), None)
        return 130
    return code
