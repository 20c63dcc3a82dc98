"""Shaped like a library's device helpers that probe the device when imported (as some
``utils`` modules do): on a machine without a GPU, importing this module fails."""

import operator

import triton

_DEVICE = triton.runtime.driver.active.get_active_torch_device()


def compare_version(package, op=operator.ge, version="3.0.0"):
    return op(triton.__version__, version)


def is_npu_available():
    return _DEVICE.type == "npu"
