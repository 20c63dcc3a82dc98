"""``--stages compiled`` on CPU: inductor's C++ captured, kernels mapped to the user's lines."""

import re
import time
from pathlib import Path
from typing import Any

from tests.conftest import HAS_CUDA, KERNELS, run_cli

FUSION = KERNELS / "fusion.py"


def _lineno(text: str) -> int:
    return next(i for i, x in enumerate(FUSION.read_text().splitlines(), 1) if text in x)


def _compiled(func: str, tmp_path: Path) -> dict[str, Any]:
    code, out, err = run_cli(
        "profile",
        f"{FUSION}::{func}",
        "--stages",
        "compiled",
        "--json",
        "--budget-ms",
        "100",
        "--trace-dir",
        str(tmp_path / "traces"),
        timeout=600,
    )
    assert code == 0, err
    return out["compiled"]  # type: ignore[no-any-return]


def test_square_twice_becomes_one_fused_kernel(tmp_path: Path) -> None:
    c = _compiled("square_twice", tmp_path)
    assert c["language"] == ("triton" if HAS_CUDA else "cpp")
    assert c["provenance"] is True
    fused = [k for k in c["kernels"] if k["kind"] != "extern"]
    assert len(fused) == 1, c["kernels"]
    assert fused[0]["lines"] == [_lineno("return torch.square(torch.square(x))")]
    assert c["eager"]["kernels"] == 2 and c["compiled"]["kernels"] == 1
    code = Path(c["code_path"]).read_text()
    assert code == c["code"] and fused[0]["name"] in code
    assert "2 → 1 kernels per call" in c["summary"]


def test_matmul_relu_lines_per_kernel(tmp_path: Path) -> None:
    c = _compiled("matmul_relu", tmp_path)
    by_kind = {k["kind"]: k for k in c["kernels"]}
    assert by_kind["extern"]["name"] == "extern_kernels.mm"
    assert by_kind["extern"]["lines"] == [_lineno("z = x @ y")]
    fused = next(k for k in c["kernels"] if k["kind"] != "extern")
    assert fused["lines"] == [_lineno("z = torch.relu(z)"), _lineno("return z + 1.0")]
    assert "→ 1 kernel (" in c["summary"]
    assert c["eager"]["median_ms"] > 0 and c["compiled"]["median_ms"] > 0


CAPTURED = """\
import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(32, 32)

    def forward(self, x):
        return F.gelu(self.fc(x)) * 2.0


def step(x, w):
    h = F.relu(x @ w)
    return torch.tanh(h).sum()


if __name__ == "__main__":
    block = Block()
    x = torch.randn(16, 32)
    print(step(x, torch.randn(32, 32)), block(x).shape)
"""


def test_generated_code_with_inputs_captured_from_the_script(tmp_path: Path) -> None:
    """The function lives in the script's ``__main__``: torch.compile's guards look up the
    module globals (``F``, ``torch``) there, on a plain function and on a module's forward."""
    path = tmp_path / "deep_script.py"
    path.write_text(CAPTURED)
    for func, fused_line in [("step", "h = F.relu(x @ w)"), ("Block.forward", "F.gelu")]:
        code, out, err = run_cli(
            "profile", f"{path}::{func}", "--stages", "compiled", "--json", timeout=600
        )
        assert code == 0, err
        assert out["inputs"]["source"] == "captured", out["inputs"]
        c = out["compiled"]
        lines = CAPTURED.splitlines()
        line = next(i for i, x in enumerate(lines, 1) if fused_line in x)
        assert any(line in k["lines"] for k in c["kernels"]), c["kernels"]


def test_a_second_compile_generates_afresh_and_reuses_the_kernel_builds(tmp_path: Path) -> None:
    """The graph caches are off (an edit that moves the lines moves the kernel's lines: the code
    is generated afresh), the kernels' builds are not: the second compile loads the shared
    object the first one built (or found), and no compile leaves a temporary folder behind."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    started = time.time()
    src = tmp_path / "model.py"
    body = (
        "import torch\n\n\n"
        "def square_twice(x):\n"
        "    return torch.square(torch.square(x))\n\n\n"
        "if __name__ == '__main__':\n"
        "    square_twice(torch.randn(1000, 1000))\n"
    )

    def compiled() -> dict[str, Any]:
        code, out, err = run_cli(
            "profile", f"{src}::square_twice", "--stages", "compiled", "--json",
            "--budget-ms", "50", "--no-history", "--trace-dir", str(tmp_path / "traces"),
            timeout=600,
        )  # fmt: skip
        assert code == 0, err
        return out["compiled"]  # type: ignore[no-any-return]

    def builds(c: dict[str, Any]) -> dict[Path, int]:
        """The shared objects built from the generated module's C++ kernel (their source is the
        kernel's, then Inductor's Python bindings; more than one where other runs built it with
        other options), with their times."""
        code = Path(c["code_path"]).read_text()
        source = re.search(r"cpp_pybinding\(\[[^\]]*\], r'''(.*?)'''", code, re.S)
        assert source, code
        return {
            p.with_suffix(".so"): p.with_suffix(".so").stat().st_mtime_ns
            for p in Path(cache_dir()).glob("*/*.main.cpp")
            if p.read_text().strip().startswith(source.group(1).strip())
            and p.with_suffix(".so").exists()
        }

    def fused_lines(c: dict[str, Any]) -> list[list[int]]:
        return [k["lines"] for k in c["kernels"] if k["kind"] != "extern"]

    src.write_text(body)
    first = compiled()
    assert fused_lines(first) == [[5]], first["kernels"]
    built = builds(first)
    assert built, "no shared object of the kernel in Inductor's cache"
    src.write_text("# two lines\n# above\n" + body)
    second = compiled()
    assert fused_lines(second) == [[7]], second["kernels"]
    after = builds(second)  # (another worker may build it with other options meanwhile)
    assert {p: after.get(p) for p in built} == built, "the kernel was built again"
    left = [p for p in Path(cache_dir()).glob("tmp*") if p.stat().st_mtime >= started]
    assert not left, left
