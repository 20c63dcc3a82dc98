"""``kernel-lens history PATH::FUNC`` (the kept runs, each against the one before; pin or unpin
the baseline) and ``kernel-lens compare A B`` (two runs: the time's verdict, lines, kernels)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from kernel_lens.analysis.regular_files import read_regular
from kernel_lens.cli.common import emit_error, say, split_target

#: The largest ``profile --json`` file read for a comparison.
MAX_PROFILE_BYTES = 256 << 20


def _history_run(spec: str) -> tuple[dict[str, Any], str]:
    """A run named on the command line: ``PATH::FUNC#ID`` (``#-1`` latest, ``#baseline``;
    no ``#``: the latest) or a ``profile --json`` file; with its label.

    Raises:
        ValueError: the run or file cannot be found or read (the message says which).
    """
    from kernel_lens.history import History, HistoryError

    if "::" not in spec:
        try:
            data = json.loads(read_regular(spec, MAX_PROFILE_BYTES).decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read {spec}: {exc}") from None
        if not isinstance(data, dict) or "timing" not in data:
            raise ValueError(f"{spec} is not a profile (no 'timing'): use `profile --json`")
        return data, os.path.basename(spec)
    target, _, run = spec.partition("#")
    path, func = split_target(target)
    if func is None:
        raise ValueError(f"give PATH::FUNC#RUN, not {spec!r}")
    try:
        entry = History.default(path).get(os.path.abspath(path), func, run or "-1")
    except HistoryError as exc:
        raise ValueError(str(exc)) from None
    return entry, f"{func} run {entry['id']}"


def run_history(args: argparse.Namespace) -> int:
    """The kept runs of a function, each with its verdict against the one before."""
    from kernel_lens.analysis.compare import compare_timing
    from kernel_lens.history import History, HistoryError, entry_summary

    path, func = split_target(args.target)
    if func is None:
        say("give PATH::FUNC", file=sys.stderr)
        return 2
    file = os.path.abspath(path)
    history = History.default(file)
    try:
        if args.baseline or args.clear_baseline:
            history.set_baseline(file, func, None if args.clear_baseline else args.baseline)
        entries, unreadable = history.read(file, func)
    except HistoryError as exc:
        emit_error({"kind": "not-found", "message": str(exc), "line": None}, args.json, None)
        return 1
    for note in history.notes:
        say(f"history: {note}", file=sys.stderr)
    baseline = history.baseline_id(file, func)
    rows: list[dict[str, Any]] = []
    before: dict[str, Any] | None = None
    for entry in entries:
        try:
            row = entry_summary(entry)
            row["verdict"] = (
                compare_timing(before["timing"], entry["timing"]).to_json()
                if before is not None
                else None
            )
        except Exception as exc:  # a row of another shape: named, the others still listed
            unreadable.append(f"run {entry.get('id')}: not a run ({type(exc).__name__}: {exc})")
            continue
        rows.append(row)
        before = entry
    if args.json:
        say(
            json.dumps(
                {
                    "function": func,
                    "path": file,
                    "baseline": baseline,
                    "runs": rows,
                    "unreadable": unreadable,
                }
            )
        )
        return 0
    if not rows:
        say(f"{func}: no runs yet in {history.root}")
        _print_unreadable(unreadable)
        return 0
    say(f"{func} · {file} · {len(rows)} runs" + (f" · baseline run {baseline}" if baseline else ""))
    for row in rows:
        t = row["timing"]
        git = row.get("git") or {}
        commit = (git.get("commit") or "")[:8] + ("+dirty" if git.get("dirty") else "")
        verdict = (row["verdict"] or {}).get("text") or ""
        pin = " (baseline)" if row["id"] == baseline else ""
        say(
            f"{row['id']:>4}  {row.get('time') or '':<25}  {t['median_ms']:>9.4f} ms "
            f"±{float(t.get('spread_pct') or 0):.1f}%  {row['kernel_count']:g} kernels  "
            f"{row.get('device') or '?'}  {commit}  {verdict}{pin}".rstrip()
        )
    _print_unreadable(unreadable)
    return 0


def _print_unreadable(unreadable: list[str]) -> None:
    """The runs of the history that could not be read, each named with why."""
    if unreadable:
        say(f"{len(unreadable)} unreadable (not shown):")
        for what in unreadable:
            say(f"   ?  {what}")


def run_compare(args: argparse.Namespace) -> int:
    """Two runs compared: the time's verdict, lines and kernels."""
    from kernel_lens.analysis.compare import compare_results, format_comparison

    try:
        before, before_label = _history_run(args.before)
        after, after_label = _history_run(args.after)
    except ValueError as exc:
        emit_error({"kind": "not-found", "message": str(exc), "line": None}, args.json, None)
        return 1
    comparison = compare_results(
        before, after, reference=before_label, reference_id=before.get("id")
    )
    if args.json:
        say(json.dumps(comparison))
    else:
        say(format_comparison(comparison, before=before_label, after=after_label))
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command's parser."""
    hi = sub.add_parser("history", help="the kept runs of a function, each against the one before")
    hi.add_argument("target", help="PATH::FUNC")
    hi.add_argument("--json", action="store_true")
    pin = hi.add_mutually_exclusive_group()
    pin.add_argument("--baseline", metavar="ID", help="pin run ID (-1: the latest) as baseline")
    pin.add_argument("--clear-baseline", action="store_true", help="unpin the baseline")
    hi.set_defaults(func=run_history)

    c = sub.add_parser("compare", help="compare two runs: time verdict, lines and kernels")
    c.add_argument("before", help="PATH::FUNC#ID (#-1 latest, #-2, #baseline) or a profile JSON")
    c.add_argument("after", help="the same forms")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_compare)
