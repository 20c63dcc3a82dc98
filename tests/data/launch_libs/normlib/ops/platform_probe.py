"""Shaped like a library's device helpers that probe the device when imported (as some
``utils`` modules do): on a machine without a GPU, importing this module fails."""

import operator

import torch
import triton

# torch.cuda, not Triton's driver: under the interpreter the driver says the CPU.
_DEVICE = torch.device("cuda", torch.cuda.current_device())


def compare_version(package, op=operator.ge, version="3.0.0"):
    return op(triton.__version__, version)


def is_npu_available():
    return _DEVICE.type == "npu"
