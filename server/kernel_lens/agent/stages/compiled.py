"""Stage *compiled*: torch.compile the function, capture inductor's generated code, list its
kernels with the user's source lines each one fused, and measure eager vs compiled.

Kernel → source lines come from the graph, not from kernel names: what Inductor records of each
kernel's FX nodes (:mod:`kernel_lens.agent.inductor_capture`), placed by
:func:`kernel_lens.analysis.compiled_lines.called_kernels` — the same match the per-line
attribution makes of a profiled compiled run's events, so this view and the lenses agree. The
generated module is captured with ``run_and_get_code``. Private torch API behind guards: a torch
without the hooks still gives code and numbers.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from kernel_lens.agent.errors import ProfileError, format_exception, user_line_from_traceback
from kernel_lens.analysis.compiled_lines import CompiledGraph, called_kernels, compiled_graph
from kernel_lens.wire.paths import atomic_write, short_name, write_failure
from kernel_lens.wire.results import CompiledResult, GeneratedKernel, RunSummary

if TYPE_CHECKING:
    from kernel_lens.agent.inductor_capture import CompileCapture

__all__ = ["compile_and_compare", "generated_kernel", "user_lines"]

_KERNEL_DEF = re.compile(
    r"^(?P<name>(?:triton|cpp)_\w+)\s*=\s*async_compile\.(?P<kind>triton|cpp_pybinding|cpp)\("
)
_EXTERN_CALL = re.compile(r"^\s*(?:\w+\s*=\s*)?extern_kernels\.(?P<name>\w+)\(")
_KERNEL_CALL = re.compile(r"^\s*(?P<name>(?:triton|cpp)_\w+)(?:\.run)?\(")


@contextlib.contextmanager
def _fresh_compile() -> Iterator[None]:
    """Generate the code afresh (the graph caches off, as the capture has them where its torch
    has the hooks: :func:`~kernel_lens.agent.inductor_capture.no_graph_caches`; the kernels'
    builds reused) and keep each Triton kernel's compiled artifacts (PTX…) on its launcher.
    Inductor's ``force_disable_caches`` rebuilt every kernel and left a temporary folder behind
    per compile."""
    try:
        import torch._inductor.config as inductor_config
    except ImportError:
        yield
        return
    from kernel_lens.agent.inductor_capture import no_graph_caches

    with inductor_config.patch({"triton.store_cubin": True}), no_graph_caches():
        yield


def user_lines(keys: list[int]) -> list[int]:
    """The profiled file's lines among attribution keys (those of other files left out)."""
    from kernel_lens.analysis.line_attribution import split_line_key

    out: list[int] = []
    for key in keys:
        index, no = split_line_key(key)
        if index == 0 and no not in out:
            out.append(no)
    return sorted(out)


def _kernels_in_code(code: str) -> list[dict[str, Any]]:
    """Kernels defined and called in an inductor output module, in call order."""
    defined: dict[str, dict[str, Any]] = {}
    lines = code.splitlines()
    for no, line in enumerate(lines, 1):
        m = _KERNEL_DEF.match(line)
        if m:
            kind = "triton" if m.group("kind") == "triton" else "cpp"
            defined[m.group("name")] = {"name": m.group("name"), "kind": kind, "def_line": no}
    calls: list[dict[str, Any]] = []
    in_call = False
    for no, line in enumerate(lines, 1):
        if re.match(r"^\s+def call\(self, args\)|^def call\(args\)", line):
            in_call = True
            continue
        if in_call and re.match(r"^\S", line):
            in_call = False
        if not in_call:
            continue
        m = _KERNEL_CALL.match(line)
        if m and m.group("name") in defined:
            entry = dict(defined[m.group("name")])
            entry["call_line"] = no
            calls.append(entry)
            continue
        m = _EXTERN_CALL.match(line)
        if m:
            calls.append(
                {"name": f"extern_kernels.{m.group('name')}", "kind": "extern", "call_line": no}
            )
    return calls


