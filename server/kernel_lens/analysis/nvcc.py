"""nvcc diagnostics and ``load_inline`` source layout: map ``cuda.cu`` lines back to the lines of
the Python file that holds the CUDA source as a string. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kernel_lens.wire.results import NvccProblem

__all__ = ["SourcePiece", "cuda_file_text", "map_cuda_line", "parse_nvcc_diagnostics"]

#: What torch.utils.cpp_extension.load_inline puts before the CUDA sources (torch 2.x).
CUDA_PREAMBLE = ("#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>")

_DIAG = re.compile(
    r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?P<severity>error|warning)(?: #[\w-]+)?: "
    r"(?P<message>.*)$"
)


@dataclass(frozen=True)
class SourcePiece:
    """One CUDA source string: its text and the Python line where the string starts.

    ``python_line`` is the line of the string literal's opening quotes (``None`` when the text
    is built at run time and has no single literal).
    """

    text: str
    python_line: int | None


def cuda_file_text(pieces: list[SourcePiece]) -> tuple[str, list[tuple[int, SourcePiece]]]:
    """The ``cuda.cu`` load_inline writes, and the 1-based cuda.cu line where each piece starts."""
    parts = list(CUDA_PREAMBLE)
    starts: list[tuple[int, SourcePiece]] = []
    line = len(CUDA_PREAMBLE) + 1
    for piece in pieces:
        starts.append((line, piece))
        parts.append(piece.text)
        line += piece.text.count("\n") + 1
    return "\n".join(parts), starts


def map_cuda_line(cuda_line: int, starts: list[tuple[int, SourcePiece]]) -> int | None:
    """The Python line of 1-based ``cuda_line`` of cuda.cu, or ``None`` (preamble, unknown)."""
    for start, piece in reversed(starts):
        if cuda_line >= start:
            if piece.python_line is None:
                return None
            return piece.python_line + (cuda_line - start)
    return None


def parse_nvcc_diagnostics(
    output: str, cuda_file: str, starts: list[tuple[int, SourcePiece]]
) -> list[NvccProblem]:
    """nvcc's errors and warnings located in ``cuda_file`` (header noise is dropped)."""
    found: list[NvccProblem] = []
    for raw in output.splitlines():
        m = _DIAG.match(raw.strip())
        if not m or not m.group("file").endswith(cuda_file):
            continue
        cuda_line = int(m.group("line"))
        found.append(
            {
                "severity": m.group("severity"),
                "message": m.group("message").strip(),
                "cuda_line": cuda_line,
                "line": map_cuda_line(cuda_line, starts),
            }
        )
    return found
