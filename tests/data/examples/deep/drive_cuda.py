"""The CUDA driver of model.py: the model on the GPU under bf16 autocast (a benchmark's shape)."""

import argparse

import torch

from model import Config, Net


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, required=True)
    args = parser.parse_args()
    net = Net(Config(dim=args.dim, heads=4)).cuda()
    x = torch.randn(4, 128, args.dim, device="cuda")
    for _ in range(3):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = net(x)
    torch.cuda.synchronize()
    print("loss", float(loss))


if __name__ == "__main__":
    main()
