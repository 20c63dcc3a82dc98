"""Nsight Compute results per kernel: metrics and rule hints, from a report loaded by NVIDIA's
``ncu_report`` module or from ncu's CSV details page (through pandas). Pure: finding ``ncu`` and
``ncu_report`` and reading files is :mod:`kernel_lens.ncu_files`.

Both readers return the same :class:`NcuKernel` rows, so the rest of Kernel Lens does not care
which one was available.
"""

from __future__ import annotations

import io
import re
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any

__all__ = [
    "NcuError",
    "NcuHint",
    "NcuKernel",
    "kernels_from_report",
    "read_ncu_csv",
    "strip_markup",
]

#: metric name → NcuKernel field, and the CSV label of the same metric (details page, basic set).
METRICS: dict[str, tuple[str, str]] = {
    "gpu__time_duration.sum": ("duration_us", "Duration"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (
        "compute_throughput_pct",
        "Compute (SM) Throughput",
    ),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (
        "memory_throughput_pct",
        "Memory Throughput",
    ),
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": (
        "dram_throughput_pct",
        "DRAM Throughput",
    ),
    "dram__bytes.sum.per_second": ("dram_bandwidth_gbs", "DRAM Bandwidth"),
    "sm__warps_active.avg.pct_of_peak_sustained_active": (
        "achieved_occupancy_pct",
        "Achieved Occupancy",
    ),
    "sm__maximum_warps_per_active_cycle_pct": (
        "theoretical_occupancy_pct",
        "Theoretical Occupancy",
    ),
    "launch__registers_per_thread": ("registers", "Registers Per Thread"),
    "launch__grid_size": ("grid_size", "Grid Size"),
    "launch__block_size": ("block_size", "Block Size"),
    "launch__waves_per_multiprocessor": ("waves", "Waves Per SM"),
}


class NcuError(RuntimeError):
    """A report that cannot be read, with a message for the user."""


@dataclass(frozen=True)
class NcuHint:
    """One rule result: ``kind`` OPT (optimisation), WRN or ERR; speedup in percent."""

    rule: str
    section: str
    kind: str
    title: str
    message: str
    speedup_pct: float | None
    speedup_type: str | None


