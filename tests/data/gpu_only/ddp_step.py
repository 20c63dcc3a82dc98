"""A DDP training step for the two-GPU check (tests/gpu/test_gpu_distributed.py): the gradients'
all_reduce runs from DDP's backward hooks, overlapped with the backward's kernels, plus one
explicit all_reduce of the loss. Launch: torchrun --nproc-per-node 2 ddp_step.py."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    dist.all_reduce(loss.detach())
    return loss


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    torch.manual_seed(0)
    layers = [torch.nn.Linear(2048, 2048) for _ in range(8)]
    model = DDP(torch.nn.Sequential(*layers).cuda(), device_ids=[rank], bucket_cap_mb=8)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(512, 2048, device="cuda")
    y = torch.randn(512, 2048, device="cuda")
    for _ in range(3):
        train_step(model, opt, x, y)
    dist.destroy_process_group()
