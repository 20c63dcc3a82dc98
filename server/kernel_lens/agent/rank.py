"""One rank of a distributed profile: the module ``torchrun`` runs in every rank
(``torchrun --standalone --nproc-per-node N -m kernel_lens.agent.rank REQUEST OUT``).

It profiles the user's file or function exactly as the single-process agent does
(:func:`kernel_lens.agent.runner.run_profile`: the file's own run up to the function's first call
gives the inputs, with ``RANK``/``LOCAL_RANK``/``WORLD_SIZE`` from torchrun), writes its trace as
``…-rank<R>.json`` and its result (or error) as ``OUT/rank<R>.json``.

Every rank must call the function the same number of times, or a collective inside it waits for
a call that never comes: the timing loop runs a fixed count (two warm-up calls, then ``reps``,
the same on every rank), and nothing decided from a rank's own time (the CUDA-graph timing, the
roofline's extra call) runs. A failed rank exits non-zero, so torchrun stops the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import time
from typing import Any

__all__ = ["DEFAULT_RANK_REPS", "RANK_STAGES", "main", "rank_request"]

#: Timed repetitions of each rank when the request asks for adaptive ones (0).
DEFAULT_RANK_REPS = 20
#: The stages a rank runs (the others decide their call counts from their own times).
RANK_STAGES = ("timing", "ops", "trace")


def rank_request(params: dict[str, Any]) -> Any:
    """The rank's request: one process (no launcher), a fixed call count, the rank's stages."""
    from kernel_lens.wire.jobs import ProfileRequest

    request = ProfileRequest.from_json(params)
    stages = tuple(s for s in request.stages if s in RANK_STAGES) or ("timing", "ops", "trace")
    return dataclasses.replace(
        request,
        nproc_per_node=0,
        stages=stages,
        warmup_ms=0.0,  # two warm-up calls, the same count on every rank
        reps=request.reps or DEFAULT_RANK_REPS,
    )


def _die_with_parent() -> None:
    """torchrun starts each rank in its own session: a rank must not outlive it (a rank left
    alone waits in its next collective until gloo's 30-minute timeout)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _dump_stack_later(path: str) -> None:
    """Just before the job's deadline (``KERNEL_LENS_RANK_DUMP_AT``, a ``time.time()``), write
    this rank's Python stack to ``path``: where it waits if it hangs (a collective its peer
    never reaches). A rank that finishes first never writes it."""
    import faulthandler

    try:
        seconds = max(0.1, float(os.environ["KERNEL_LENS_RANK_DUMP_AT"]) - time.time())
    except (KeyError, ValueError):
        return
    try:
        fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 - open until the process ends
    except OSError:
        return
    _DUMP_FILES.append(fh)
    faulthandler.dump_traceback_later(seconds, repeat=False, file=fh, exit=False)


_DUMP_FILES: list[Any] = []


def _write(path: str, obj: Any) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """``REQUEST_JSON OUT_DIR``: run this rank's profile; 0 on success, 1 on the user's error."""
    _die_with_parent()
    request_path, out_dir = (argv if argv is not None else sys.argv[1:])[:2]
    from kernel_lens.agent.tracefile import RANK_ENV

    rank = int(os.environ.get("RANK", "0"))
    os.environ[RANK_ENV] = str(rank)
    out = os.path.join(out_dir, f"rank{rank}.json")
    _dump_stack_later(os.path.join(out_dir, f"rank{rank}.stack"))
    with open(request_path, encoding="utf-8") as fh:
        params = json.load(fh)

    from kernel_lens.agent.errors import ProfileError
    from kernel_lens.agent.runner import run_profile
    from kernel_lens.agent.stdio import stdout_to_stderr

    def progress(stage: str, message: str) -> None:
        if rank == 0:
            print(f"[rank 0 · {stage}] {message}", file=sys.stderr, flush=True)

    try:
        with stdout_to_stderr():
            result = run_profile(rank_request(params), progress)
    except ProfileError as err:
        # ``at``: the first rank to fail is the cause; its peers then fail in their collectives.
        _write(out, {"error": err.to_json(), "at": time.time()})
        return 1
    except BaseException as exc:  # noqa: BLE001 - every way a rank ends is reported
        error = {"kind": "internal", "message": f"{type(exc).__name__}: {exc}"}
        _write(out, {"error": error, "at": time.time()})
        return 1
    result.pop("_trace_events", None)
    with contextlib.suppress(Exception):
        import faulthandler

        faulthandler.cancel_dump_traceback_later()
    _write(out, result)
    _finish_group()
    return 0


def _finish_group() -> None:
    """Leave the user's process group cleanly, if it is still up (no warning at exit)."""
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    except Exception:  # noqa: BLE001 - the result is written; teardown is best effort
        pass


if __name__ == "__main__":
    sys.exit(main())
