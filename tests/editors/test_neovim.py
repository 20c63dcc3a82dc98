"""Neovim, headless, with the README's configuration and no plugin (issue 50): open a file, run
Profile through Neovim's own code-action path (``vim.lsp.buf.code_action`` and
``vim.ui.select``), read the per-line results from its code lenses.

Runs where ``nvim`` is installed (Debian's is 0.7.2: ``apt-get install neovim``; CI installs it,
scripts/ci-apt.sh), skips otherwise. The project folder also holds modules named like the
server's imports (``attrs``, ``cattrs``, ``pygls``, ``lsprotocol``): the server, started there
as ``python -m kernel_lens.lsp``, must import none of them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
CONFIG = Path(__file__).with_name("kernel_lens_nvim.lua")

SOURCE = """import torch


# kernel-lens: inputs = (torch.randn(128, 128),)
def scale(x):
    y = x * 2.0
    z = torch.relu(y + 1.0)
    return z.sum()
"""

#: Modules only the server imports (the agent, which runs the project's code in its folder as
#: ``python FILE`` would, imports none of these for torch).
SHADOWED = ("attrs", "cattrs", "pygls", "lsprotocol")

pytestmark = pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed")


def test_profile_from_a_code_action_in_headless_neovim(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    for name in SHADOWED:
        (project / f"{name}.py").write_text(
            f"import os\nopen(os.path.join({str(markers)!r}, {name!r}), 'w').close()\n"
            f"raise SystemExit('{name}.py of the project was imported')\n"
        )
    work = project / "work.py"
    work.write_text(SOURCE)
    out = tmp_path / "results.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "server"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        "KL_FILE": str(work),
        "KL_ROOT": str(project),
        "KL_CMD": json.dumps([sys.executable, "-m", "kernel_lens.lsp"]),
        "KL_OUT": str(out),
        "KL_ACTION": "Kernel Lens: Profile scale",
        "XDG_STATE_HOME": str(tmp_path / "state"),  # Neovim's LSP log, not the user's
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    env.pop("KERNEL_LENS_EARLY_AGENT", None)
    lua = f"lua package.path = {str(CONFIG.parent) + '/?.lua;'!r} .. package.path"
    subprocess.run(
        [
            "nvim",
            "--headless",
            "--clean",
            "-n",
            "-i",
            "NONE",
            "-c",
            lua,
            "-c",
            "lua require('kernel_lens_nvim').run()",
        ],  # fmt: skip
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
        check=False,
    )
    results = json.loads(out.read_text())
    assert results["ok"], results
    assert "Kernel Lens: Profile scale" in results["offered"]
    lenses = results["lenses"]
    executable = set(results["commands"])
    for lens in lenses:
        assert "$(" not in lens["title"], lens
        assert lens["command"] in executable | {""}, lens
    by_line: dict[int, list[str]] = {}
    for lens in lenses:
        by_line.setdefault(lens["line"], []).append(lens["title"])
    # the function's row: its time; each body line: its op and its share of the time
    assert any(re.search(r"\d (ms|µs)", t) for t in by_line[4]), by_line
    for line0, op in ((5, "aten::mul"), (6, "aten::relu")):
        assert any(op in t and re.search(r"\d+% of", t) for t in by_line[line0]), by_line
    assert os.listdir(markers) == []
