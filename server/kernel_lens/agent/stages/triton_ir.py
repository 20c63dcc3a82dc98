"""Stage *triton_ir*: every ``@triton.jit`` kernel of a file, compiled to TTIR, TTGIR, LLIR, PTX
and SASS for a GPU architecture — ahead of time, so it works without a GPU — with registers,
spills, shared memory and the source ↔ assembly line maps.

Argument types come from a real launch, caught where it happens: Triton's ``run`` is
intercepted while a driver runs (``--from``), or while a candidate launcher — a function of the
file naming the kernel, else of another module of its package (:mod:`triton_launch`) — is
called once on its inputs as for profiling (on a CPU machine under ``TRITON_INTERPRET=1``), so
the kernel is compiled for the dtypes, scalars, ``constexpr`` and heuristic values,
divisibility and options it really runs with. Uses triton internals (``ASTSource``,
``triton.compile``, ``knobs``): kept in this module and :mod:`triton_jit`.
"""

from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.agent.stages.triton_launch import TextKernel
from kernel_lens.agent.usercode import compile_text, parse_source, read_source, run_until
from kernel_lens.analysis.asm_map import line_map, parse_ptxas_info
from kernel_lens.wire.results import LineMapEntry

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
    """``launch`` (a real launch), ``suggested`` (a real launch on suggested inputs that were
    checked to run: their dtypes and sizes are a guess), ``text`` (read from the source) or
    ``user`` (picked)."""
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
    kernel: Any = None
    """The ``JITFunction`` (or ``InterpretedFunction``) that was launched."""


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
    line_maps: dict[str, list[LineMapEntry]]
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
            # Nsight Compute's "Registers Per Thread" never reads under 16 (on the H200 a
            # kernel using 10 read 16 there, one using 28 read 28).
            "registers_allocated": allocated_registers(self.resources.get("registers")),
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


def allocated_registers(registers: int | None) -> int | None:
    """The registers per thread Nsight Compute reports for a kernel that uses ``registers``: no
    fewer than 16 (seen on the H200: 10 used read 16, 28 read 28, no rounding to 8)."""
    return None if registers is None else max(int(registers), 16)


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
    """Whether ``node`` holds a launch ``kernel[grid](…)`` (or compiles one for its launch:
    ``kernel.warmup(…)``, as Triton's fused-softmax tutorial does)."""
    from kernel_lens.agent.stages.triton_static import is_launch

    return any(is_launch(sub, kernel) for sub in ast.walk(node))


def launchers_in_text(text: str, kernel: str) -> list[str]:
    """Qualified names of the functions whose body contains ``kernel[...](...)`` (Show Values
    starts from these; Show Assembly's candidates are :func:`triton_launch.launcher_candidates`,
    aliases and other modules included)."""
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
    """Raised at a kernel's first launch when a run went only as far as needed to find it."""


KernelKey = tuple[str, str]
"""A kernel as a launch names it: its file (real path) and its ``def``'s name."""


