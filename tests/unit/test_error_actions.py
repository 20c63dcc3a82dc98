"""A failed job in full with the actions that can fix it (``analysis/error_actions.py``)."""

from kernel_lens.analysis.error_actions import error_actions, error_markdown, user_traceback

URI = "file:///w/model.py"


def _labels(error: dict[str, object]) -> list[str]:
    return [a["label"] for a in error_actions(error, uri=URI)]


def test_each_kind_gets_the_action_that_can_fix_it() -> None:
    gpu = {
        "kind": "unsupported",
        "message": "this code needs an NVIDIA GPU — run the agent on one (kernelLens.agentCommand)",
        "line": 12,
    }
    assert _labels(gpu) == ["Run on a GPU Machine…", "Go to Line 12", "Show Output"]
    assert error_actions(gpu, uri=URI)[0]["arguments"] == ["kernelLens.agentCommand"]
    missing = {"kind": "import", "message": "ModuleNotFoundError: No module named 'einops'"}
    assert _labels(missing) == ["Choose Interpreter", "Show Output"]
    timeout = {
        "kind": "timeout",
        "message": "no result after 3 s (kernelLens.compileTimeoutSeconds)",
    }
    assert error_actions(timeout, uri=URI)[0]["arguments"] == ["kernelLens.compileTimeoutSeconds"]
    inputs = {
        "kind": "inputs",
        "message": "…",
        "line": 4,
        "suggested_directive": "# kernel-lens: …",
    }
    reveal = error_actions(inputs, uri=URI)[0]
    assert reveal["label"] == "Go to Line 4 (quick fix)"
    assert reveal["arguments"] == [{"uri": URI, "line": 4}]
    # Never more than two fixes, then the output.
    assert len(error_actions({**gpu, "kind": "timeout"}, uri=URI)) == 3


TRACEBACK = """\
Traceback (most recent call last):
  File "/srv/kernel_lens/agent/usercode.py", line 80, in call_user
    return fn()
  File "/w/model.py", line 30, in step
    return helper(x)
           ^^^^^^^^^
  File "/w/model.py", line 12, in helper
    raise ValueError("bad shape")
  File "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1, in _call
    return forward()
ValueError: bad shape
"""


def test_the_traceback_keeps_the_users_frames_once() -> None:
    assert user_traceback(TRACEBACK, "/w/model.py") == [
        'File "/w/model.py", line 30, in step',
        "    return helper(x)",
        'File "/w/model.py", line 12, in helper',
        '    raise ValueError("bad shape")',
        "ValueError: bad shape",
    ]
    error = {
        "kind": "runtime",
        "message": "ValueError: bad shape",
        "line": 12,
        "traceback": TRACEBACK,
    }
    text = error_markdown(error, function="step", path="/w/model.py", links=["[Go](command:x)"])
    assert text.count("ValueError: bad shape") == 2  # the message, and the traceback's end
    assert "kernel_lens" not in text and "site-packages" not in text
    assert text.endswith("[Go](command:x)")


def test_a_run_that_failed_on_its_arguments_or_its_driver_offers_to_change_them() -> None:
    """Issue 41: the failure dialog gives the script its arguments (the CPU ones after a device
    failure, then the function is profiled again) and changes the function's driver."""
    error = {
        "kind": "unsupported",
        "message": "this code needs an NVIDIA GPU (bench.py raised AssertionError: Torch not "
        "compiled with CUDA enabled)",
        "line": 3,
        "arguments": {
            "uri": "file:///w/bench.py",
            "name": "bench.py",
            "argv": [],
            "suggested": ["--device=cpu", "--compile=False"],
            "then": {"uri": URI, "function": "Block.forward"},
        },
        "driver_choice": {"uri": URI, "function": "Block.forward", "shown": "bench.py"},
    }
    actions = error_actions(error, uri=URI)
    assert [a["label"] for a in actions] == [
        "Run bench.py on the CPU…",
        "Change the Driver…",
        "Run on a GPU Machine…",
        "Show Output",
    ]
    assert actions[0]["command"] == "kernelLens.scriptArguments"
    assert actions[0]["arguments"] == [
        {
            "uri": "file:///w/bench.py",
            "argv": [],
            "suggested": ["--device=cpu", "--compile=False"],
            "then": {"uri": URI, "function": "Block.forward"},
        }
    ]
    assert actions[1]["arguments"] == [{"uri": URI, "function": "Block.forward"}]
    # a function with no driver yet: pick one
    no_driver = {"kind": "inputs", "message": "…", "driver_choice": {"function": "f"}}
    assert _labels(no_driver)[0] == "Take the Inputs from…"
