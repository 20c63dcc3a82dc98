"""The shipped agent on a GPU (issue 27 item 5): the CLI with ``--agent-command`` starting a
Python that cannot import ``kernel_lens`` (``-S``, another HOME and cwd, the server's folder off
its path) — the same bootstrap ssh and srun run — profiles a CUDA function of a file that imports
a workspace module; CUDA events time it, its kernels are on the calling line, and the trace comes
back into the local cache. The ssh and Slurm transports themselves are tested on CPU
(tests/lsp/test_remote_agent.py); a device machine has no sshd or Slurm to talk to.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HAS_CUDA

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU"),
]

MAIN = """\
import torch

from gpu_helper import scale


# kernel-lens: inputs = (torch.ones(1 << 24, device="cuda"),)
def work(x):
    return scale(x) + 1
"""


def test_a_cuda_profile_through_the_shipped_agent(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "main.py").write_text(MAIN)
    (ws / "gpu_helper.py").write_text("def scale(t):\n    return t * 3.0\n")
    home, elsewhere = tmp_path / "remote-home", tmp_path / "remote-cwd"
    home.mkdir()
    elsewhere.mkdir()
    path = os.pathsep.join(
        p for p in sys.path if p and not os.path.isdir(os.path.join(p, "kernel_lens"))
    )
    probe = subprocess.run(
        ["env", f"PYTHONPATH={path}", sys.executable, "-S", "-c", "import kernel_lens"],
        capture_output=True,
        cwd=elsewhere,
    )
    assert probe.returncode != 0, "kernel_lens is importable there: the test would prove nothing"
    command = shlex.join(
        [
            "env",
            f"PYTHONPATH={path}",
            f"HOME={home}",
            "KERNEL_LENS_CACHE=",
            "XDG_CACHE_HOME=",
            sys.executable,
            "-S",
        ]
    )
    cache = tmp_path / "local-cache"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kernel_lens.cli",
            "profile",
            f"{ws / 'main.py'}::work",
            "--json",
            "--timeout",
            "240",
            "--agent-command",
            command,
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=300,
        cwd=elsewhere,
        env={**os.environ, "KERNEL_LENS_CACHE": str(cache)},
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    result = json.loads(out.stdout)
    print(result["device"], result["timing"])
    assert "cpu" not in str(result["device"]).lower(), result["device"]
    line = next(x for x in result["lines"] if x["source"].strip() == "return scale(x) + 1")
    kernels = [k["name"] for op in line["ops"] for k in op["kernels"]]
    assert len(kernels) >= 2, line
    trace = Path(result["trace_path"])
    assert trace.parent == cache / "traces" and trace.is_file()
    assert (home / ".cache" / "kernel-lens" / "traces" / trace.name).is_file()
