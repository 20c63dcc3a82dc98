"""Nsight Compute results per kernel: metrics and rule hints, from a report loaded by NVIDIA's
``ncu_report`` module or from ncu's CSV details page (through pandas). Pure: finding ``ncu`` and
``ncu_report`` and reading files is :mod:`kernel_lens.traces.ncu_files`.

Both readers return the same :class:`NcuKernel` rows, so the rest of Kernel Lens does not care
which one was available.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

from kernel_lens.wire import results as wire
from kernel_lens.wire.results import NcuHint

__all__ = [
    "NcuError",
    "NcuHint",
    "NcuKernel",
    "ROOFLINE_METRICS",
    "TENSOR_SOURCES",
    "cuda_core_flops",
    "kernel_math",
    "tensor_flops",
    "tensor_metric_names",
    "tensor_path",
    "kernel_flops",
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
    # Bytes and FLOPs of the kernel, for the roofline (issue 25): requested with ``--metrics``
    # by the ncu stage; in a CSV they are labelled by their own names.
    "dram__bytes_read.sum": ("dram_bytes_read", "dram__bytes_read.sum"),
    "dram__bytes_write.sum": ("dram_bytes_write", "dram__bytes_write.sum"),
}

#: The FLOP counters (per precision and operation; an FMA counts twice): asked of ncu with
#: ``--metrics`` next to the section set, summed by :func:`kernel_flops`.
FLOP_OPS: tuple[str, ...] = ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma")
FLOP_METRICS: tuple[str, ...] = tuple(
    f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in FLOP_OPS
)
#: Every metric the ncu stage adds to its section set (``ncu --metrics``), besides the
#: tensor-core counters the chip has (:func:`tensor_metric_names`).
ROOFLINE_METRICS: tuple[str, ...] = ("dram__bytes_read.sum", "dram__bytes_write.sum", *FLOP_METRICS)

#: Tensor-core math: ``sm__ops_path_tensor_src_<src>[_dst_<dst>]`` counts the "math ops executed
#: in the tensor path" by source precision — an op is a FLOP (an MMA's multiply and its add are
#: two), which is how NVIDIA says to count a GEMM's FLOPs with them. Which paths exist depends
#: on the chip, so the ncu stage asks for those ``ncu --query-metrics`` lists (an unknown
#: metric fails the whole run). Integer paths are not FLOPs and are left out.
_TENSOR_RE = re.compile(
    r"^sm__ops_path_tensor_src_(?P<src>[a-z0-9]+?)(?:_dst_(?P<dst>[a-z0-9]+))?(?:\.sum)?$"
)
TENSOR_SOURCES: dict[str, str] = {
    "bf16": "bf16",
    "fp16": "fp16",
    "tf32": "tf32",
    "fp8": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "fp64": "fp64",
}


def tensor_path(metric: str) -> str | None:
    """The precision (``bf16``, ``fp16``, ``tf32``, ``fp8``, ``fp64``) of a tensor-path counter
    (``sm__ops_path_tensor_src_bf16_dst_fp32[.sum]``); ``None`` for any other metric, an
    integer path, or a sparsity split (it would count the same ops twice)."""
    m = _TENSOR_RE.match(metric)
    if m is None or "sparsity" in metric:
        return None
    return TENSOR_SOURCES.get(m.group("src"))


def tensor_metric_names(available: Iterable[str]) -> tuple[str, ...]:
    """The ``.sum`` of each floating-point tensor-path counter among ``available`` (the base
    names ``ncu --query-metrics`` prints), sorted."""
    bases = {name.removesuffix(".sum") for name in available if tensor_path(name)}
    return tuple(sorted(f"{base}.sum" for base in bases))


def tensor_flops(values: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """Tensor-core FLOPs of one launch from its tensor-path counters (``values``: metric name →
    value, any names) and the precision that did most of them; ``(None, None)`` when no
    tensor-path counter was collected, ``(0.0, None)`` when they were and read zero."""
    by_path: dict[str, float] = {}
    for name, value in values.items():
        path = tensor_path(name) if name.endswith(".sum") else None
        if path is not None and isinstance(value, int | float):
            by_path[path] = by_path.get(path, 0.0) + float(value)
    if not by_path:
        return None, None
    total = sum(by_path.values())
    if total <= 0:
        return 0.0, None
    return total, max(by_path, key=lambda p: by_path[p])


def kernel_math(
    cuda_core: Mapping[str, float], tensor: float | None, tensor_dtype: str | None
) -> str | None:
    """The math a launch's FLOPs were mostly done in, so its compute roof is the right one:
    ``bf16``/``fp16``/``tf32``/``fp8``/``fp64`` on tensor cores (``… tensor``), else ``fp64``
    or ``fp32`` on CUDA cores (half precision on CUDA cores is taken against FP32, said so by
    the label); ``None`` without FLOPs. ``cuda_core`` maps ``d``/``f``/``h`` to FLOPs."""
    by = {f"{p} tensor": v for p, v in [(tensor_dtype, tensor or 0.0)] if p and v > 0}
    by.update({"fp64": cuda_core.get("d", 0.0), "fp32": cuda_core.get("f", 0.0)})
    by["fp32"] += cuda_core.get("h", 0.0)
    by = {k: v for k, v in by.items() if v > 0}
    return max(by, key=lambda k: by[k]) if by else None


class NcuError(RuntimeError):
    """A report that cannot be read, with a message for the user."""


#: A rule result's ``kind`` from the CSV page's ``Rule Type`` (a rule with none: ``INF``).
_HINT_KINDS: dict[str, Literal["OPT", "WRN", "ERR", "INF"]] = {
    "OPT": "OPT", "WRN": "WRN", "ERR": "ERR", "INF": "INF",
}  # fmt: skip


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
    dram_bytes_read: float | None = None
    dram_bytes_write: float | None = None
    flops: float | None = None
    """FLOPs of the launch: FP64, FP32 and FP16 add, mul and FMA on CUDA cores (an FMA counting
    twice) plus the tensor cores' (``tensor_flops``)."""
    tensor_flops: float | None = None
    """The tensor cores' part of ``flops`` (``None``: not collected)."""
    math: str | None = None
    """What most FLOPs were done in: ``bf16 tensor``, ``fp32``… — the compute roof to use."""
    hints: list[NcuHint] = field(default_factory=list)

    def to_json(self) -> wire.NcuKernel:
        """The wire's ``NcuKernel`` (no ``line``: the ncu stage adds it), hints ranked by
        estimated speedup."""
        return {
            "id": self.id,
            "name": self.name,
            "demangled": self.demangled,
            "device": self.device,
            "duration_us": self.duration_us,
            "compute_throughput_pct": self.compute_throughput_pct,
            "memory_throughput_pct": self.memory_throughput_pct,
            "dram_throughput_pct": self.dram_throughput_pct,
            "dram_bandwidth_gbs": self.dram_bandwidth_gbs,
            "achieved_occupancy_pct": self.achieved_occupancy_pct,
            "theoretical_occupancy_pct": self.theoretical_occupancy_pct,
            "registers": self.registers,
            "grid_size": self.grid_size,
            "block_size": self.block_size,
            "waves": self.waves,
            "grid": self.grid,
            "block": self.block,
            "dram_bytes_read": self.dram_bytes_read,
            "dram_bytes_write": self.dram_bytes_write,
            "flops": self.flops,
            "tensor_flops": self.tensor_flops,
            "math": self.math,
            "hints": [NcuHint(**h) for h in self.hints],
        }