@dataclass
class NcuKernel:
    """One profiled kernel launch. Times in µs, throughputs and occupancy in % of peak."""

    id: int
    name: str
    demangled: str
    device: str | None = None
    duration_us: float | None = None
    compute_throughput_pct: float | None = None
    memory_throughput_pct: float | None = None
    dram_throughput_pct: float | None = None
    dram_bandwidth_gbs: float | None = None
    achieved_occupancy_pct: float | None = None
    theoretical_occupancy_pct: float | None = None
    registers: float | None = None
    grid_size: float | None = None
    block_size: float | None = None
    waves: float | None = None
    grid: str | None = None
    block: str | None = None
    hints: list[NcuHint] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, hints ranked by estimated speedup."""
        return asdict(self)


_MARKUP = re.compile(r"@(?:section|url|table|metric|path):(?:[^:@]*:)?([^@]*)@")


def strip_markup(message: str) -> str:
    """Drop ncu markup: ``@section:SchedulerStats:Scheduler Statistics@`` → its title."""
    return _MARKUP.sub(lambda m: m.group(1), message).strip()


def _rank(hints: list[NcuHint]) -> list[NcuHint]:
    order = {"ERR": 0, "OPT": 1, "WRN": 2}
    return sorted(hints, key=lambda h: (order.get(h.kind, 3), -(h.speedup_pct or 0.0)))


def _number(text: str) -> float | None:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def read_ncu_csv(text: str) -> list[NcuKernel]:
    """Kernels from ``ncu --csv --page details`` output (``==PROF==`` lines are skipped)."""
    import pandas as pd

    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise NcuError('no CSV table in this output (expected a header starting with "ID")')
    frame = pd.read_csv(io.StringIO("\n".join(lines[start:])), dtype=str, keep_default_na=False)
    kernels: list[NcuKernel] = []
    for kid, group in frame.groupby("ID", sort=False):
        first = group.iloc[0]
        k = NcuKernel(
            id=int(str(kid)),
            name=str(first["Kernel Name"]),
            demangled=str(first["Kernel Name"]),
            grid=str(first.get("Grid Size", "")) or None,
            block=str(first.get("Block Size", "")) or None,
        )
        labels = {label: field_name for field_name, label in METRICS.values()}
        hints: list[NcuHint] = []
        for _, row in group.iterrows():
            metric = str(row.get("Metric Name", ""))
            if metric and metric in labels:
                value = _number(row["Metric Value"])
                field_name = labels[metric]
                if value is not None:
                    if field_name == "duration_us":
                        unit = str(row.get("Metric Unit", "")).lower()
                        value = value / 1000 if unit in ("ns", "nsecond") else value
                        value = value * 1000 if unit in ("ms", "msecond") else value
                    setattr(k, field_name, value)
            rule = str(row.get("Rule Name", ""))
            if rule:
                description = str(row.get("Rule Description", ""))
                hints.append(
                    NcuHint(
                        rule=rule,
                        section=str(row.get("Section Name", "")),
                        kind=str(row.get("Rule Type", "")) or "INF",
                        title=rule,
                        message=strip_markup(description),
                        speedup_pct=_number(row.get("Estimated Speedup", "")),
                        speedup_type=str(row.get("Estimated Speedup Type", "")) or None,
                    )
                )
        k.hints = _rank(hints)
        kernels.append(k)
    return kernels


def _value(action: Any, metric: str) -> Any:
    m = action.metric_by_name(metric)
    return None if m is None else m.value()


def kernels_from_report(module: ModuleType, ctx: Any) -> list[NcuKernel]:
    """Kernels of a report loaded by NVIDIA's ``ncu_report`` (``module.load_report(path)``).

    Args:
        module: the ``ncu_report`` module (its constants name the rule and speedup types).
        ctx: the loaded report context.
    """
    kernels: list[NcuKernel] = []
    demangled_base = getattr(module.IAction, "NameBase_DEMANGLED", None)
    global_type = getattr(module, "SpeedupType_GLOBAL", 2)
    kinds = {
        getattr(module, "MsgType_OPTIMIZATION", 2): "OPT",
        getattr(module, "MsgType_WARNING", 3): "WRN",
        getattr(module, "MsgType_ERR", 4): "ERR",
    }
    index = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            name = action.name()
            k = NcuKernel(
                id=index,
                name=name,
                demangled=action.name(demangled_base) if demangled_base is not None else name,
                device=_value(action, "device__attribute_display_name"),
            )
            index += 1
            for metric, (field_name, _) in METRICS.items():
                value = _value(action, metric)
                if isinstance(value, int | float):
                    if field_name == "duration_us":
                        value = float(value) / 1000.0
                    elif field_name == "dram_bandwidth_gbs":
                        value = float(value) / 1e9
                    setattr(k, field_name, float(value))
            hints: list[NcuHint] = []
            for d in action.rule_results_as_dicts():
                msg = d.get("rule_message") or {}
                kind = kinds.get(msg.get("type"))
                if kind is None:
                    continue
                speedup = d.get("speedup_estimation") or {}
                hints.append(
                    NcuHint(
                        rule=str(d.get("rule_identifier", "")),
                        section=str(d.get("section_identifier", "")),
                        kind=kind,
                        title=str(msg.get("title") or d.get("name") or ""),
                        message=strip_markup(str(msg.get("message", ""))),
                        speedup_pct=float(speedup["speedup"]) if "speedup" in speedup else None,
                        speedup_type=("global" if speedup.get("type") == global_type else "local")
                        if speedup
                        else None,
                    )
                )
            k.hints = _rank(hints)
            kernels.append(k)
    return kernels
