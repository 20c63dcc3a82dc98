"""The pieces of captured inputs that need no agent: the inputs text of hovers and the CLI,
the suggested directive, argument descriptions, and finding the target's code object."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

from kernel_lens.agent.stages.capture import (
    Capture,
    describe_value,
    find_code,
    run_until_call,
    suggested_directive,
)
from kernel_lens.analysis.functions import find_function
from kernel_lens.analysis.lens_text import hover_markdown, inputs_args_text, inputs_text
from kernel_lens.wire.envelope import decode, encode, error_from_object, error_object
from kernel_lens.wire.errors import ProfileError

CAPTURED = {
    "source": "captured",
    "label": "captured",
    "line": 31,
    "call": "time_fn → square_2",
    "setup_s": 0.4213,
    "args": [
        {
            "name": "a",
            "type": "Tensor",
            "shape": [10000, 10000],
            "dtype": "float32",
            "device": "cuda:0",
            "repr": "tensor(…)",
        },
        {"name": "n", "type": "int", "shape": None, "dtype": None, "device": None, "repr": "3"},
    ],
}


def test_inputs_text_for_each_source() -> None:
    assert inputs_text(CAPTURED, "/w/pytorch_square.py") == (
        "captured at pytorch_square.py:31 (time_fn → square_2) after 0.42 s of the script"
    )
    assert inputs_text({"source": "directive", "line": 11, "args": []}) == "directive, line 11"
    assert inputs_text({"source": "factory", "label": "square_inputs()", "line": 4}) == (
        "square_inputs()"
    )
    assert inputs_text("directive") is None  # a result from before the inputs object
    method = {
        "source": "directive",
        "line": 3,
        "self": {"class": "Block", "how": "module instance model", "name": "model", "made_at": 27},
    }
    assert inputs_text(method) == "directive, line 3; self = model, line 27"
    fresh = {"source": "none", "self": {"class": "Block", "how": "Block() with no arguments"}}
    assert inputs_text(fresh) == "none (no parameters); self = Block() with no arguments"


def test_inputs_args_text() -> None:
    assert inputs_args_text(CAPTURED) == ["a: Tensor float32[10000, 10000] cuda:0", "n: int 3"]


def test_the_hover_ends_with_the_inputs() -> None:
    result = {
        "path": "/w/pytorch_square.py",
        "device_kind": "cpu",
        "device": "CPU",
        "profiled_runs": 1,
        "inputs": CAPTURED,
        "lines": [
            {
                "line": 5,
                "source": "return a * a",
                "ops": [
                    {"name": "aten::mul", "dispatch": [], "calls": 1, "cpu_us": 3.0, "kernels": []}
                ],
            }
        ],
    }
    text = hover_markdown(result, 5)
    assert text is not None
    assert "Inputs: captured at pytorch_square.py:31 (time_fn → square_2)" in text
    assert "- `a: Tensor float32[10000, 10000] cuda:0`" in text


def test_suggested_directive_from_the_parameter_names() -> None:
    one = find_function("def f(x):\n    return x\n", name="f")
    two = find_function("class A:\n    def g(self, x, scale):\n        pass\n", name="A.g")
    assert one is not None and two is not None
    assert suggested_directive(one) == "# kernel-lens: inputs = (torch.randn(1024),)  # x"
    assert suggested_directive(two) == (
        "# kernel-lens: inputs = ((), dict(x=torch.randn(64, 64), scale=torch.randn(64, 64)))"
    )


def test_the_suggested_directive_survives_the_agent_boundary() -> None:
    # A field of the error object through the envelope, never read back out of the message.
    fix = "# kernel-lens: inputs = (torch.randn(1024),)  # x"
    message = f"no call; or this directive above the def: {fix}"
    sent = ProfileError("inputs", message, 4, suggested_directive=fix)
    line = encode({"id": 1, "error": error_object(sent)})
    received = error_from_object(decode(line)["error"])
    assert received == sent and received.message == message
    assert received.to_json()["suggested_directive"] == fix
    assert "suggested_directive" not in ProfileError("runtime", "boom").to_json()
    assert ProfileError("inputs", message, 4).suggested_directive is None


def test_describe_value() -> None:
    t = describe_value("a", torch.ones(2, 3, dtype=torch.float64))
    assert (t["type"], t["shape"], t["dtype"], t["device"]) == ("Tensor", [2, 3], "float64", "cpu")
    assert inputs_args_text({"args": [t]}) == ["a: Tensor float64[2, 3] cpu"]
    n = describe_value("n", 7)
    assert (n["type"], n["shape"], n["repr"]) == ("int", None, "7")
    long = describe_value("s", "x" * 500)
    assert len(long["repr"]) <= 60


def test_find_code_takes_the_definition_at_the_line() -> None:
    text = (
        "def f(x):\n    return 1\n\n\ndef f(x):\n    return 2\n\n\n"
        "class A:\n    def f(self):\n        pass\n"
    )
    code = compile(text, "m.py", "exec")
    first, second = find_code(code, "f", 1), find_code(code, "f", 5)
    method = find_code(code, "A.f", 10)
    assert first is not None and first.co_firstlineno == 1
    assert second is not None and second.co_firstlineno == 5
    assert method is not None and method.co_qualname == "A.f"
    assert find_code(code, "g", 10) is None


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, name: str) -> Capture:
    # run_until_call changes cwd, sys.path and sys.argv (the agent's job process is fresh).
    monkeypatch.chdir(os.getcwd())
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    path = str(tmp_path / "script.py")
    info = find_function(text, name=name, filename=path)
    assert info is not None
    code = compile(text, path, "exec")
    target = find_code(code, info.qualname, info.def_line)
    assert target is not None
    return run_until_call(path, text, code, target, info)


SCRIPT = """\
import sys
import torch


