"""Short, human names for the CUDA kernels that a profiler trace reports.

Kernel names in traces are demangled C++ signatures, often several hundred characters of
templates, lambdas and parameter lists. Code lenses and hovers need the one word a person
recognises: `vectorized_elementwise_kernel`, `triton_poi_fused_add_relu_0`, `sm80_xmma_gemm_…`.
"""

from __future__ import annotations

import re

__all__ = ["short_kernel_name"]

_FALLBACK_CHARS = 80
_IDENTIFIER = re.compile(r"[A-Za-z_~][A-Za-z0-9_]*")
_OPENERS = {"<": ">", "(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}

# CUTLASS launches every GEMM through one generic entry point; the template argument names the
# actual kernel (`cutlass_80_simt_sgemm_128x64_8x5_nn_align1`, `GemmUniversal`), so that is the
# name worth showing.
_GENERIC_WRAPPERS = frozenset({"cutlass::Kernel", "cutlass::Kernel2", "cutlass::device_kernel"})

# Names the profiler gives to copies and fills: they carry parentheses but are not signatures.
_NOT_SIGNATURES = ("Memcpy ", "Memset ")


def short_kernel_name(name: str) -> str:
    """Return a short name for a CUDA kernel, for code lenses and hovers.

    The rules, in order:

    - Profiler names that are not C++ signatures (`Memcpy HtoD (Pageable -> Device)`,
      `Memset (Device)`) and plain C names (`triton_poi_fused_add_relu_0`,
      `sm80_xmma_gemm_…_cublas`) come back unchanged.
    - For a demangled C++ signature, the parameter list, the template arguments, the return type
      (`void`, …) and the namespaces are dropped, leaving the last identifier of the function's
      qualified name: `void at::native::vectorized_elementwise_kernel<4, …>(int, …)` gives
      `vectorized_elementwise_kernel`. Nested templates, `(anonymous namespace)` and lambdas
      such as `{lambda(float)#1}` inside the arguments are skipped over by bracket matching.
    - CUTLASS's generic entry points (`cutlass::Kernel`, `cutlass::Kernel2`,
      `cutlass::device_kernel`) are named by their first template argument instead, shortened by
      the same rules: `void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(…)`
      gives `cutlass_80_simt_sgemm_128x64_8x5_nn_align1`.

    Never raises: a name that cannot be parsed comes back as its first 80 characters.

    Args:
        name: the kernel name as recorded in the trace (`name` of a `cat == "kernel"` event).

    Returns:
        The short name; never empty unless `name` is empty.
    """
    try:
        text = name.strip()
        if not text or text.startswith(_NOT_SIGNATURES):
            return text
        short = _short_cpp_name(text, depth=0)
    except Exception:
        short = None
    return short if short else name.strip()[:_FALLBACK_CHARS]


def _short_cpp_name(text: str, *, depth: int) -> str | None:
    """The last identifier of the function name in a demangled signature, or None."""
    qualified, template_args = _split_signature(text)
    if qualified is None:
        return None
    if qualified in _GENERIC_WRAPPERS and template_args and depth == 0:
        first_arg = _split_top_level(template_args, ",")[0].strip()
        inner = _short_cpp_name(first_arg, depth=depth + 1) if first_arg else None
        if inner:
            return inner
    # Walk back over components that are not names, such as `{lambda(int)#1}`.
    for part in reversed(_split_top_level(qualified, "::")):
        part = _strip_template(part.strip())
        if _IDENTIFIER.fullmatch(part):
            return part
    return None


def _strip_template(part: str) -> str:
    """`name<args>` without its trailing template argument list."""
    if part.endswith(">"):
        open_at = _matching_open(part, len(part) - 1)
        if open_at is not None:
            return part[:open_at].rstrip()
    return part


def _split_signature(text: str) -> tuple[str | None, str | None]:
    """Split `ret ns::name<targs>(params)` into (`ns::name`, `targs`); (None, None) if malformed."""
    head = text
    if head.endswith(")"):
        open_at = _matching_open(head, len(head) - 1)
        if open_at is None:
            return None, None
        head = head[:open_at].rstrip()
    template_args: str | None = None
    if head.endswith(">"):
        open_at = _matching_open(head, len(head) - 1)
        if open_at is None:
            return None, None
        template_args = head[open_at + 1 : -1]
        head = head[:open_at].rstrip()
    # What is left is `[return type] qualified::name`; the return type is separated by a space
    # outside any brackets, while `(anonymous namespace)` keeps its space inside parentheses.
    words = _split_top_level(head, " ")
    words = [w for w in words if w]
    if not words:
        return None, None
    return words[-1], template_args


def _matching_open(text: str, close_at: int) -> int | None:
    """Index of the bracket that opens the one closing at `close_at`, scanning backwards."""
    stack: list[str] = []
    for i in range(close_at, -1, -1):
        ch = text[i]
        if ch in _CLOSERS:
            # `->` (a trailing return type) is an arrow, not a bracket.
            if ch == ">" and i > 0 and text[i - 1] == "-":
                continue
            stack.append(ch)
        elif ch in _OPENERS:
            if not stack or _OPENERS[ch] != stack[-1]:
                return None
            stack.pop()
            if not stack:
                return i
    return None


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split `text` on `sep` where it occurs outside every kind of bracket."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS and not (ch == ">" and i > 0 and text[i - 1] == "-"):
            depth = max(depth - 1, 0)
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts
