"""Test helper: per-PC stall samples and costs of one kernel in a ``.ncu-rep`` (source
counters), keyed by pc offset as :func:`kernel_lens.analysis.stall_blame.blame_stalls` takes
them, with each pc's source line. Reads with NVIDIA's ``ncu_report`` module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernel_lens.traces.ncu_files import load_ncu_report_module

PREFIX = "smsp__pcsamp_warps_issue_stalled_"
COSTS = (
    "memory_l2_theoretical_sectors_global",
    "memory_l2_theoretical_sectors_global_ideal",
    "memory_l1_wavefronts_shared",
    "memory_l1_wavefronts_shared_ideal",
    "inst_executed",
)


@dataclass
class KernelPcs:
    """One profiled kernel's source counters by pc offset (``sass``: the report's text of each
    executed instruction, without control words)."""

    name: str
    samples: dict[int, dict[str, float]]
    costs: dict[int, dict[str, float]]
    lines: dict[int, tuple[str, int]]
    sample_count: float
    sources: dict[str, str]
    sass: dict[int, str]


def _per_pc(action: Any, name: str) -> dict[int, float]:
    metric = action.metric_by_name(name)
    if metric is None:
        return {}
    ids = metric.correlation_ids()
    if ids is None:
        return {}
    return {
        int(ids.as_uint64(i)): float(metric.as_double(i)) for i in range(metric.num_instances())
    }


def read_kernel(path: str, action_index: int = 0) -> KernelPcs:
    """The source counters of one action (kernel launch) of the report at ``path``."""
    ncu_report = load_ncu_report_module()
    assert ncu_report is not None, "ncu_report is not importable"
    action = ncu_report.load_report(path).range_by_idx(0).action_by_idx(action_index)
    executed = _per_pc(action, "inst_executed")
    assert executed, "no per-instruction counters: was the report made with SourceCounters?"
    base = min(executed)  # the function's first instruction always runs
    samples: dict[int, dict[str, float]] = {}
    for name in action.metric_names():
        if name.startswith(PREFIX) and not name.endswith("_not_issued"):
            for pc, value in _per_pc(action, name).items():
                if value:
                    samples.setdefault(pc - base, {})[name[len(PREFIX) :]] = value
    costs: dict[int, dict[str, float]] = {}
    for name in COSTS:
        for pc, value in _per_pc(action, name).items():
            costs.setdefault(pc - base, {})[name] = value
    lines: dict[int, tuple[str, int]] = {}
    for pc in executed:
        info = action.source_info(pc)
        if info is not None:
            lines[pc - base] = (str(info.file_name()), int(info.line()))
    return KernelPcs(
        name=str(action.name()),
        samples=samples,
        costs=costs,
        lines=lines,
        sample_count=sum(_per_pc(action, "smsp__pcsamp_sample_count").values()),
        sources={str(k): str(v) for k, v in dict(action.source_files()).items()},
        sass={pc - base: str(action.sass_by_pc(pc)) for pc in sorted(executed)},
    )


def line_of(sources: dict[str, str], needle: str, after: str | None = None) -> tuple[str, int]:
    """``(file, line)`` of the one source line containing ``needle`` (the first one after a
    line containing ``after``, when given)."""
    hits: list[tuple[str, int]] = []
    for path, text in sources.items():
        armed = after is None
        for no, line in enumerate(text.splitlines(), 1):
            if not armed and after is not None and after in line:
                armed = True
            elif armed and needle in line:
                hits.append((path, no))
                if after is not None:
                    break
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def shares_by_line(
    per_pc: dict[int, float], lines: dict[int, tuple[str, int]]
) -> dict[tuple[str, int] | None, float]:
    """Fold per-pc counts onto source lines, as shares of their sum."""
    total = sum(per_pc.values()) or 1.0
    out: dict[tuple[str, int] | None, float] = {}
    for pc, value in per_pc.items():
        key = lines.get(pc)
        out[key] = out.get(key, 0.0) + value / total
    return out
