"""Stage *inline_ext*: what ``torch.utils.cpp_extension.load_inline`` builds from a file.

For each ``load_inline(...)`` call in the text: the generated ``main.cpp`` and ``cuda.cu`` (as
torch writes them), the PTX of the CUDA source from ``nvcc -ptx -lineinfo`` with its line map
back to the Python file's lines, nvcc's errors mapped the same way, and — with ``build=True`` —
the real build through load_inline (its log, and ``build.ninja`` from the build folder).
nvcc needs no GPU for PTX; without nvcc the result says so.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
import time
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.agent.usercode import exec_module, parse_source, read_source
from kernel_lens.analysis.asm_map import ptx_line_map
from kernel_lens.analysis.nvcc import SourcePiece, cuda_file_text, parse_nvcc_diagnostics
from kernel_lens.wire.results import InlineKernel, InlineModule, InlineResult

__all__ = ["analyze_inline", "find_nvcc"]


def find_nvcc() -> str | None:
    """nvcc from ``$CUDA_HOME`` (when set, as torch does, only there), PATH, or /usr/local/cuda."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        candidate = os.path.join(home, "bin", "nvcc")
        return candidate if os.path.isfile(candidate) else None
    found = shutil.which("nvcc")
    if found:
        return found
    default = "/usr/local/cuda/bin/nvcc"
    return default if os.path.isfile(default) else None


def _is_load_inline(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "load_inline"


def _string_line(expr: ast.expr, assignments: dict[str, ast.expr]) -> int | None:
    """The line of the string literal ``expr`` stands for (through one name)."""
    if isinstance(expr, ast.Name) and expr.id in assignments:
        expr = assignments[expr.id]
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.lineno
    return None


def _pieces(
    expr: ast.expr | None, value: Any, assignments: dict[str, ast.expr]
) -> list[SourcePiece]:
    if value is None:
        return []
    if isinstance(value, str):
        return [SourcePiece(value, _string_line(expr, assignments) if expr is not None else None)]
    elts: list[ast.expr | None] = []
    if isinstance(expr, ast.List | ast.Tuple):
        elts = list(expr.elts)
    elif isinstance(expr, ast.Name) and isinstance(assignments.get(expr.id), ast.List | ast.Tuple):
        elts = list(assignments[expr.id].elts)  # type: ignore[attr-defined]
    out = []
    for i, text in enumerate(value):
        e = elts[i] if i < len(elts) else None
        out.append(SourcePiece(str(text), _string_line(e, assignments) if e is not None else None))
    return out


def _main_cpp(cpp_sources: list[str], functions: Any) -> str:
    parts = ["#include <torch/extension.h>", *cpp_sources]
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f for f in functions}
        parts.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for fname, doc in functions.items():
            parts.append(f'm.def("{fname}", torch::wrap_pybind_function({fname}), "{doc}");')
        parts.append("}")
    return "\n".join(parts)


#: Tests only (tests/conftest.py, docs/testing.md): a folder where the PTX of a CUDA source is
#: kept by the hash of nvcc's command and the source, and read back instead of running nvcc again
#: (the suite's tests compile the same ``load_inline`` square on several surfaces). Never set by
#: the product: users' PTX always comes from nvcc.
PTX_CACHE_ENV = "KERNEL_LENS_TEST_PTX_CACHE"


