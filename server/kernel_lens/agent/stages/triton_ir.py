"""Stage *triton_ir*: every ``@triton.jit`` kernel of a file, compiled to TTIR, TTGIR, LLIR, PTX
and SASS for a GPU architecture — ahead of time, so it works without a GPU — with registers,
spills, shared memory and the source ↔ assembly line maps.

Argument types come from a real launch: the function that launches the kernel (found in the file's
text by ``kernel[grid](…)``, with its inputs as for profiling) is called once while Triton's
``run`` is intercepted (on a CPU machine under ``TRITON_INTERPRET=1``), so the kernel is compiled
for the dtypes and ``constexpr`` values it really runs with. Uses triton internals
(``ASTSource``, ``triton.compile``, ``knobs``): kept in this one module.
"""

from __future__ import annotations

import ast
import inspect
import os
import subprocess
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.agent.usercode import compile_text, main_module, parse_source, read_source
from kernel_lens.analysis.asm_map import line_map, parse_ptxas_info

__all__ = ["AsmResult", "LaunchSpec", "STAGES", "compile_file_kernels", "find_kernels"]

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
_DTYPES = {
    "float32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}


@dataclass
class LaunchSpec:
    """How a kernel was launched: Triton signature types, constexpr values, options."""

    signature: dict[str, str]
    constexprs: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    launcher: str | None = None
    types_from: str = "launch"
    """``launch`` (a real launch), ``text`` (read from the source) or ``user`` (picked)."""
    types_note: str | None = None
    assumed: dict[str, str] = field(default_factory=dict)
    """Read from the text: parameter → what was assumed for it."""
    why_text: str | None = None
    """Read from the text: why the launch could not run."""
    divisible: list[str] = field(default_factory=list)
    """Parameters the launch's values made divisible by 16 (pointers and ints), as Triton's JIT
    specialises them: an ahead-of-time compile passes the same ``tt.divisibility`` hints."""
    compiled: Any = None
    """The launch's own ``CompiledKernel`` (a GPU launch; the interpreter compiles none)."""
    autotune: dict[str, Any] | None = None
    """An ``@triton.autotune`` kernel's choice and each config's time
    (:func:`triton_jit.autotune_info`)."""


@dataclass
class AsmResult:
    """One kernel compiled for one architecture.

    Attributes:
        kernel: the kernel's name.
        def_line: 1-based line of its ``def``.
        arch: compute capability (``90`` = sm_90).
        asm: stage name → text (``ttir``, ``ttgir``, ``llir``, ``ptx``, ``sass``).
        line_maps: stage name → ``[{"source_line", "asm_lines"}]``.
        resources: registers, spill stores/loads, shared memory bytes (from ``ptxas -v``).
        launch: the launch it was compiled for.
        compiled_from: ``launch`` (the launch's own compiled kernel, from Triton's JIT cache)
            or ``ahead_of_time`` (compiled again here for ``arch``: no GPU launch to read).
        compiled_note: why it was compiled ahead of time, if it was.
    """

    kernel: str
    def_line: int
    arch: int
    asm: dict[str, str]
    line_maps: dict[str, list[dict[str, Any]]]
    resources: dict[str, Any]
    launch: LaunchSpec
    warnings: list[str] = field(default_factory=list)
    compiled_from: str = "ahead_of_time"
    compiled_note: str | None = None

    def to_json(self, stage: str | None = None) -> dict[str, Any]:
        """JSON; with ``stage``, ``asm`` and ``line_map`` hold that stage only."""
        out: dict[str, Any] = {
            "kernel": self.kernel,
            "def_line": self.def_line,
            "arch": f"sm_{self.arch}",
            "registers": self.resources.get("registers"),
            "spills": self.resources["spill_bytes"]
            if self.resources.get("spill_bytes") is not None
            else (self.resources.get("spill_stores") or 0)
            + (self.resources.get("spill_loads") or 0),
            "shared_bytes": self.resources.get("shared_bytes"),
            "num_warps": self.resources.get("num_warps"),
            "num_stages": self.resources.get("num_stages"),
            "compiled_from": self.compiled_from,
            "compiled_note": self.compiled_note,
            "autotune": self.launch.autotune,
            "divisible": list(self.launch.divisible),
            "resources": self.resources,
            "signature": self.launch.signature,
            "constexprs": {k: _jsonable(v) for k, v in self.launch.constexprs.items()},
            "options": self.launch.options,
            "launcher": self.launch.launcher,
            "warnings": self.warnings,
            "types_from": self.launch.types_from,
            "types_note": self.launch.types_note,
        }
        if stage is not None:
            out["stage"] = stage
            out["asm"] = self.asm.get(stage, "")
            out["line_map"] = self.line_maps.get(stage, [])
        else:
            out["asm"] = self.asm
            out["line_maps"] = self.line_maps
        return out


def _jsonable(value: Any) -> Any:
    return value if isinstance(value, int | float | str | bool) or value is None else repr(value)


def _is_kernel(obj: Any) -> bool:
    cls = type(obj).__name__
    return cls in ("JITFunction", "InterpretedFunction") and callable(getattr(obj, "fn", None))


def _unwrap(obj: Any) -> Any:
    """The ``@triton.jit`` function under ``@triton.autotune`` / ``@triton.heuristics``."""
    for _ in range(8):
        if _is_kernel(obj) or getattr(obj, "fn", None) is None:
            return obj
        obj = obj.fn
    return obj


def find_kernels(module: types.ModuleType) -> dict[str, Any]:
    """The ``@triton.jit`` kernels defined in ``module`` (not imported ones), by name; an
    autotuned kernel by its jit function."""
    path = getattr(module, "__file__", None)
    out: dict[str, Any] = {}
    for name, obj in vars(module).items():
        kernel = _unwrap(obj)
        if _is_kernel(kernel) and getattr(kernel.fn, "__code__", None) is not None:
            if kernel.fn.__code__.co_filename == path:
                out[name] = kernel
    return out


def _launches(node: ast.AST, kernel: str) -> bool:
    """Whether ``node`` holds a launch ``kernel[grid](…)``."""
    return any(
        isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Subscript)
        and isinstance(sub.func.value, ast.Name)
        and sub.func.value.id == kernel
        for sub in ast.walk(node)
    )


