"""On a CUDA GPU (issue 36, item 4): the light whole-run profile (Proton) puts each line's kernel
time on it for a whole training run, stores a few kB, and a profile (light or deep) that another
CUPTI client starves is an error that says so, never a run with no kernels.

Run on the lent H200 (torch 2.11 + triton 3.6 there); skipped without CUDA.
"""

from __future__ import annotations

import glob
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.gpu

STEPS = 40
TRAIN = f"""\
import torch

w = torch.randn(512, 512, device="cuda", requires_grad=True)
opt = torch.optim.SGD([w], lr=1e-3)
x = torch.randn(256, 512, device="cuda")


def step():
    y = x @ w
    loss = torch.relu(y).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()


for _ in range({STEPS}):
    step()
torch.cuda.synchronize()
"""


def _light(script: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "kernel_lens.agent.light", str(script),
         "--workspace", str(script.parent), "--out", str(script.parent / "out")],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})},
        cwd=ROOT,
    )  # fmt: skip
    answers = [x for x in done.stdout.splitlines() if x.startswith('{"ok"')]
    assert answers, done.stderr[-2000:]
    got: dict[str, Any] = json.loads(answers[-1])
    return got


def test_protons_api_is_the_one_used() -> None:
    import triton.profiler as proton

    start = inspect.signature(proton.start).parameters
    assert {"name", "context", "backend"} <= start.keys()
    assert "session" in inspect.signature(proton.finalize).parameters


def test_the_light_profile_puts_every_lines_kernels_on_it(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    answer = _light(script)
    assert answer["ok"], answer
    result = answer["result"]
    lines = result["files"][str(script)]
    matmul = lines["9"]  # y = x @ w: cuBLAS, one kernel a step (two with a split-K reduce)
    assert matmul["launches"] in (STEPS, 2 * STEPS), matmul
    assert matmul["kernel_us"] > 0
    assert lines["10"]["launches"] >= 2 * STEPS  # relu and sum
    assert lines["12"]["launches"] >= STEPS  # the optimizer's step
    # backward's kernels come from autograd's thread: on no line, counted as other
    assert result["other_us"] > 0
    assert result["stored_bytes"] < 1_000_000
    assert result["mode"] == "light" and "backward" in result["label"]


def _libcupti() -> str | None:
    import torch

    roots = {os.path.dirname(os.path.dirname(torch.__file__)), "/usr/local/cuda"}
    for root in roots:
        found = glob.glob(f"{root}/**/libcupti.so*", recursive=True)
        if found:
            return sorted(found)[0]
    return None


@pytest.mark.parametrize("mode", ["deep", "light", "function"])
def test_a_profile_starved_of_cupti_says_so(tmp_path: Path, mode: str) -> None:
    cupti = _libcupti()
    if cupti is None:
        pytest.skip("no libcupti found beside torch or in /usr/local/cuda")
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    env = {"NVTX_INJECTION64_PATH": cupti}
    if mode == "light":
        answer = _light(script, env)
        # refused before the run (the variable is seen), never an empty result
        assert not answer["ok"] and "CUPTI" in answer["error"]["message"], answer
        return
    target = f"{script}::step" if mode == "function" else str(script)
    code, out, _ = run_cli("profile", target, "--json", "-q", "--no-history", env=env)
    if "error" in out:
        assert out["error"]["kind"] == "unsupported" and "CUPTI" in out["error"]["message"]
    else:  # the profiler got the GPU's activity after all: then it has kernels
        with open(out["trace_path"], encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        assert any(e.get("cat") == "kernel" for e in events)
