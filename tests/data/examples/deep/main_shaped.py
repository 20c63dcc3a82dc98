"""The shape of most scripts: the work inside def main(), a helper in another workspace file."""

import torch

from pkg.helpers import normalize


def step(x):
    y = torch.relu(x @ x)
    return normalize(y)


def main():
    x = torch.randn(32, 32)
    for _ in range(4):
        x = step(x)
    total = torch.square(x).sum()
    print("total", float(total))


if __name__ == "__main__":
    main()
