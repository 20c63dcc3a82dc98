"""The ``%%kernel_lens`` magic on a CUDA GPU: CUDA-event timing, kernels on the cell's lines.

Run on the lent H200 (an in-process IPython shell); skipped without CUDA.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from kernel_lens.notebook.magic import ProfileView  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "cache"))
    shell = InteractiveShell.instance()
    shell.reset()
    shell.run_line_magic("colors", "nocolor")
    shell.run_line_magic("load_ext", "kernel_lens")
    assert shell.run_cell("import torch\nx = torch.randn(4096, 4096, device='cuda')").success
    yield shell
    shell.reset()


def _run(ip: InteractiveShell, text: str) -> dict[str, Any]:
    out = ip.run_cell(text)
    assert out.success, out.error_in_exec
    assert isinstance(out.result, ProfileView)
    return out.result.result


def _kernels(result: dict[str, Any], line: int) -> list[dict[str, Any]]:
    row = next(x for x in result["lines"] if x["line"] == line)
    return [k for op in row["ops"] for k in op["kernels"]]


def test_cell_on_cuda_times_with_events_and_puts_kernels_on_lines(ip: InteractiveShell) -> None:
    result = _run(ip, "%%kernel_lens --budget-ms 100\ny = x * x\nz = y.sum()\n")
    assert result["device_kind"] == "cuda"
    timing = result["timing"]
    assert timing["method"] == "cuda-events" and timing["l2_flushed"] is True
    # 4096² float32 read and written once: well over a microsecond, under a second.
    assert 0.001 < timing["median_ms"] < 1000
    mul = _kernels(result, 1)
    assert mul and all(k["calls"] == 1 for k in mul)
    assert any("elementwise" in k["name"] or "vectorized" in k["name"] for k in mul)
    assert _kernels(result, 2)  # the reduction
    assert {k["name"] for k in result["kernels"]} >= {k["name"] for k in mul}
    assert "<table>" in ProfileView(result)._repr_html_()


def test_line_magic_on_cuda_function(ip: InteractiveShell) -> None:
    ip.run_cell("def f(a):\n    b = a * 3\n    return torch.relu(b)\n")
    result = _run(ip, "%kernel_lens --budget-ms 100 f(x)")
    assert result["device_kind"] == "cuda"
    assert result["timing"]["method"] == "cuda-events"
    assert _kernels(result, 2) and _kernels(result, 3)
    assert result["lines"][0]["ops"][0]["device_us"] > 0
