"""The process ``ncu`` profiles: load the function, warm it up, then one call inside
``cudaProfilerStart/Stop`` with each line in an NVTX range ``src:<line>``.

    python -m kernel_lens.agent.ncu_child PATH FUNC TEXT_FILE

The call runs under the target's calling context, as in every other stage. Only that call's
kernels are profiled (ncu runs with ``--profile-from-start off``), never the
set-up's ``randn`` or the warm-up.
"""

from __future__ import annotations

import contextlib
import sys


def main(argv: list[str]) -> int:
    """Run the profiled call; exit 3 without CUDA."""
    path, function, text_file = argv[1], argv[2], argv[3]
    with open(text_file, encoding="utf-8") as fh:
        text = fh.read()
    import torch

    from kernel_lens.agent.stages.ops import LineTagger, NvtxRange
    from kernel_lens.agent.stages.target import load_target

    if not torch.cuda.is_available():
        print("kernel-lens: no CUDA device", file=sys.stderr)
        return 3
    target = load_target(path, text, name=function)
    # under the calling context the other stages use (a captured call's autocast, grad mode…)
    with target.context.applied() if target.context is not None else contextlib.nullcontext():
        for _ in range(2):
            target.call()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        with LineTagger(target.code, NvtxRange):
            target.call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
