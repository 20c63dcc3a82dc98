"""A small GPT trained for a number of steps: the shape of nanoGPT's model and train loop
(token and position embeddings, pre-norm blocks of causal self-attention and a 4x GELU MLP, a
tied head, AdamW, bf16 autocast), written here for the light-mode benchmark (issue 36).

    python benchmarks/light/gpt_train.py [--steps 60] [--layers 6] [--width 384] [--batch 16]

Prints one line ``{"steps", "step_ms", "loop_s"}`` (the loop's own time, after a warm-up step).
"""

from __future__ import annotations

import argparse
import json
import math
import time

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812


class Attention(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.out(y)


class Block(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        x = x + self.down(F.gelu(self.up(self.norm2(x))))
        return x


class GPT(nn.Module):
    def __init__(self, vocab: int, context: int, width: int, layers: int, heads: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.tokens.weight
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * layers))

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.tokens(idx) + self.positions(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--width", type=int, default=384)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=8192)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = GPT(args.vocab, args.context, args.width, args.layers, args.heads).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    data = torch.randint(0, args.vocab, (args.batch * 8, args.context + 1), device=device)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32

    def step(i: int) -> None:
        rows = data[(i * args.batch) % len(data) :][: args.batch]
        with torch.autocast(device, dtype=dtype, enabled=device == "cuda"):
            loss = model(rows[:, :-1], rows[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step(0)  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(1, args.steps + 1):
        step(i)
    if device == "cuda":
        torch.cuda.synchronize()
    loop = time.perf_counter() - t0
    print(json.dumps({"steps": args.steps, "step_ms": 1e3 * loop / args.steps, "loop_s": loop}))


if __name__ == "__main__":
    main()
