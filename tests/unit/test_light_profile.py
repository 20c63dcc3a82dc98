"""The light whole-run profile (issue 36, item 4) without a GPU: Proton's tree read into lines,
and the guard of the one CUPTI client per process (a CUDA profile that records no kernels while
another client holds CUPTI is an error that says so). The run itself: tests/gpu/test_gpu_light.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.cupti_guard import check_recorded, cupti_holder
from kernel_lens.analysis.light_lines import LIGHT_LABEL, light_lines, python_frame, within
from kernel_lens.wire.errors import ProfileError
from tests.conftest import run_cli

LIBCUPTI = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12"


def _node(name: str, children: list[Any] = (), **metrics: float) -> dict[str, Any]:  # type: ignore[assignment]
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics,
            "children": list(children)}  # fmt: skip


def test_kernels_go_to_the_innermost_workspace_line(tmp_path: Path) -> None:
    train, model = str(tmp_path / "train.py"), str(tmp_path / "model.py")
    torch_file = "/usr/lib/python3/site-packages/torch/nn/modules/linear.py"
    gemm, relu = "sm90_xmma_gemm_bf16", "triton_poi_fused_relu_0"
    tree = [
        _node("ROOT", [
            _node(f"{train}:40@<module>", [
                _node(f"{train}:31@main", [
                    _node(f"{model}:12@forward", [
                        _node(f"{torch_file}:125@forward", [
                            _node(gemm, **{"time (ns)": 3_000_000, "count": 30}),
                        ]),
                        _node(relu, **{"time (ns)": 500_000, "count": 30}),
                    ]),
                    _node(f"{train}:33@main", [_node(gemm, **{"time (ns)": 1_000, "count": 1})]),
                ]),
            ]),
            # autograd's thread: no Python stack
            _node("sm90_xmma_gemm_bf16_backward", **{"time (ns)": 6_000_000, "count": 30}),
        ]),
        {"CUDA": {"0": {"arch": "90"}}},
    ]  # fmt: skip
    got = light_lines(tree, within([str(tmp_path)]))
    line = got["files"][model]["12"]
    assert line["kernel_us"] == pytest.approx(3_500.0)
    assert line["launches"] == 60
    assert [k["name"] for k in line["kernels"]] == [gemm, relu]  # slowest first
    assert got["files"][train]["33"]["kernel_us"] == pytest.approx(1.0)
    assert "31" not in got["files"][train]  # its kernels are on model.py:12, the innermost
    assert got["other_us"] == pytest.approx(6_000.0)
    assert got["total_kernel_us"] == pytest.approx(9_501.0)
    assert got["label"] == LIGHT_LABEL and "ATen" in LIGHT_LABEL and "backward" in LIGHT_LABEL


def test_proton_frame_names_of_both_layouts() -> None:
    assert python_frame("/w/train.py:40@main") == ("/w/train.py", 40, "main")
    assert python_frame("/w/train.py:main@40") == ("/w/train.py", 40, "main")
    assert python_frame("ampere_sgemm_128x64_nn") is None
    assert python_frame("void at::native::vectorized_elementwise_kernel<4>(int)") is None


def test_another_cupti_client_is_named() -> None:
    assert cupti_holder({}) is None
    said = cupti_holder({"NVTX_INJECTION64_PATH": LIBCUPTI})
    assert said is not None and "NVTX_INJECTION64_PATH" in said and "CUPTI" in said
    nsys = "/opt/nvidia/nsight-systems/target-linux-x64/libToolsInjection64.so"
    assert cupti_holder({"CUDA_INJECTION64_PATH": nsys}) is not None


def test_a_cuda_run_with_no_kernels_under_another_client_is_an_error() -> None:
    env = {"NVTX_INJECTION64_PATH": LIBCUPTI}
    with pytest.raises(ProfileError) as caught:
        check_recorded("the whole-script profile", cuda_ran=True, kernels=0, env=env)
    assert caught.value.kind == "unsupported"
    assert "recorded no GPU kernels" in caught.value.message
    assert "NVTX_INJECTION64_PATH" in caught.value.message
    # Kernels recorded, a CPU run, or no other client: no error (an empty CPU run is empty).
    check_recorded("p", cuda_ran=True, kernels=3, env=env)
    check_recorded("p", cuda_ran=False, kernels=0, env=env)
    check_recorded("p", cuda_ran=True, kernels=0, env={})


def test_the_torch_profiler_on_holds_cupti_for_proton() -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    assert cupti_holder({}, own="proton") is None
    with profile(activities=[ProfilerActivity.CPU]):
        said = cupti_holder({}, own="proton")
        assert cupti_holder({}, own="torch.profiler") is None  # itself
    assert said is not None and "torch.profiler" in said
    with pytest.raises(ProfileError, match="torch.profiler is already profiling"):
        with profile(activities=[ProfilerActivity.CPU]):
            check_recorded("the light profile", cuda_ran=True, kernels=0, env={}, own="proton")
    assert torch.autograd.profiler._is_profiler_enabled is False


def test_the_light_profile_refuses_to_start_beside_another_client(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('ran')\n")
    env = {**os.environ, "NVTX_INJECTION64_PATH": LIBCUPTI}
    done = subprocess.run(
        [sys.executable, "-m", "kernel_lens.agent.light", str(script)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 1 and not answer["ok"]
    assert answer["error"]["kind"] == "unsupported"
    assert "NVTX_INJECTION64_PATH" in answer["error"]["message"]
    assert "ran" not in done.stdout  # the script never ran


def test_the_cli_light_mode_says_why_it_cannot_run(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("x = 1\n")
    code, out, err = run_cli("profile", str(script), "--light", "--json",
                             env={"NVTX_INJECTION64_PATH": LIBCUPTI})  # fmt: skip
    assert code == 1 and out["error"]["kind"] == "unsupported"
    code, _, err = run_cli("profile", f"{script}::f", "--light")
    assert code != 0 and "--light profiles a whole run" in err
    code, _, err = run_cli("profile", str(script), "--light", "--steps", "3")
    assert code != 0 and "--light profiles a whole run" in err
