"""Benchmark: the deep tracer's overhead on a training step (issue 23).

A small workspace is written to a temporary folder — ``model.py`` (a GPT-like stack: embedding,
``N`` blocks of LayerNorm → causal attention → LayerNorm → MLP, a head) and ``train.py``
(``def main()``: ``STEPS`` steps of forward, cross-entropy, backward, AdamW) — the shape of the
real projects the tracer is for. The same run is timed four ways, in this process, each the
median of ``--repeat`` runs (``sys.argv``, folder and ``__main__`` as ``python train.py``):

- ``plain``: the script alone (no profiler);
- ``profiler``: under ``torch.profiler.profile(record_shapes=True)`` only (the reference);
- ``deep``: Kernel Lens's whole-script stage (:func:`profile_script`: the deep tracer's ranges on
  every workspace line, the optimizer hook, the same profiler);
- ``deep, record_function``: the tracer with ``record_function`` ranges instead of
  ``_RecordFunctionFast`` (why the fast ones are used).

The target: ``deep`` ≤ 1.5 × ``profiler``. Prints a table; no assertion. Trace export is not in
any of the times (it is the same for all). ``--device cuda`` on a GPU machine (default: cuda when
available). On the CPU, torch runs one thread and the process's CPU time is the figure (the
development machine is shared: wall time there measures the neighbours); on CUDA, wall time.

    python benchmarks/bench_deep_tracer.py [--steps 10] [--repeat 3] [--layers 4] [--dim 256]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from kernel_lens.agent.stages.deep import DeepTracer
from kernel_lens.agent.stages.script import profile_script
from kernel_lens.agent.usercode import compile_text, main_module

MODEL = '''"""A GPT-like stack (the benchmark's model file)."""

import torch
from torch import nn
from torch.nn import functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        x = self.up(x)
        x = F.gelu(x)
        return self.down(x)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab, dim, heads, layers, block):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, targets):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
'''

TRAIN = '''"""The benchmark's training script: def main(), the model from model.py."""

import sys

import torch

from model import GPT


def main():
    steps, layers, dim, device = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    torch.manual_seed(0)
    model = GPT(vocab=512, dim=dim, heads=4, layers=layers, block=64).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    idx = torch.randint(512, (8, 64), device=device)
    targets = torch.randint(512, (8, 64), device=device)
    for _ in range(steps):
        loss = model(idx, targets)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    if device == "cuda":
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
'''


def _write(folder: Path) -> Path:
    (folder / "model.py").write_text(MODEL)
    script = folder / "train.py"
    script.write_text(TRAIN)
    return script


def _fresh() -> None:
    sys.modules.pop("model", None)


_CLOCK = time.perf_counter


def _run_plain(script: Path, argv: list[str]) -> float:
    _fresh()
    code = compile_text(str(script), script.read_text())
    with main_module(str(script), argv) as module:
        start = _CLOCK()
        exec(code, module.__dict__)
        return _CLOCK() - start


def _activities(device: str) -> list[Any]:
    from torch.profiler import ProfilerActivity

    acts = [ProfilerActivity.CPU]
    if device == "cuda":
        acts.append(ProfilerActivity.CUDA)
    return acts


def _run_profiler(script: Path, argv: list[str], device: str, tracer: bool = False) -> float:
    _fresh()
    code = compile_text(str(script), script.read_text())
    with main_module(str(script), argv) as module:
        with torch.profiler.profile(activities=_activities(device), record_shapes=True) as prof:
            start = _CLOCK()
            if tracer:
                from torch.autograd.profiler import record_function

                with DeepTracer(str(script), [str(script.parent)], range_factory=record_function):
                    exec(code, module.__dict__)
            else:
                exec(code, module.__dict__)
            wall = _CLOCK() - start
    del prof
    return wall


def _run_deep(script: Path, argv: list[str], device: str, trace_dir: str) -> tuple[float, int]:
    _fresh()
    run = profile_script(
        str(script),
        script.read_text(),
        trace_dir=trace_dir,
        cuda_available=device == "cuda",
        argv=argv,
        workspace=[str(script.parent)],
    )
    spent = run.wall_s if _CLOCK is time.perf_counter else run.cpu_s
    ranges = sum(
        1
        for e in run.trace.get("traceEvents", [])
        if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("src:")
    )
    os.remove(run.trace_path)
    return spent, ranges


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    global _CLOCK
    if args.device == "cpu":
        torch.set_num_threads(1)
        _CLOCK = time.process_time
    warnings.filterwarnings("ignore")
    folder = Path(tempfile.mkdtemp(prefix="kl-deep-bench-"))
    trace_dir = str(folder / "traces")
    script = _write(folder)
    argv = [str(args.steps), str(args.layers), str(args.dim), args.device]
    here = os.getcwd()
    saved_argv, saved_path = list(sys.argv), list(sys.path)
    try:
        _run_plain(script, argv)  # warm-up: imports, allocator, CUDA context, kernels
        _run_profiler(script, argv, args.device)  # and the profiler's first start
        rows: dict[str, list[float]] = {"plain": [], "profiler": [], "deep": [], "rf": []}
        ranges = 0
        for _ in range(args.repeat):
            rows["plain"].append(_run_plain(script, argv))
            rows["profiler"].append(_run_profiler(script, argv, args.device))
            wall, ranges = _run_deep(script, argv, args.device, trace_dir)
            rows["deep"].append(wall)
            rows["rf"].append(_run_profiler(script, argv, args.device, tracer=True))
    finally:
        os.chdir(here)
        sys.argv[:], sys.path[:] = saved_argv, saved_path
    med = {k: statistics.median(v) for k, v in rows.items()}
    name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(
        f"deep tracer overhead · {name} · torch {torch.__version__} · Python "
        f"{sys.version.split()[0]} · {args.steps} steps, {args.layers} layers, dim {args.dim}, "
        f"batch 8×64 · median of {args.repeat} · "
        + ("process CPU time, 1 torch thread" if args.device == "cpu" else "wall time")
    )
    print(f"line ranges per run (deep): {ranges} ({ranges / args.steps:.0f} per step)")
    print()
    unit = "CPU s" if _CLOCK is time.process_time else "wall s"
    print(f"| run | {unit} | per step ms | × plain | × profiler |")
    print("|---|---|---|---|---|")
    labels = {
        "plain": "plain (no profiler)",
        "profiler": "torch.profiler only (record_shapes)",
        "deep": "deep (Kernel Lens whole-script stage)",
        "rf": "deep tracer with record_function ranges",
    }
    for key in ("plain", "profiler", "deep", "rf"):
        wall = med[key]
        print(
            f"| {labels[key]} | {wall:.3f} | {wall / args.steps * 1e3:.2f} | "
            f"{wall / med['plain']:.2f}× | {wall / med['profiler']:.2f}× |"
        )
    verdict = "meets" if med["deep"] <= 1.5 * med["profiler"] else "MISSES"
    print()
    print(f"deep / profiler = {med['deep'] / med['profiler']:.2f}× ({verdict} the ≤ 1.5× target)")


if __name__ == "__main__":
    main()
