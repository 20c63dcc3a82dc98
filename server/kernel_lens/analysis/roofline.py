"""Each kernel against the hardware's limit: achieved TB/s and TFLOP/s from the bytes a kernel
moved and the FLOPs it did, as a fraction of the device's peak, and where it sits on a roofline.

Pure: a table of peaks per GPU (matched by the device's name), the arithmetic, and the readers
of where bytes and FLOPs come from (Inductor's launch metadata in the trace's kernel args, the
function's tensor sizes, Nsight Compute's DRAM bytes and FLOP counts). Where neither bytes nor
FLOPs are known, nothing is computed: no number is invented.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PEAKS",
    "DevicePeaks",
    "KernelWork",
    "achieved",
    "flops_from_ncu",
    "kernel_rooflines",
    "lookup_peaks",
    "ncu_rooflines",
    "roofline_text",
    "with_ncu_roofline",
    "work_from_ncu",
    "work_from_trace",
]


@dataclass(frozen=True)
class DevicePeaks:
    """One GPU's peaks. Bandwidths in TB/s (10^12 bytes/s), compute in TFLOP/s (10^12/s),
    dense (no sparsity); ``None`` where the GPU has no such unit.

    Attributes:
        name: the GPU, as its datasheet names it.
        match: lower-case substrings, all of which the device name must contain.
        bandwidth_tbs: the datasheet's memory bandwidth.
        measured_bandwidth_tbs: a copy's bandwidth measured on this GPU, when one was; the
            fraction of peak bandwidth is taken against it (a copy is what a kernel can reach).
        fp32…fp8: dense peaks from the datasheet (FP32 on CUDA cores; TF32/BF16/FP16/FP8 on
            tensor cores).
        source: where the numbers come from.
        exclude: lower-case substrings none of which it may contain (``gh200`` holds ``h200``).
    """

    name: str
    match: tuple[str, ...]
    bandwidth_tbs: float
    measured_bandwidth_tbs: float | None
    fp32: float
    tf32: float | None
    bf16: float | None
    fp16: float | None
    fp8: float | None
    source: str
    fp64: float | None = None
    """FP64 on CUDA cores."""
    fp64_tensor: float | None = None
    """FP64 on tensor cores (DMMA)."""
    exclude: tuple[str, ...] = ()

    @property
    def bandwidth_peak_tbs(self) -> float:
        """The bandwidth a fraction is taken against: measured where it was, else datasheet."""
        return self.measured_bandwidth_tbs or self.bandwidth_tbs

    @property
    def bandwidth_source(self) -> str:
        if self.measured_bandwidth_tbs:
            return f"measured copy bandwidth {self.measured_bandwidth_tbs:g} TB/s"
        return f"datasheet bandwidth {self.bandwidth_tbs:g} TB/s"

    def flop_peak(self, dtype: str | None = None) -> tuple[float | None, str]:
        """The compute peak for ``dtype`` and its label: ``fp32`` (the default) and ``fp64`` on
        CUDA cores; ``tf32``, ``bf16``, ``fp16``, ``fp8`` on tensor cores (``bf16 tensor`` is
        the same), ``fp64 tensor``. ``(None, label)`` when this GPU has no such peak in the
        table: no fraction is then taken against another precision's peak."""
        key = (dtype or "fp32").lower().replace("bfloat", "bf").replace("float", "fp").strip()
        tensor = key.endswith(" tensor")
        key = key.removesuffix(" tensor").strip()
        if key.startswith("fp8") or key in ("e4m3", "e5m2"):
            key = "fp8"
        if key == "fp64":
            value = self.fp64_tensor if tensor else self.fp64
            return value, "FP64 tensor" if tensor else "FP64"
        if key in ("tf32", "bf16", "fp16", "fp8"):
            return getattr(self, key), f"{key.upper()} tensor"
        return self.fp32, "FP32"


