"""A training step from the CLI, on CPU torch, through the real agent: the backward on the forward
lines, ``loss.backward()``'s pass total, the optimizer on ``opt.step()``, *Profile with backward*
(``--backward``) on a layer, and the calling context kept (captured, or the context directive).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import KERNELS, run_cli


def _profile(spec: str, tmp_path: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run_cli(
        "profile", spec, "--json", "--no-history", "--budget-ms", "100", "--trace-dir",
        str(tmp_path), *extra,
    )  # fmt: skip
    assert code == 0, (out, err)
    return out  # type: ignore[no-any-return]


def _line(result: dict[str, Any], start: str) -> dict[str, Any]:
    return next(x for x in result["lines"] if x["source"].startswith(start))


def _names(ops: list[dict[str, Any]]) -> set[str]:
    return {op["name"] for op in ops}


def test_a_training_steps_backward_is_on_its_forward_lines(tmp_path: Path) -> None:
    result = _profile(f"{KERNELS}/train_step.py::train_step", tmp_path)
    model = _line(result, "out = model(x)")
    assert _names(model["ops"]) == {"aten::linear", "aten::gelu"}
    assert _names(model["backward"]["ops"]) == {"AddmmBackward0", "GeluBackward0", "TBackward0"}
    loss = _line(result, "loss = F.mse_loss(out, y)")
    assert _names(loss["backward"]["ops"]) == {"MseLossBackward0"}
    bwd = _line(result, "loss.backward()")
    assert not any("Backward0" in op["name"] for op in bwd["ops"])
    assert bwd["backward_pass"]["lines"] == [model["line"], loss["line"]]
    assert _names(_line(result, "opt.step()")["ops"]) == {"aten::mul_", "aten::add_"}
    # no kernels on a CPU: nothing to account for, and it says so with zeros
    assert result["accounting"] == {
        "device_us": 0.0,
        "on_lines_us": 0.0,
        "on_lines_pct": 100.0,
        "remainder": [],
    }


def test_the_text_report_shows_the_bwd_rows_and_the_pass(tmp_path: Path) -> None:
    code, out, err = run_cli(
        "profile", f"{KERNELS}/train_step.py::train_step", "--no-history", "--budget-ms", "100",
        "--trace-dir", str(tmp_path), "-q",
    )  # fmt: skip
    assert code == 0, err
    assert "bwd AddmmBackward0" in out
    assert "backward pass · on lines 44,45" in out


def test_a_forward_called_under_autocast_runs_under_it(tmp_path: Path) -> None:
    result = _profile(f"{KERNELS}/train_step.py::forward_bf16", tmp_path)
    context = result["inputs"]["context"]
    assert context["label"] == "autocast cpu bfloat16 · no_grad"
    assert context["source"] == "captured" and context["grad"] == "no_grad"
    assert context["autocast"] == [
        {"device_type": "cpu", "dtype": "bfloat16", "enabled": True, "cache_enabled": True}
    ]
    assert all("backward" not in line for line in result["lines"])


def test_profile_with_backward_gives_a_layer_its_backward(tmp_path: Path) -> None:
    result = _profile(f"{KERNELS}/train_step.py::MLP.forward", tmp_path, "--backward")
    fc1 = _line(result, "h = self.fc1(x)")
    assert _names(fc1["backward"]["ops"]) == {"AddmmBackward0", "TBackward0"}
    gelu = _line(result, "h = F.gelu(h)")
    assert _names(gelu["backward"]["ops"]) == {"GeluBackward0"}
    plain = _profile(f"{KERNELS}/train_step.py::MLP.forward", tmp_path)
    assert all("backward" not in line for line in plain["lines"])


def test_profile_with_backward_says_when_there_is_no_backward(tmp_path: Path) -> None:
    code, out, _ = run_cli(
        "profile", f"{KERNELS}/train_step.py::forward_bf16", "--json", "--no-history",
        "--backward", "--trace-dir", str(tmp_path),
    )  # fmt: skip
    assert code != 0
    assert out["error"]["kind"] == "runtime"
    assert "returned no tensor that requires grad" in out["error"]["message"]


def test_the_context_directive_gives_a_context_without_a_capture(tmp_path: Path) -> None:
    src = tmp_path / "ctx.py"
    src.write_text(
        "import torch\n"
        "\n"
        '# kernel-lens: context = torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad()\n'
        "# kernel-lens: inputs = (torch.randn(32, 32), torch.randn(32, 32))\n"
        "def mm(a, b):\n"
        "    c = a @ b\n"
        "    return c\n"
    )
    result = _profile(f"{src}::mm", tmp_path)
    assert result["inputs"]["source"] == "directive"
    assert result["inputs"]["context"]["source"] == "directive"
    assert result["inputs"]["context"]["label"] == "autocast cpu bfloat16 · no_grad"


def test_a_broken_context_directive_fails_on_its_line(tmp_path: Path) -> None:
    src = tmp_path / "bad.py"
    src.write_text(
        "import torch\n"
        "\n"
        "# kernel-lens: context = torch.float16\n"
        "# kernel-lens: inputs = (torch.randn(4),)\n"
        "def f(a):\n"
        "    return a * 2\n"
    )
    code, out, _ = run_cli("profile", f"{src}::f", "--json", "--no-history")
    assert code != 0
    assert out["error"]["kind"] == "inputs"
    assert out["error"]["line"] == 3
    assert "is not a context manager" in out["error"]["message"]
