"""A data-parallel step in miniature: each rank computes, the ranks all_reduce, each rank
computes again. Profile it on 2 ranks (``kernel-lens profile kernels/allreduce_step.py::step
--nproc-per-node 2``, or *Profile on N ranks* above ``step``): the all_reduce's time and its
overlap are on its line, with each rank's time and the skew.

``STRAGGLER_RANK=1 STRAGGLER_MS=20`` makes rank 1 late to every all_reduce (a deliberate
straggler: the lens names it). Without a GPU the ranks run on the CPU over gloo.
"""

import os
import time

import torch
import torch.distributed as dist

STRAGGLER_RANK = int(os.environ.get("STRAGGLER_RANK", "-1"))
STRAGGLER_MS = float(os.environ.get("STRAGGLER_MS", "0"))


def step(x, w):
    y = x @ w
    if dist.get_rank() == STRAGGLER_RANK:
        time.sleep(STRAGGLER_MS / 1000)
    dist.all_reduce(y)
    z = torch.relu(y).sum()
    return z


if __name__ == "__main__":
    cuda = torch.cuda.is_available() and torch.cuda.device_count() >= int(
        os.environ.get("WORLD_SIZE", "1")
    )
    dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device("cpu")
    if cuda:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    x = torch.randn(64, 64, device=device)
    w = torch.randn(64, 64, device=device)
    for _ in range(3):
        step(x, w)
    dist.destroy_process_group()
