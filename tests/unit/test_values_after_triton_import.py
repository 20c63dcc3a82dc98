"""Show Values when triton was imported before the interpreter was on (a forked agent whose
parent had imported it): triton.language's own ``@jit`` helpers (``tl.zeros``) were made as
compiled functions then, and an interpreted kernel that called one stopped at its first program
("Cannot call @triton.jit'd outside of the scope of a kernel"). The values stage interprets them
too while it runs, and puts them back after."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import KERNELS, ROOT

SCRIPT = r"""
import json, os, sys
import triton, triton.language as tl  # before the interpreter is on
from triton.runtime.jit import JITFunction
from kernel_lens.agent.engine import Engine
from kernel_lens.wire.jobs import ValuesRequest
result = Engine().values(ValuesRequest(path=sys.argv[1], kernel="matmul_kernel", program="last",
                                       iteration="last"))
print(json.dumps({"programs_run": result["programs_run"], "error": result["error"],
                  "lines": [row["line"] for row in result["lines"]],
                  "restored": isinstance(tl.zeros, JITFunction)}))
"""


def test_values_of_a_kernel_calling_tl_helpers_after_triton_was_imported() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(KERNELS / "triton_inside.py")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "server"), "HOME": "/tmp"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # matmul's 3 × 2 grid all ran; the last program's lines have values (tl.zeros among them)
    assert out["error"] is None
    assert out["programs_run"] == 6
    assert 47 in out["lines"] and len(out["lines"]) > 5
    assert out["restored"], "triton.language's helpers are put back after the run"