def kernel_key(kernel: Any) -> KernelKey | None:
    """The key of a ``JITFunction`` (or an autotune/heuristics wrapper's kernel)."""
    fn = getattr(_unwrap(kernel), "fn", None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    return os.path.realpath(code.co_filename), str(getattr(fn, "__name__", ""))


def launched_at_module_level(text: str, kernel: str) -> bool:
    """Whether module-level code (the ``__main__`` block's included) has ``kernel[grid](…)``."""
    return any(
        _launches(node, kernel)
        for node in ast.parse(text).body
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    )


def _run_failure(failure: BaseException, path: str, what: str, name: str) -> ProfileError:
    """Why a run (a script, a driver) ended before launching ``name``."""
    from kernel_lens.agent.errors import format_exception, user_line_from_traceback
    from kernel_lens.agent.usercode import as_needs_gpu, import_failure

    failed = import_failure(failure, path, f"{what} (before launching {name})")
    if failed is not None:
        return failed
    return as_needs_gpu(
        ProfileError(
            "runtime",
            f"{what} raised {type(failure).__name__}: {failure} before launching {name}",
            user_line_from_traceback(failure.__traceback__, path),
            format_exception(failure),
        )
    )


def _launch_from_script(path: str, text: str, key: KernelKey) -> LaunchSpec:
    """Run the file as ``__main__`` up to the kernel's first launch (which does not run
    without a GPU): the launch's types. The rest of the script never runs."""
    code = compile_text(path, text)
    captured: dict[KernelKey, LaunchSpec] = {}
    calls: dict[KernelKey, list[LaunchSpec]] = {}
    watch = _intercept_runs(captured, stop_at=key, calls=calls)
    end = run_until(path, code, _StopScript, watch=watch)
    if key in captured:
        _chosen_launch(key, captured, calls)
        return captured[key]
    if end.failure is not None:
        raise _run_failure(end.failure, path, "the script", key[1])
    raise ProfileError("not-found", f"the script ran to its end without launching {key[1]}")


def _launch_from_driver(
    path: str, text: str, key: KernelKey, driver: str, argv: list[str], cwd: str | None
) -> LaunchSpec:
    """Run ``python DRIVER ARGV…`` up to the kernel's first launch (``--from``): the kernel's
    file is loaded from the buffer ``text`` wherever the driver imports it from."""
    driver = os.path.abspath(driver)
    code = compile_text(driver, read_source(driver))
    captured: dict[KernelKey, LaunchSpec] = {}
    calls: dict[KernelKey, list[LaunchSpec]] = {}
    watch = _intercept_runs(captured, stop_at=key, calls=calls)
    end = run_until(
        driver, code, _StopScript, watch=watch, argv=argv, cwd=cwd, from_buffer=(path, text)
    )
    label = os.path.basename(driver)
    if key in captured:
        _chosen_launch(key, captured, calls)
        captured[key].launcher = label
        return captured[key]
    if end.failure is not None:
        raise _run_failure(end.failure, driver, label, key[1])
    raise ProfileError("not-found", f"{label} ran to its end without launching {key[1]} of {path}")


#: Launches on the way to the kernel asked for that Triton's interpreter could not run.
INTERPRETER_SKIPS: list[str] = []
#: The autotune config a job asked for (``AsmRequest.config``), chosen at the launch.
_PREFER_CONFIG: list[int | None] = [None]


@contextmanager
def _intercept_runs(
    captured: dict[KernelKey, LaunchSpec],
    *,
    stop_at: KernelKey | None = None,
    calls: dict[KernelKey, list[LaunchSpec]] | None = None,
) -> Iterator[None]:
    """Record the first launch of each kernel (and, in ``calls``, every launch), then let it run
    as usual; a GPU launch's own compiled kernel (what ``JITFunction.run`` returns) is kept on
    its spec. For ``stop_at``, stop the run at that kernel's first launch
    (:class:`_StopScript`): before it without a GPU (nothing needs it to run), right after it
    on a GPU (so that its compiled kernel is read), after the autotuner's choice for an
    autotuned kernel. ``@triton.autotune`` is not benchmarked without a GPU
    (:func:`triton_jit.untimed_autotune`): its first config is launched."""
    from triton.runtime import jit as jit_mod

    from kernel_lens.agent.stages.triton_jit import untimed_autotune

    classes: list[Any] = [jit_mod.JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:  # pragma: no cover - older triton
        pass
    originals = {cls: cls.run for cls in classes}
    tuners = 0  # depth of Autotuner.run calls: a launch inside one is a config's benchmark
    gpu = _has_gpu()

    def make(original: Any, interpreted: bool) -> Any:
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            key = kernel_key(self)
            spec: LaunchSpec | None = None
            try:
                spec = spec_from_call(self, args, kwargs)
                spec.kernel = self
            except Exception:  # never break the user's launch for our bookkeeping
                pass
            if spec is not None and key is not None:
                captured.setdefault(key, spec)
                if calls is not None:
                    calls.setdefault(key, []).append(spec)
            stop = stop_at is not None and key == stop_at and key in captured
            if stop and (interpreted or not gpu):
                raise _StopScript
            if interpreted and stop_at is not None:
                # Another kernel on the way to the one asked for: Triton's interpreter cannot
                # run everything a GPU can (bf16 scalars, say); its outputs are left as they
                # were, so that the run still reaches the launch it is for (types are right).
                try:
                    return original(self, *args, **kwargs)
                except Exception as exc:
                    name = getattr(getattr(self, "fn", None), "__name__", "a kernel")
                    text = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
                    INTERPRETER_SKIPS.append(f"{name}: {type(exc).__name__}: {text}")
                    return None
            result = original(self, *args, **kwargs)
            if spec is not None and not interpreted:
                spec.compiled = result
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
        key = kernel_key(self)
        if stop_at is not None and key == stop_at and key in captured and tuners == 0:
            raise _StopScript
        return result

    try:
        for cls, original in originals.items():
            cls.run = make(original, cls is not jit_mod.JITFunction)
        if tuner_cls is not None:
            tuner_cls.run = tuned
        with untimed_autotune(_PREFER_CONFIG[0]):
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


def _tuner_of(kernel: Any) -> Any:
    """The ``Autotuner`` that wraps a launched kernel, if any: found through the kernel's
    module globals (``@triton.autotune`` binds the tuner to the def's name)."""
    fn = getattr(kernel, "fn", None)
    scope = getattr(fn, "__globals__", None) or {}
    for value in list(scope.values()):
        obj = value
        for _ in range(8):
            if obj is None:
                break
            if hasattr(obj, "best_config") and _unwrap(obj) is kernel:
                return obj
            obj = getattr(obj, "fn", None)
    return None


def _chosen_launch(
    key: KernelKey,
    captured: dict[KernelKey, LaunchSpec],
    calls: dict[KernelKey, list[LaunchSpec]],
    tuner: Any = None,
) -> None:
    """For an ``@triton.autotune`` kernel, put the launch with the chosen config (the last one
    that matches it) in ``captured`` instead of the first benchmark's, and note the choice."""
    from kernel_lens.agent.stages.triton_jit import autotune_info

    if key not in captured:
        return
    tuner = tuner if tuner is not None else _tuner_of(captured[key].kernel)
    info = autotune_info(tuner) if tuner is not None else None
    if info is None:
        return
    chosen = info["chosen_kwargs"]
    for spec in reversed(calls.get(key, [])):
        values = {**spec.constexprs, **spec.options}
        if all(values.get(k, v) == v for k, v in chosen.items()):
            spec.launcher = captured[key].launcher
            captured[key] = spec
            break
    captured[key].autotune = info


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
    jit = kernel if type(kernel).__name__ == "JITFunction" else JITFunction(_compilable(fn, {}))
    order = list(spec.signature)
    attrs = divisibility_attrs([order.index(n) for n in spec.divisible if n in order])
    source = ASTSource(
        fn=jit, signature=dict(spec.signature), constexprs=dict(spec.constexprs), attrs=attrs
    )
    options = {k: v for k, v in spec.options.items() if k in ("num_warps", "num_stages")}
    with _not_interpreting():
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


@contextmanager
def _not_interpreting() -> Iterator[None]:
    """``TRITON_INTERPRET`` off while compiling ahead of time (the launchers ran under the
    interpreter; Triton's compiler reads the setting while it generates code)."""
    from kernel_lens.agent.triton_driver import compiled_language

    before = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "0"
    try:
        with compiled_language():  # tl.zeros & co. compiled again, if the job interpreted them
            yield
    finally:
        if before is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = before


def _compilable(fn: Any, done: dict[int, Any]) -> Any:
    """``fn`` with globals in which the kernels Triton's interpreter made
    (``InterpretedFunction``: the ``@triton.jit`` helpers a kernel calls, in its module or
    another) are ``JITFunction``s again, as the compiler needs them; helpers' own globals
    likewise. The module's other globals (aliases, libdevice, constexprs) are its own."""
    from triton.runtime.jit import JITFunction

    if id(fn) in done:
        return done[id(fn)]
    scope = getattr(fn, "__globals__", None)
    if not isinstance(scope, dict) or not any(
        type(v).__name__ == "InterpretedFunction" for v in scope.values()
    ):
        done[id(fn)] = fn
        return fn
    patched = dict(scope)
    made = types.FunctionType(fn.__code__, patched, fn.__name__, fn.__defaults__, fn.__closure__)
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__annotations__ = dict(getattr(fn, "__annotations__", {}) or {})
    made.__qualname__ = fn.__qualname__
    made.__module__ = fn.__module__
    done[id(fn)] = made
    for key, value in scope.items():
        if type(value).__name__ == "InterpretedFunction" and callable(getattr(value, "fn", None)):
            patched[key] = JITFunction(_compilable(value.fn, done))
    return made


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
    driver: str | None = None,
    argv: list[str] | None = None,
    cwd: str | None = None,
    config: int | None = None,
) -> list[AsmResult]:
    """Compile the kernels of a file (or the one named ``kernel``) for ``sm_<arch>``.

    The argument types are those of a real launch, caught where it happens: a run of
    ``driver`` (``--from``), else a launcher — a function of the file that names the kernel,
    else one of another module of its package that does — called on its inputs, else the
    script's own run. When no launch can run here they are read from the launch's text
    (:mod:`triton_static`, said so), and ``overrides`` (the user's picks) go over either.
    ``config``: an autotuned kernel's config (its index in the kernel's list) instead of the
    chosen one.

    Raises:
        ProfileError: no kernels, no launch at all, or a compile error (with its line).
    """
    from kernel_lens.agent.stages.triton_launch import kernels_in_text

    path = os.path.abspath(path)
    if text is None:
        text = read_source(path)
    requested_arch = arch
    arch = arch or default_arch()
    made = kernels_in_text(parse_source(text, path))
    if kernel:
        targets = [kernel]
    else:  # every kernel once, by its def's name, in the file's order
        firsts: dict[str, TextKernel] = {}
        for k in made.values():
            firsts.setdefault(k.def_name, k)
        targets = [k.def_name for k in sorted(firsts.values(), key=lambda k: k.def_line)]
    if not targets:
        raise ProfileError("not-found", f"no @triton.jit kernel in {os.path.basename(path)}")
    results: list[AsmResult] = []
    _PREFER_CONFIG[0] = config
    del INTERPRETER_SKIPS[:]
    del FAILED[:]
    for name in targets:
        try:
            result = _compile_one(
                path, text, name, made, arch, requested_arch, overrides, driver, argv, cwd, config
            )
        except ProfileError as err:
            if kernel is not None or err.kind == "syntax":
                raise
            FAILED.append((name, err))  # every kernel of the file: the others still compile
            continue
        results.append(result)
    if not results and FAILED:
        raise FAILED[0][1]
    return results


#: Whole-file mode: the kernels that did not compile, with why (the engine reports them).
FAILED: list[tuple[str, ProfileError]] = []


def _compile_one(
    path: str,
    text: str,
    name: str,
    made: dict[str, TextKernel],
    arch: int,
    requested_arch: int | None,
    overrides: dict[str, str] | None,
    driver: str | None,
    argv: list[str] | None,
    cwd: str | None,
    config: int | None,
) -> AsmResult:
    """One kernel of :func:`compile_file_kernels`."""
    names_in_text = list(made)
    def_name = made[name].def_name if name in made else name
    kernels: dict[str, Any] = {}
    try:
        spec = _launched_spec(path, text, name, driver=driver, argv=argv, cwd=cwd)
    except ProfileError as err:
        missing = err.kind == "import" and (
            "ModuleNotFoundError" in err.message or "ImportError" in err.message
        )
        if err.kind == "syntax" or missing or name not in names_in_text or driver:
            raise
        spec, kernels = _text_spec(path, text, def_name, err, typed=bool(overrides), arch=arch)
    jit = spec.kernel if spec.kernel is not None else kernels.get(def_name)
    if jit is None:
        raise ProfileError("not-found", f"{name} is not a kernel of {os.path.basename(path)}")
    if config is not None:
        _pick_config(spec, config)
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
    elif spec.types_from == "text":
        _refuse_degenerate(name, spec)
    from_launch: AsmResult | None = None
    if not overrides and spec.compiled is not None:
        launched_arch = _compiled_arch(spec)
        if requested_arch is None or launched_arch in (None, arch):
            from_launch = result_from_launch(jit, spec, path=path)
    if from_launch is not None:
        return from_launch
    try:
        result = compile_kernel(jit, spec, arch=arch, path=path)
        result.compiled_note = aot_note(
            arch, _aot_reason(spec, arch, requested_arch, bool(overrides))
        )
    except Exception as exc:
        line = getattr(exc, "lineno", None) or getattr(jit.fn, "__code__", None)
        raise ProfileError(
            "runtime",
            f"Triton could not compile {name} for sm_{arch} with "
            f"{_signature_text(spec)}: {type(exc).__name__}: {exc}"
            + _missing_global_hint(text, exc, jit),
            line if isinstance(line, int) else None,
        ) from None
    if spec.types_note:
        result.warnings.insert(0, spec.types_note)
    if INTERPRETER_SKIPS and spec.types_from != "text":
        result.warnings.append(
            "on the way to this launch, Triton's interpreter could not run "
            + "; ".join(dict.fromkeys(INTERPRETER_SKIPS))
            + " (their outputs were left as they were; the types are the launch's)"
        )
    if spec.types_from == "text" and not overrides:
        result.warnings.insert(
            1 if spec.types_note else 0,
            "registers, spills and shared memory are of this compile, not the launch's: "
            "its types and specialisation were read from the text",
        )
    return result


def _pick_config(spec: LaunchSpec, index: int) -> None:
    """Say that an autotuned kernel's config ``index`` is shown: the launch chose it (see
    :data:`_PREFER_CONFIG`) when it ran; from the text, its values are put in."""
    configs = (spec.autotune or {}).get("configs") or []
    if not spec.autotune:
        raise ProfileError("inputs", "the kernel is not autotuned: it has no configs to pick")
    listed = [row for row in configs if isinstance(row.get("kwargs"), dict)]
    if not 0 <= index < len(listed):
        raise ProfileError(
            "inputs", f"config {index} is not one of the kernel's {len(listed)} configs (0…)"
        )
    spec.autotune = {**spec.autotune, "shown": listed[index]["config"]}
    if spec.types_from != "text":
        return
    for key, value in listed[index]["kwargs"].items():
        if key in ("num_warps", "num_stages"):
            spec.options[key] = value
        elif key in spec.signature:
            spec.signature[key] = "constexpr"
            spec.constexprs[key] = value


def _refuse_degenerate(name: str, spec: LaunchSpec) -> None:
    """No compile from the text with a constexpr nobody knows standing in as 1 (a flag, a
    count, a heuristic's value): the kernel would be a degenerate one. Said with the names, for
    Argument Types…"""
    unknown = [
        param
        for param, what in spec.assumed.items()
        if "computed at run time" in what and spec.constexprs.get(param) == 1
    ]
    if not unknown:
        return
    raise ProfileError(
        "inputs",
        f"{name}: no launch could run here ({spec.why_text or 'no launcher ran'}), and the text "
        f"does not say {', '.join(unknown)} (computed at run time); Kernel Lens does not compile "
        "it with a guess of 1: give them with Argument Types… (kernel-lens asm --types "
        f"{unknown[0]}=VALUE), or the launch's inputs (an inputs directive on the launcher, or "
        "--from DRIVER)",
    )


def _missing_global_hint(text: str, exc: BaseException, jit: Any) -> str:
    """For a compile that failed on a global the kernel's module lacks (``NameError('rsqrt is
    not defined')``): where the file defines it and why that did not run here."""
    import re

    from kernel_lens.agent.stages.triton_static import missing_global_note

    found = re.search(r"name '?(\w+)'? is not defined|'?(\w+)'? is not defined", str(exc))
    if not found:
        return ""
    missing = found.group(1) or found.group(2)
    fn = getattr(jit, "fn", jit)
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    note = missing_global_note(text, missing, module)
    return f" — {note}" if note else ""


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
    path: str, text: str, name: str, why: ProfileError, *, typed: bool = False, arch: int = 90
) -> tuple[LaunchSpec, dict[str, Any]]:
    """The launch's types read from the text, the kernels from the file's definitions only.
    With no launch in the text, the kernel's own signature guessed: compiled only when the user
    gives types (``typed``: Argument Types…, ``--types``), else refused with the guess to start
    from."""
    from kernel_lens.agent.stages.triton_static import (
        definitions_module,
        static_launch,
        types_note,
    )
    from kernel_lens.agent.usercode import NEEDS_GPU_MESSAGE

    module, _skipped = definitions_module(path, text, arch=arch)
    kernels = find_kernels(module)
    if name not in kernels:
        raise why
    read = static_launch(text, name, getattr(module, name), module)
    reason = why.message.split("\n", 1)[0]
    if reason.startswith(NEEDS_GPU_MESSAGE):  # "needs a GPU (the script raised …)": the cause
        reason = reason[len(NEEDS_GPU_MESSAGE) :].strip(" ()") or "it needs a GPU"
    reason = reason.removeprefix("the script raised ")
    if len(reason) > 120:
        reason = reason[:119] + "…"
    if read.call is None and not typed:
        # No launch in the text: nothing says what it is called with. The failure offers
        # Argument Types… with the signature's guess (extension/views/asmFailure.ts reads it).
        guess = LaunchSpec(signature=read.signature, constexprs=read.constexprs)
        raise ProfileError(
            why.kind,
            f"{why.message}\n{name}: no launch could run here, and the text has no launch of "
            f"it to read its types from: give them with Argument Types… (kernel-lens asm --types "
            f"NAME=TYPE,…), or the launch's inputs (--from DRIVER); to start from: "
            f"{_signature_text(guess)}",
            why.line,
            why.traceback,
        )
    spec = LaunchSpec(
        signature=read.signature,
        constexprs=read.constexprs,
        options=read.options,
        launcher=f"line {read.line}" if read.line else None,
        types_from="text",
        types_note=types_note(read.line, reason, read.assumed, []),
        assumed=read.assumed,
        why_text=reason,
    )
    return spec, kernels


