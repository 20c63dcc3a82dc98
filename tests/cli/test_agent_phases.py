"""The agent's per-phase log (issue 36): with ``$KERNEL_LENS_PHASE_LOG`` a profile's agent says
when its process started, torch was imported, it was ready, the job came, the per-line ops went
out and the result; the per-line ops go out before the timing, and a job sent on ``ready`` is
taken at once (the rest of the warm-up, pandas, waits until after the per-line ops)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import KERNELS, run_cli


def test_a_profiles_phases_are_logged_in_order(tmp_path: Path) -> None:
    log = tmp_path / "phases.jsonl"
    code, out, err = run_cli(
        "profile", f"{KERNELS}/square.py::square_three_ways", "--json", "--no-history",
        "--budget-ms", "50", env={"KERNEL_LENS_PHASE_LOG": str(log)},
    )  # fmt: skip
    assert code == 0, err
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert len({r["pid"] for r in rows}) == 1  # one agent
    phases = [r["phase"] for r in rows]
    at = {r["phase"]: r["t"] for r in rows}

    def first(prefix: str) -> float:
        return next(r["t"] for r in rows if r["phase"].startswith(prefix))

    order = ["process started", "torch imported", "ready", "job received: profile",
             "partial sent: trace", "partial sent: timing", "result sent"]  # fmt: skip
    times = [first(p) for p in order]
    assert times == sorted(times), list(zip(order, times, strict=True))
    # The job came on `ready`: taken at once, no idle imports before it.
    assert "idle imports done" not in phases
    assert at["job received: profile"] - at["ready"] < 1.0
    assert out["function"] == "square_three_ways"


def test_no_log_without_the_variable(tmp_path: Path) -> None:
    import os

    from kernel_lens.agent.phases import mark

    os.environ.pop("KERNEL_LENS_PHASE_LOG", None)
    mark("nothing")  # no file, no error
    os.environ["KERNEL_LENS_PHASE_LOG"] = str(tmp_path / "p.jsonl")
    try:
        mark("something", 12.5)
    finally:
        del os.environ["KERNEL_LENS_PHASE_LOG"]
    row = json.loads((tmp_path / "p.jsonl").read_text())
    assert row["phase"] == "something" and row["t"] == 12.5 and row["pid"] == os.getpid()