#: Peaks per GPU. Datasheet values are NVIDIA's (dense, without sparsity); the H200's copy
#: bandwidth was measured on the lent H200 (tests/data/h200, ``square_baseline.json``).
PEAKS: tuple[DevicePeaks, ...] = (
    # The NVL and PCIe boards share the SXM's chip at other clocks and power: their own rows
    # come first, so a fraction is never taken against the SXM's higher peaks.
    DevicePeaks(
        name="NVIDIA H200 NVL",
        match=("h200", "nvl"),
        bandwidth_tbs=4.8,
        measured_bandwidth_tbs=None,
        fp32=60.0,
        tf32=417.5,
        bf16=835.5,
        fp16=835.5,
        fp8=1670.5,
        source="NVIDIA H200 NVL datasheet (dense: half the sparse figures)",
        fp64=30.0,
        fp64_tensor=60.0,
        exclude=("gh200",),
    ),
    DevicePeaks(
        name="NVIDIA H200 SXM",
        exclude=("gh200",),
        match=("h200",),
        bandwidth_tbs=4.8,
        measured_bandwidth_tbs=4.30,
        fp32=67.0,
        tf32=494.5,
        bf16=989.5,
        fp16=989.5,
        fp8=1979.0,
        source="NVIDIA H200 SXM datasheet (dense); copy bandwidth measured on an H200",
        fp64=34.0,
        fp64_tensor=67.0,
    ),
    DevicePeaks(
        name="NVIDIA H100 NVL",
        match=("h100", "nvl"),
        bandwidth_tbs=3.9,
        measured_bandwidth_tbs=None,
        fp32=60.0,
        tf32=417.5,
        bf16=835.5,
        fp16=835.5,
        fp8=1670.5,
        source="NVIDIA H100 NVL datasheet (dense: half the sparse figures)",
        fp64=30.0,
        fp64_tensor=60.0,
    ),
    DevicePeaks(
        name="NVIDIA H100 PCIe",
        match=("h100", "pcie"),
        bandwidth_tbs=2.0,
        measured_bandwidth_tbs=None,
        fp32=51.0,
        tf32=378.0,
        bf16=756.0,
        fp16=756.0,
        fp8=1513.0,
        source="NVIDIA H100 PCIe datasheet (dense: half the sparse figures)",
        fp64=26.0,
        fp64_tensor=51.0,
    ),
    DevicePeaks(
        name="NVIDIA H100 SXM",
        match=("h100",),
        bandwidth_tbs=3.35,
        measured_bandwidth_tbs=None,
        fp32=67.0,
        tf32=494.5,
        bf16=989.5,
        fp16=989.5,
        fp8=1979.0,
        source="NVIDIA H100 SXM datasheet (dense)",
        fp64=34.0,
        fp64_tensor=67.0,
    ),
    DevicePeaks(
        name="NVIDIA A100 80GB PCIe",
        match=("a100", "pcie", "80"),
        bandwidth_tbs=1.935,
        measured_bandwidth_tbs=None,
        fp32=19.5,
        tf32=156.0,
        bf16=312.0,
        fp16=312.0,
        fp8=None,
        source="NVIDIA A100 datasheet (80GB PCIe, dense)",
        fp64=9.7,
        fp64_tensor=19.5,
    ),
    DevicePeaks(
        name="NVIDIA A100 80GB SXM",
        match=("a100", "80"),
        bandwidth_tbs=2.039,
        measured_bandwidth_tbs=None,
        fp32=19.5,
        tf32=156.0,
        bf16=312.0,
        fp16=312.0,
        fp8=None,
        source="NVIDIA A100 datasheet (80GB SXM, dense)",
        fp64=9.7,
        fp64_tensor=19.5,
    ),
    DevicePeaks(
        name="NVIDIA A100 40GB",
        match=("a100",),
        bandwidth_tbs=1.555,
        measured_bandwidth_tbs=None,
        fp32=19.5,
        tf32=156.0,
        bf16=312.0,
        fp16=312.0,
        fp8=None,
        source="NVIDIA A100 datasheet (40GB, dense)",
        fp64=9.7,
        fp64_tensor=19.5,
    ),
)


def lookup_peaks(device_name: str | None) -> DevicePeaks | None:
    """The peaks of a device by its name (``NVIDIA H200``, ``NVIDIA A100-SXM4-80GB``); ``None``
    for a GPU not in the table (or the CPU): then no fraction of peak is shown."""
    if not device_name:
        return None
    name = device_name.lower()
    for peaks in PEAKS:
        if all(part in name for part in peaks.match) and not any(
            part in name for part in peaks.exclude
        ):
            return peaks
    return None


@dataclass(frozen=True)
class KernelWork:
    """What one call of a kernel moved and computed, and where that was read."""

    bytes: float | None
    flops: float | None
    source: str
    """``inductor`` (the trace's launch metadata), ``tensors`` (the function's tensor sizes)
    or ``ncu`` (Nsight Compute's counters)."""


