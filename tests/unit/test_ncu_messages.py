"""ncu's failure modes reach the user as clear messages (ncu itself ran on the H200 in
tests/gpu; here stand-in ``ncu`` executables print what the real one prints in each case)."""

import os
import stat
from pathlib import Path

import pytest

from kernel_lens.agent.errors import ProfileError
from kernel_lens.agent.stages.ncu import run_ncu

KERNELS = Path(__file__).resolve().parent.parent.parent / "kernels"


def _fake_ncu(tmp_path: Path, output: str, code: int) -> None:
    script = tmp_path / "bin" / "ncu"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}\nEOF\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ProfileError:
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    path = KERNELS / "square.py"
    with pytest.raises(ProfileError) as info:
        run_ncu(str(path), path.read_text(), "square_mul", report_dir=str(tmp_path / "r"))
    return info.value


def test_counters_not_permitted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ncu(
        tmp_path,
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
        "Performance Counters on the target device 0.",
        1,
    )
    err = _run(tmp_path, monkeypatch)
    assert err.kind == "unsupported"
    assert "ERR_NVGPUCTRPERM" in err.message and "NVreg_RestrictProfilingToAdminUsers=0" in (
        err.message
    )


def test_nothing_profiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ncu(
        tmp_path, "==PROF== Disconnected from process 1\n==WARNING== No kernels were profiled.", 0
    )
    err = _run(tmp_path, monkeypatch)
    assert err.kind == "not-found"
    assert "launched no CUDA kernel" in err.message


def test_no_ncu_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    path = KERNELS / "square.py"
    if any(Path("/opt/nvidia/nsight-compute").glob("*/ncu")):
        pytest.skip("Nsight Compute is installed under /opt")
    with pytest.raises(ProfileError) as info:
        run_ncu(str(path), path.read_text(), "square_mul", report_dir=str(tmp_path / "r"))
    assert info.value.kind == "unsupported" and "ncu) was not found" in info.value.message


def test_the_stage_asks_for_bytes_and_flops_and_places_the_kernels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in ``ncu`` records its command line and writes the recorded H200 ``full`` report
    where ``--export`` says: the stage asked for the DRAM byte and FLOP counters next to its
    set, and each kernel's roofline entry comes from them (``source: "ncu"``)."""
    pytest.importorskip("ncu_report")
    recorded = (
        Path(__file__).resolve().parent.parent / "data" / "h200" / "triton_fused_full.ncu-rep"
    )
    argv = tmp_path / "argv.txt"
    script = tmp_path / "bin" / "ncu"
    script.parent.mkdir()
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{argv}"\n'
        "while [ $# -gt 0 ]; do\n"
        f'  if [ "$1" = "--export" ]; then cp "{recorded}" "$2"; fi\n'
        "  shift\n"
        "done\n"
        "echo '==PROF== Disconnected from process 1'\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    path = KERNELS / "square.py"
    result = run_ncu(str(path), path.read_text(), "square_mul", report_dir=str(tmp_path / "r"))
    args = argv.read_text().splitlines()
    metrics = args[args.index("--metrics") + 1].split(",")
    assert args[args.index("--set") + 1] == "basic"
    assert {"dram__bytes_read.sum", "dram__bytes_write.sum"} <= set(metrics)
    assert "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in metrics and len(metrics) == 11
    (kernel,) = result["kernels"]
    assert kernel.get("dram_bytes_read") == 4197120.0 and kernel.get("flops") == 2.0**21
    (roof,) = result.get("roofline") or []
    assert roof["source"] == "ncu" and roof["name"] == "triton_poi_fused_add_mul_relu_0"
    assert roof["tb_per_s"] == pytest.approx(1.008923, rel=1e-5)


def test_the_profiled_process_gets_the_functions_driver_and_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a driver (``ncu run … --from``, or the editor's remembered one) the process ncu
    profiles loads the function through that driver, with its arguments, folder and
    environment (a stand-in ``ncu`` records what it was asked to run)."""
    import json

    script = tmp_path / "bin" / "ncu"
    script.parent.mkdir()
    script.write_text(
        f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {tmp_path}/args\n"
        f'echo "$KL_BATCH" > {tmp_path}/env\necho "==WARNING== No kernels were profiled."\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("KL_BATCH", raising=False)
    model = tmp_path / "mlp.py"
    model.write_text("def f(x):\n    return x\n")
    with pytest.raises(ProfileError):
        run_ncu(
            str(model), model.read_text(), "f", report_dir=str(tmp_path / "r"),
            driver="drive_mlp.py", argv=["--dim", "24"], cwd=str(tmp_path), env={"KL_BATCH": "6"},
        )  # fmt: skip
    args = (tmp_path / "args").read_text().splitlines()
    child = args.index("kernel_lens.agent.ncu_child")
    assert args[child + 1 : child + 3] == [str(model), "f"]
    driver = json.loads(args[child + 4])
    assert driver == {
        "driver": os.path.abspath("drive_mlp.py"),
        "argv": ["--dim", "24"],
        "cwd": str(tmp_path),
    }
    assert (tmp_path / "env").read_text().strip() == "6"
    assert "KL_BATCH" not in os.environ  # set for the child only
