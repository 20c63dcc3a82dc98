"""Stage *sanitizer* (Check Memory): the function's call under NVIDIA's ``compute-sanitizer``
(``memcheck``: out-of-bounds and misaligned accesses; ``racecheck``: shared-memory hazards;
``initcheck``, ``synccheck``), each report on the source line it names.

A Triton kernel carries line information, so a report names the kernel's Python line; a
``load_inline`` kernel's report names the extension's ``cuda.cu`` (with ``-lineinfo``), whose
line is found in the Python file by its text (the CUDA source is a string there). The call runs
in a child process (:mod:`kernel_lens.agent.sanitizer_child`) under the tool, as the *ncu* stage
runs its child: a kernel that faults takes that process down, not the agent.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.analysis.sanitizer import SanitizerFinding, parse_sanitizer

__all__ = ["TOOLS", "find_sanitizer", "run_sanitizer", "sanitizer_env"]

#: The tools of compute-sanitizer Check Memory may run.
TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
#: The most reports compute-sanitizer prints (each is also counted per line).
PRINT_LIMIT = 100
NO_GPU = "Check Memory needs an NVIDIA GPU: run the agent on one (kernelLens.agentCommand)"


def find_sanitizer() -> str | None:
    """``compute-sanitizer`` on PATH, in ``$CUDA_HOME/bin`` or ``/usr/local/cuda/bin``."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidate = os.path.join(home, "bin", "compute-sanitizer")
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def _python_line(finding: SanitizerFinding, path: str, lines: list[str]) -> int | None:
    """The line of ``path`` a finding is about: its own line when it names ``path``; for another
    file (``load_inline``'s ``cuda.cu``), the one line of ``path`` with the same text.

    compute-sanitizer names a file by its base name alone (``in cuda.cu:8``, seen on the H200):
    the profiled file when the name is its name, else the newest extensions' file of that name
    (``TORCH_EXTENSIONS_DIR`` or torch's default) whose line has its text once in ``path``."""
    if finding.file is None or finding.line is None:
        return None
    if os.path.realpath(finding.file) == os.path.realpath(path):
        return finding.line
    if not os.path.dirname(finding.file) and finding.file == os.path.basename(path):
        return finding.line
    for candidate in _source_candidates(finding.file):
        found = _same_text_line(candidate, finding.line, lines)
        if found is not None:
            return found
    return None


def _source_candidates(name: str, limit: int = 20) -> list[str]:
    if os.path.dirname(name):
        return [name]
    home = os.path.expanduser("~")
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(
        home, ".cache", "torch_extensions"
    )
    found = glob.glob(os.path.join(root, "**", name), recursive=True)
    found.sort(key=lambda p: os.path.getmtime(p) if os.path.exists(p) else 0.0, reverse=True)
    return found[:limit]


def _same_text_line(file: str, line: int, lines: list[str]) -> int | None:
    try:
        with open(file, encoding="utf-8", errors="replace") as fh:
            source = fh.read(1 << 22).splitlines()
    except OSError:
        return None
    if not 1 <= line <= len(source):
        return None
    wanted = source[line - 1].strip()
    if len(wanted) < 4:
        return None
    same = [i + 1 for i, text in enumerate(lines) if text.strip() == wanted]
    return same[0] if len(same) == 1 else None


def sanitizer_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the checked child: the caller's, ``env`` on top, this package
    importable, Triton's interpreter off and PyTorch's caching allocator off."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child_env = dict(os.environ)
    child_env.update({str(k): str(v) for k, v in (env or {}).items()})
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in [child_env.get("PYTHONPATH", ""), os.path.dirname(package_root)] if p
    )
    child_env.pop("TRITON_INTERPRET", None)  # the GPU's kernels are the ones checked
    # PyTorch's caching allocator hands a tensor a slice of a larger block: a write past the
    # tensor's end lands inside the block and memcheck sees nothing (seen on the H200: a planted
    # write past the end, 0 errors). Each tensor its own cudaMalloc, so its end is the end.
    child_env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
    return child_env


def run_sanitizer(
    path: str,
    text: str,
    function: str,
    *,
    tool: str = "memcheck",
    timeout: float = 600.0,
    driver: str | None = None,
    argv: list[str] | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One call of ``function`` under ``compute-sanitizer --tool TOOL``.

    Returns:
        ``{"tool", "errors" (the tool's ERROR SUMMARY), "findings": [{…, "py_line"}], "log"}``.

    Raises:
        ProfileError: ``unsupported`` without a GPU or compute-sanitizer, ``timeout``,
            ``runtime`` when the child failed before the call.
    """
    if tool not in TOOLS:
        raise ProfileError("inputs", f"compute-sanitizer tool {tool!r}: one of {', '.join(TOOLS)}")
    sanitizer = find_sanitizer()
    if sanitizer is None:
        raise ProfileError(
            "unsupported",
            "compute-sanitizer was not found (it comes with the CUDA toolkit): put it on PATH "
            "or set CUDA_HOME",
        )
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as fh:
        fh.write(text)
        text_file = fh.name
    child_env = sanitizer_env(env)
    cmd = [
        sanitizer, "--tool", tool, "--print-limit", str(PRINT_LIMIT), "--error-exitcode", "0",
        "--show-backtrace", "device",
        sys.executable, "-m", "kernel_lens.agent.sanitizer_child", os.path.abspath(path),
        function, text_file,
    ]  # fmt: skip
    if driver is not None:
        cmd.append(json.dumps({"driver": os.path.abspath(driver), "argv": list(argv or []),
                               "cwd": cwd}))  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=child_env)
    except subprocess.TimeoutExpired:
        raise ProfileError(
            "timeout", f"compute-sanitizer did not finish within {timeout:.0f} s"
        ) from None
    finally:
        os.unlink(text_file)
    output = proc.stdout + "\n" + proc.stderr
    if proc.returncode == 3 and "no CUDA device" in output:
        raise ProfileError("unsupported", NO_GPU)
    findings, errors = parse_sanitizer(output)
    if errors is None and proc.returncode != 0:
        raise ProfileError(
            "runtime", f"compute-sanitizer failed (exit {proc.returncode}): {output[-600:]}"
        )
    lines = text.splitlines()
    rows = []
    for finding in findings:
        row = finding.to_json()
        row["py_line"] = _python_line(finding, path, lines)
        row["message"] = finding.message()
        rows.append(row)
    log = [line for line in output.splitlines() if line.startswith("=")]
    return {"tool": tool, "errors": errors or 0, "findings": rows, "log": "\n".join(log[-200:])}
