"""The report panel's TypeScript fixtures (tests/data/report) are what the server sends today.

Regenerate them after a deliberate change of the timeline or ncu JSON::

    python - <<'PY'
    import json
    from tests.unit.test_report_fixtures import ncu_answer, timeline_answer
    json.dump(timeline_answer(), open("tests/data/report/matmul_relu_timeline.json", "w"),
              separators=(",", ":"))
    json.dump(ncu_answer(), open("tests/data/report/triton_fused_ncu.json", "w"), indent=1)
    PY
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.timeline import build_timeline
from kernel_lens.analysis.trace_summary import load_trace
from kernel_lens.traces.ncu_files import read_ncu_file

DATA = Path(__file__).resolve().parent.parent / "data"
NCU_REP = "tests/data/h200/triton_fused_full.ncu-rep"


def timeline_answer() -> dict[str, Any]:
    """The timeline the server builds from the recorded H200 trace."""
    return build_timeline(load_trace(str(DATA / "h200" / "matmul_relu_trace.json")))


def ncu_answer() -> dict[str, Any]:
    """The ``kernelLens/ncuFile`` answer for the recorded H200 report (repo-relative path)."""
    kernels, reader = read_ncu_file(str(DATA / "h200" / "triton_fused_full.ncu-rep"))
    return {"report_path": NCU_REP, "reader": reader, "kernels": [k.to_json() for k in kernels]}


def test_timeline_fixture_is_current() -> None:
    recorded = json.loads((DATA / "report" / "matmul_relu_timeline.json").read_text())
    assert recorded == json.loads(json.dumps(timeline_answer()))


def test_ncu_fixture_is_current() -> None:
    pytest.importorskip("ncu_report")
    recorded = json.loads((DATA / "report" / "triton_fused_ncu.json").read_text())
    assert recorded == json.loads(json.dumps(ncu_answer()))
