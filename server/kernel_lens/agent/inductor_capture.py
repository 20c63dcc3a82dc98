"""What Inductor records about the graphs it compiles while a profiled run runs.

A ``torch.compile``'d module's kernels are placed on the source lines of the FX nodes they fused
(:mod:`kernel_lens.analysis.compiled_lines`). The facts come from Inductor itself, for every
graph it compiles (forward, AOTAutograd's backward, inference) or loads from its cache:

- ``CompiledFxGraph.inductor_provenance_stack_traces_str``: per generated kernel (keyed
  ``<kernel>:<debug handle>``, extern calls ``extern_kernels.mm:<handle>``) the ``stack_trace``
  of each FX node it fused — the backward graph's nodes carry their forward's; set with
  ``config.trace.provenance_tracking_level = 1`` and kept in the FX graph cache with the graph;
- ``CompiledFxGraph._fx_graph_cache_key``: the key the profiler's ``## Call CompiledFxGraph <key>
  ##`` range names, which tells two graphs' ``cpp_fused_add_0`` apart;
- ``CompiledFxGraph.source_code``: the output module (the order of its extern calls, the
  ``Topologically Sorted Source Nodes`` comments);
- ``set_kernel_post_grad_provenance_tracing`` (wrapped while the run compiles): each kernel's
  post-grad FX nodes and their original ATen ops, for the hover.

On a CPU ``config.cpp.enable_kernel_profile`` makes each C++ kernel a profiler event of its own
(``graph_0_cpp_fused_add_gelu_mul_0``). Inductor's FX graph cache and AOTAutograd's cache are
off while the run compiles: a cached graph carries the stack traces (line numbers) of the source
it was first compiled from, wrong once an edit moved the lines, and a cache hit skips the code
generation that names each kernel's nodes. The profiled run compiles as on a fresh machine.

Private torch API, behind guards: a torch without it runs the same, its compiled code stays on the
line that called it.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CompileCapture",
    "add_compile_report",
    "capture_compiled",
    "line_keys",
    "no_graph_caches",
    "placed_graphs",
]


@dataclass
class CompileCapture:
    """The graphs compiled (or loaded) while the capture was on.

    Attributes:
        graphs: per ``## Call CompiledFxGraph`` key, ``{"key", "source_code",
            "stack_traces": {handle: [trace…]}, "nodes": {handle: {"nodes", "aten"}}}`` (the
            input of :func:`kernel_lens.analysis.compiled_lines.compiled_graph`).
        installed: whether the hooks could be installed (this torch has them).
        compiles: each compilation by Dynamo's compile id (``0/0``; a recompile ``0/1``):
            ``{"compile_id", "seconds", "backward_s", "graphs", "frames"}`` — ``frames`` the
            Python stack where Dynamo started it (innermost last), its lazy backward compile
            added to it.
        breaks: each graph break: ``{"reason", "frames"}`` (Dynamo's user stack).
        recompiles: each recompilation: ``{"compile_id", "reason"}`` (the guard that failed).
    """

    graphs: dict[str, dict[str, Any]] = field(default_factory=dict)
    installed: bool = False
    compiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    breaks: list[dict[str, Any]] = field(default_factory=list)
    recompiles: list[dict[str, Any]] = field(default_factory=list)
    _started: dict[str, float] = field(default_factory=dict)
    collect_breaks: Callable[[], None] = lambda: None
    _pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take_graph(self, graph: Any) -> None:
        """Keep what ``graph`` (a ``CompiledFxGraph``) says of its kernels."""
        key = getattr(graph, "_fx_graph_cache_key", None)
        raw = getattr(graph, "inductor_provenance_stack_traces_str", None)
        if not key or key in self.graphs:
            return
        import json

        try:
            traces = json.loads(raw) if raw else {}
        except ValueError:
            traces = {}
        with self._lock:
            # The nodes seen while this graph's kernels were generated (a fresh compile): the
            # handles are the graph's own (Inductor numbers them afresh per graph).
            pending = {h: v for h, v in self._pending.items() if h in traces}
            self._pending.clear()
        for entry in self.compiles.values():
            if entry.get("open"):
                entry["graphs"] += 1
        self.graphs[str(key)] = {
            "key": str(key),
            "source_code": str(getattr(graph, "source_code", "") or ""),
            "stack_traces": traces if isinstance(traces, dict) else {},
            "nodes": pending,
        }

    def take_nodes(self, handle: str, nodes: list[str], aten: list[str]) -> None:
        with self._lock:
            entry = self._pending.setdefault(handle, {"nodes": [], "aten": []})
            entry["nodes"].extend(n for n in nodes if n not in entry["nodes"])
            entry["aten"].extend(a for a in aten if a not in entry["aten"])


def _stack_frames() -> list[tuple[str, int]]:
    """``(file, line)`` of the calling Python stack, outermost first."""
    import sys

    frames: list[tuple[str, int]] = []
    frame = sys._getframe(2)
    while frame is not None and len(frames) < 200:
        frames.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back  # type: ignore[assignment]
    frames.reverse()
    return frames


@contextlib.contextmanager
def _watch_compiles(capture: CompileCapture) -> Iterator[None]:
    """Dynamo's compile callbacks (start and end of each compilation, by compile id), its
    graph-break reasons and its recompile reasons, while the block runs."""
    try:
        from torch._dynamo import utils as dynamo_utils
        from torch._dynamo.callback import callback_handler
    except ImportError:
        yield
        return

    def start(args: Any) -> None:
        cid = str(getattr(args, "compile_id", "") or "?")
        trigger = str(getattr(getattr(args, "callback_trigger", None), "name", ""))
        entry = capture.compiles.get(cid)
        if entry is None:
            entry = capture.compiles[cid] = {
                "compile_id": cid,
                "seconds": 0.0,
                "backward_s": 0.0,
                "graphs": 0,
                "frames": _stack_frames(),
            }
        entry["open"] = trigger
        capture._started[cid] = time.perf_counter()
        for recompile in capture.recompiles:
            recompile.setdefault("compile_id", cid)

    def end(args: Any) -> None:
        cid = str(getattr(args, "compile_id", "") or "?")
        entry = capture.compiles.get(cid)
        began = capture._started.pop(cid, None)
        if entry is None or began is None:
            return
        seconds = time.perf_counter() - began
        entry["seconds"] += seconds
        if entry.get("open") == "LAZY_BACKWARD":
            entry["backward_s"] += seconds
        entry["open"] = None

    reasons = getattr(dynamo_utils, "graph_break_reasons", None)
    seen = [len(reasons) if isinstance(reasons, list) else 0]

    def collect() -> None:
        """The graph breaks Dynamo noted since the last look."""
        if not isinstance(reasons, list):
            return
        for reason in reasons[seen[0] :]:
            stack = getattr(reason, "user_stack", None) or []
            capture.breaks.append(
                {
                    "reason": str(getattr(reason, "reason", "")),
                    "frames": [(f.filename, f.lineno) for f in stack],
                }
            )
        seen[0] = len(reasons)

    capture.collect_breaks = collect
    try:
        from torch._dynamo import convert_frame
    except ImportError:
        convert_frame = None  # type: ignore[assignment]
    why = getattr(convert_frame, "get_and_maybe_log_recompilation_reasons", None)

    def recompile_reasons(cache_entries: Any, frame: Any, *args: Any, **kwargs: Any) -> Any:
        found = why(cache_entries, frame, *args, **kwargs)  # type: ignore[misc]
        try:
            code = getattr(frame, "f_code", None)
            capture.recompiles.append(
                {
                    "reason": str(found[0]) if found else "",
                    "function": getattr(code, "co_name", ""),
                    "frames": [(code.co_filename, code.co_firstlineno)] if code else [],
                }
            )
        except Exception:
            pass
        return found

    if why is not None:
        convert_frame.get_and_maybe_log_recompilation_reasons = recompile_reasons  # type: ignore[union-attr]
    callback_handler.register_start_callback(start)
    callback_handler.register_end_callback(end)
    try:
        yield
    finally:
        # (torch._dynamo.reset(), the compiled stage's, clears the callbacks already)
        with contextlib.suppress(ValueError):
            callback_handler.remove_start_callback(start)
        with contextlib.suppress(ValueError):
            callback_handler.remove_end_callback(end)
        if why is not None:
            convert_frame.get_and_maybe_log_recompilation_reasons = why  # type: ignore[union-attr]
        for entry in capture.compiles.values():
            entry.pop("open", None)
        collect()
        capture.collect_breaks = lambda: None


@contextlib.contextmanager
def no_graph_caches() -> Iterator[None]:
    """Inductor's FX graph cache and AOTAutograd's off: a cached graph keeps the stack traces of
    the source it was compiled from (after an edit that moves lines, an import added above the
    model, the same graph hits the cache with the old line numbers), and a hit skips the code
    generation that names each kernel's nodes. The kernels' builds (a C++ kernel's shared
    object, a Triton kernel's cubin), keyed by their source, stay cached."""
    try:
        import torch._inductor.config as inductor_config
    except ImportError:
        yield
        return
    switches = {"fx_graph_cache": False, "fx_graph_remote_cache": False}
    with (
        inductor_config.patch({k: v for k, v in switches.items() if hasattr(inductor_config, k)}),
        _no_autograd_cache(),
    ):
        yield


@contextlib.contextmanager
def _no_autograd_cache() -> Iterator[None]:
    """AOTAutograd's cache off (it stores compiled graphs too, with their old stack traces)."""
    try:
        import torch._functorch.config as functorch_config
    except ImportError:
        yield
        return
    if not hasattr(functorch_config, "enable_autograd_cache"):
        yield
        return
    with functorch_config.patch({"enable_autograd_cache": False}):
        yield


def _origins(node_schedule: Any) -> list[Any]:
    """The post-grad FX nodes a kernel was generated from (fused nodes, or an extern's)."""
    found: list[Any] = []
    items = node_schedule if isinstance(node_schedule, list) else [node_schedule]
    for item in items:
        node = getattr(item, "node", item)
        origin = getattr(node, "origin_node", None) if node is item else None
        origins = [origin] if origin is not None else list(getattr(node, "origins", None) or [])
        for o in origins:
            if o not in found:
                found.append(o)
    return found


def _aten_name(node: Any) -> str | None:
    target = getattr(node, "meta", {}).get("original_aten") or getattr(node, "target", None)
    name = getattr(target, "_name", None) or getattr(target, "__name__", None)
    if not isinstance(name, str) or "::" not in name and "." not in name:
        return None
    # aten::add.Tensor → aten.add (as Inductor's comments write them)
    base = name.replace("::", ".").split(".")
    return ".".join(base[:2])


@contextlib.contextmanager
def capture_compiled(capture: CompileCapture) -> Iterator[CompileCapture]:
    """Record what Inductor says about the graphs compiled inside the block (see the module
    docstring); the kernel-profile and provenance switches are on inside it.

    Dynamo and Inductor take seconds to import: a run that never calls ``torch.compile`` must
    not pay for them. So unless they are imported already, the hooks go in at the block's first
    ``torch.compile(...)`` (``nn.Module.compile`` and the decorator go through it too), before
    anything is compiled (that happens at the compiled code's first call)."""
    import sys

    import torch

    with contextlib.ExitStack() as stack:
        if "torch._inductor.output_code" in sys.modules:
            stack.enter_context(_installed(capture))
            yield capture
            return
        original = torch.compile

        @functools.wraps(original)
        def compile_hooked(*args: Any, **kwargs: Any) -> Any:
            if not capture.installed:
                torch.compile = original  # type: ignore[assignment]
                stack.enter_context(_installed(capture))
            return original(*args, **kwargs)

        torch.compile = compile_hooked  # type: ignore[assignment]
        try:
            yield capture
        finally:
            if torch.compile is compile_hooked:
                torch.compile = original  # type: ignore[assignment]


@contextlib.contextmanager
def _installed(capture: CompileCapture) -> Iterator[CompileCapture]:
    """The hooks and switches of :func:`capture_compiled`, in place for the block."""
    try:
        import torch._inductor.config as inductor_config
        from torch._inductor import debug
        from torch._inductor.output_code import CompiledFxGraph
    except ImportError:
        yield capture
        return
    post_compile = CompiledFxGraph.__dict__.get("post_compile")
    original_hook = getattr(debug, "set_kernel_post_grad_provenance_tracing", None)
    if post_compile is None:
        yield capture
        return

    def patched_post_compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            if not getattr(self, "_fx_graph_cache_key", None):
                # No cache, no key: the profiler's range would be ``## Call CompiledFxGraph
                # None ##`` for every graph; a key of our own tells them apart.
                self._fx_graph_cache_key = f"kernel-lens-{len(capture.graphs) + 1}"
            capture.take_graph(self)
        except Exception:  # a capture that fails costs the placement, never the run
            pass
        return post_compile(self, *args, **kwargs)

    def hook(node_schedule: Any, kernel_name: str, *args: Any, **kwargs: Any) -> Any:
        handle = original_hook(node_schedule, kernel_name, *args, **kwargs)  # type: ignore[misc]
        if handle is not None:
            try:
                origins = _origins(node_schedule)
                capture.take_nodes(
                    f"{kernel_name}:{handle}",
                    [str(o.name) for o in origins if getattr(o, "name", None)],
                    [a for a in (_aten_name(o) for o in origins) if a],
                )
            except Exception:
                pass
        return handle

    hooked: list[Any] = []
    if original_hook is not None:
        for name in (
            "torch._inductor.debug",
            "torch._inductor.codegen.triton",
            "torch._inductor.codegen.cpp",
        ):
            with contextlib.suppress(ImportError):
                module = __import__(name, fromlist=["_"])
                if (
                    getattr(module, "set_kernel_post_grad_provenance_tracing", None)
                    is original_hook
                ):
                    hooked.append(module)
    CompiledFxGraph.post_compile = patched_post_compile  # type: ignore[method-assign]
    for module in hooked:
        module.set_kernel_post_grad_provenance_tracing = hook
    capture.installed = True
    try:
        with (
            inductor_config.patch(
                {"trace.provenance_tracking_level": 1, "cpp.enable_kernel_profile": True}
            ),
            no_graph_caches(),
            _watch_compiles(capture),
        ):
            yield capture
    finally:
        CompiledFxGraph.post_compile = post_compile  # type: ignore[method-assign]
        for module in hooked:
            module.set_kernel_post_grad_provenance_tracing = original_hook


def line_keys(files: list[str], roots: list[str]) -> Callable[[str, int], int | None]:
    """The attribution key of a ``(file, line)`` of a compiled graph's stack traces: a frame of
    one of ``files`` (the run's, the profiled one first) is that file's; a frame of another
    workspace file (under ``roots``) adds it to ``files``; any other file's (torch's) is
    ``None``."""
    import os

    from kernel_lens.agent.stages.deep import is_workspace_file
    from kernel_lens.analysis.line_attribution import FILE_STRIDE

    index: dict[str, int | None] = {os.path.realpath(f): i for i, f in enumerate(files)}

    def line_key(file: str, line: int) -> int | None:
        real = os.path.realpath(file) if not file.startswith("<") else file
        if real not in index:
            if is_workspace_file(file, roots):
                index[real] = len(files)
                files.append(os.path.abspath(file))
            else:
                index[real] = None
        found = index[real]
        return None if found is None else found * FILE_STRIDE + line

    return line_key


def placed_graphs(
    capture: CompileCapture, line_key: Callable[[str, int], int | None]
) -> dict[str, Any]:
    """The captured graphs with their kernels' lines as attribution keys
    (:func:`kernel_lens.analysis.compiled_lines.compiled_graphs`)."""
    from kernel_lens.analysis.compiled_lines import compiled_graphs

    return compiled_graphs(capture.graphs, line_key) if capture.graphs else {}


def add_compile_report(
    out: dict[str, Any],
    capture: CompileCapture,
    line_key: Callable[[str, int], int | None],
    files: list[str],
) -> None:
    """Compilation said apart (:func:`kernel_lens.analysis.compiled_lines.compile_report`) into
    a result's parts ``out`` (``lines``, ``files``): each line that started a compilation gets
    ``compile``; the result gets ``compile`` (with ``graph_breaks`` on their lines) and a note
    per graph break."""
    from kernel_lens.analysis.compiled_lines import break_reason, compile_report
    from kernel_lens.analysis.line_attribution import split_line_key

    capture.collect_breaks()
    if not capture.compiles and not capture.breaks:
        return
    per_line, summary = compile_report(
        capture.compiles, capture.breaks, capture.recompiles, line_key
    )

    def where(key: int | None) -> dict[str, Any]:
        if key is None:
            return {"line": None}
        index, no = split_line_key(key)
        return (
            {"line": no}
            if index == 0 or index >= len(files)
            else {"path": files[index], "line": no}
        )

    def row_of(key: int) -> dict[str, Any] | None:
        index, no = split_line_key(key)
        rows = out.get("lines") if index == 0 else (out.get("files") or {}).get(files[index])
        return next((r for r in rows or [] if r.get("line") == no), None)

    for key, info in per_line.items():
        row = row_of(key)
        if row is not None:
            row["compile"] = info
    for entry in summary["compiles"]:
        entry.update(where(entry.pop("key")))
    for item in summary["graph_breaks"]:
        item.update(where(item.pop("key")))
        note = {k: v for k, v in item.items() if k in ("line", "path")}
        note["message"] = f"torch.compile graph break: {break_reason(item['reason'])}"
        note["kind"] = "graph-break"
        out.setdefault("notes", []).append(note)
    out["compile"] = summary
