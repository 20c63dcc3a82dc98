"""A machine of ``$KERNEL_LENS_FAKE_CPUS`` cores, as Python sees it (issue 36).

On ``PYTHONPATH`` with that variable set, ``os.cpu_count()`` and ``os.sched_getaffinity()`` answer
that many cores in this process and in every process started or forked from it that keeps the
variable (the trace reader keeps its parent's ``PYTHONPATH``). With ``OPENBLAS_NUM_THREADS`` and
``OMP_NUM_THREADS`` set to the same number, what the numeric libraries start is what such a
machine starts. Used by ``benchmarks/bench_traces.py --cpus`` and the reader's cores test, to
measure on a 2-core machine what a 16- or 64-core one does; the core count is believed, the
parallelism is not real (so compare CPU seconds and memory, not wall time).
"""

import os

_N = os.environ.get("KERNEL_LENS_FAKE_CPUS", "")
if _N.isdigit() and int(_N) > 0:
    _CPUS = set(range(int(_N)))

    def _cpu_count() -> int:
        return len(_CPUS)

    def _sched_getaffinity(pid: int) -> set[int]:
        return set(_CPUS)

    os.cpu_count = _cpu_count
    if hasattr(os, "sched_getaffinity"):
        os.sched_getaffinity = _sched_getaffinity
    if hasattr(os, "process_cpu_count"):  # Python 3.13
        os.process_cpu_count = _cpu_count
