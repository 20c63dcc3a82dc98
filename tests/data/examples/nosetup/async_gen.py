"""Coroutines and generators: their bodies run only when awaited or consumed."""

import asyncio

import torch


async def scaled(n=256):
    x = torch.ones(n)
    await asyncio.sleep(0)
    return x * 3


def chunks(n=256):
    x = torch.ones(n)
    for i in range(4):
        yield x * i


async def async_chunks(n=256):
    x = torch.ones(n)
    for i in range(3):
        await asyncio.sleep(0)
        yield x + i


def plain(n=256):
    return torch.ones(n) * 2