def _launched_spec(
    path: str,
    text: str,
    name: str,
    *,
    driver: str | None = None,
    argv: list[str] | None = None,
    cwd: str | None = None,
) -> LaunchSpec:
    """The types of ``name``'s first real launch: by ``driver``'s run, else by a launcher (a
    function of the file naming the kernel, else of another module of its package), else by
    the script's own run."""
    from kernel_lens.agent.stages.triton_launch import (
        kernels_in_text,
        launcher_candidates,
        package_launchers,
    )

    made = kernels_in_text(parse_source(text, path))
    def_name = made[name].def_name if name in made else name
    key: KernelKey = (os.path.realpath(path), def_name)
    if driver is not None:
        return _launch_from_driver(path, text, key, driver, list(argv or []), cwd)
    names = {n for n, k in made.items() if k.def_name == def_name} | {def_name, name}
    own = {k.def_name for k in made.values()}
    tree = parse_source(text, path)
    launchers = launcher_candidates(tree, names, own)
    if not launchers and any(launched_at_module_level(text, n) for n in names):
        # A script that launches the kernel itself: its first launch gives the types.
        spec = _launch_from_script(path, text, key)
        spec.launcher = "<script>"
        return spec
    last_error: ProfileError | None = None
    tried: list[str] = []

    def candidates() -> Iterator[tuple[str, str]]:
        for launcher in launchers:
            yield path, launcher
        for other, found in package_launchers(path, names):
            for launcher in found:
                yield other, launcher

    for file, launcher in candidates():
        if len(tried) >= _MAX_LAUNCHERS:
            break
        label = launcher if file == path else f"{os.path.basename(file)}::{launcher}"
        tried.append(label)
        try:
            found_spec = _launch_by(file, text if file == path else None, launcher, key)
        except ProfileError as err:
            if err.kind == "syntax" and file == path:
                raise
            own_import = err.kind == "import" and file == path
            if last_error is None or (own_import and last_error.kind != "import"):
                last_error = err
            continue
        if found_spec is not None:
            found_spec.launcher = found_spec.launcher or label
            return found_spec
    if not tried:
        raise ProfileError(
            "not-found",
            f"nothing in {os.path.basename(path)} or its package launches {name}; Kernel Lens "
            "compiles a kernel for the argument types of a launch: give a driver script that "
            "launches it (--from DRIVER; in the editor, Profile a function from a driver)",
        )
    raise last_error or ProfileError("not-found", f"{name} was not launched by {', '.join(tried)}")


