"""The light whole-run profile against the plain run and the deep profile, in one run (issue 36,
item 4): a small GPT's training loop (`benchmarks/light/gpt_train.py`, nanoGPT's shape) run

- **plain**: ``python gpt_train.py ARGS``;
- **light**: ``python -m kernel_lens.agent.light gpt_train.py -- ARGS`` (Proton, kernel time by
  calling context);
- **deep**: ``python -m kernel_lens profile gpt_train.py --json -- ARGS`` (torch.profiler with
  every line tagged; the whole run's Chrome trace);

each in its own process, interleaved ``--repeat`` times. Compared: the script's own training-loop
time (it prints it; the warm-up step and the start-up outside it) and each process's wall time,
as ratios to the plain run; what each stores per 30 steps (Proton's ``.hatchet``, the deep
profile's trace); and the light profile's lines (the kernel time it put on the model's lines,
the share left on no line: backward's kernels).

    python benchmarks/bench_light.py [--steps 100] [--repeat 2] [--out results.json] [-- ARGS]

Goals (issue 36): light ≤ 1.10x the plain loop, ≤ 1 MB stored per 30 steps. CUDA only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "light" / "gpt_train.py"


def _loop_line(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith('{"steps"'):
            got: dict[str, Any] = json.loads(line)
            return got
    return None


def _run(mode: str, script_args: list[str], folder: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "server"), os.environ.get("PYTHONPATH", "")) if p)}  # fmt: skip
    if mode == "plain":
        command = [sys.executable, str(SCRIPT), *script_args]
    elif mode == "light":
        command = [sys.executable, "-m", "kernel_lens.agent.light", str(SCRIPT), "--workspace",
                   str(SCRIPT.parent), "--out", folder, "--", *script_args]  # fmt: skip
    else:
        command = [sys.executable, "-m", "kernel_lens", "profile", str(SCRIPT), "--json", "-q",
                   "--no-memory", "--workspace", str(SCRIPT.parent), "--trace-dir", folder,
                   "--", *script_args]  # fmt: skip
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=580)
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {"mode": mode, "process_s": wall, "code": done.returncode}
    loop = _loop_line(done.stdout) or _loop_line(done.stderr)
    if loop is None and mode == "deep":
        # The deep profile keeps the script's stdout in its result.
        try:
            result = json.loads(done.stdout)
            loop = _loop_line(json.dumps(result.get("script", {}).get("stdout", "")))
        except ValueError:
            pass
    out["loop_s"] = loop["loop_s"] if loop else None
    if mode == "light":
        answers = [x for x in done.stdout.splitlines() if x.startswith('{"ok"')]
        answer = json.loads(answers[-1]) if answers else {"ok": False, "error": done.stderr[-500:]}
        if answer.get("ok"):
            r = answer["result"]
            mine = {p: v for p, v in r["files"].items() if p.endswith("gpt_train.py")}
            out.update(
                stored_bytes=r["stored_bytes"],
                kernel_ms=r["total_kernel_us"] / 1e3,
                other_ms=r["other_us"] / 1e3,
                launches=r["launches"],
                lines=sum(len(v) for v in mine.values()),
                triton=r.get("triton"),
            )
        else:
            out["error"] = answer.get("error")
    elif mode == "deep":
        try:
            result = json.loads(done.stdout)
            path = result.get("trace_path")
            out["stored_bytes"] = os.path.getsize(path) if path else None
            if "error" in result:
                out["error"] = result["error"]
        except (ValueError, OSError) as exc:
            out["error"] = f"{exc}: {done.stderr[-500:]}"
    elif done.returncode != 0:
        out["error"] = done.stderr[-500:]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--modes", default="plain,light,deep")
    parser.add_argument("--out", help="write every run's numbers here (JSON)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = [a for a in args.script_args if a != "--"]
    script_args = ["--steps", str(args.steps), *extra]
    modes = args.modes.split(",")
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="kl-bench-light-") as folder:
        for _ in range(args.repeat):
            for mode in modes:  # interleaved
                got = _run(mode, script_args, os.path.join(folder, mode))
                runs[mode].append(got)
                print(json.dumps(got), flush=True)
    import torch
    import triton

    name = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    print(f"\n{name} · torch {torch.__version__} · triton {triton.__version__} · "
          f"{args.steps} steps {' '.join(extra)}")  # fmt: skip

    def med(mode: str, key: str) -> float | None:
        values = [
            r[key] for r in runs.get(mode, []) if r.get(key) is not None and not r.get("error")
        ]
        return statistics.median(values) if values else None

    plain_loop, plain_proc = med("plain", "loop_s"), med("plain", "process_s")
    print("| mode | loop s | x plain | process s | x plain | stored per 30 steps |")
    print("|---|---|---|---|---|---|")
    for mode in modes:
        loop, proc, stored = med(mode, "loop_s"), med(mode, "process_s"), med(mode, "stored_bytes")
        cells = [
            mode,
            f"{loop:.2f}" if loop else "–",
            f"{loop / plain_loop:.3f}x" if loop and plain_loop else "–",
            f"{proc:.2f}" if proc else "–",
            f"{proc / plain_proc:.3f}x" if proc and plain_proc else "–",
            f"{stored * 30 / args.steps / 1e3:,.0f} kB" if stored else "–",
        ]
        print("| " + " | ".join(cells) + " |")
    light = runs.get("light", [])
    if light and "kernel_ms" in light[-1]:
        last = light[-1]
        print(f"light: {last['kernel_ms']:.0f} ms of kernels in {last['launches']:,} launches, "
              f"{last['lines']} lines of gpt_train.py, {last['other_ms']:.0f} ms on no line "
              "(backward, optimizer's C++ threads)")  # fmt: skip
    for mode, got in runs.items():
        for r in got:
            if r.get("error"):
                print(f"{mode}: error: {r['error']}")
    if args.out:
        Path(args.out).write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