def achieved(
    duration_us: float,
    work: KernelWork,
    peaks: DevicePeaks | None,
    *,
    dtype: str | None = None,
) -> dict[str, Any] | None:
    """Achieved bandwidth and compute of one call taking ``duration_us``, as fractions of
    ``peaks``; ``None`` when neither bytes nor FLOPs are known or the time is not positive.

    Keys: ``tb_per_s``, ``tflop_per_s`` (null where unknown), ``bandwidth_pct``, ``flop_pct``
    (null without peaks), ``intensity`` (FLOP per byte), ``bound`` (``memory``/``compute``, from
    the ridge point of the peaks), ``bytes``, ``flops``, ``source``, ``peak_note``.
    """
    if duration_us <= 0 or (not work.bytes and not work.flops):
        return None
    seconds = duration_us * 1e-6
    tbs = work.bytes / seconds / 1e12 if work.bytes else None
    tflops = work.flops / seconds / 1e12 if work.flops else None
    out: dict[str, Any] = {
        "bytes": work.bytes,
        "flops": work.flops,
        "source": work.source,
        "tb_per_s": tbs,
        "tflop_per_s": tflops,
        "bandwidth_pct": None,
        "flop_pct": None,
        "intensity": work.flops / work.bytes if work.bytes and work.flops else None,
        "bound": None,
        "peak_note": None,
    }
    out["impossible"] = None
    if peaks is None:
        return out
    flop_peak, flop_label = peaks.flop_peak(dtype)
    out["math"] = flop_label
    if tbs is not None:
        out["bandwidth_pct"] = 100.0 * tbs / peaks.bandwidth_peak_tbs
    if tflops is not None and flop_peak:
        out["flop_pct"] = 100.0 * tflops / flop_peak
    if out["intensity"] is not None and flop_peak:
        ridge = flop_peak / peaks.bandwidth_peak_tbs  # FLOP per byte where the roofs meet
        out["bound"] = "memory" if out["intensity"] < ridge else "compute"
    elif tbs is not None:
        out["bound"] = "memory"
    compute = (
        f"{flop_label} {flop_peak:g} TFLOP/s (datasheet)"
        if flop_peak
        else f"no {flop_label} peak for this GPU in the table"
    )
    out["peak_note"] = f"{peaks.name}: {peaks.bandwidth_source}; {compute}"
    out["peak_tbs"] = peaks.bandwidth_peak_tbs
    if flop_peak:
        out["peak_tflops"] = flop_peak
    out["impossible"] = _impossible(tbs, tflops, peaks, flop_peak, flop_label)
    return out


def _impossible(
    tbs: float | None,
    tflops: float | None,
    peaks: DevicePeaks,
    flop_peak: float | None,
    flop_label: str,
) -> str | None:
    """Why a rate above a peak cannot be the kernel's own, or ``None``. More bytes per second
    than the memory can deliver means the bytes were not all read from DRAM: an earlier call
    left them in L2 (no flush between calls, or L2 persistence), or the byte count assumes
    reads the kernel did not do. Above the compute peak, the FLOP count is wrong for the math
    (a kernel counted against the wrong precision's peak, or FLOPs counted twice)."""
    if tbs is not None and tbs > peaks.bandwidth_tbs:
        return (
            f"{tbs:.3g} TB/s is above the {peaks.bandwidth_tbs:g} TB/s the memory can deliver: "
            "the data was served from L2 (left by an earlier call: no flush between calls, or "
            "L2 persistence), not DRAM — not a win"
        )
    if tbs is not None and tbs > peaks.bandwidth_peak_tbs:
        return (
            f"{tbs:.3g} TB/s is above the measured copy bandwidth "
            f"({peaks.bandwidth_peak_tbs:g} TB/s): part of the data likely came from L2"
        )
    if tflops is not None and flop_peak and tflops > flop_peak:
        return (
            f"{tflops:.3g} TFLOP/s is above the {flop_label} peak ({flop_peak:g} TFLOP/s): the "
            "FLOP count does not match the math this kernel did — not a win"
        )
    return None


