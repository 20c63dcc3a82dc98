"""Profile on N ranks: launch the user's file under torch.distributed's own launcher, as
``torchrun --nproc-per-node N FILE`` would, with the agent in every rank, then merge the ranks.

The launcher is ``python -m torch.distributed.run --standalone`` (torchrun's elastic agent, a
local rendezvous on a free port, ``RANK``/``LOCAL_RANK``/``WORLD_SIZE``/``MASTER_*`` set for each
rank) in the user's interpreter; each rank runs :mod:`kernel_lens.agent.rank`. The merge is
:func:`kernel_lens.analysis.distributed.merge_ranks`.

Devices: no GPU → the ranks run on the CPU (the user's ``gloo`` group), labelled; fewer GPUs
than ranks → labelled ``N ranks on K GPUs``, and a failure then says NCCL needs one GPU a rank.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from kernel_lens.agent.deadline import remaining_s
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import ProfileRequest

__all__ = ["MAX_NPROC", "launch_command", "run_distributed"]

#: More ranks than this on one node is a typo, not a profile.
MAX_NPROC = 64
#: Seconds torchrun gets to stop its ranks after SIGTERM before it is killed.
_GRACE_S = 10.0
#: Set for the ranks: the time (``time.time()``) at which each writes its Python stack to
#: ``OUT/rank<R>.stack`` (just before the job's deadline: where a hung rank waits).
DUMP_ENV = "KERNEL_LENS_RANK_DUMP_AT"
#: A collective's error when its peer process went away (gloo, NCCL): the rank waited in vain.
_PEER_GONE = re.compile(
    r"Connection closed by peer|Connection reset by peer|remote process exited|"
    r"NCCL communicator was aborted|Broken pipe",
    re.IGNORECASE,
)
#: The ranks dump their stacks this long before torchrun is stopped.
_DUMP_AHEAD_S = 2.0


def launch_command(nproc: int, request_path: str, out_dir: str) -> list[str]:
    """torchrun's command line for ``nproc`` ranks of the rank entry."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "--max-restarts=0",
        "-m",
        "kernel_lens.agent.rank",
        request_path,
        out_dir,
    ]


def _devices(nproc: int) -> tuple[str, str | None]:
    """The ranks' devices in words, and a note when they must share."""
    import torch

    if not torch.cuda.is_available():
        return f"{nproc} ranks · CPU (gloo)", None
    count = torch.cuda.device_count()
    if count >= nproc:
        return f"{nproc} ranks · {nproc} GPUs", None
    note = (
        f"{nproc} ranks on {count} GPU{'s' if count != 1 else ''}: ranks share a device "
        "(NCCL needs one GPU a rank; gloo shares)"
    )
    return f"{nproc} ranks · {count} GPU{'s' if count != 1 else ''} shared", note


