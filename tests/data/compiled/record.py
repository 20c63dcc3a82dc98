"""Records ``cpu_block-*.json``: ``kernels/compiled_step.py::train_step`` on a CPU (torch 2.13),
the model compiled, what Inductor recorded of its graphs (the agent's capture) and the profiled
pass's trace (3 calls, lines of ``train_step`` tagged), for the pure tests of the placement.

    PYTHONPATH=server python tests/data/compiled/record.py
"""

import json
import os
import sys

import torch

from kernel_lens.agent.inductor_capture import CompileCapture, capture_compiled
from kernel_lens.agent.stages.ops import profile_pass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "kernels"))
import compiled_step  # noqa: E402

capture = CompileCapture()
with capture_compiled(capture):
    torch.manual_seed(0)
    model = torch.compile(compiled_step.Block())
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 64), torch.randn(64, 64)

    def call() -> None:
        compiled_step.train_step(model, opt, x, y)

    call()
    passed = profile_pass(
        call, compiled_step.train_step.__code__, device="cpu", runs=3, trace_dir="/tmp"
    )
keep = {"cpu_op", "user_annotation", "fwdbwd"}
events = [e for e in passed.trace["traceEvents"] if e.get("cat") in keep]
with open(os.path.join(HERE, "cpu_block-trace.json"), "w") as fh:
    json.dump({"traceEvents": events}, fh)
with open(os.path.join(HERE, "cpu_block-graphs.json"), "w") as fh:
    json.dump(capture.graphs, fh, indent=1)
print(len(events), "events,", len(capture.graphs), "graphs")