_MARKUP = re.compile(r"@(?:section|url|table|metric|path):(?:[^:@]*:)?([^@]*)@")


def strip_markup(message: str) -> str:
    """Drop ncu markup: ``@section:SchedulerStats:Scheduler Statistics@`` → its title."""
    return _MARKUP.sub(lambda m: m.group(1), message).strip()


def _rank(hints: list[NcuHint]) -> list[NcuHint]:
    order = {"ERR": 0, "OPT": 1, "WRN": 2}
    return sorted(hints, key=lambda h: (order.get(h["kind"], 3), -(h["speedup_pct"] or 0.0)))


def _number(text: str) -> float | None:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def cuda_core_flops(metric: Callable[[str], Any]) -> dict[str, float]:
    """FLOPs per precision (``d``, ``f``, ``h``) from the counters ``kernel_flops`` sums, where
    collected (empty otherwise)."""
    out: dict[str, float] = {}
    for op in FLOP_OPS:
        value = metric(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum")
        if isinstance(value, int | float):
            out[op[0]] = out.get(op[0], 0.0) + float(value) * (2 if op.endswith("fma") else 1)
    return out


def _add_tensor(k: NcuKernel, values: Mapping[str, Any], metric: Callable[[str], Any]) -> None:
    """Tensor-core FLOPs into ``k.flops`` (kept apart in ``k.tensor_flops``) and the math that
    decides its compute roof."""
    tensor, dtype = tensor_flops(values)
    k.tensor_flops = tensor
    if tensor:
        k.flops = (k.flops or 0.0) + tensor
    k.math = kernel_math(cuda_core_flops(metric), tensor, dtype)


def kernel_flops(metric: Callable[[str], Any]) -> float | None:
    """FLOPs of one launch from ncu's counters (``metric(name)``: the value, or ``None``):
    ``sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum`` where collected
    (the ncu stage asks for them), else — a report of the ``full`` set, which holds only their
    rates — ``smsp__…_pred_on.sum.per_cycle_elapsed`` × ``smsp__cycles_elapsed.avg``, as Nsight
    Compute's own roofline does. ``None`` when neither is there: nothing is invented."""
    total, seen = 0.0, False
    for op in FLOP_OPS:
        value = metric(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum")
        if isinstance(value, int | float):
            seen = True
            total += float(value) * (2 if op.endswith("fma") else 1)
    if seen:
        return total
    cycles = metric("smsp__cycles_elapsed.avg")
    if not isinstance(cycles, int | float):
        return None
    for op in FLOP_OPS:
        rate = metric(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
        if isinstance(rate, int | float):
            seen = True
            total += float(rate) * float(cycles) * (2 if op.endswith("fma") else 1)
    return float(round(total)) if seen else None


#: CSV units of byte and count metrics, as factors (``Kbyte``, ``Mbyte``, ``Ginst``…).
_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def _scaled(value: float, unit: str) -> float:
    """A byte or count value in its CSV unit, as plain bytes or counts."""
    u = unit.strip().lower()
    for suffix in ("byte", "inst"):
        if u.endswith(suffix) and u[: -len(suffix)] in _PREFIX:
            return value * _PREFIX[u[: -len(suffix)]]
    return value


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
        counts: dict[str, float] = {}
        for _, row in group.iterrows():
            metric = str(row.get("Metric Name", ""))
            if metric and metric in labels:
                value = _number(row["Metric Value"])
                field_name = labels[metric]
                if value is not None:
                    unit = str(row.get("Metric Unit", "")).lower()
                    if field_name == "duration_us":
                        value = value / 1000 if unit in ("ns", "nsecond") else value
                        value = value * 1000 if unit in ("ms", "msecond") else value
                    elif field_name.startswith("dram_bytes"):
                        value = _scaled(value, unit)
                    setattr(k, field_name, value)
            elif metric in FLOP_METRICS or tensor_path(metric):
                value = _number(row["Metric Value"])
                if value is not None:
                    counts[metric] = _scaled(value, str(row.get("Metric Unit", "")))
            rule = str(row.get("Rule Name", ""))
            if rule:
                description = str(row.get("Rule Description", ""))
                hints.append(
                    NcuHint(
                        rule=rule,
                        section=str(row.get("Section Name", "")),
                        kind=_HINT_KINDS.get(str(row.get("Rule Type", "")), "INF"),
                        title=rule,
                        message=strip_markup(description),
                        speedup_pct=_number(row.get("Estimated Speedup", "")),
                        speedup_type=str(row.get("Estimated Speedup Type", "")) or None,
                    )
                )
        k.flops = kernel_flops(counts.get)
        _add_tensor(k, counts, counts.get)
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
    kinds: dict[Any, Literal["OPT", "WRN", "ERR", "INF"]] = {
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
            value_of = functools.partial(_value, action)
            k.flops = kernel_flops(value_of)
            listed = getattr(action, "metric_names", None)
            names = listed() if callable(listed) else ()
            tensor_names = [str(n) for n in names if tensor_path(str(n))]
            _add_tensor(k, {n: value_of(n) for n in tensor_names}, value_of)
            hints = _report_hints(action, kinds, global_type)
            k.hints = _rank(hints)
            kernels.append(k)
    return kernels


def _report_hints(
    action: Any, kinds: Mapping[Any, Literal["OPT", "WRN", "ERR", "INF"]], global_type: Any
) -> list[NcuHint]:
    """The rule results of one launch of an ``ncu_report`` report (those of ``kinds``)."""
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
    return hints