def _rate(value: float, unit: str) -> str:
    return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def roofline_text(name: str, duration_ms: float, roof: Mapping[str, Any] | None) -> str:
    """``square_kernel 0.192 ms · 4.16 TB/s · 97% of peak bandwidth`` (and FLOP/s where FLOPs
    are known); the name and time alone without a roofline."""
    parts = [f"{name} {duration_ms:.3g} ms"]
    if roof is None:
        return parts[0]
    impossible = roof.get("impossible")
    if roof.get("tb_per_s") is not None:
        parts.append(_rate(float(roof["tb_per_s"]), "TB/s"))
        if roof.get("bandwidth_pct") is not None and not impossible:
            parts.append(f"{roof['bandwidth_pct']:.0f}% of peak bandwidth")
    if roof.get("tflop_per_s") is not None:
        parts.append(_rate(float(roof["tflop_per_s"]), "TFLOP/s"))
        if roof.get("flop_pct") is not None and not impossible:
            math = roof.get("math")
            label = f"{math} peak" if math and math != "FP32" else "peak compute"
            parts.append(f"{roof['flop_pct']:.0f}% of {label}")
    if impossible:
        parts.append(f"⚠ above peak: {impossible}")
    return " · ".join(parts)


def work_from_trace(events: Iterable[Mapping[str, Any]]) -> dict[str, KernelWork]:
    """Inductor's launch metadata per kernel name: a kernel event's (or its launch's) args
    ``kernel_num_gb`` (GB moved, 10^9 bytes) and ``kernel_flop``, where Inductor put them."""
    out: dict[str, KernelWork] = {}
    for event in events:
        args = event.get("args")
        if not isinstance(args, Mapping):
            continue
        gb = args.get("kernel_num_gb")
        flop = args.get("kernel_flop")
        if not isinstance(gb, int | float) and not isinstance(flop, int | float):
            continue
        name = str(args.get("kernel_name") or event.get("name") or "")
        if not name:
            continue
        out[name] = KernelWork(
            bytes=float(gb) * 1e9 if isinstance(gb, int | float) and gb > 0 else None,
            flops=float(flop) if isinstance(flop, int | float) and flop > 0 else None,
            source="inductor",
        )
    return out


_NCU_PRECISIONS = ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma")


