"""The lecture's square three ways, their assembly summarised and their time measured (issue 47),
on a CUDA GPU:

    python benchmarks/bench_asm_diff.py [--stage sass] [--n 100000000]

Rows: the Triton square (``kernels/triton_square.py``) at ``BLOCK_SIZE`` 64 and 1024, and the
``load_inline`` CUDA square (``kernels/inline_square.py``). For each, from
``kernel-lens asm-diff --json`` (the same summaries the editor's Compare Assembly shows):
instructions, global load width × count per thread, registers, block size; and the measured
median time of one call on ``n`` float32 elements (``triton.testing.do_bench``: warm-up, L2
cleared before each rep, CUDA events; milliseconds) with the bandwidth it implies (read + write,
GB/s). Then the two ``differs most`` lines (64 vs 1024, Triton 1024 vs CUDA). Prints a Markdown
table for docs/benchmarks.md, dated.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRITON = ROOT / "kernels" / "triton_square.py"
INLINE = ROOT / "kernels" / "inline_square.py"


def _module(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _asm_diff(a: str, b: str, stage: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "kernel_lens", "asm-diff", a, b, "--stage", stage, "--json"],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "server")},
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"asm-diff {a} {b} failed: {proc.stdout}{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _widths(widths: dict[str, int]) -> str:
    return " + ".join(f"{n} × {w}-bit" for w, n in sorted(widths.items(), key=lambda x: -int(x[0])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stage", default="sass", choices=["ptx", "sass"])
    parser.add_argument("--n", type=int, default=10_000 * 10_000, help="float32 elements")
    args = parser.parse_args()

    import torch
    import triton.testing

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU")
    blocks = _asm_diff(f"{TRITON}::square_kernel[BLOCK_SIZE=64]", f"{TRITON}::square_kernel",
                       args.stage)  # fmt: skip
    versus = _asm_diff(f"{TRITON}::square_kernel", f"{INLINE}::square", args.stage)
    triton_mod, inline_mod = _module(TRITON), _module(INLINE)
    x = torch.randn(args.n, device="cuda")
    rows = [
        ("Triton square, BLOCK_SIZE=64", blocks["a"], lambda: triton_mod.square(x, BLOCK_SIZE=64)),
        ("Triton square, BLOCK_SIZE=1024", blocks["b"], lambda: triton_mod.square(x)),
        ("load_inline CUDA square", versus["b"], lambda: inline_mod.square(x)),
    ]
    reference = x * x
    print(f"{torch.cuda.get_device_name()} · {args.stage.upper()} · n = {args.n:,} float32 · "
          f"{datetime.date.today().isoformat()}\n")  # fmt: skip
    print(
        "| kernel | instructions | global loads / thread | registers | block | median ms | GB/s |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, side, fn in rows:
        assert torch.allclose(fn(), reference)
        ms = float(triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median"))
        gbs = 2 * 4 * args.n / (ms * 1e-3) / 1e9
        s = side["summary"]
        print(f"| {name} | {s['instructions']} | {_widths(s['load_widths'])} | {s['registers']} | "
              f"{s['block_size']} ({s['block_from']}) | {ms:.4f} | {gbs:.0f} |")  # fmt: skip
    print(f"\n64 vs 1024: {blocks['verdict']}")
    print(f"Triton 1024 vs CUDA: {versus['verdict']}")


if __name__ == "__main__":
    main()