def run_distributed(
    request: ProfileRequest, progress: Callable[[str, str], None], trace_dir: str
) -> dict[str, Any]:
    """Run ``request`` on ``request.nproc_per_node`` ranks; the merged result.

    Raises:
        ProfileError: a rank's error (``rank 1: …``, its line), torchrun's failure or timeout.
    """
    from kernel_lens.analysis.distributed import merge_ranks

    nproc = request.nproc_per_node
    if not 1 <= nproc <= MAX_NPROC:
        raise ProfileError("internal", f"--nproc-per-node must be 1..{MAX_NPROC}, not {nproc}")
    label, note = _devices(nproc)
    progress("torchrun", f"launching {label}")
    with tempfile.TemporaryDirectory(prefix="kernel-lens-ranks-") as tmp:
        req_path = os.path.join(tmp, "request.json")
        params = dataclasses.replace(request, trace_dir=trace_dir).to_json()
        with open(req_path, "w", encoding="utf-8") as fh:
            json.dump(params, fh)
        env = {**os.environ, **{str(k): str(v) for k, v in (request.env or {}).items()}}
        env.setdefault("OMP_NUM_THREADS", "1")
        wait = _wait_s()
        if wait is not None:
            env[DUMP_ENV] = f"{time.time() + max(0.5, wait - _DUMP_AHEAD_S):.3f}"
        cwd = request.cwd or os.path.dirname(os.path.abspath(request.driver or request.path))
        rc, tail = _run(launch_command(nproc, req_path, tmp), env, cwd, wait)
        stacks = [_read_stack(os.path.join(tmp, f"rank{r}.stack")) for r in range(nproc)]
        results: list[dict[str, Any] | None] = []
        for rank in range(nproc):
            path = os.path.join(tmp, f"rank{rank}.json")
            try:
                with open(path, encoding="utf-8") as fh:
                    results.append(json.load(fh))
            except (OSError, ValueError):
                results.append(None)
    failed = [(float(res.get("at") or 0.0), r) for r, res in enumerate(results)
              if res is not None and "error" in res]  # fmt: skip
    if failed:
        # The first rank to fail is the cause (its peers then fail in their collectives).
        rank = min(failed)[1]
        err = (results[rank] or {})["error"]
        message = f"rank {rank}: {err.get('message', '')}"
        finished = [r for r, res in enumerate(results) if res is not None and "error" not in res]
        if finished and _PEER_GONE.search(str(err.get("message") or "")):
            # Not the rank's own fault: it waited in a collective that a peer never reached
            # (the peer finished and left); said as such, on the rank's line (issue 39 item 9).
            where = f" at line {err.get('line')}" if err.get("line") else ""
            peers = ", ".join(map(str, finished))
            message = (
                f"rank {rank} was waiting in a collective{where} that rank"
                f"{'s' if len(finished) > 1 else ''} {peers} finished without reaching (every "
                "rank must make the same collective calls in the same order); "
                + str(err.get("message") or "").splitlines()[0][:200]
            )
        if note:
            message += f" ({note})"
        raise ProfileError(
            str(err.get("kind") or "runtime"),  # type: ignore[arg-type]
            message,
            err.get("line"),
            traceback=err.get("traceback"),
        )
    missing = [r for r, res in enumerate(results) if res is None]
    if rc is None and missing:
        # Timed out: say where each rank that never finished was waiting, from its own stack
        # (a rank that waits in a collective for a peer that never calls it), as a timeout
        # says the user's line (issue 39 item 9).
        raise _hung(request, missing, stacks, note)
    if rc != 0 or missing:
        why = "timed out" if rc is None else f"exited with status {rc}"
        ranks = ", ".join(map(str, missing)) or "none"
        raise ProfileError(
            "runtime",
            f"torchrun {why}; ranks without a result: {ranks}"
            + (f" ({note})" if note else "")
            + ("\n" + "\n".join(tail) if tail else ""),
        )
    done = [r for r in results if r is not None]
    traces = [_load_trace(r.get("trace_path")) for r in done]
    calls = float(done[0].get("profiled_runs") or 1) if not request.script else 1.0
    merged = merge_ranks(done, traces, calls=calls)
    merged["distributed"]["label"] = label
    if note:
        merged["distributed"]["note"] = note
    merged["distributed"]["launcher"] = "torch.distributed.run --standalone"
    merged["distributed"]["trace_paths"] = [r.get("trace_path") for r in done]
    progress("done", "done")
    return merged


def _wait_s() -> float | None:
    """Seconds torchrun may run: up to shortly before the job's deadline (``None``: none)."""
    left = remaining_s()
    return None if left is None else max(1.0, left[0] - _GRACE_S - 2.0)


def _read_stack(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return []


def _hung(
    request: ProfileRequest, missing: list[int], stacks: list[list[str]], note: str | None
) -> ProfileError:
    """The timeout of a distributed job: for each rank without a result, the user's line it
    was waiting on (from its stack dump), the first such line as the error's line."""
    from kernel_lens.client.faults import failing_frame, fault_frames, where_text

    path = os.path.abspath(request.path)
    parts: list[str] = []
    first: int | None = None
    for rank in missing:
        frames = fault_frames(stacks[rank]) if rank < len(stacks) else []
        frame = failing_frame(frames, path)
        where = where_text(frames, path)
        if frame is not None:
            first = first if first is not None else frame.line
            parts.append(f"rank {rank} was waiting at line {frame.line} {where}".rstrip())
        elif where:
            parts.append(f"rank {rank} was waiting {where}")
        else:
            parts.append(f"rank {rank} never reported where it was")
    done = [r for r in range(len(stacks)) if r not in missing]
    if done:
        parts.append("rank" + ("s " if len(done) > 1 else " ") + ", ".join(map(str, done))
                     + " finished")  # fmt: skip
    left = remaining_s()
    limit = f" after {left[1]:g} s" if left is not None else ""
    hint = (
        " — a collective that one rank reached and another never did (every rank must make "
        "the same collective calls in the same order)"
        if done or len(missing) < len(stacks)
        else ""
    )
    return ProfileError(
        "timeout",
        f"the ranks did not finish{limit}: "
        + "; ".join(parts)
        + hint
        + (f" ({note})" if note else ""),
        first,
    )


def _load_trace(path: str | None) -> list[dict[str, Any]] | None:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            events = json.load(fh).get("traceEvents")
    except (OSError, ValueError):
        return None
    return events if isinstance(events, list) else None


def _run(
    cmd: list[str], env: dict[str, str], cwd: str, wait: float | None
) -> tuple[int | None, list[str]]:
    """Run torchrun to its end or the job's deadline; its exit status (``None``: timed out)
    and the last lines of its output (also passed on to stderr as they come)."""
    tail: collections.deque[str] = collections.deque(maxlen=30)
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail.append(line.rstrip("\n"))
            sys.stderr.write(line)
            sys.stderr.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        rc: int | None = proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        rc = None
        proc.send_signal(signal.SIGTERM)  # torchrun stops its ranks
        try:
            proc.wait(timeout=_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    reader.join(timeout=5.0)
    return rc, list(tail)