def flops_from_ncu(metrics: Mapping[str, Any]) -> float | None:
    """FLOPs of one kernel from ``sm__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on
    .sum`` (an FMA counts twice); ``None`` when none of them was collected."""
    total = 0.0
    seen = False
    for op in _NCU_PRECISIONS:
        value = metrics.get(f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum")
        if isinstance(value, int | float):
            seen = True
            total += float(value) * (2 if op.endswith("fma") else 1)
    return total if seen else None


def kernel_rooflines(
    kernels: Iterable[Mapping[str, Any]],
    device_name: str | None,
    *,
    inductor: Mapping[str, KernelWork] | None = None,
    function_bytes: float | None = None,
) -> list[dict[str, Any]]:
    """Each kernel of a profile (the result's ``kernels``: device µs and calls per call of the
    function) against the device's peaks: per launch, its time, bytes/FLOPs and where they came
    from, achieved TB/s and TFLOP/s and the fractions, and its lens text. Bytes and FLOPs come
    from Inductor's launch metadata by kernel name, else — only for a function that launches
    exactly one kernel once — the function's tensor sizes (``function_bytes``: inputs read and
    result written). A kernel with neither is left out."""
    peaks = lookup_peaks(device_name)
    rows = [k for k in kernels if str(k.get("kind", "kernel")) == "kernel"]
    single = len(rows) == 1 and float(rows[0].get("calls") or 0) == 1.0
    out: list[dict[str, Any]] = []
    for k in rows:
        name = str(k.get("name", ""))
        calls = float(k.get("calls") or 0)
        if calls <= 0:
            continue
        per_launch_us = float(k.get("device_us") or 0) / calls
        work = (inductor or {}).get(name)
        if work is None:
            short = str(k.get("short_name") or "")
            work = (inductor or {}).get(short)
        if work is None and single and function_bytes:
            work = KernelWork(bytes=float(function_bytes), flops=None, source="tensors")
        if work is None:
            continue
        roof = achieved(per_launch_us, work, peaks)
        if roof is None:
            continue
        label = str(k.get("short_name") or name)
        roof.update(
            {
                "name": name,
                "short_name": label,
                "duration_us": per_launch_us,
                "calls": calls,
                "text": roofline_text(label, per_launch_us / 1000.0, roof),
            }
        )
        out.append(roof)
    return out


def work_from_ncu(kernel: Mapping[str, Any]) -> KernelWork | None:
    """What one launch profiled by Nsight Compute moved and computed: DRAM bytes read and
    written, FLOPs from its instruction counters (an ncu stage result's kernel row, with
    ``dram_bytes_read``, ``dram_bytes_write`` and ``flops``); ``None`` when ncu collected
    neither."""
    read, write = kernel.get("dram_bytes_read"), kernel.get("dram_bytes_write")
    moved = [float(v) for v in (read, write) if isinstance(v, int | float)]
    flops = kernel.get("flops")
    bytes_ = sum(moved) if moved else None
    flops_ = float(flops) if isinstance(flops, int | float) else None
    if not bytes_ and not flops_:
        return None
    return KernelWork(bytes=bytes_ or None, flops=flops_ or None, source="ncu")


def ncu_rooflines(
    kernels: Iterable[Mapping[str, Any]], device_name: str | None = None
) -> list[dict[str, Any]]:
    """Each kernel of an Nsight Compute run against the device's peaks (``source: "ncu"``):
    its launches (one row each in the report) taken together, per launch — ncu's own duration,
    DRAM bytes and FLOPs. The device is the report's (``device`` of a row), else
    ``device_name``. Kernels without bytes or FLOPs, or without a duration, are left out."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for k in kernels:
        groups.setdefault(str(k.get("demangled") or k.get("name") or ""), []).append(k)
    out: list[dict[str, Any]] = []
    for name, rows in groups.items():
        timed = [r for r in rows if isinstance(r.get("duration_us"), int | float)]
        works: list[tuple[Mapping[str, Any], KernelWork]] = []
        for r in timed:
            w = work_from_ncu(r)
            if w is not None:
                works.append((r, w))
        if not name or not works:
            continue
        calls = len(works)
        duration = sum(float(r["duration_us"]) for r, _ in works) / calls
        byte_rows = [w.bytes for _, w in works if w.bytes is not None]
        flop_rows = [w.flops for _, w in works if w.flops is not None]
        work = KernelWork(
            bytes=sum(byte_rows) / len(byte_rows) if byte_rows else None,
            flops=sum(flop_rows) / len(flop_rows) if flop_rows else None,
            source="ncu",
        )
        device = next((str(r["device"]) for r, _ in works if r.get("device")), device_name)
        math = next((str(r["math"]) for r, _ in works if r.get("math")), None)
        roof = achieved(duration, work, lookup_peaks(device), dtype=math)
        if roof is None:
            continue
        label = str(works[0][0].get("name") or name)
        roof.update(
            {
                "name": name,
                "short_name": label,
                "duration_us": duration,
                "calls": float(calls),
                "text": roofline_text(label, duration / 1000.0, roof),
            }
        )
        out.append(roof)
    return out


def _squeezed(name: str) -> str:
    return "".join(name.split())


def with_ncu_roofline(
    profile: Mapping[str, Any] | None, ncu: Mapping[str, Any] | None
) -> Mapping[str, Any] | None:
    """The profile with its ``roofline`` taken from Nsight Compute where ncu ran: each kernel
    the ncu run measured replaces the profile's entry of the same kernel (matched by full name,
    whitespace aside, else by short name), under the profile's kernel name so the hover and the
    Report find it on its line; kernels ncu did not measure keep theirs. Neither is modified."""
    roofs = (ncu or {}).get("roofline") or []
    if not profile or not roofs:
        return profile
    kernels = [k for k in profile.get("kernels") or [] if k.get("kind", "kernel") == "kernel"]
    by_full = {_squeezed(str(k.get("name", ""))): k for k in kernels}
    by_short: dict[str, list[Mapping[str, Any]]] = {}
    for k in kernels:
        by_short.setdefault(str(k.get("short_name") or ""), []).append(k)
    merged: dict[str, dict[str, Any]] = {
        str(r.get("name")): dict(r) for r in profile.get("roofline") or []
    }
    for roof in roofs:
        match = by_full.get(_squeezed(str(roof.get("name", ""))))
        if match is None:
            shorts = by_short.get(str(roof.get("short_name") or ""), [])
            match = shorts[0] if len(shorts) == 1 else None
        entry = dict(roof)
        if match is not None:
            entry["name"] = str(match.get("name"))
            entry["short_name"] = str(match.get("short_name") or entry["short_name"])
            entry["text"] = roofline_text(
                entry["short_name"], float(entry["duration_us"]) / 1000.0, entry
            )
        merged[entry["name"]] = entry
    return {**profile, "roofline": list(merged.values())}