def _ptx(
    nvcc: str, cuda_text: str, name: str, arch: int, flags: list[str]
) -> tuple[str | None, str]:
    from torch.utils.cpp_extension import include_paths

    includes = [*include_paths(), sysconfig.get_paths()["include"]]
    args = [
        "-ptx", "-lineinfo", f"-arch=sm_{arch}", "-std=c++17",
        f"-DTORCH_EXTENSION_NAME={name}", "-diag-suppress=3306",
        *[f for f in flags if f.startswith(("-O", "--use_fast_math", "-D", "-U"))],
        *[arg for p in includes for arg in ("-I", p)],
    ]  # fmt: skip
    cache = os.environ.get(PTX_CACHE_ENV)
    key = hashlib.sha256(json.dumps([nvcc, args, cuda_text]).encode()).hexdigest()
    kept = os.path.join(cache, f"{key}.json") if cache else None
    if kept is not None and os.path.exists(kept):
        with contextlib.suppress(OSError, ValueError), open(kept, encoding="utf-8") as fh:
            ptx, log = json.load(fh)
            return str(ptx), str(log)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "cuda.cu")
        out = os.path.join(tmp, "cuda.ptx")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(cuda_text)
        cmd = [nvcc, *args, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0 or not os.path.exists(out):
            return None, log
        with open(out, encoding="utf-8") as fh:
            ptx = fh.read()
    if kept is not None:
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            with open(f"{kept}.{os.getpid()}", "w", encoding="utf-8") as fh:
                json.dump([ptx, log], fh)
            os.replace(f"{kept}.{os.getpid()}", kept)
    return ptx, log


class _BuildFailedError(Exception):
    def __init__(self, reason: str, log: str, folder: str | None, ninja: str | None) -> None:
        super().__init__(reason)
        self.reason, self.log, self.folder, self.ninja = reason, log, folder, ninja


def _build(module: Any, call_kwargs: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """Build with load_inline (verbose); return (log, build folder, build.ninja text).

    Raises:
        _BuildFailedError: with the log captured so far (the compiler's errors are in it).
    """
    from torch.utils.cpp_extension import _get_build_directory, load_inline

    from kernel_lens.agent.stdio import stdout_to_stderr

    del module
    name = call_kwargs["name"]
    error: Exception | None = None
    with tempfile.TemporaryFile("w+") as log_file:
        saved_err = os.dup(2)
        os.dup2(log_file.fileno(), 2)
        try:
            with stdout_to_stderr():
                load_inline(**{**call_kwargs, "verbose": True})
        except Exception as exc:
            error = exc
        finally:
            os.dup2(saved_err, 2)
            os.close(saved_err)
        log_file.seek(0)
        log = log_file.read()
    folder = call_kwargs.get("build_directory") or _get_build_directory(name, verbose=False)
    ninja = os.path.join(folder, "build.ninja")
    text = open(ninja, encoding="utf-8").read() if os.path.exists(ninja) else None
    if error is not None:
        reason = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
        raise _BuildFailedError(reason, log, folder, text)
    return log, folder, text


def analyze_inline(
    path: str, text: str | None = None, *, arch: int = 90, build: bool = False, sass: bool = False
) -> InlineResult:
    """Every ``load_inline`` call of the file: generated sources, PTX with a line map, errors.

    Raises:
        ProfileError: ``not-found`` (no load_inline call), ``unsupported`` (no nvcc), or the
            errors of loading the file.
    """
    path = os.path.abspath(path)
    if text is None:
        text = read_source(path)
    tree = parse_source(text, path)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_load_inline(n)]
    if not calls:
        raise ProfileError("not-found", f"no load_inline(...) call in {os.path.basename(path)}")
    nvcc = _require_nvcc(calls[0].lineno)
    assignments: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                assignments[target.id] = node.value
    module = exec_module(path, text)
    modules: list[InlineModule] = []
    for call in calls:
        exprs, values = _call_arguments(call, module.__dict__, path)
        name = str(values.get("name", "inline_ext"))
        cpp = _pieces(exprs.get("cpp_sources"), values.get("cpp_sources"), assignments)
        cuda = _pieces(exprs.get("cuda_sources"), values.get("cuda_sources"), assignments)
        cuda_text, starts = cuda_file_text(cuda)
        entry: InlineModule = {
            "name": name,
            "call_line": call.lineno,
            "arch": f"sm_{arch}",
            "nvcc": nvcc,
            "files": {
                "main.cpp": _main_cpp([p.text for p in cpp], values.get("functions")),
                "cuda.cu": cuda_text if cuda else None,
            },
            "ptx": None,
            "line_map": [],
            "errors": [],
            "build_log": None,
            "build_directory": None,
        }
        if cuda:
            flags = [str(f) for f in values.get("extra_cuda_cflags") or []]
            _add_ptx(entry, nvcc, cuda_text, starts, arch, flags)
            if entry["ptx"] is not None:
                _add_kernels(entry, nvcc, arch, starts, sass=sass)
        if build:
            _add_build(entry, module, values, has_cuda=bool(cuda))
        modules.append(entry)
    return {"path": path, "modules": modules}


def _require_nvcc(line: int) -> str:
    """nvcc's path.

    Raises:
        ProfileError: ``unsupported`` on ``line`` (the first load_inline call) without nvcc.
    """
    nvcc = find_nvcc()
    if nvcc is None:
        raise ProfileError(
            "unsupported",
            "needs CUDA and nvcc: nvcc was not found "
            + (
                f"in CUDA_HOME={os.environ.get('CUDA_HOME') or os.environ.get('CUDA_PATH')}"
                if os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
                else "(set CUDA_HOME or put the CUDA toolkit's bin folder on PATH)"
            ),
            line,
        )
    return nvcc


def _call_arguments(
    call: ast.Call, namespace: dict[str, Any], path: str
) -> tuple[dict[str, ast.expr], dict[str, Any]]:
    """The expressions of one load_inline call's arguments (by keyword; the first three may be
    positional) and their values, evaluated in the loaded module's namespace.

    Raises:
        ProfileError: ``inputs`` on the argument's line when it cannot be evaluated there.
    """
    exprs: dict[str, ast.expr] = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    for i, key in enumerate(("name", "cpp_sources", "cuda_sources")):
        if i < len(call.args):
            exprs.setdefault(key, call.args[i])
    values: dict[str, Any] = {}
    for key, expr in exprs.items():
        try:
            values[key] = eval(compile(ast.Expression(expr), path, "eval"), namespace)
        except Exception as exc:
            raise ProfileError(
                "inputs",
                f"cannot evaluate load_inline's {key}= without running the function: "
                f"{type(exc).__name__}: {exc}",
                expr.lineno,
            ) from None
    return exprs, values


def _add_ptx(
    entry: InlineModule,
    nvcc: str,
    cuda_text: str,
    starts: list[tuple[int, SourcePiece]],
    arch: int,
    flags: list[str],
) -> None:
    """The CUDA source's PTX, its line map back to the Python file and nvcc's errors, on
    ``entry``."""
    t0 = time.perf_counter()
    ptx, log = _ptx(nvcc, cuda_text, entry["name"], arch, flags)
    entry["ptx_seconds"] = round(time.perf_counter() - t0, 2)
    entry["errors"] = parse_nvcc_diagnostics(log, "cuda.cu", starts)
    if ptx is not None:
        entry["ptx"] = ptx
        cuda_map = ptx_line_map(ptx, "cuda.cu")
        by_py: dict[int, list[int]] = {}
        for asm_line, cuda_line in sorted(cuda_map.asm_to_source.items()):
            py = _py_line(cuda_line, starts)
            if py is not None:
                by_py.setdefault(py, []).append(asm_line)
        entry["line_map"] = [{"source_line": k, "asm_lines": v} for k, v in sorted(by_py.items())]
    elif not entry["errors"]:
        entry["errors"] = [
            {
                "severity": "error",
                "message": log.strip()[-500:],
                "cuda_line": None,
                "line": entry["call_line"],
            }
        ]


def _add_build(entry: InlineModule, module: Any, values: dict[str, Any], *, has_cuda: bool) -> None:
    """The real build through load_inline (its log, folder and ``build.ninja``) on ``entry``;
    a failed build, or CUDA sources with a CPU-only torch, is an error of the entry."""
    import torch

    if has_cuda and torch.version.cuda is None:
        # The PTX above needs only nvcc; a build needs torch's CUDA libraries.
        entry["errors"].append(
            {
                "severity": "error",
                "cuda_line": None,
                "line": entry["call_line"],
                "message": f"building {entry['name']} needs a CUDA build of torch; this one "
                f"({torch.__version__}) is CPU-only",
            }
        )
        return
    try:
        log, folder, ninja = _build(module, dict(values))
    except _BuildFailedError as failed:
        log, folder, ninja = failed.log, failed.folder, failed.ninja
        entry["errors"].append(
            {
                "severity": "error",
                "message": f"load_inline failed: {failed.reason}",
                "cuda_line": None,
                "line": entry["call_line"],
            }
        )
    entry["build_log"] = log
    entry["build_directory"] = folder
    entry["files"]["build.ninja"] = ninja


def _cuda_tool(nvcc: str, name: str) -> str | None:
    """``ptxas`` / ``nvdisasm`` beside nvcc, else Triton's copy, else PATH."""
    beside = os.path.join(os.path.dirname(os.path.realpath(nvcc)), name)
    if os.path.isfile(beside):
        return beside
    try:
        from triton import knobs

        return str(getattr(knobs.nvidia, name).path)
    except Exception:
        return shutil.which(name)


def _per_entry_ptxas(log: str) -> dict[str, dict[str, int | None]]:
    """``ptxas -v``'s lines cut per entry function (``Compiling entry function 'X'``)."""
    from kernel_lens.analysis.asm_map import parse_ptxas_info

    out: dict[str, dict[str, int | None]] = {}
    parts = re.split(r"Compiling entry function '([^']+)'", log)
    for name, chunk in zip(parts[1::2], parts[2::2], strict=False):
        out[name] = parse_ptxas_info(chunk)
    return out


def _add_kernels(
    entry: InlineModule, nvcc: str, arch: int, starts: list[tuple[int, SourcePiece]], *, sass: bool
) -> None:
    """Each kernel's registers, spills and shared memory (``ptxas -v`` on the PTX) and, with
    ``sass``, the SASS of the assembled PTX (``nvdisasm -g``) mapped to the Python lines."""
    from kernel_lens.analysis.asm_diff import entry_names
    from kernel_lens.analysis.asm_map import sass_line_map

    ptx = entry["ptx"] or ""
    names = entry_names("ptx", ptx)
    ptxas = _cuda_tool(nvcc, "ptxas")
    found: dict[str, dict[str, int | None]] = {}
    cubin: bytes | None = None
    if ptxas is not None:
        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "cuda.ptx"), os.path.join(tmp, "cuda.cubin")
            with open(src, "w", encoding="utf-8") as fh:
                fh.write(ptx)
            proc = subprocess.run(
                [ptxas, f"-arch=sm_{arch}", "-v", "-lineinfo", src, "-o", out],
                capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            found = _per_entry_ptxas(proc.stdout + proc.stderr)
            if proc.returncode == 0 and os.path.exists(out):
                with open(out, "rb") as fh:
                    cubin = fh.read()
    kernels: list[InlineKernel] = []
    for name in names:
        info = found.get(name, {})
        spills = None
        if info.get("spill_stores") is not None or info.get("spill_loads") is not None:
            spills = (info.get("spill_stores") or 0) + (info.get("spill_loads") or 0)
        kernels.append(
            {
                "entry": name,
                "registers": info.get("registers"),
                "spills": spills,
                # ptxas names shared memory only when a kernel has some ("N bytes smem").
                "shared_bytes": info.get("shared_bytes")
                if info.get("shared_bytes") is not None or info.get("registers") is None
                else 0,
            }
        )
    entry["kernels"] = kernels
    if not sass:
        return
    text = _disassemble(nvcc, cubin) if cubin is not None else None
    entry["sass"] = text
    by_py: dict[int, list[int]] = {}
    if text is not None:
        for asm_line, cuda_line in sorted(sass_line_map(text, "cuda.cu").asm_to_source.items()):
            py = _py_line(cuda_line, starts)
            if py is not None:
                by_py.setdefault(py, []).append(asm_line)
    entry["sass_line_map"] = [{"source_line": k, "asm_lines": v} for k, v in sorted(by_py.items())]


def _disassemble(nvcc: str, cubin: bytes) -> str | None:
    nvdisasm = _cuda_tool(nvcc, "nvdisasm")
    if nvdisasm is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cuda.cubin")
        with open(path, "wb") as fh:
            fh.write(cubin)
        proc = subprocess.run(
            [nvdisasm, "-g", "-c", path], capture_output=True, text=True, timeout=120
        )
    return proc.stdout if proc.returncode == 0 and proc.stdout.strip() else None


def _py_line(cuda_line: int, starts: list[tuple[int, SourcePiece]]) -> int | None:
    from kernel_lens.analysis.nvcc import map_cuda_line

    return map_cuda_line(cuda_line, starts)
