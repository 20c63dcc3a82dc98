"""Record memory fixtures on a GPU (issue 29): a profile_memory trace of a training step with the
agent's line tags, an allocator snapshot of that step, and a snapshot taken at an out-of-memory.

    python benchmarks/record_memory.py OUT_DIR
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernels"))
from kernel_lens.agent.stages.ops import LineTagger  # noqa: E402
from train_step import make, train_step  # noqa: E402


def main(out: Path) -> None:
    model, opt, x, y = make(batch=1024, dim=512, hidden=2048)
    train_step(model, opt, x, y)
    torch.cuda.synchronize()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        record_shapes=True,
        profile_memory=True,
    ) as prof:
        with LineTagger(train_step.__code__):
            train_step(model, opt, x, y)
        torch.cuda.synchronize()
    prof.export_chrome_trace(str(out / "memory_step-trace.json"))
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
    train_step(model, opt, x, y)
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    with open(out / "memory_step.pickle", "wb") as fh:
        pickle.dump(snap, fh)
    facts: dict[str, object] = {"max_memory_allocated": torch.cuda.max_memory_allocated()}
    del model, opt, x, y
    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
    oom_snap: list[object] = []

    def observer(device: int, alloc: int, device_allocated: int, device_free: int) -> None:
        oom_snap.append(torch.cuda.memory._snapshot())
        facts["oom"] = {
            "device": device,
            "alloc": alloc,
            "allocated": device_allocated,
            "free": device_free,
        }

    torch._C._cuda_attach_out_of_memory_observer(observer)
    held = []
    try:
        for _ in range(400):
            held.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))  # 1 GiB chunks
        held.append(torch.empty(1 << 40, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError as exc:
        facts["oom_message"] = str(exc)[:400]
        facts["held_gib"] = len(held)
    torch.cuda.memory._record_memory_history(enabled=None)
    if oom_snap:
        with open(out / "memory_oom.pickle", "wb") as fh:
            pickle.dump(oom_snap[0], fh)
    (out / "memory_facts.json").write_text(json.dumps(facts, indent=1))
    print("memory:", json.dumps(facts)[:600])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