@contextlib.contextmanager
def _capture_loaded_modules(store: list[Any]) -> Iterator[None]:
    """Record the modules inductor loads (its output code) while compiling."""
    try:
        from torch._inductor.codecache import PyCodeCache
    except ImportError:
        yield
        return
    original = PyCodeCache.__dict__.get("load_by_key_path")
    if not isinstance(original, classmethod):
        yield
        return

    def load_by_key_path(cls: Any, *args: Any, **kwargs: Any) -> Any:
        module = original.__func__(cls, *args, **kwargs)
        store.append(module)
        return module

    PyCodeCache.load_by_key_path = classmethod(load_by_key_path)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        PyCodeCache.load_by_key_path = original  # type: ignore[method-assign]


def _inductor_triton_asm(names: list[str], loaded: list[Any]) -> dict[str, dict[str, Any]]:
    """PTX of inductor's Triton kernels from the Triton cache (CUDA only; guarded internals).

    The kernels are ``CachingAutotuner`` globals of the compiled modules; a launcher's
    ``cache_hash`` names the cache folder that holds ``<kernel>.ptx`` (and .ttir, .ttgir, .llir).
    """
    from kernel_lens.analysis.asm_map import ptx_line_map

    found: dict[str, dict[str, Any]] = {}
    try:
        from torch._inductor.codecache import PyCodeCache
        from torch._inductor.runtime.cache_dir_utils import triton_cache_dir
    except ImportError:
        return found
    modules = list(loaded) + list(getattr(PyCodeCache, "modules", []))
    modules += list(getattr(PyCodeCache, "modules_no_attr", {}).values())
    for module in modules:
        for name, obj in list(vars(module).items()):
            if name not in names or name in found or not hasattr(obj, "launchers"):
                continue
            launchers = getattr(obj, "launchers", None) or []
            if not launchers:
                continue
            launcher = launchers[0]
            cache_hash = getattr(launcher, "cache_hash", None)
            folder = os.path.join(triton_cache_dir(0), cache_hash) if cache_hash else None
            entry: dict[str, Any] = {
                "cache_dir": folder,
                "registers": getattr(launcher, "n_regs", None),
                "spills": getattr(launcher, "n_spills", None),
                "config": str(getattr(launcher, "config", "")),
            }
            source_file = getattr(getattr(getattr(obj, "fn", None), "fn", None), "__code__", None)
            entry["source_path"] = source_file.co_filename if source_file else None
            binary_asm = getattr(getattr(launcher, "bin", None), "asm", None) or {}
            for stage in ("ttir", "ttgir", "llir", "ptx"):
                text = binary_asm.get(stage) if hasattr(binary_asm, "get") else None
                path = os.path.join(folder, f"{name}.{stage}") if folder else ""
                if isinstance(text, str):
                    entry[stage] = text
                elif path and os.path.exists(path):
                    with open(path, encoding="utf-8") as fh:
                        entry[stage] = fh.read()
            if "ptx" in entry and entry["source_path"]:
                entry["ptx_line_map"] = ptx_line_map(entry["ptx"], entry["source_path"]).to_json()
            found[name] = entry
    return found


