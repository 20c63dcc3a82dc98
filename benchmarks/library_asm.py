"""``kernel-lens asm FILE::KERNEL --json`` over every Triton kernel of a kernel library's files,
on this machine (issue 44): how many compiled from a real launch, with the launch's types, and
why the others did not. Prints a Markdown table (and, with ``--rows``, one row per kernel).

The library is a checkout of its own (never vendored here); a driver (``--from``) calls its ops
as a training step would, e.g. ``benchmarks/drivers/liger_ops.py``::

    python benchmarks/library_asm.py --name Liger-Kernel --root ~/src/Liger-Kernel \\
        --path src --from benchmarks/drivers/liger_ops.py src/liger_kernel/ops/rms_norm.py …

``--path`` folders (relative to ``--root``) go on ``PYTHONPATH`` for the driver's imports.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "server"
sys.path.insert(0, str(SERVER))

from kernel_lens.agent.stages.triton_launch import kernels_in_text  # noqa: E402


def _kernels(path: Path) -> list[str]:
    """The file's kernels, device helpers left out (a ``@triton.jit`` function that another
    kernel of the file calls and nothing launches: it has no launch of its own)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    made = kernels_in_text(tree)
    firsts: dict[str, Any] = {}
    for k in made.values():
        firsts.setdefault(k.def_name, k)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    called: set[str] = set()
    launched: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            launched.add(node.value.id)
    for name in firsts:
        for sub in ast.walk(defs[name]) if name in defs else []:
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                called.add(sub.func.id)
    helpers = {n for n in called if n in firsts and n not in launched}
    kept = [k for k in firsts.values() if k.def_name not in helpers]
    return [k.def_name for k in sorted(kept, key=lambda k: k.def_line)]


def _cause(error: dict[str, Any]) -> str:
    kind = str(error.get("kind"))
    message = str(error.get("message") or "")
    if kind == "inputs" and "guess of 1" in message:
        return "no launch ran; unknown constexprs (refused, named)"
    if kind == "not-found":
        return "not launched (by the driver or a launcher)"
    if kind == "runtime" and "could not compile" in message:
        return "compile failed"
    if kind == "timeout":
        return "timed out"
    return f"{kind}: {message.splitlines()[0][:60]}" if message else kind


def _one(args: argparse.Namespace, file: Path, kernel: str, env: dict[str, str]) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "kernel_lens", "asm", f"{file}::{kernel}", "--arch", "90"]
    cmd += ["--json", "--timeout", str(args.timeout)]
    if args.driver:
        cmd += ["--from", str(Path(args.driver).resolve())]
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=args.timeout + 30,
            cwd=args.root,
            env=env,
        )
        out = json.loads(proc.stdout or "{}")
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        out = {"error": {"kind": "timeout", "message": type(exc).__name__}}
    row: dict[str, Any] = {"file": str(file.relative_to(args.root)), "kernel": kernel}
    if "error" in out:
        row["cause"] = _cause(out["error"])
        row["message"] = str(out["error"].get("message") or "")[:300]
        return row
    row.update(
        types_from=out.get("types_from"),
        launcher=out.get("launcher"),
        noted=bool(out.get("types_note")) or out.get("types_from") == "launch",
        registers=out.get("registers"),
        signature=out.get("signature"),
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="the library's kernel files (under --root)")
    parser.add_argument("--root", required=True, help="the library's checkout")
    parser.add_argument("--name", default="library")
    parser.add_argument("--path", action="append", default=[], help="folders for PYTHONPATH")
    parser.add_argument("--from", dest="driver", help="a driver script that calls its ops")
    parser.add_argument("--timeout", type=int, default=240)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rows", action="store_true", help="also print one row per kernel")
    args = parser.parse_args()
    args.root = Path(args.root).resolve()
    env = dict(os.environ)
    paths = [str(SERVER)] + [str(args.root / p) for p in args.path]
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    work = [(args.root / f, k) for f in args.files for k in _kernels((args.root / f).resolve())]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda fk: _one(args, fk[0], fk[1], env), work))
    launch = sum(1 for r in rows if r.get("types_from") == "launch")
    suggested = sum(1 for r in rows if r.get("types_from") == "suggested")
    text = sum(1 for r in rows if r.get("types_from") == "text")
    silent = sum(1 for r in rows if "types_from" in r and not r["noted"])
    causes = Counter(r["cause"] for r in rows if "cause" in r)
    mode = f"from `{Path(args.driver).name}`" if args.driver else "launchers only"
    print(
        f"| {args.name} ({mode}) | kernels | from a launch, the launch's types | "
        "from a launch on suggested inputs (said) | from the text (said) | "
        "silently guessed | failures by cause |"
    )
    print("|---|---|---|---|---|---|---|")
    failures = "; ".join(f"{n} {c}" for c, n in causes.most_common()) or "none"
    print(
        f"| | {len(rows)} | {launch} ({100 * launch / max(1, len(rows)):.0f}%) | {suggested} | "
        f"{text} | {silent} | {failures} |"
    )
    if args.rows:
        print()
        for r in rows:
            what = r.get("types_from") or r.get("cause")
            print(
                f"- `{r['file']}::{r['kernel']}`: {what}"
                + (
                    f" ({r.get('launcher')}, {r.get('registers')} regs)"
                    if "types_from" in r
                    else f" — {r.get('message', '')[:160]}"
                )
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
