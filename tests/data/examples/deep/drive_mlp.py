"""The driver of mlp.py, with a required argument: builds the layer and calls it with four
chunks on a (KL_BATCH or 8, 4, dim) tensor; writes driven_mlp.txt once it gets past the call."""

import argparse
import os

import torch

from mlp import Mlp


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, required=True)
    args = parser.parse_args()
    net = Mlp(args.dim)
    x = torch.randn(int(os.environ.get("KL_BATCH", "8")), 4, args.dim)
    y = net(x, chunks=4)
    with open("driven_mlp.txt", "w") as fh:
        fh.write(f"{float(y.sum()):.3f}\n")


if __name__ == "__main__":
    main()
