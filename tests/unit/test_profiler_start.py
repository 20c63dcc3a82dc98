"""The profiler's first start imports no Inductor (issue 28, a cold start in 3 s): torch's
``prepare_trace`` asks ``hasattr(torch, "_inductor")``, which imports ~800 modules (2-5 s)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kernel_lens.agent import profiler_start

CHILD = """
import sys, torch
from kernel_lens.agent import profiler_start
if sys.argv[1] == "guarded":
    profiler_start.install()
    profiler_start.install()  # idempotent
from torch.profiler import ProfilerActivity, profile
with profile(activities=[ProfilerActivity.CPU]) as prof:
    torch.ones(4).mul(2)
names = {e.key for e in prof.key_averages()}
print("inductor" if "torch._inductor" in sys.modules else "no-inductor", "aten::mul" in names)
# the lazy attributes still work after a start, Inductor included when asked for
print(type(torch._dynamo).__name__, "torch._inductor" in sys.modules or hasattr(torch, "_inductor"))
"""


def _run(mode: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=240
    )
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if not line.startswith("USDT")]


@pytest.mark.slow
def test_a_guarded_profiler_start_imports_no_inductor_and_records_ops() -> None:
    first, after = _run("guarded")
    assert first == "no-inductor True"
    assert after == "module True"


@pytest.mark.slow
def test_unguarded_torch_imports_inductor_on_the_first_start() -> None:
    # what the guard is for: if torch stops doing this, the guard can go
    first, _ = _run("plain")
    assert first == "inductor True"


@pytest.mark.slow
def test_with_inductor_loaded_the_profiler_reads_its_cudagraphs_flag() -> None:
    code = (
        "import torch, torch._inductor.config as c\n"
        "from kernel_lens.agent import profiler_start\n"
        "profiler_start.install()\n"
        "c.triton.cudagraphs = True\n"
        "from torch.profiler import profile\n"
        "p = profile()\n"
        "p.prepare_trace()\n"
        "print(p.has_cudagraphs)\n"
        "p.stop_trace() if p.profiler else None\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if not line.startswith("USDT")]
    assert lines[0] == "True"


def test_cupti_is_released_after_each_profile_where_torch_deems_it_safe() -> None:
    """TEARDOWN_CUPTI=1 from CUDA 12.6 (the H200's 13.0), never before it (CUDA graphs could
    crash on CUPTI's re-init), and never over a value the user set."""
    env: dict[str, str] = {}
    assert profiler_start.release_cupti_after_each_profile(env, "13.0") is True
    assert env == {"TEARDOWN_CUPTI": "1"}
    env = {}
    assert profiler_start.release_cupti_after_each_profile(env, "12.4") is False
    assert env == {}
    env = {"TEARDOWN_CUPTI": "0"}
    assert profiler_start.release_cupti_after_each_profile(env, "13.0") is False
    assert env == {"TEARDOWN_CUPTI": "0"}
    env = {}
    assert profiler_start.release_cupti_after_each_profile(env, "None") is False  # a CPU build
    assert env == {}
