"""``kernelLens/functions``: the functions, methods and ``@triton.jit`` kernels of a document,
for pickers ("Profile function…") on the client side."""

from __future__ import annotations

from kernel_lens.analysis.functions import FunctionInfo, SourceSyntaxError
from kernel_lens.lsp.common import RequestFailed, document_source, request_failed
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.lsp import REQ_FUNCTIONS, FunctionEntry, FunctionsParams, FunctionsResult

__all__ = ["function_entries", "setup"]


def function_entries(functions: list[FunctionInfo]) -> list[FunctionEntry]:
    """The wire form of found functions (0-based ``def`` lines), in source order."""
    return [
        {
            "name": info.qualname,
            "line": info.def_line - 1,
            "kind": "triton_kernel"
            if info.is_triton_kernel
            else "method"
            if info.is_method
            else "function",
        }
        for info in functions
    ]


async def functions(ls: KernelLensServer, params: FunctionsParams) -> FunctionsResult:
    """The document's functions; a document that does not parse is a user-ready error."""
    try:
        source = document_source(ls, params.uri)
    except ProfileError as err:
        raise request_failed(err) from None
    try:
        # The document's model (one parse per version; a big file's made off the loop).
        model = await ls.models.get(ls, params.uri, source)
        model.check()
        found = list(model.functions)
    except SourceSyntaxError as exc:
        raise RequestFailed(message=f"Kernel Lens: fix the syntax error first ({exc}).") from None
    return {"functions": function_entries(found)}


def setup(ls: KernelLensServer) -> None:
    """Register the request."""
    ls.feature(REQ_FUNCTIONS)(functions)
