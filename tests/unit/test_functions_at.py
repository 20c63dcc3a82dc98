"""``function_at``: the function or kernel at an editor position (pure; 0-based positions)."""

import pytest

from kernel_lens.analysis.functions import NotInFunctionError, SourceSyntaxError, function_at

SRC = """import torch
import triton


@triton.jit
def square_kernel(p, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


def square(x):
    def helper(t):
        return t * t

    return helper(x)


class Model:
    @torch.compile
    def forward(self, x):
        return x + 1

    scale = 2


async def later(x):
    return x
"""


def line0(text: str) -> int:
    return next(i for i, line in enumerate(SRC.splitlines()) if text in line)


def test_a_position_in_a_function_gives_it_and_a_nested_def_gives_its_owner() -> None:
    assert function_at(SRC, line0("def square(x)"), 4).qualname == "square"
    assert function_at(SRC, line0("return t * t"), 8).qualname == "square"
    assert function_at(SRC, line0("return helper(x)")).qualname == "square"
    assert function_at(SRC, line0("async def later") + 1).qualname == "later"


def test_methods_are_qualified_and_decorator_lines_belong_to_the_def() -> None:
    assert function_at(SRC, line0("@torch.compile")).qualname == "Model.forward"
    assert function_at(SRC, line0("return x + 1")).qualname == "Model.forward"


def test_outside_any_function_says_where_to_put_the_cursor() -> None:
    for text in ("import torch", "scale = 2", "class Model"):
        with pytest.raises(NotInFunctionError) as exc:
            function_at(SRC, line0(text), 0)
        line1 = line0(text) + 1
        assert str(exc.value) == (
            "Kernel Lens: put the cursor in a function that launches kernels "
            f"(line {line1} is not in one)."
        )
        assert exc.value.line == line1


def test_a_kernel_is_not_a_function_to_profile() -> None:
    with pytest.raises(NotInFunctionError) as exc:
        function_at(SRC, line0("pid = tl.program_id"), 4)
    assert "square_kernel is a @triton.jit kernel" in str(exc.value)
    assert "put the cursor in the function that launches it" in str(exc.value)


def test_kernel_kind_finds_only_kernels() -> None:
    info = function_at(SRC, line0("pid = tl.program_id"), 4, kind="kernel")
    assert info.qualname == "square_kernel" and info.is_triton_kernel
    assert function_at(SRC, line0("@triton.jit"), kind="kernel").qualname == "square_kernel"
    with pytest.raises(NotInFunctionError) as exc:
        function_at(SRC, line0("return helper(x)"), kind="kernel")
    line1 = line0("return helper(x)") + 1
    assert str(exc.value) == (
        f"Kernel Lens: put the cursor in a @triton.jit kernel (line {line1} is not in one)."
    )


def test_a_broken_buffer_is_a_syntax_error() -> None:
    with pytest.raises(SourceSyntaxError):
        function_at("def f(:\n    pass\n", 1)
