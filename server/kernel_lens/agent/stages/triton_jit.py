"""Triton's JIT cache, read after a real launch: the compiled kernel that ran (its ``asm``,
registers, spills, shared memory, warps, stages), the launch's specialisation, and what an
``@triton.autotune`` kernel chose.

The one module that knows how these look in each Triton version Kernel Lens meets (3.6 on the
GPU machines, 3.7.1 in development); every other module asks it. Nothing here imports triton at
import time: the functions take the objects a launch left behind (duck-typed, so a stand-in with
the same attributes is read the same way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PICKED_NOTE",
    "UNTIMED_NOTE",
    "LaunchedKernel",
    "autotune_info",
    "cached_kernels",
    "divisibility_attrs",
    "keep_untimed_autotune",
    "read_compiled",
    "specialize",
    "triton_version",
    "untimed_autotune",
]

#: What an autotuned kernel's choice says when its configs ran under Triton's interpreter.
UNTIMED_NOTE = (
    "Triton's interpreter: the configs were not benchmarked (no GPU); the first config that "
    "fits ran"
)
#: ... when a config was asked for.
PICKED_NOTE = "the config asked for ran (the configs were not benchmarked)"
_UNTIMED_FLAG = "_kernel_lens_untimed"

#: Stages of a compiled kernel's ``asm`` that are text.
TEXT_STAGES = ("ttir", "ttgir", "llir", "ptx")


def triton_version() -> tuple[int, int]:
    """``(major, minor)`` of the installed triton; ``(0, 0)`` without one."""
    try:
        import triton

        major, minor = str(triton.__version__).split(".")[:2]
        return int(major), int(minor)
    except Exception:
        return 0, 0


@dataclass
class LaunchedKernel:
    """What a compiled kernel of a real launch holds.

    Attributes:
        name: the kernel's symbol.
        arch: the compute capability it was compiled for (``90``), if known.
        asm: stage → text (``ttir``, ``ttgir``, ``llir``, ``ptx``).
        cubin: the binary that ran, if kept.
        registers: registers per thread (``n_regs``), known once the kernel was loaded.
        spill_bytes: local memory per thread (``n_spills``), likewise.
        shared_bytes: dynamic shared memory (``metadata.shared``).
        num_warps, num_stages: the options it was compiled with.
    """

    name: str
    arch: int | None
    asm: dict[str, str] = field(default_factory=dict)
    cubin: bytes | None = None
    registers: int | None = None
    spill_bytes: int | None = None
    shared_bytes: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    return None


def _arch(target: Any) -> int | None:
    """``metadata.target`` → compute capability: a ``GPUTarget`` (3.x), a dict (JSON) or an int."""
    if isinstance(target, dict):
        target = target.get("arch")
    else:
        target = getattr(target, "arch", target)
    if isinstance(target, str) and target.isdigit():
        return int(target)
    return _int(target)


def read_compiled(compiled: Any, *, load: bool = True) -> LaunchedKernel | None:
    """The fields of a ``CompiledKernel`` (or an object shaped like one); ``None`` when
    ``compiled`` is not a compiled kernel (the interpreter's launches return none).

    ``n_regs``/``n_spills`` exist only once the kernel was loaded on a device (``_init_handles``,
    which every launch does); with ``load`` a kernel not loaded yet is loaded here — only where a
    GPU is, since loading needs one.
    """
    if compiled is None:
        return None
    metadata = getattr(compiled, "metadata", None)
    raw_asm = getattr(compiled, "asm", None)
    if metadata is None or raw_asm is None:
        return None
    if isinstance(metadata, dict):  # some versions keep a dict; 3.x a namedtuple
        meta: dict[str, Any] = dict(metadata)
    else:
        meta = {k: getattr(metadata, k) for k in dir(metadata) if not k.startswith("_")}
    if load and getattr(compiled, "n_regs", None) is None and _has_gpu():
        init = getattr(compiled, "_init_handles", None)
        if callable(init):
            try:
                init()
            except Exception:  # out of resources on this device, say: the counts stay unknown
                pass
    asm: dict[str, str] = {}
    cubin: bytes | None = None
    for stage in TEXT_STAGES:
        try:
            text = raw_asm.get(stage)
        except Exception:
            text = None
        if isinstance(text, str):
            asm[stage] = text
    try:
        binary = raw_asm.get("cubin")
    except Exception:
        binary = None
    if isinstance(binary, bytes | bytearray):
        cubin = bytes(binary)
    return LaunchedKernel(
        name=str(meta.get("name") or getattr(compiled, "name", "") or ""),
        arch=_arch(meta.get("target")),
        asm=asm,
        cubin=cubin,
        registers=_int(getattr(compiled, "n_regs", None)),
        spill_bytes=_int(getattr(compiled, "n_spills", None)),
        shared_bytes=_int(meta.get("shared")),
        num_warps=_int(meta.get("num_warps")),
        num_stages=_int(meta.get("num_stages")),
    )


def _has_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def cached_kernels(jit_fn: Any) -> list[Any]:
    """Every compiled kernel in a ``JITFunction``'s cache, newest last: ``device_caches``
    (device → ``(kernel_cache, …)``, triton ≥ 3.2) or ``cache`` (device → ``{key: kernel}``)."""
    out: list[Any] = []
    caches = getattr(jit_fn, "device_caches", None)
    if isinstance(caches, dict):
        for entry in caches.values():
            kernel_cache = entry[0] if isinstance(entry, tuple) else entry
            if isinstance(kernel_cache, dict):
                out.extend(kernel_cache.values())
        return out
    legacy = getattr(jit_fn, "cache", None)
    if isinstance(legacy, dict):
        for per_device in legacy.values():
            if isinstance(per_device, dict):
                out.extend(per_device.values())
    return out


def specialize(value: Any, *, specialize_ints: bool = True) -> tuple[str | None, str | None]:
    """How Triton's JIT specialises one non-constexpr argument: ``(type, attr)`` where type is
    ``"constexpr"`` for an int equal to 1 and attr is ``"D"`` for a pointer or int divisible by
    16. Triton's own function where it has one (3.5+), the same rule otherwise."""
    try:
        from triton._C.libtriton import native_specialize_impl
        from triton.backends.compiler import BaseBackend

        kind, attr = native_specialize_impl(BaseBackend, value, False, specialize_ints, True)
        return (str(kind) if kind is not None else None), (attr if isinstance(attr, str) else None)
    except Exception:
        pass
    if isinstance(value, bool) or isinstance(value, float):
        return None, None
    if isinstance(value, int):
        if specialize_ints and value == 1:
            return "constexpr", None
        return None, "D" if specialize_ints and value % 16 == 0 else ""
    data_ptr = getattr(value, "data_ptr", None)
    if callable(data_ptr):
        try:
            return None, "D" if int(data_ptr()) % 16 == 0 else ""
        except Exception:
            return None, None
    return None, None


def divisibility_attrs(indices: list[int]) -> dict[tuple[int, ...], list[list[Any]]]:
    """``ASTSource``'s ``attrs`` for parameters divisible by 16 (by position), as the JIT passes
    them (``{(i,): [["tt.divisibility", 16]]}``)."""
    return {(i,): [["tt.divisibility", 16]] for i in indices}


def _config_text(config: Any) -> str:
    parts = [f"{k}={v}" for k, v in sorted((getattr(config, "kwargs", None) or {}).items())]
    for option in ("num_warps", "num_stages", "num_ctas"):
        value = getattr(config, option, None)
        if value is not None and not (option == "num_ctas" and value == 1):
            parts.append(f"{option}={value}")
    return ", ".join(parts)


def _ms(timing: Any) -> float | None:
    """One config's measured time: a float, or ``do_bench``'s quantiles (the first is the
    median)."""
    if isinstance(timing, list | tuple):
        timing = timing[0] if timing else None
    return float(timing) if isinstance(timing, int | float) else None


def autotune_info(autotuner: Any) -> dict[str, Any] | None:
    """What an ``Autotuner`` chose after a launch: ``{"chosen": text, "chosen_kwargs": {…},
    "configs": [{"config", "ms", "chosen"}]}`` (fastest first); ``None`` when it is not one or
    did not run."""
    best = getattr(autotuner, "best_config", None)
    if best is None or not hasattr(autotuner, "configs"):
        return None
    timings = getattr(autotuner, "configs_timings", None) or {}
    untimed = bool(getattr(autotuner, _UNTIMED_FLAG, False))
    rows: list[dict[str, Any]] = []
    if isinstance(timings, dict) and timings and not untimed:
        for config, timing in timings.items():
            rows.append(
                {
                    "config": _config_text(config),
                    "ms": _ms(timing),
                    "chosen": config is best,
                    "kwargs": config_kwargs(config),
                }
            )
        rows.sort(key=lambda r: (r["ms"] is None, r["ms"] or 0.0))
    elif untimed:  # not benchmarked: every config, in the order the kernel lists them
        for config in list(getattr(autotuner, "configs", None) or []):
            rows.append(
                {
                    "config": _config_text(config),
                    "ms": None,
                    "chosen": config is best,
                    "kwargs": config_kwargs(config),
                }
            )
    out: dict[str, Any] = {
        "chosen": _config_text(best),
        "chosen_kwargs": config_kwargs(best),
        "configs": rows,
    }
    if untimed:
        out["note"] = (
            PICKED_NOTE if getattr(autotuner, _UNTIMED_FLAG, None) == "picked" else UNTIMED_NOTE
        )
    return out


def config_kwargs(config: Any) -> dict[str, Any]:
    """A ``triton.Config``'s constexpr values with ``num_warps``/``num_stages`` (plain values)."""
    kwargs = dict(getattr(config, "kwargs", None) or {})
    for option in ("num_warps", "num_stages"):
        if getattr(config, option, None) is not None:
            kwargs[option] = getattr(config, option)
    return {k: v for k, v in kwargs.items() if isinstance(v, int | float | str)}


def _interpreted(fn: Any) -> bool:
    """Whether a kernel (under autotune/heuristics wrappers) runs in Triton's interpreter."""
    for _ in range(8):
        if type(fn).__name__ == "InterpretedFunction":
            return True
        inner = getattr(fn, "fn", None)
        if inner is None or inner is fn:
            return False
        fn = inner
    return False


def untimed_autotune(prefer: int | None = None) -> Any:
    """Make ``@triton.autotune`` work without a GPU: while the returned context is active,
    a kernel that runs in Triton's interpreter (or any, on a machine without CUDA) is not
    benchmarked — benchmarking asks the active driver for a timer, which the interpreter does
    not have ("0 active drivers") — and its first config that fits is chosen (the others are
    each "later" in the order the kernel lists them). The tuner is marked, so that
    :func:`autotune_info` says its configs were not timed. A GPU launch is benchmarked as
    usual. With ``prefer`` (a config's index in the kernel's list), that config is chosen
    wherever it fits, on a GPU too (nothing is benchmarked then): its launch is the real one,
    heuristics and all."""
    import contextlib

    @contextlib.contextmanager
    def patched() -> Any:
        try:
            from triton.runtime.autotuner import Autotuner
        except ImportError:  # pragma: no cover - no triton
            yield
            return
        original = Autotuner._bench

        def bench(self: Any, *args: Any, config: Any, **meta: Any) -> Any:
            gpu = _has_gpu() and not _interpreted(getattr(self, "fn", None))
            if gpu and prefer is None:
                return original(self, *args, config=config, **meta)
            setattr(self, _UNTIMED_FLAG, "picked" if prefer is not None else True)
            configs = list(getattr(self, "configs", None) or [])
            rank = float(configs.index(config)) if config in configs else float(len(configs))
            if prefer is not None:
                rank = -1.0 if rank == prefer else rank
            return [rank, rank, rank]

        Autotuner._bench = bench
        try:
            yield
        finally:
            Autotuner._bench = original

    return patched()


_KEPT: list[Any] = []


def keep_untimed_autotune() -> None:
    """:func:`untimed_autotune` for the rest of the process (an agent runs one job); once."""
    if not _KEPT:
        context = untimed_autotune()
        context.__enter__()
        _KEPT.append(context)
