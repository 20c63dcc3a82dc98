"""``kernel-lens trace summarize FILE.json``: a Chrome trace's summary (top kernels, per op,
launch gaps, memcpy), read straight into columns. Runs no user code: in-process."""

from __future__ import annotations

import argparse
import json

from kernel_lens.cli.common import emit_error, say


def run_summarize(args: argparse.Namespace) -> int:
    """A trace file's summary."""
    from kernel_lens.analysis.trace_summary import TraceError, format_trace_summary
    from kernel_lens.traces.read import summarize_file

    try:
        # Read straight into columns (msgspec when installed; gzip too): 1M events in seconds.
        summary = summarize_file(args.file, top=args.top)
    except TraceError as exc:
        emit_error({"kind": "trace", "message": str(exc), "line": None}, args.json, None)
        return 1
    except MemoryError:
        # Under an address-space limit a large trace can still run out: said, as JSON too.
        message = f"trace file {args.file} does not fit in this process's memory: not read"
        emit_error({"kind": "trace", "message": message, "line": None}, args.json, None)
        return 1
    if args.json:
        say(json.dumps(summary.to_json()))
    else:
        say(format_trace_summary(summary))
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    t = sub.add_parser("trace", help="work with torch.profiler Chrome traces")
    tsub = t.add_subparsers(dest="trace_command", required=True)
    ts = tsub.add_parser(
        "summarize",
        help="summarise a torch.profiler (Kineto) trace: .json, .json.gz, a top-level array of "
        "events, or Perfetto .pftrace",
    )
    ts.add_argument("file")
    ts.add_argument("--json", action="store_true")
    ts.add_argument("--top", type=int, default=20)
    ts.set_defaults(func=run_summarize)
