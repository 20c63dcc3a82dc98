"""The process ``ncu`` profiles: load the function, warm it up, then one call inside
``cudaProfilerStart/Stop`` with each line in an NVTX range ``src:<line>``.

    python -m kernel_lens.agent.ncu_child PATH FUNC TEXT_FILE [DRIVER_JSON]

``DRIVER_JSON`` (``{"driver", "argv", "cwd"}``): the inputs, ``self`` and calling context are
those of the function's first call in a run of the driver (``load_target(..., driver=…)``, as
every other stage loads it).

The call runs under the target's calling context, as in every other stage. Only that call's
kernels are profiled (ncu runs with ``--profile-from-start off``), never the
set-up's ``randn`` or the warm-up.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any


def main(argv: list[str]) -> int:
    """Run the profiled call; exit 3 without CUDA."""
    path, function, text_file = argv[1], argv[2], argv[3]
    driver: dict[str, Any] = json.loads(argv[4]) if len(argv) > 4 else {}
    with open(text_file, encoding="utf-8") as fh:
        text = fh.read()
    import torch

    from kernel_lens.agent.stages.ops import LineTagger, NvtxRange
    from kernel_lens.agent.stages.target import load_target

    if not torch.cuda.is_available():
        print("kernel-lens: no CUDA device", file=sys.stderr)
        return 3
    target = load_target(
        path,
        text,
        name=function,
        driver=driver.get("driver"),
        argv=[str(a) for a in driver.get("argv") or []],
        cwd=driver.get("cwd"),
    )
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
