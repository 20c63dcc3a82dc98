"""Stage *light* (*Profile Script (Light)*, issue 36): the light whole-run profile of a script in a
process of its own (`kernel_lens.agent.light`, under Triton's Proton), its lines given the text
they had, in the wire's shape (:class:`~kernel_lens.wire.results.LightResult`).

Why a child process: CUPTI takes one client per process, and this agent has the torch profiler
(Kineto, the other client) primed; the child has run nothing but the script. It is in the
agent's process group, so a cancel or the job's time limit, which stop the agent and what it
started, stop the run too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any

from kernel_lens.agent.errors import ProfileError
from kernel_lens.agent.stages.sanitizer import sanitizer_env
from kernel_lens.analysis.light_lines import light_answer
from kernel_lens.wire.jobs import LightRequest
from kernel_lens.wire.results import LightLine, LightResult

__all__ = ["light_rows", "run_light"]

#: How much of the child's stderr an error without an answer quotes.
_TAIL = 1500


def _child_env(env: dict[str, str]) -> dict[str, str]:
    """The child's environment: the agent's, ``env`` on top, this package importable, and
    neither Triton's interpreter nor the caching allocator switched (the GPU's kernels run)."""
    child = sanitizer_env(env)
    child.pop("PYTORCH_NO_CUDA_MEMORY_CACHING", None)
    if "PYTORCH_NO_CUDA_MEMORY_CACHING" in env:
        child["PYTORCH_NO_CUDA_MEMORY_CACHING"] = env["PYTORCH_NO_CUDA_MEMORY_CACHING"]
    return child


def light_rows(
    files: dict[str, dict[str, Any]], script: str, text: str | None
) -> dict[str, list[LightLine]]:
    """`light_lines`'s ``files`` as the wire's rows, sorted by line, each with the text its line
    had (the script's from ``text``, the run's buffer; the others' from disk, as they ran)."""
    out: dict[str, list[LightLine]] = {}
    script = os.path.abspath(script)
    for path, by_line in files.items():
        if text is not None and os.path.abspath(path) == script:
            lines = text.splitlines()
        else:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    lines = fh.read(1 << 24).splitlines()
            except OSError:
                lines = []
        rows: list[LightLine] = []
        for key, got in by_line.items():
            no = int(key)
            rows.append(
                {
                    "line": no,
                    "source": lines[no - 1].strip() if 0 < no <= len(lines) else "",
                    "kernel_us": float(got["kernel_us"]),
                    "launches": int(got["launches"]),
                    "kernels": [
                        {"name": str(k["name"]), "us": float(k["us"]), "count": int(k["count"])}
                        for k in got["kernels"]
                    ],
                }
            )
        rows.sort(key=lambda r: r["line"])
        out[os.path.abspath(path)] = rows
    return out


def run_light(request: LightRequest, text: str | None) -> LightResult:
    """Run ``python -m kernel_lens.agent.light`` on the script and read its answer.

    Raises:
        ProfileError: the child's own error (``unsupported`` without CUDA or Proton, or when
            another CUPTI client holds the process; how the script ended badly), ``timeout``,
            ``internal`` when it ended without an answer.
    """
    path = os.path.abspath(request.path)
    command = [sys.executable, "-m", "kernel_lens.agent.light", path]
    for folder in request.workspace:
        command += ["--workspace", os.path.abspath(folder)]
    text_file = None
    if text is not None:
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, encoding="utf-8") as fh:
            fh.write(text)
            text_file = fh.name
        command += ["--text", text_file]
    command += ["--", *request.argv]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=request.timeout,
            env=_child_env(dict(request.env)),
            cwd=request.cwd or os.path.dirname(path),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ProfileError(
            "timeout", f"the light profile did not finish within {request.timeout:.0f} s"
        ) from None
    finally:
        if text_file is not None:
            os.unlink(text_file)
    answer, printed = light_answer(done.stdout)
    printed = [x for x in printed if x]
    # The script's own output, in the server's log (stdout carried the answer).
    if printed or done.stderr:
        sys.stderr.write("\n".join([*printed, done.stderr.rstrip("\n")]).strip("\n") + "\n")
    if answer is None:
        raise ProfileError(
            "internal",
            f"the light profile ended without an answer (exit {done.returncode}): "
            f"{done.stderr[-_TAIL:].strip()}",
        )
    if not answer.get("ok"):
        raise ProfileError.from_json(answer["error"])
    got = answer["result"]
    return {
        "mode": "light",
        "path": path,
        "device": str(got.get("device") or "CUDA"),
        "files": light_rows(got.get("files") or {}, path, text),
        "total_kernel_us": float(got.get("total_kernel_us") or 0.0),
        "other_us": float(got.get("other_us") or 0.0),
        "launches": int(got.get("launches") or 0),
        "label": str(got.get("label") or ""),
        "wall_s": float(got.get("wall_s") or 0.0),
        "stored_bytes": int(got.get("stored_bytes") or 0),
        "profile_path": str(got.get("profile_path") or ""),
        "triton": str(got.get("triton") or "?"),
    }
