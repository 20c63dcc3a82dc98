"""One CUPTI client per process (issue 36): a CUDA profile that records no kernels because
another client holds CUPTI is an error that says so, never an empty result.

CUPTI, the library under both torch.profiler (Kineto) and Triton's Proton, takes one subscriber
per process. Another one gets there first when the process was started under a tool that
injects itself (``NVTX_INJECTION64_PATH`` or ``CUDA_INJECTION64_PATH`` naming libcupti, Nsight
Systems' or Nsight Compute's injection library), or when another profiler of the same process is
on (torch.profiler started by the script, a Proton session). Kineto then starts and stops
without complaint and records no GPU activity: the lenses would show a run with no kernels.

`cupti_holder` names the other client it can see; `check_recorded` turns "a CUDA run, no
kernels, another client present" into a `ProfileError` that names it. Imports nothing heavy
(torch and triton only where they are already imported).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from kernel_lens.wire.errors import ProfileError

__all__ = ["INJECTION_VARIABLES", "check_recorded", "cupti_holder"]

#: Variables through which the CUDA runtime loads a profiling tool into the process at start.
INJECTION_VARIABLES = ("NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")
#: Parts of an injected library's file name that mean a CUPTI client (lower case).
_CUPTI_CLIENTS = ("cupti", "toolsinjection", "nsys", "nsight", "ncu", "injection")


def cupti_holder(env: Mapping[str, str] | None = None, *, own: str | None = None) -> str | None:
    """Another CUPTI client this process can see, said as a user reads it; None when none.

    Args:
        env: the environment (default ``os.environ``).
        own: the profiler this check is for (``"torch.profiler"`` or ``"proton"``): the other
            one, found on, is the holder.
    """
    env = os.environ if env is None else env
    for name in INJECTION_VARIABLES:
        value = env.get(name, "")
        if value and any(part in os.path.basename(value).lower() for part in _CUPTI_CLIENTS):
            return f"{name}={value} loads another CUPTI client into this process"
    if own != "torch.profiler" and _torch_profiler_on():
        return "torch.profiler is already profiling this process"
    if own != "proton" and _proton_on():
        return "a Triton Proton session is already profiling this process"
    return None


def _torch_profiler_on() -> bool:
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return bool(torch.autograd.profiler._is_profiler_enabled)
    except AttributeError:
        return False


def _proton_on() -> bool:
    flags = sys.modules.get("triton.profiler.flags")
    return bool(getattr(flags, "profiling_on", False)) if flags is not None else False


def check_recorded(
    what: str,
    *,
    cuda_ran: bool,
    kernels: int,
    env: Mapping[str, str] | None = None,
    own: str | None = None,
) -> None:
    """Raise when a CUDA run recorded no kernels and another CUPTI client is in the process.

    Args:
        what: the profile, for the message ("the whole-script profile").
        cuda_ran: whether the run used CUDA (``torch.cuda.is_initialized()`` after it).
        kernels: the kernels the profile recorded.
        env, own: as `cupti_holder`.

    Raises:
        ProfileError: ``unsupported``, naming the other client and what to do.
    """
    if not cuda_ran or kernels > 0:
        return
    holder = cupti_holder(env, own=own)
    if holder is None:
        return
    raise ProfileError(
        "unsupported",
        f"{what} recorded no GPU kernels on a CUDA run: {holder}, and CUPTI takes one client "
        "per process, so the profiler got none of the GPU's activity. Run without the other "
        "profiler (unset the variable, or start the script outside nsys/ncu), or use that "
        "profiler's own report",
    )
