"""GPU clocks and temperature through NVML (``nvidia-ml-py``, imported as ``pynvml``), read
before and after timing, and the sweep's thermal wait.

Optional: without ``pynvml`` (or without a driver that answers), every reading is ``None`` and
:func:`nvml_note` says why; nothing here ever raises into a stage. The NVML module is a
parameter (``nvml=``) so tests hand in a stand-in object.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from kernel_lens.analysis.timing_policy import needs_cooldown

__all__ = ["load_nvml", "nvml_note", "read_gpu", "thermal_wait"]

_STATE: dict[str, Any] = {}


def load_nvml() -> Any | None:
    """The initialised ``pynvml`` module, or ``None`` (the reason in :func:`nvml_note`)."""
    if "module" in _STATE:
        return _STATE["module"]
    try:
        import pynvml  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        _STATE["module"] = None
        _STATE["note"] = "GPU clocks not read: nvidia-ml-py (pynvml) is not installed"
        return None
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError and kin: no driver, no permission
        _STATE["module"] = None
        _STATE["note"] = f"GPU clocks not read: NVML did not start ({type(exc).__name__}: {exc})"
        return None
    _STATE["module"] = pynvml
    _STATE["note"] = None
    return pynvml


def nvml_note() -> str | None:
    """Why no GPU clocks were read (``None`` when NVML works or was not tried)."""
    return _STATE.get("note")


def _handle(nvml: Any, index: int) -> Any:
    """The NVML device of CUDA device ``index`` (honouring ``CUDA_VISIBLE_DEVICES`` when it
    names devices by number; NVML numbers every device of the machine)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    visible = [v.strip() for v in visible if v.strip()]
    if index < len(visible) and visible[index].isdigit():
        index = int(visible[index])
    return nvml.nvmlDeviceGetHandleByIndex(index)


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:
        return None


def _current_index() -> int:
    import sys

    torch = sys.modules.get("torch")
    try:
        return int(torch.cuda.current_device()) if torch is not None else 0
    except Exception:
        return 0


def read_gpu(index: int | None = None, *, nvml: Any | None = None) -> dict[str, Any] | None:
    """One reading of CUDA device ``index``: ``sm_mhz``, ``mem_mhz``, ``temperature_c``,
    ``slowdown_c`` (the slowdown temperature), ``throttle`` (NVML's clocks-event reasons bit
    mask) and ``power_w``, each ``None`` where NVML cannot say; ``None`` without NVML.

    Args:
        index: the CUDA device (as torch numbers it; default: torch's current device).
        nvml: the NVML module (default: :func:`load_nvml`); a stand-in in tests.
    """
    nv = nvml if nvml is not None else load_nvml()
    if nv is None:
        return None
    at = _current_index() if index is None else index
    handle = _try(lambda: _handle(nv, at))
    if handle is None:
        return None
    graphics = getattr(nv, "NVML_CLOCK_SM", 1)
    memory = getattr(nv, "NVML_CLOCK_MEM", 2)
    sensor = getattr(nv, "NVML_TEMPERATURE_GPU", 0)
    slowdown = getattr(nv, "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1)
    reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    power = _try(lambda: nv.nvmlDeviceGetPowerUsage(handle))
    return {
        "sm_mhz": _try(lambda: nv.nvmlDeviceGetClockInfo(handle, graphics)),
        "mem_mhz": _try(lambda: nv.nvmlDeviceGetClockInfo(handle, memory)),
        "temperature_c": _try(lambda: nv.nvmlDeviceGetTemperature(handle, sensor)),
        "slowdown_c": _try(lambda: nv.nvmlDeviceGetTemperatureThreshold(handle, slowdown)),
        "throttle": _try(lambda: reasons(handle)) if reasons is not None else None,
        "power_w": None if power is None else round(power / 1000, 1),
    }


def thermal_wait(
    index: int | None = None,
    *,
    timeout_s: float = 20.0,
    poll_s: float = 0.5,
    nvml: Any | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any] | None:
    """Wait for a hot GPU to cool (Nsight Python's throttle guard, bounded by ``timeout_s``).

    Returns:
        ``None`` when it was not hot (or NVML is absent); else ``{"waited_s", "from_c",
        "to_c", "cooled"}`` (``cooled`` false when the timeout ended the wait).
    """
    first = read_gpu(index, nvml=nvml)
    if not needs_cooldown(first):
        return None
    assert first is not None
    start = clock()
    reading = first
    while needs_cooldown(reading, cooling=True):
        if clock() - start >= timeout_s:
            break
        sleep(poll_s)
        reading = read_gpu(index, nvml=nvml) or reading
    return {
        "waited_s": round(clock() - start, 2),
        "from_c": first.get("temperature_c"),
        "to_c": reading.get("temperature_c"),
        "cooled": not needs_cooldown(reading, cooling=True),
    }