def launchers_in_text(text: str, kernel: str) -> list[str]:
    """Qualified names of the functions whose body contains ``kernel[...](...)``."""
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if _launches(node, kernel):
                    found.append(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(text).body, "")
    return found


def _type_of(value: Any) -> str:
    dtype = getattr(value, "dtype", None)
    if dtype is not None and hasattr(value, "data_ptr"):
        name = str(dtype).replace("torch.", "")
        return "*" + _DTYPES.get(name, "fp32")
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    return "constexpr"


def _param_names(kernel: Any) -> tuple[list[str], set[str]]:
    sig = inspect.signature(kernel.fn)
    names = list(sig.parameters)
    constexpr = {
        n for n, p in sig.parameters.items() if "constexpr" in str(getattr(p, "annotation", ""))
    }
    return names, constexpr


def spec_from_call(kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> LaunchSpec:
    """The Triton signature of one ``run(*args, **kwargs)`` call of ``kernel``."""
    names, constexpr = _param_names(kernel)
    options: dict[str, Any] = {
        k: kwargs[k] for k in ("num_warps", "num_stages", "num_ctas") if k in kwargs
    }
    bound: dict[str, Any] = dict(zip(names, args, strict=False))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    sig_params = inspect.signature(kernel.fn).parameters
    for n in names:
        if n not in bound and sig_params[n].default is not inspect.Parameter.empty:
            bound[n] = sig_params[n].default
    from kernel_lens.agent.stages.triton_jit import specialize

    no_spec = _do_not_specialize(kernel)
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    divisible: list[str] = []
    for n in names:
        value = bound.get(n)
        if n in constexpr or value is None:
            signature[n] = "constexpr"
            constexprs[n] = value
            continue
        signature[n] = _type_of(value)
        # As Triton's JIT specialises the launch: an int equal to 1 becomes a constexpr, and
        # pointers/ints divisible by 16 carry that hint (vector loads, fewer registers).
        kind, attr = specialize(value, specialize_ints=n not in no_spec)
        if kind == "constexpr" and isinstance(value, int) and not isinstance(value, bool):
            signature[n] = "constexpr"
            constexprs[n] = value
        elif attr == "D":
            divisible.append(n)
    return LaunchSpec(
        signature=signature, constexprs=constexprs, options=options, divisible=divisible
    )


def _do_not_specialize(kernel: Any) -> set[str]:
    """Parameters the kernel asked Triton not to specialise (``do_not_specialize``)."""
    names: set[str] = set()
    for param in getattr(kernel, "params", None) or []:
        if getattr(param, "do_not_specialize", False):
            names.add(str(getattr(param, "name", "")))
    return names


class _StopScript(BaseException):
    """Raised at a kernel's first launch when a whole script ran only to find it."""


def launched_at_module_level(text: str, kernel: str) -> bool:
    """Whether module-level code (the ``__main__`` block's included) has ``kernel[grid](…)``."""
    return any(
        _launches(node, kernel)
        for node in ast.parse(text).body
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    )


def _launch_from_script(path: str, text: str, name: str) -> tuple[LaunchSpec, dict[str, Any]]:
    """Run the file as ``__main__`` up to ``name``'s first launch (which does not run): the
    launch's types and the module's kernels. The rest of the script never runs."""
    from kernel_lens.agent.errors import format_exception, user_line_from_traceback

    code = compile_text(path, text)
    captured: dict[str, LaunchSpec] = {}
    calls: dict[str, list[LaunchSpec]] = {}
    failure: BaseException | None = None
    with main_module(path) as module, _intercept_runs(captured, stop_at=name, calls=calls):
        try:
            exec(code, module.__dict__)
        except _StopScript:
            pass
        except BaseException as exc:  # the script's own ending, whatever it is
            failure = exc
    if name in captured:
        _chosen_launch(module.__dict__.get(name), name, captured, calls)
        return captured[name], find_kernels(module)
    if failure is not None:
        raise ProfileError(
            "runtime",
            f"the script raised {type(failure).__name__}: {failure} before launching {name}",
            user_line_from_traceback(failure.__traceback__, path),
            format_exception(failure),
        )
    raise ProfileError("not-found", f"the script ran to its end without launching {name}")


@contextmanager
def _intercept_runs(
    captured: dict[str, LaunchSpec],
    *,
    stop_at: str | None = None,
    calls: dict[str, list[LaunchSpec]] | None = None,
) -> Iterator[None]:
    """Record the first launch of each kernel (and, in ``calls``, every launch), then let it run
    as usual; a GPU launch's own compiled kernel (what ``JITFunction.run`` returns) is kept on
    its spec. For ``stop_at``, stop the script at that kernel's first launch
    (:class:`_StopScript`): before it under the interpreter, right after it on a GPU (so that
    its compiled kernel is read), after the autotuner's choice for an autotuned kernel."""
    from triton.runtime import jit as jit_mod

    classes: list[Any] = [jit_mod.JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:  # pragma: no cover - older triton
        pass
    originals = {cls: cls.run for cls in classes}
    tuners = 0  # depth of Autotuner.run calls: a launch inside one is a config's benchmark

    def make(original: Any, interpreted: bool) -> Any:
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            name = getattr(self.fn, "__name__", "")
            spec: LaunchSpec | None = None
            try:
                spec = spec_from_call(self, args, kwargs)
            except Exception:  # never break the user's launch for our bookkeeping
                pass
            if spec is not None and name not in captured:
                captured[name] = spec
            stop = stop_at is not None and name == stop_at and name in captured
            if stop and (interpreted or not _has_gpu()):
                raise _StopScript
            result = original(self, *args, **kwargs)
            if spec is not None and not interpreted:
                spec.compiled = result
                if calls is not None:
                    calls.setdefault(name, []).append(spec)
            if stop and tuners == 0:
                raise _StopScript
            return result

        return run

    tuner_cls: Any = None
    try:
        from triton.runtime.autotuner import Autotuner

        tuner_cls = Autotuner
    except ImportError:  # pragma: no cover - older triton
        pass
    tuner_run: Any = tuner_cls.run if tuner_cls is not None else None

    def tuned(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal tuners
        tuners += 1
        try:
            result = tuner_run(self, *args, **kwargs)
        finally:
            tuners -= 1
        name = getattr(getattr(self, "base_fn", None), "__name__", "")
        if stop_at is not None and name == stop_at and name in captured and tuners == 0:
            raise _StopScript
        return result

    try:
        for cls, original in originals.items():
            cls.run = make(original, cls is not jit_mod.JITFunction)
        if tuner_cls is not None:
            tuner_cls.run = tuned
        yield
    finally:
        for cls, original in originals.items():
            cls.run = original
        if tuner_cls is not None:
            tuner_cls.run = tuner_run


def _has_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


def _chosen_launch(
    obj: Any, name: str, captured: dict[str, LaunchSpec], calls: dict[str, list[LaunchSpec]]
) -> None:
    """For an ``@triton.autotune`` kernel, put the launch with the chosen config (the last one
    that matches it) in ``captured`` instead of the first benchmark's, and note the choice."""
    from kernel_lens.agent.stages.triton_jit import autotune_info

    tuner = obj
    for _ in range(8):  # @triton.heuristics over @triton.autotune, say
        if tuner is None or hasattr(tuner, "best_config"):
            break
        tuner = getattr(tuner, "fn", None)
    info = autotune_info(tuner) if tuner is not None else None
    if info is None or name not in captured:
        return
    chosen = info["chosen_kwargs"]
    for spec in reversed(calls.get(name, [])):
        values = {**spec.constexprs, **spec.options}
        if all(values.get(k, v) == v for k, v in chosen.items()):
            spec.launcher = captured[name].launcher
            captured[name] = spec
            break
    captured[name].autotune = info


def _tool(name: str) -> str | None:
    try:
        from triton import knobs

        tool = getattr(knobs.nvidia, name)
        return str(tool.path)
    except Exception:
        return None


def _ptxas_resources(ptx: str, arch: int) -> tuple[dict[str, Any], str | None]:
    ptxas = _tool("ptxas")
    if ptxas is None:
        return {}, "ptxas not found: registers and spills unknown"
    suffix = "a" if arch >= 90 else ""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(ptx)
        proc = subprocess.run(
            [ptxas, f"-arch=sm_{arch}{suffix}", "-v", src, "-o", os.path.join(tmp, "k.cubin")],
            capture_output=True,
            text=True,
            timeout=120,
        )
    if proc.returncode != 0:
        return {}, f"ptxas failed: {proc.stderr.strip()[:300]}"
    return parse_ptxas_info(proc.stdout + proc.stderr), None


def _sass_with_lines(cubin: bytes) -> str | None:
    nvdisasm = _tool("nvdisasm")
    if nvdisasm is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.cubin")
        with open(path, "wb") as fh:
            fh.write(cubin)
        proc = subprocess.run(
            [nvdisasm, "-g", "-c", path], capture_output=True, text=True, timeout=120
        )
    return proc.stdout if proc.returncode == 0 and proc.stdout.strip() else None


def compile_kernel(kernel: Any, spec: LaunchSpec, *, arch: int, path: str) -> AsmResult:
    """Compile ``kernel`` ahead of time for ``sm_<arch>`` with ``spec``'s types."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    from kernel_lens.agent.stages.triton_jit import divisibility_attrs

    fn = kernel.fn
    jit = kernel if type(kernel).__name__ == "JITFunction" else JITFunction(fn)
    order = list(spec.signature)
    attrs = divisibility_attrs([order.index(n) for n in spec.divisible if n in order])
    source = ASTSource(
        fn=jit, signature=dict(spec.signature), constexprs=dict(spec.constexprs), attrs=attrs
    )
    options = {k: v for k, v in spec.options.items() if k in ("num_warps", "num_stages")}
    compiled = triton.compile(source, target=GPUTarget("cuda", arch, 32), options=options)
    asm: dict[str, str] = {}
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        text = compiled.asm.get(stage)
        if isinstance(text, str):
            asm[stage] = text
    warnings: list[str] = []
    cubin = compiled.asm.get("cubin")
    if isinstance(cubin, bytes | bytearray):
        sass = _sass_with_lines(bytes(cubin))
        if sass is None:
            warnings.append("nvdisasm not available: no SASS")
        else:
            asm["sass"] = sass
    resources, warning = _ptxas_resources(asm.get("ptx", ""), arch)
    if warning:
        warnings.append(warning)
    if resources.get("shared_bytes") is None:
        resources["shared_bytes"] = getattr(compiled.metadata, "shared", None)
    resources["num_warps"] = getattr(compiled.metadata, "num_warps", None)
    resources["num_stages"] = getattr(compiled.metadata, "num_stages", None)
    maps = {stage: line_map(stage, text, path).to_json() for stage, text in asm.items()}
    return AsmResult(
        kernel=fn.__name__,
        def_line=fn.__code__.co_firstlineno,
        arch=arch,
        asm=asm,
        line_maps=maps,
        resources=resources,
        launch=spec,
        warnings=warnings,
    )


def result_from_launch(kernel: Any, spec: LaunchSpec, *, path: str) -> AsmResult | None:
    """The launch's own compiled kernel (Triton's JIT cache of the real launch) as a result:
    its TTIR…PTX, its SASS (``nvdisasm`` of the cubin that ran), and registers, spills and
    shared memory as the driver loaded it. ``None`` when the launch left no compiled kernel."""
    from kernel_lens.agent.stages.triton_jit import read_compiled

    launched = read_compiled(spec.compiled)
    if launched is None or not launched.asm:
        return None
    asm = dict(launched.asm)
    warnings: list[str] = []
    if launched.cubin is not None:
        sass = _sass_with_lines(launched.cubin)
        if sass is None:
            warnings.append("nvdisasm not available: no SASS")
        else:
            asm["sass"] = sass
    resources: dict[str, Any] = {
        "registers": launched.registers,
        "spill_bytes": launched.spill_bytes or 0,
        "shared_bytes": launched.shared_bytes,
        "num_warps": launched.num_warps,
        "num_stages": launched.num_stages,
    }
    if launched.registers is None:
        warnings.append("the launch's kernel was not loaded on a device: registers unknown")
    fn = kernel.fn
    return AsmResult(
        kernel=fn.__name__,
        def_line=fn.__code__.co_firstlineno,
        arch=launched.arch or default_arch(),
        asm=asm,
        line_maps={stage: line_map(stage, text, path).to_json() for stage, text in asm.items()},
        resources=resources,
        launch=spec,
        warnings=warnings,
        compiled_from="launch",
    )


def aot_note(arch: int, why: str) -> str:
    """The label of a kernel compiled again here instead of read from its launch."""
    return f"compiled ahead of time for sm_{arch}, not the launch ({why})"


def _aot_reason(spec: LaunchSpec, arch: int, asked_arch: int | None, overrides: bool) -> str:
    """Why the launch's own compiled kernel is not the one shown."""
    if overrides:
        return "argument types picked"
    if spec.types_from == "text":
        return "the launch could not run here"
    compiled_arch = None
    if spec.compiled is not None:
        from kernel_lens.agent.stages.triton_jit import read_compiled

        launched = read_compiled(spec.compiled, load=False)
        compiled_arch = launched.arch if launched is not None else None
    if asked_arch is not None and compiled_arch is not None and compiled_arch != arch:
        return f"the launch ran on sm_{compiled_arch}"
    if not _has_gpu():
        return "no GPU: the launch ran in Triton's interpreter"
    return "the launch left no compiled kernel"


def default_arch() -> int:
    """The current GPU's compute capability (``90``), else 90 (Hopper)."""
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return int(major) * 10 + int(minor)
    except Exception:
        pass
    return 90


def compile_file_kernels(
    path: str,
    text: str | None = None,
    *,
    kernel: str | None = None,
    arch: int | None = None,
    overrides: dict[str, str] | None = None,
) -> list[AsmResult]:
    """Compile the kernels of a file (or the one named ``kernel``) for ``sm_<arch>``.

    The argument types are those of a real launch; when the launch cannot run here (a GPU-only
    launcher on a CPU machine, say) they are read from the launch's text
    (:mod:`triton_static`), and ``overrides`` (the user's picks) go over either.

    Raises:
        ProfileError: no kernels, no launch at all, or a compile error (with its line).
    """
    path = os.path.abspath(path)
    if text is None:
        text = read_source(path)
    requested_arch = arch
    arch = arch or default_arch()
    names_in_text = [
        n.name
        for n in ast.walk(parse_source(text, path))
        if isinstance(n, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in n.decorator_list)
    ]
    targets = [kernel] if kernel else names_in_text
    if not targets:
        raise ProfileError("not-found", f"no @triton.jit kernel in {os.path.basename(path)}")
    results: list[AsmResult] = []
    for name in targets:
        try:
            spec, kernels = _launched_spec(path, text, name)
        except ProfileError as err:
            if err.kind == "syntax" or name not in names_in_text:
                raise
            spec, kernels = _text_spec(path, text, name, err)
        if overrides:
            from kernel_lens.agent.stages.triton_static import apply_overrides, types_note

            try:
                changed = apply_overrides(spec.signature, spec.constexprs, overrides)
            except ValueError as exc:
                raise ProfileError("inputs", f"Argument Types: {exc}") from None
            assumed = {k: v for k, v in spec.assumed.items() if k not in overrides}
            launcher = spec.launcher or ""
            line = int(launcher[5:]) if launcher.startswith("line ") else None
            spec.types_note = types_note(line, spec.why_text or "", assumed, changed)
            spec.types_from = "user"
        from_launch: AsmResult | None = None
        if not overrides and spec.compiled is not None:
            launched_arch = _compiled_arch(spec)
            if requested_arch is None or launched_arch in (None, arch):
                from_launch = result_from_launch(kernels[name], spec, path=path)
        if from_launch is not None:
            results.append(from_launch)
            continue
        try:
            result = compile_kernel(kernels[name], spec, arch=arch, path=path)
            result.compiled_note = aot_note(
                arch, _aot_reason(spec, arch, requested_arch, bool(overrides))
            )
        except Exception as exc:
            line = getattr(exc, "lineno", None) or getattr(kernels[name].fn, "__code__", None)
            raise ProfileError(
                "runtime",
                f"Triton could not compile {name} for sm_{arch} with "
                f"{_signature_text(spec)}: {type(exc).__name__}: {exc}",
                line if isinstance(line, int) else None,
            ) from None
        if spec.types_note:
            result.warnings.insert(0, spec.types_note)
        results.append(result)
    return results


def _compiled_arch(spec: LaunchSpec) -> int | None:
    from kernel_lens.agent.stages.triton_jit import read_compiled

    launched = read_compiled(spec.compiled, load=False)
    return launched.arch if launched is not None else None


def _signature_text(spec: LaunchSpec) -> str:
    return ", ".join(
        f"{k}={spec.constexprs.get(k)!r}" if v == "constexpr" else f"{k}: {v}"
        for k, v in spec.signature.items()
    )


def _text_spec(
    path: str, text: str, name: str, why: ProfileError
) -> tuple[LaunchSpec, dict[str, Any]]:
    """The launch's types read from the text, the kernels from the file's definitions only."""
    from kernel_lens.agent.stages.triton_static import (
        definitions_module,
        static_launch,
        types_note,
    )
    from kernel_lens.agent.usercode import NEEDS_GPU_MESSAGE

    module, _skipped = definitions_module(path, text)
    kernels = find_kernels(module)
    if name not in kernels:
        raise why
    read = static_launch(text, name, getattr(module, name), module)
    if read.call is None:  # no launch in the text at all: nothing says what it is called with
        raise why
    reason = why.message.split("\n", 1)[0]
    if reason.startswith(NEEDS_GPU_MESSAGE):  # "needs a GPU (the script raised …)": the cause
        reason = reason[len(NEEDS_GPU_MESSAGE) :].strip(" ()") or "it needs a GPU"
    reason = reason.removeprefix("the script raised ")
    if len(reason) > 120:
        reason = reason[:119] + "…"
    spec = LaunchSpec(
        signature=read.signature,
        constexprs=read.constexprs,
        options=read.options,
        launcher=f"line {read.line}",
        types_from="text",
        types_note=types_note(read.line, reason, read.assumed, []),
        assumed=read.assumed,
        why_text=reason,
    )
    return spec, kernels


def _launched_spec(path: str, text: str, name: str) -> tuple[LaunchSpec, dict[str, Any]]:
    """The types of ``name``'s first real launch (by its launcher, or by the script), and the
    module's kernels."""
    from kernel_lens.agent.stages.target import load_target

    launchers = launchers_in_text(text, name)
    if not launchers and launched_at_module_level(text, name):
        # A script that launches the kernel itself: its first launch gives the types.
        spec, found = _launch_from_script(path, text, name)
        spec.launcher = "<script>"
        if name not in found:
            raise ProfileError("not-found", f"{name} is not a kernel of the script's module")
        return spec, found
    if not launchers:
        raise ProfileError(
            "not-found",
            f"no function in {os.path.basename(path)} launches {name}[grid](…); Kernel Lens "
            "compiles a kernel for the argument types of a launch",
        )
    captured: dict[str, LaunchSpec] = {}
    calls: dict[str, list[LaunchSpec]] = {}
    last_error: ProfileError | None = None
    kernels: dict[str, Any] = {}
    for launcher in launchers:
        try:
            module_target = load_target(path, text, name=launcher)
        except ProfileError as exc:
            last_error = exc
            continue
        kernels = find_kernels(module_target.module)
        with _intercept_runs(captured, calls=calls):
            try:
                module_target.call()
            except Exception as exc:
                if name not in captured:
                    last_error = ProfileError(
                        "runtime", f"{launcher} raised {type(exc).__name__}: {exc}"
                    )
                    continue
        if name in captured:
            captured[name].launcher = launcher
            _chosen_launch(vars(module_target.module).get(name), name, captured, calls)
            break
    if name not in captured or name not in kernels:
        raise last_error or ProfileError(
            "not-found", f"{name} was not launched by {', '.join(launchers)}"
        )
    return captured[name], kernels
