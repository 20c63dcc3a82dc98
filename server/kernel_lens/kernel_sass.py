"""The SASS, control words included, of the binary a profiled kernel ran from — what the stall
blame of issue 43 reads (each instruction's wait mask and barriers), and what an Nsight Compute
report does not keep (its SASS text has no control words).

Candidates: the kernel's cubins in Triton's cache (``<kernel>.cubin``, newest first) and the
shared libraries of ``load_inline`` extensions (``TORCH_EXTENSIONS_DIR`` or torch's default),
each disassembled with ``cuobjdump -sass``; the one whose function of that name has, at each
offset the report sampled, the same instruction as the report is the binary that ran. None
matching (another machine's report, a cleared cache, no cuobjdump) leaves the raw figure alone.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["candidate_binaries", "find_cuobjdump", "matching_sass", "sass_for", "sass_of_kernel"]

#: Binaries disassembled at most per kernel (newest first).
MAX_CANDIDATES = 24
#: Share of the report's instructions that must match at their offsets.
MATCH = 0.95


def find_cuobjdump() -> str | None:
    """``cuobjdump`` on PATH, under ``CUDA_HOME``/the usual toolkit, or the one in Triton's
    wheel (``triton/backends/nvidia/bin``)."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for root in roots:
        if root and os.path.isfile(os.path.join(root, "bin", "cuobjdump")):
            return os.path.join(root, "bin", "cuobjdump")
    try:
        import triton

        path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
        if os.path.isfile(os.path.join(path, "cuobjdump")):
            return os.path.join(path, "cuobjdump")
    except ImportError:
        pass
    return None


def _newest(paths: Iterable[str], limit: int) -> list[str]:
    out = []
    for p in paths:
        try:
            out.append((os.path.getmtime(p), p))
        except OSError:
            continue
    return [p for _, p in sorted(out, reverse=True)[:limit]]


def candidate_binaries(
    kernel: str,
    *,
    triton_dirs: Sequence[str] | None = None,
    extension_dirs: Sequence[str] | None = None,
    limit: int = MAX_CANDIDATES,
) -> list[str]:
    """Binaries that may hold ``kernel``: its cubins in Triton's caches, then the extensions'
    shared libraries, each group newest first."""
    home = os.path.expanduser("~")
    if triton_dirs is None:
        triton_dirs = [os.environ.get("TRITON_CACHE_DIR") or os.path.join(home, ".triton", "cache")]
    if extension_dirs is None:
        extension_dirs = [
            os.environ.get("TORCH_EXTENSIONS_DIR")
            or os.path.join(home, ".cache", "torch_extensions")
        ]
    short = kernel.split("(")[0].split("<")[0].split("::")[-1].strip()
    cubins = [
        p for d in triton_dirs if d for p in glob.glob(os.path.join(d, "*", f"{short}.cubin"))
    ]
    libraries = [
        p
        for d in extension_dirs
        if d
        for p in glob.glob(os.path.join(d, "**", "*.so"), recursive=True)
    ]
    return _newest(cubins, limit) + _newest(libraries, limit)


def _opcode(text: str) -> str:
    words = text.strip().rstrip(";").split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def matching_sass(
    report_sass: dict[int, str], names: Sequence[str], listings: Iterable[str]
) -> str | None:
    """The first ``cuobjdump -sass`` listing with a function named one of ``names`` whose
    instructions equal the report's (``{pc offset: instruction text}``) at ≥ :data:`MATCH` of
    the offsets."""
    from kernel_lens.analysis.sass_control import parse_cuobjdump

    wanted = {pc: _opcode(t) for pc, t in report_sass.items() if _opcode(t)}
    if not wanted:
        return None
    for listing in listings:
        functions = parse_cuobjdump(listing)
        for name in names:
            instructions = functions.get(name)
            if not instructions:
                continue
            ops = {ins.pc: ins.opcode for ins in instructions}
            same = sum(1 for pc, op in wanted.items() if ops.get(pc) == op)
            if same >= MATCH * len(wanted):
                return listing
    return None


def _listings(binaries: Sequence[str], cuobjdump: str, timeout: float) -> Iterable[str]:
    for path in binaries:
        try:
            proc = subprocess.run(
                [cuobjdump, "-sass", path], capture_output=True, text=True, timeout=timeout
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0 and proc.stdout:
            yield proc.stdout


def sass_for(
    report_sass: dict[int, str],
    names: Sequence[str],
    *,
    binaries: Sequence[str] | None = None,
    timeout: float = 30.0,
) -> str | None:
    """The SASS listing of the binary that ran the kernel named ``names`` (mangled first), or
    ``None`` (no cuobjdump, no matching binary)."""
    cuobjdump = find_cuobjdump()
    if cuobjdump is None or not names:
        return None
    if binaries is None:
        binaries = candidate_binaries(names[-1])
    return matching_sass(report_sass, names, _listings(binaries, cuobjdump, timeout))


def sass_of_kernel(kernel: Any) -> str | None:
    """:func:`sass_for` a report's kernel (``analysis.kernel_lines.KernelPcs``): its sampled
    instructions by offset, its mangled name then its name."""
    names = [n for n in (kernel.mangled, kernel.name) if n]
    return sass_for({p.offset: p.sass for p in kernel.pcs if p.sass}, names)