#: Launcher candidates tried at most for one kernel.
_MAX_LAUNCHERS = 8


def _launch_by(file: str, text: str | None, launcher: str, key: KernelKey) -> LaunchSpec | None:
    """Call ``launcher`` of ``file`` once on its inputs (as a profile builds them) while
    launches are caught; its spec of the kernel ``key``, or ``None`` when it ran without
    launching it. Inputs that had to be suggested (checked to run) are used, and said."""
    from kernel_lens.agent.stages.target import load_target

    captured: dict[KernelKey, LaunchSpec] = {}
    calls: dict[KernelKey, list[LaunchSpec]] = {}
    with _intercept_runs(captured, calls=calls):
        try:
            target = load_target(file, text, name=launcher)
        except ProfileError as err:
            fix = err.suggested_directive or ""
            if key in calls and err.kind == "inputs" and "checked: it runs" in fix:
                # The suggestion's check called the launcher, and that call launched the
                # kernel: the last launch is the one of the candidate that ran.
                spec = calls[key][-1]
                captured[key] = spec
                _chosen_launch(key, captured, calls)
                spec = captured[key]
                spec.types_from = "suggested"
                expr = fix.split("inputs = ", 1)[-1].split("  #", 1)[0]
                spec.types_note = (
                    f"argument types from a launch by {launcher} on suggested inputs "
                    f"({expr}; checked: it runs) — their dtypes and sizes are a guess; the real "
                    "ones come from a driver (--from DRIVER) or an inputs directive on "
                    f"{launcher}"
                )
                return spec
            raise
    captured.clear()
    calls.clear()
    failure: BaseException | None = None
    with _intercept_runs(captured, stop_at=key, calls=calls):
        try:
            target.call()
        except _StopScript:
            pass
        except Exception as exc:
            failure = exc
    if key in captured:
        _chosen_launch(key, captured, calls)
        return captured[key]
    if failure is not None:
        raise _run_failure(failure, file, launcher, key[1])
    return None
