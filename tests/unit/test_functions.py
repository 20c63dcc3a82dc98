"""The pure function finder (shared by the agent and the language server)."""

import pytest

from kernel_lens.analysis.functions import SourceSyntaxError, find_function, find_functions

SRC = """import torch

# a comment
# kernel-lens: inputs = (torch.ones(3),)
@decorator
def f(x, *, y=2):
    return x * y


class C:
    # kernel-lens: inputs = ((1,), {"k": 2})
    def m(self, a, k=0):
        def inner():
            return 1
        return a

    class D:
        async def g(self):
            pass


def no_inputs():
    pass
"""


def test_lists_functions_and_methods_in_order() -> None:
    found = find_functions(SRC)
    assert [f.qualname for f in found] == ["f", "C.m", "C.D.g", "no_inputs"]
    f = found[0]
    assert (f.first_line, f.def_line, f.body_first_line, f.last_line) == (5, 6, 7, 7)
    assert f.params == ("x", "y")
    assert f.inputs_expr == "(torch.ones(3),)"
    assert f.inputs_line == 4
    assert f.name_column == 4
    m = found[1]
    assert m.is_method and m.inputs_expr == '((1,), {"k": 2})' and m.inputs_line == 11
    assert m.last_line == 15
    assert found[3].inputs_expr is None


def test_find_by_name_and_by_line() -> None:
    assert find_function(SRC, name="C.m").def_line == 12  # type: ignore[union-attr]
    assert find_function(SRC, name="missing") is None
    # A line inside the inner (unlisted) function belongs to the method around it.
    assert find_function(SRC, line=14).qualname == "C.m"  # type: ignore[union-attr]
    assert find_function(SRC, line=5).qualname == "f"  # type: ignore[union-attr]
    assert find_function(SRC, line=9) is None


def test_directive_must_be_in_the_comment_block_directly_above() -> None:
    src = "# kernel-lens: inputs = (1,)\n\ndef f(x):\n    return x\n"
    assert find_functions(src)[0].inputs_expr is None


def test_syntax_error_names_the_line() -> None:
    with pytest.raises(SourceSyntaxError) as info:
        find_functions("def f(:\n    pass\n")
    assert info.value.line == 1
