"""The fork template of a CPU-only machine (issue 14): spares forked from a warm template are
clean, warm, report how they ended, and nothing is left after ``kill()``.

Real agents on this interpreter (torch CPU). The first job runs on a fresh agent; once it has
shown a machine without CUDA, the client starts the template, and later spares are its forks.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.client import AgentClient
from kernel_lens.wire.errors import ProfileError

USER = """\
import ctypes
import os
import sys

import torch


# kernel-lens: inputs = (torch.ones(4),)
def record(x):
    relu_ok = bool(torch.relu(-x).sum() == 0)
    with open(os.environ["KL_TEMPLATE_OUT"], "a") as f:
        f.write(f"{os.getpid()} {os.getppid()} {os.getcwd()} {relu_ok}\\n")
    return torch.relu(x)


# kernel-lens: inputs = (torch.ones(4),)
def mess(x):
    os.chdir("/")
    torch.relu = lambda t: t
    sys.modules["kl_leak"] = sys
    return x


# kernel-lens: inputs = (torch.ones(4),)
def check(x):
    assert os.getcwd() != "/" and "kl_leak" not in sys.modules
    assert torch.relu(-x).sum().item() == 0, "monkeypatch leaked"
    return x


# kernel-lens: inputs = (torch.ones(4),)
def segfault(x):
    return ctypes.string_at(0)
"""

FAST: dict[str, Any] = {"stages": ["timing"], "budget_ms": 5, "warmup_ms": 1}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
async def test_forked_spares_are_clean_warm_and_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "user.py"
    path.write_text(USER)
    out = tmp_path / "out.txt"
    monkeypatch.setenv("KL_TEMPLATE_OUT", str(out))
    client = AgentClient([sys.executable], [].append, cwd=str(tmp_path))
    job = {"path": str(path), **FAST}
    try:
        await client.run({**job, "function": "record"}, timeout=120)
        assert client._template is not None  # noqa: SLF001 - CPU-only: the template starts
        template = await asyncio.wait_for(client._template, 120)  # noqa: SLF001
        assert template.proc is not None
        # The spare in hand was started before the template: use it, then forks follow.
        await client.run({**job, "function": "record"}, timeout=120)
        for name in ("mess", "check", "record"):
            await client.run({**job, "function": name}, timeout=120)
        assert (client.info.get("warm_s") or 0) < 1.0, client.info
        rows = [line.split() for line in out.read_text().splitlines()]
        last_pid, last_parent, cwd, relu_ok = rows[-1]
        assert int(last_parent) == template.proc.pid, rows
        assert cwd == str(tmp_path) and relu_ok == "True", rows
        assert len({row[0] for row in rows}) == 3, "one agent per job (record ran in three)"
        assert not _alive(int(last_pid))
        with pytest.raises(ProfileError) as info:
            await client.run({**job, "function": "segfault"}, timeout=120)
        assert info.value.kind == "crash" and "killed by SIGSEGV" in info.value.message
        assert info.value.line == USER.splitlines().index("    return ctypes.string_at(0)") + 1
    finally:
        spare = client._spare_agent  # noqa: SLF001
        await client.kill()
    assert not client.running
    assert template.proc is not None and not _alive(template.proc.pid)
    if spare is not None and spare.proc is not None:
        assert not _alive(spare.proc.pid)
