"""A driver with a required argument: builds the model from model.py and runs it under
autocast; writes driven.txt once it gets past the model call."""

import argparse

import torch

from model import Config, Net


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, required=True)
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    net = Net(Config(dim=args.dim))
    x = torch.randn(2, 8, args.dim)
    for _ in range(args.steps):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = net(x)
    with open("driven.txt", "w") as fh:
        fh.write(f"{float(loss):.3f}\n")


if __name__ == "__main__":
    main()