class M:
    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        return x * 2


def f(x, *rest, k=1):
    raise RuntimeError("the body ran")


if __name__ == "__main__":
    with torch.profiler.profile(with_stack=True):
        torch.ones(2) + 1
    assert sys.argv == [__file__]
    m = M()
    m(torch.ones(2))
    f(1, 2, 3, k=4)
    raise RuntimeError("the rest ran")
"""


@pytest.mark.slow
def test_run_until_call_takes_the_first_call_and_removes_its_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = sys.getprofile()
    if sys.version_info < (3, 12):
        # torch.profiler replaces sys.setprofile's hook: the call is missed, and said so.
        with pytest.raises(ProfileError, match="replaced the profile hook"):
            _run(tmp_path, monkeypatch, SCRIPT, "f")
        script = SCRIPT.replace("torch.profiler.profile(with_stack=True)", "torch.no_grad()")
    else:
        script = SCRIPT
    cap = _run(tmp_path, monkeypatch, script, "f")
    assert (cap.args, cap.kwargs, cap.call) == ((1, 2, 3), {"k": 4}, "f")
    assert cap.line == script.splitlines().index("    f(1, 2, 3, k=4)") + 1
    assert cap.module.__name__ == "__main__" and isinstance(cap.module.__dict__["m"], object)
    method = _run(tmp_path, monkeypatch, script, "M.forward")
    assert method.call == "M.__call__ → M.forward"
    assert type(method.args[0]).__name__ == "M" and method.args[1].shape == (2,)
    assert sys.getprofile() is before
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        assert all(monitoring.get_tool(t) is None for t in (monitoring.PROFILER_ID, 3, 4))


def test_token_ids_and_positions_are_guessed_from_the_names_and_said_so() -> None:
    from kernel_lens.analysis.functions import find_function

    text = "class T:\n    def forward(self, idx, input_pos):\n        return idx\n"
    info = find_function(text, name="T.forward")
    assert info is not None
    assert suggested_directive(info) == (
        "# kernel-lens: inputs = ((), dict(idx=torch.randint(0, 16, (1, 64)), "
        "input_pos=torch.arange(64)))  # a guess from the names (idx, input_pos)"
    )
    one = find_function("def embed(tokens):\n    return tokens\n", name="embed")
    assert one is not None
    assert suggested_directive(one) == (
        "# kernel-lens: inputs = (torch.randint(0, 16, (1, 64)),)  # tokens, a guess from the name"
    )
