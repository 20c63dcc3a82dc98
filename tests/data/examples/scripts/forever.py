"""Never ends by itself (a training script does not): the time limit or a cancel cuts it."""

import time

import torch


def main():
    step = 0
    while True:
        y = torch.ones(1000) * step
        time.sleep(0.05)
        step += 1


if __name__ == "__main__":
    main()
