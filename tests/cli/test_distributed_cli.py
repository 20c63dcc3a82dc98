"""``kernel-lens profile FILE::FUNC --nproc-per-node 2``: two real ranks under torchrun on the
CPU (gloo), merged; a deliberate straggler (rank 1 sleeps before its all_reduce) is named, with
its skew. Real processes, no mocks; kept tiny for a 2-core machine."""

from __future__ import annotations

import os

import pytest

from tests.conftest import KERNELS, run_cli

STEP = str(KERNELS / "allreduce_step.py")
ARGS = ("--reps", "3", "--runs", "2", "--no-history", "--json", "--timeout", "150")


@pytest.mark.timeout(200)
def test_two_cpu_ranks_merged_and_the_straggler_named(tmp_path) -> None:
    code, out, err = run_cli(
        "profile", f"{STEP}::step", "--nproc-per-node", "2", "--trace-dir", str(tmp_path), *ARGS,
        env={"STRAGGLER_RANK": "1", "STRAGGLER_MS": "30", "KERNEL_LENS_CACHE": str(tmp_path)},
        timeout=180,
    )  # fmt: skip
    assert code == 0, err
    dist = out["distributed"]
    assert dist["nproc"] == 2 and dist["backend"] == "gloo"
    assert "CPU (gloo)" in dist["label"]
    # one result per rank, each with its own rank-named trace
    assert len(out["ranks"]) == 2
    names = [os.path.basename(p) for p in dist["trace_paths"]]
    assert names[0].endswith("-rank0.json") and names[1].endswith("-rank1.json")
    assert all(os.path.isfile(p) for p in dist["trace_paths"])
    # every rank timed the same number of calls (the count agreed: no deadlock)
    assert [r["timing"]["reps"] for r in out["ranks"]] == [3, 3]
    # the straggler: rank 1 arrives last at every all_reduce, waits least
    assert dist["straggler"] == 1
    assert dist["per_rank"][0]["wait_us"] > dist["per_rank"][1]["wait_us"]
    assert dist["collectives"] and all(c["last_rank"] == 1 for c in dist["collectives"])
    assert 20_000 <= dist["max_skew_us"] <= 200_000  # 30 ms sleep, give or take a busy machine
    # communication on the line that called all_reduce, with its overlap and skew
    by_line = {ln["source"].strip(): ln for ln in out["lines"]}
    ar = by_line["dist.all_reduce(y)"]
    assert ar["comm"][0]["name"] == "all_reduce"
    assert ar["comm"][0]["overlap_pct"] is not None
    assert ar["comm"][0]["max_skew_us"] >= 20_000
    assert ar["ranks"]["us"] and len(ar["ranks"]["us"]) == 2
    # the sleep line is rank 1's: the slowest rank there
    assert "comm" not in by_line["y = x @ w"]


@pytest.mark.timeout(120)
def test_a_failing_rank_is_a_clear_error_and_nothing_hangs(tmp_path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import os\nimport torch\nimport torch.distributed as dist\n\n\n"
        "def step(x):\n"
        "    if dist.get_rank() == 1:\n"
        "        raise ValueError('rank one fails')\n"
        "    dist.all_reduce(x)\n"
        "    return x\n\n\n"
        "if __name__ == '__main__':\n"
        "    dist.init_process_group('gloo')\n"
        "    step(torch.ones(4))\n"
    )
    code, out, err = run_cli(
        "profile", f"{bad}::step", "--nproc-per-node", "2", *ARGS,
        env={"KERNEL_LENS_CACHE": str(tmp_path)}, timeout=110,
    )  # fmt: skip
    assert code == 1
    assert "rank 1" in out["error"]["message"] and "rank one fails" in out["error"]["message"]
    assert out["error"]["line"] == 8


@pytest.mark.timeout(240)
def test_a_rank_that_hangs_in_a_collective_is_named_with_its_line(tmp_path) -> None:
    """Issue 39 item 9: rank 1 waits in an all_reduce that rank 0, stuck elsewhere, never
    reaches: the job's timeout says where each rank was, at the lines of the user's file — not
    torchrun's traceback."""
    hang = tmp_path / "hang.py"
    hang.write_text(
        "import time\n\nimport torch\nimport torch.distributed as dist\n\n\n"
        "def step(x):\n"
        "    if dist.get_rank() == 1:\n"
        "        dist.all_reduce(x)\n"
        "    else:\n"
        "        time.sleep(600)\n"
        "    return x * 2\n\n\n"
        "if __name__ == '__main__':\n"
        "    dist.init_process_group('gloo')\n"
        "    step(torch.ones(4))\n"
    )
    code, out, err = run_cli(
        "profile", f"{hang}::step", "--nproc-per-node", "2", "--reps", "3", "--runs", "2",
        "--no-history", "--json", "--timeout", "45",
        env={"KERNEL_LENS_CACHE": str(tmp_path)}, timeout=200,
    )  # fmt: skip
    assert code == 1, (out, err)
    error = out["error"]
    assert error["kind"] == "timeout", error
    assert "rank 1 was waiting at line 9" in error["message"], error["message"]
    assert "rank 0 was waiting at line 11" in error["message"], error["message"]
    assert error["line"] == 11  # the first rank's (rank 0's: stuck before its collective)


@pytest.mark.timeout(200)
def test_a_rank_left_waiting_by_a_finished_peer_is_said_so(tmp_path) -> None:
    """Issue 39 item 9, the other shape: rank 0 never calls the all_reduce and finishes; gloo
    then fails rank 1's wait ("Connection closed by peer"). Said as what it is, on its line."""
    left = tmp_path / "left.py"
    left.write_text(
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def step(x):\n"
        "    if dist.get_rank() == 1:\n"
        "        dist.all_reduce(x)\n"
        "    return x * 2\n\n\n"
        "if __name__ == '__main__':\n"
        "    dist.init_process_group('gloo')\n"
        "    step(torch.ones(4))\n"
    )
    code, out, err = run_cli(
        "profile", f"{left}::step", "--nproc-per-node", "2", "--reps", "3", "--runs", "2",
        "--no-history", "--json", "--timeout", "150",
        env={"KERNEL_LENS_CACHE": str(tmp_path)}, timeout=180,
    )  # fmt: skip
    assert code == 1, (out, err)
    message = out["error"]["message"]
    assert message.startswith("rank 1 was waiting in a collective at line 7 that rank 0 "
                              "finished without reaching"), message  # fmt: skip
    assert out["error"]["line"] == 7
