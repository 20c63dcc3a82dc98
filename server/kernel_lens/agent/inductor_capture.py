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
(``graph_0_cpp_fused_add_gelu_mul_0``). Both switches change Inductor's cache key: the first
profiled run compiles afresh, later ones hit the cache (which keeps the provenance).

Private torch API, behind guards: a torch without it runs the same, its compiled code stays on the
line that called it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CompileCapture", "capture_compiled", "placed_graphs"]


@dataclass
class CompileCapture:
    """The graphs compiled (or loaded) while the capture was on.

    Attributes:
        graphs: per ``## Call CompiledFxGraph`` key, ``{"key", "source_code",
            "stack_traces": {handle: [trace…]}, "nodes": {handle: {"nodes", "aten"}}}`` (the
            input of :func:`kernel_lens.analysis.compiled_lines.compiled_graph`).
        installed: whether the hooks could be installed (this torch has them).
    """

    graphs: dict[str, dict[str, Any]] = field(default_factory=dict)
    installed: bool = False
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
    docstring); the kernel-profile and provenance switches are on inside it."""
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
        with inductor_config.patch(
            {"trace.provenance_tracking_level": 1, "cpp.enable_kernel_profile": True}
        ):
            yield capture
    finally:
        CompiledFxGraph.post_compile = post_compile  # type: ignore[method-assign]
        for module in hooked:
            module.set_kernel_post_grad_provenance_tracing = original_hook


def placed_graphs(capture: CompileCapture, files: list[str], roots: list[str]) -> dict[str, Any]:
    """The captured graphs with their kernels' lines as attribution keys
    (:func:`kernel_lens.analysis.compiled_lines.compiled_graphs`): a frame of one of ``files``
    (the run's files, the profiled one first) is that file's; a frame of another workspace file
    (under ``roots``) adds it to ``files``; any other file's frame (torch's) is passed over."""
    import os

    from kernel_lens.agent.stages.deep import is_workspace_file
    from kernel_lens.analysis.compiled_lines import compiled_graphs
    from kernel_lens.analysis.line_attribution import FILE_STRIDE

    if not capture.graphs:
        return {}
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

    return compiled_graphs(capture.graphs, line_key)
