"""The process ``compute-sanitizer`` checks: load the function (its inputs as for a profile, or a
driver's call) and call it once, synchronised.

    python -m kernel_lens.agent.sanitizer_child PATH FUNC TEXT_FILE [DRIVER_JSON]

Exit 3 without CUDA. No warm-up: compute-sanitizer slows every kernel down by orders of
magnitude, and one call is what it checks.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any


def main(argv: list[str]) -> int:
    """Run the checked call."""
    path, function, text_file = argv[1], argv[2], argv[3]
    driver: dict[str, Any] = json.loads(argv[4]) if len(argv) > 4 else {}
    with open(text_file, encoding="utf-8") as fh:
        text = fh.read()
    import torch

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
    with target.context.applied() if target.context is not None else contextlib.nullcontext():
        target.call()
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
