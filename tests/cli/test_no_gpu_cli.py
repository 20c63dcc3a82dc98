"""No GPU: Triton kernels run under Triton's interpreter (labelled so), code that asks for CUDA
gets an ``unsupported`` error on its line, Sweep says its times are not a GPU's."""

from __future__ import annotations

import pytest

from kernel_lens.agent.usercode import needs_gpu
from tests.conftest import EXAMPLES, HAS_CUDA, KERNELS, run_cli

cpu_only = pytest.mark.skipif(HAS_CUDA, reason="checks the machine without a GPU")

NOSETUP = EXAMPLES / "nosetup"
FAST = ["--budget-ms", "60", "--warmup-ms", "5"]


def _lineno(path: object, text: str) -> int:
    from pathlib import Path

    for no, line in enumerate(Path(str(path)).read_text().splitlines(), 1):
        if text in line:
            return no
    raise AssertionError(text)


@cpu_only
def test_triton_launch_without_triton_interpret_runs_under_the_interpreter(
    trace_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    path = NOSETUP / "triton_plain.py"
    code, out, err = run_cli(
        "profile", f"{path}::add_one", "--json", "--trace-dir", trace_dir, *FAST
    )
    assert code == 0, (out, err)
    assert out["triton_interpreter"] is True
    assert out["device"] == "CPU · Triton interpreter" and out["device_kind"] == "cpu"
    assert out["timing"]["median_ms"] > 0
    launch = _lineno(path, "add_one_kernel[(")
    assert launch in [line["line"] for line in out["lines"]]


@cpu_only
def test_triton_square_with_its_own_directive_and_no_env(
    trace_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    code, out, err = run_cli(
        "profile", f"{KERNELS}/triton_square.py::square", "--json", "--trace-dir", trace_dir, *FAST
    )
    assert code == 0, (out, err)
    assert out["triton_interpreter"] is True and out["device"] == "CPU · Triton interpreter"
    # The launch line shows the launch as the kernel it is, the interpreter's own tensor
    # plumbing (aten::set_, aten::copy_, aten::new_empty) folded into it: one op, one call.
    text = (KERNELS / "triton_square.py").read_text().splitlines()
    launch = next(i for i, x in enumerate(text, 1) if "square_kernel[grid](" in x)
    line = next(x for x in out["lines"] if x["line"] == launch)
    assert [(op["name"], op["calls"]) for op in line["ops"]] == [
        ("triton::square_kernel (interpreted)", 1)
    ], line["ops"]
    # It is the launch's whole time (the interpreter runs Python), not the plumbing's µs.
    other = sum(op["cpu_us"] for x in out["lines"] if x["line"] != launch for op in x["ops"])
    assert line["ops"][0]["cpu_us"] > 10 * other


@cpu_only
def test_plain_torch_is_not_labelled_interpreter(trace_dir: str) -> None:
    code, out, err = run_cli(
        "profile",
        f"{NOSETUP}/needs_cuda.py::plain",
        "--json",
        "--trace-dir",
        trace_dir,
        *FAST,
    )
    assert code == 0, (out, err)
    assert out["triton_interpreter"] is False and out["device"] == "CPU"


@cpu_only
def test_code_that_asks_for_cuda_is_unsupported_on_its_line(trace_dir: str) -> None:
    path = NOSETUP / "needs_cuda.py"
    code, out, _err = run_cli("profile", f"{path}::on_gpu", "--json", "--trace-dir", trace_dir)
    assert code != 0
    error = out["error"]
    assert error["kind"] == "unsupported"
    assert error["message"].startswith(
        "this code needs an NVIDIA GPU — run the agent on one (kernelLens.agentCommand)"
    )
    assert error["line"] == _lineno(path, 'device="cuda"')


@cpu_only
def test_sweep_under_the_interpreter_says_its_times_are_not_a_gpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    code, out, err = run_cli(
        "sweep",
        f"{NOSETUP}/triton_plain.py::add_one",
        "--param",
        "BLOCK",
        "--values",
        "128,256",
        "--json",
        *FAST,
    )
    assert code == 0, (out, err)
    assert out["device"] == "CPU · Triton interpreter"
    assert "not a GPU's" in out["note"]
    assert [row["value"] for row in out["rows"]] == [128, 256]
    # The text output prints the note and marks no value "best" (it would be meaningless).
    code, text, err = run_cli(
        "sweep",
        f"{NOSETUP}/triton_plain.py::add_one",
        "--param",
        "BLOCK",
        "--values",
        "128,256",
        *FAST,
    )
    assert code == 0, (text, err)
    assert "note: Triton interpreter on the CPU" in text
    assert "← best" not in text


def test_the_messages_that_mean_no_gpu() -> None:
    # A CPU build of torch, a CUDA build without a GPU, a driverless Triton launch.
    assert needs_gpu("Torch not compiled with CUDA enabled")
    assert needs_gpu("RuntimeError: No CUDA GPUs are available")
    assert needs_gpu("Found no NVIDIA driver on your system.")
    assert needs_gpu("0 active drivers ([]). There should only be one.")
    assert not needs_gpu("CUDA out of memory. Tried to allocate 2.00 GiB")


@pytest.mark.gpu
def test_on_a_gpu_the_same_file_runs_compiled_kernels(
    trace_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    code, out, err = run_cli(
        "profile", f"{NOSETUP}/triton_plain.py::add_one", "--json", "--trace-dir", trace_dir, *FAST
    )
    assert code == 0, (out, err)
    assert out["triton_interpreter"] is False and out["device_kind"] == "cuda"
    assert "add_one_kernel" in [k["name"] for k in out["kernels"]]


@cpu_only
def test_a_kernel_of_a_sibling_module_is_labelled_too(
    trace_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    code, out, err = run_cli(
        "profile", f"{NOSETUP}/uses_sibling.py::twice", "--json", "--trace-dir", trace_dir, *FAST
    )
    assert code == 0, (out, err)
    assert out["triton_interpreter"] is True and out["device"] == "CPU · Triton interpreter"
    # The launch line shows the launch as the kernel it is, the interpreter's own tensor
    # plumbing (aten::set_, aten::copy_, aten::new_empty) folded into it: one op, one call.
    text = (KERNELS / "triton_square.py").read_text().splitlines()
    launch = next(i for i, x in enumerate(text, 1) if "square_kernel[grid](" in x)
    line = next(x for x in out["lines"] if x["line"] == launch)
    assert [(op["name"], op["calls"]) for op in line["ops"]] == [
        ("triton::square_kernel (interpreted)", 1)
    ], line["ops"]
    # It is the launch's whole time (the interpreter runs Python), not the plumbing's µs.
    other = sum(op["cpu_us"] for x in out["lines"] if x["line"] != launch for op in x["ops"])
    assert line["ops"][0]["cpu_us"] > 10 * other


@cpu_only
def test_module_level_cuda_is_unsupported_on_its_line(trace_dir: str) -> None:
    path = NOSETUP / "cuda_at_import.py"
    code, out, _err = run_cli("profile", f"{path}::apply", "--json", "--trace-dir", trace_dir)
    assert code != 0
    assert out["error"]["kind"] == "unsupported"
    assert out["error"]["message"].startswith("this code needs an NVIDIA GPU")
    assert out["error"]["line"] == _lineno(path, ".cuda()")


@cpu_only
def test_a_script_that_needs_cuda_before_the_call_is_unsupported_on_that_line(
    trace_dir: str,
) -> None:
    """The capture path: the script asks for CUDA before it reaches the function; the message
    is the no-GPU one, on the script's line, not an inputs error on the def."""
    path = NOSETUP / "cuda_before_call.py"
    code, out, _err = run_cli("profile", f"{path}::add", "--json", "--trace-dir", trace_dir)
    assert code == 1
    assert out["error"]["kind"] == "unsupported"
    assert out["error"]["message"].startswith("this code needs an NVIDIA GPU")
    assert out["error"]["line"] == _lineno(path, 'x = torch.rand(1000, device="cuda")')