def _count_device_work(fn: Callable[[], Any], device: str, runs: int = 3) -> float:
    """Kernels launched per call (CUDA: kernel events of the trace), or top-level ATen ops per
    call (CPU)."""
    import json
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        for _ in range(runs):
            fn()
        if device == "cuda":
            torch.cuda.synchronize()
    if device == "cuda":
        # Count the device's kernel events themselves: compiled code launches Triton kernels
        # outside any ATen op, where FunctionEvent.kernels may not see them.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.json")
            prof.export_chrome_trace(path)
            with open(path, encoding="utf-8") as fh:
                events = json.load(fh).get("traceEvents", [])
        return sum(1 for e in events if e.get("cat") == "kernel") / runs
    total = sum(
        1
        for e in prof.events()
        if e.name.startswith("aten::")
        and (e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::"))
    )
    return total / runs


def generated_kernel(k: Mapping[str, Any]) -> GeneratedKernel:
    """A kernel found in inductor's module (``name``, ``kind``, ``call_line``, ``lines``, and
    ``def_line`` / ``asm`` when known) as the result's JSON: ``def_line`` and ``asm`` only when
    known, ``def_line`` before ``call_line``."""
    kernel: GeneratedKernel = (
        {"name": k["name"], "kind": k["kind"], "call_line": k["call_line"], "lines": k["lines"]}
        if k.get("def_line") is None
        else {
            "name": k["name"],
            "kind": k["kind"],
            "def_line": k["def_line"],
            "call_line": k["call_line"],
            "lines": k["lines"],
        }
    )
    if k.get("asm") is not None:
        kernel["asm"] = k["asm"]
    return kernel


def _placed_graph(graphs: Mapping[str, Any], code: str, path: str) -> CompiledGraph | None:
    """The captured graph whose output code is ``code`` (else the first one compiled), its
    kernels placed on lines of ``path`` (and of other workspace files, left out later)."""
    from kernel_lens.agent.inductor_capture import line_keys
    from kernel_lens.agent.stages.deep import default_workspace

    raw = next((g for g in graphs.values() if g.get("source_code") == code), None)
    if raw is None:
        raw = next(iter(graphs.values()), None)
    if raw is None:
        return None
    line_key = line_keys([os.path.abspath(path)], [default_workspace(path)])
    return compiled_graph(raw, line_key)


def compile_and_compare(
    target: Any,
    *,
    device: str,
    timing_config: Any,
    cache_dir: str,
    capture: CompileCapture | None = None,
) -> CompiledResult:
    """torch.compile ``target``'s function, capture its code and compare it with eager.

    Args:
        target: the loaded :class:`~kernel_lens.agent.stages.target.Target`.
        device: ``cuda`` or ``cpu``.
        timing_config: the timing stage's config (same method for both sides).
        cache_dir: where to write the generated module (for the editor).
        capture: the run's capture of what Inductor compiles (one is made for the stage
            when ``None``).
    """
    loaded: list[Any] = []
    codes, graphs = _compile_capturing(target, capture, loaded)
    code = codes[0] if codes else ""
    code_path, code_error = _save_generated(code, cache_dir, target.info.qualname)
    kernels = _kernels_in_code(code)
    hooked = _place_kernels(kernels, graphs, code, target.path)
    if device == "cuda":
        asm = _inductor_triton_asm([k["name"] for k in kernels if k["kind"] == "triton"], loaded)
        for k in kernels:
            if k["name"] in asm:
                k["asm"] = asm[k["name"]]
    eager, compiled = _time_eager_and_compiled(target, device, timing_config, len(kernels))
    out: CompiledResult = {
        "backend": "inductor",
        "language": "triton" if device == "cuda" else "cpp",
        "code_path": code_path,
        "code": code,
        "provenance": hooked,
        "kernels": [generated_kernel(k) for k in kernels],
        "eager": eager,
        "compiled": compiled,
        "speedup": eager["median_ms"] / compiled["median_ms"]
        if compiled["median_ms"] > 0
        else None,
        "summary": _summary(kernels, eager, compiled),
    }
    if code_error:
        out["code_error"] = code_error
    return out


def _compile_capturing(
    target: Any, capture: CompileCapture | None, loaded: list[Any]
) -> tuple[list[str], dict[str, Any]]:
    """The function compiled afresh and run once: Inductor's output code (``run_and_get_code``)
    and the graphs it compiled; the modules it loaded go into ``loaded``.

    Raises:
        ProfileError: ``runtime``, torch.compile failed (on the user's line).
    """
    import torch
    from torch._inductor.utils import run_and_get_code

    from kernel_lens.agent.inductor_capture import CompileCapture, capture_compiled

    watching = (
        contextlib.nullcontext(capture)
        if capture is not None
        else capture_compiled(CompileCapture())
    )
    try:
        with watching as cap:
            before = set(cap.graphs)
            compiled_fn = torch.compile(target.fn)
            with (
                warnings.catch_warnings(),
                _fresh_compile(),
                _capture_loaded_modules(loaded),
            ):
                _, codes = run_and_get_code(compiled_fn, *target.args, **target.kwargs)
            graphs = {k: v for k, v in cap.graphs.items() if k not in before}
    except Exception as exc:
        raise ProfileError(
            "runtime",
            f"torch.compile failed: {type(exc).__name__}: {str(exc).splitlines()[0][:400]}",
            user_line_from_traceback(exc.__traceback__, target.path),
            format_exception(exc),
        ) from None
    return codes, graphs


def _save_generated(code: str, cache_dir: str, qualname: str) -> tuple[str | None, str | None]:
    """Write the generated module for the editor: ``(its path, None)``, or ``(None, why not)``."""
    digest = hashlib.sha1(code.encode()).hexdigest()[:10]
    code_path = os.path.join(cache_dir, short_name(f"{qualname}-{digest}.py"))
    try:  # Kernel Lens's own write: a full disk costs the file, not the stage (the code is kept)
        os.makedirs(cache_dir, exist_ok=True)
        atomic_write(str(code_path), code)
    except OSError as exc:
        return None, f"generated code not saved: {write_failure(exc)}"
    return code_path, None


def _place_kernels(
    kernels: list[dict[str, Any]], graphs: Mapping[str, Any], code: str, path: str
) -> bool:
    """Each kernel's user lines (``lines``), from the graph that made ``code``; whether any
    kernel was placed (the provenance hooks worked)."""
    placed = _placed_graph(graphs, code, path)
    hooked = placed is not None and any(
        kernel.lines for kernel in [*placed.kernels.values(), *(k for _, k in placed.externs)]
    )
    found = called_kernels(placed, [k["name"] for k in kernels]) if placed is not None else []
    for i, k in enumerate(kernels):
        kernel = found[i] if i < len(found) else None
        k["lines"] = user_lines(kernel.lines) if kernel is not None else []
    return bool(hooked)


def _time_eager_and_compiled(
    target: Any, device: str, timing_config: Any, generated_kernels: int
) -> tuple[RunSummary, RunSummary]:
    """Eager and compiled timed (the compiled one compiled again, with the default
    configuration), and the kernels each launches per call."""
    import torch

    from kernel_lens.agent.stages.timing import time_function

    eager_timing = time_function(target.call, device=device, config=timing_config)

    # Time a compile with the default configuration: the capture above ran with provenance
    # tracking, cubins kept and the graph caches off, which must not be what the numbers
    # measure (on an H200 it made the fused square 0.35 ms instead of do_bench's 0.19 ms).
    torch._dynamo.reset()
    timed_fn = torch.compile(target.fn)

    def call_compiled() -> Any:
        return timed_fn(*target.args, **target.kwargs)

    call_compiled()
    compiled_timing = time_function(call_compiled, device=device, config=timing_config)
    # CUDA: kernel launches seen by the profiler. CPU: top-level ATen ops eagerly (each is one
    # loop over memory) against the kernel calls of the generated module.
    eager_work = _count_device_work(target.call, device)
    compiled_work = (
        _count_device_work(call_compiled, device) if device == "cuda" else float(generated_kernels)
    )
    eager: RunSummary = {
        "median_ms": eager_timing.median_ms,
        "spread_pct": round(eager_timing.spread_pct, 3),
        "kernels": eager_work,
    }
    compiled: RunSummary = {
        "median_ms": compiled_timing.median_ms,
        "spread_pct": round(compiled_timing.spread_pct, 3),
        "kernels": compiled_work,
    }
    return eager, compiled


def _summary(kernels: list[dict[str, Any]], eager: RunSummary, compiled: RunSummary) -> str:
    """``lines 3–5 → 1 kernel (triton_…); 4 → 1 kernels per call, 0.120 → 0.040 ms``."""
    fused = [k for k in kernels if k["kind"] != "extern" and len(k["lines"]) > 1]
    summary_parts = [
        f"lines {k['lines'][0]}–{k['lines'][-1]} → 1 kernel ({k['name']})" for k in fused
    ]
    summary_parts.append(
        f"{eager['kernels']:g} → {compiled['kernels']:g} kernels per call, "
        f"{eager['median_ms']:.3f} → {compiled['median_ms']:.3f} ms"
    )
    return "; ".join(summary_parts)
