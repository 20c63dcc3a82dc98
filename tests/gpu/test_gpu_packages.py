"""On a CUDA GPU (issue 48): a model from an installed package, trained on the GPU by the
workspace's script; with ``--in-package``, the package's lines hold the kernels of the forward and
of the backward, and every microsecond of kernel time is on a line (100% accounted, as without).

Not run in the session that wrote it (no GPU was lent); skipped without CUDA.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli

pytestmark = pytest.mark.gpu

INSTALLED = EXAMPLES / "installed"


def test_the_packages_lines_hold_the_forward_and_backward_kernels_all_accounted(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    text = (INSTALLED / "train.py").read_text()
    text = text.replace("model = TinyNet()", "model = TinyNet().cuda()")
    text = text.replace("torch.randn(128, 64)", "torch.randn(128, 64, device='cuda')")
    script = ws / "train.py"
    script.write_text(text)
    lib = tmp_path / "env" / "site-packages"
    shutil.copytree(INSTALLED / "tinymodel", lib / "tinymodel")
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(lib), os.environ.get("PYTHONPATH")) if p)}
    trace_dir = str(tmp_path / "traces")
    code, before, err = run_cli("profile", str(script), "--json", "--trace-dir", trace_dir, env=env)
    assert code == 0, err
    code, out, err = run_cli(
        "profile", str(script), "--json", "--trace-dir", trace_dir, "--in-package", "tinymodel",
        env=env,
    )  # fmt: skip
    assert code == 0, (out, err)
    layers = os.path.realpath(lib / "tinymodel" / "layers.py")
    rows = {r["source"]: r for r in out["files"][layers]}
    proj = rows["h = self.proj(x)"]
    assert proj["device_us"] > 0 and proj["backward"]["device_us"] > 0
    assert out["accounting"]["on_lines_pct"] == pytest.approx(100.0)
    total = sum(k["device_us"] for k in out["kernels"])
    total_before = sum(k["device_us"] for k in before["kernels"])
    assert total == pytest.approx(total_before, rel=0.5)  # the same work, on other lines
    files = {f["path"]: f for f in out["by_file"]}
    assert files[layers]["package"] == "tinymodel" and files[layers]["device_us"] > 0
