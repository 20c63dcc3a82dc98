"""The process ``ncu`` profiles: load the function, warm it up, then one call inside
``cudaProfilerStart/Stop`` with each line in an NVTX range ``src:<line>``.

    python -m kernel_lens.agent.ncu_child PATH FUNC TEXT_FILE [DRIVER_JSON]

``DRIVER_JSON`` (``{"driver", "argv", "cwd"}``): the inputs, ``self`` and calling context are
those of the function's first call in a run of the driver (``load_target(..., driver=…)``, as
every other stage loads it).

The call runs under the target's calling context, as in every other stage. Only that call's
kernels are profiled (ncu runs with ``--profile-from-start off``), never the
set-up's ``randn`` or the warm-up.

The call also runs inside ``torch.autograd.profiler.emit_nvtx``, whose backward-node ranges carry
the forward's sequence numbers, and at the start of each line the calling thread's next
sequence number is noted; with ``KERNEL_LENS_NCU_SEQ_FILE`` set, those marks are written there
as JSON, so the backward's kernels go on the forward lines (``analysis/ncu_lines.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from kernel_lens.analysis.ncu_lines import SeqMarks


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
        marker = SeqMarker(NvtxRange)
        torch.cuda.profiler.start()
        with torch.autograd.profiler.emit_nvtx(), LineTagger(target.code, marker):
            # KERNEL_LENS_NCU_REPEAT: the call repeated, for more source-counter samples
            for _ in range(max(1, int(os.environ.get("KERNEL_LENS_NCU_REPEAT") or 1))):
                target.call()
        marks = marker.marks()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    seq_file = os.environ.get("KERNEL_LENS_NCU_SEQ_FILE")
    if seq_file:
        with open(seq_file, "w", encoding="utf-8") as fh:
            json.dump(marks.to_json(), fh)
    return 0


class SeqMarker:
    """A ``LineTagger`` range factory that also notes, as each line starts, the calling
    thread's next autograd sequence number (the number the line's first node will take)."""

    def __init__(self, range_factory: Callable[[str], Any]) -> None:
        self._factory = range_factory
        self._marks: list[tuple[int, int]] = []

    def __call__(self, name: str) -> Any:
        import torch

        from kernel_lens.analysis.line_attribution import LINE_RANGE_RE

        m = LINE_RANGE_RE.match(name)
        if m:
            self._marks.append((int(torch._C._autograd._get_sequence_nr()), int(m.group("line"))))
        return self._factory(name)

    def marks(self) -> SeqMarks:
        """The marks so far, ended at the thread's next number now."""
        import torch

        return SeqMarks(self._marks, int(torch._C._autograd._get_sequence_nr()))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
