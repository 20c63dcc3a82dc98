"""Functions for the language-server tests: ones that kill, hang or run long."""

import ctypes
import os
import time

import torch


# kernel-lens: inputs = (torch.ones(64),)
def good(x):
    y = x * 2
    z = torch.relu(y)
    return z


def exits_hard():
    os._exit(3)


def segfaults():
    ctypes.string_at(0)


def hangs():
    while True:
        time.sleep(0.05)


def runs_long():
    time.sleep(60)
