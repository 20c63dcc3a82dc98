"""Short kernel names at the parser's edges (found by mutation testing, docs/testing.md)."""

from __future__ import annotations

import pytest

from kernel_lens.analysis.names import short_kernel_name


@pytest.mark.parametrize(
    "name, short",
    [
        # CUTLASS's wrapper with several template arguments: the first names the kernel.
        (
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1, int>(Params)",
            "cutlass_80_simt_sgemm_128x64_8x5_nn_align1",
        ),
        # Only the outermost wrapper is looked through.
        ("void cutlass::Kernel<cutlass::Kernel<inner_kernel> >(P)", "Kernel"),
        # `->` is an arrow, not a closing bracket, in template and parameter lists.
        ("void ns::kern<decltype(a->b), 4>(int)", "kern"),
        ("void ns::kern<a->b>(int)", "kern"),
        ("void cutlass::Kernel<my_kernel<decltype(a->b), 2>, int>(P)", "my_kernel"),
        ("void f(int->x)", "f"),
        # A space before the template arguments, templates on several components.
        ("void ns::foo <int>(int)", "foo"),
        ("void ns::outer<int>::inner_kernel<float>(float)", "inner_kernel"),
        ("void ns::k(int, (anonymous namespace)::T)", "k"),
        ("void ns::k<(char)1>(int)", "k"),
        # A lambda as the last component: the templated component before it names the kernel.
        ("void ns::outer<int>::{lambda(float)#1}(float)", "outer"),
        ("void ns::outer<a->b>::{lambda(float)#1}(float)", "outer"),
        # A one-letter name: its brackets open at index 1.
        ("k<int>(float)", "k"),
        ("f(x)", "f"),
        # A space before the parameter list still leaves CUTLASS's template argument to name it.
        (
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1> (Params)",
            "cutlass_80_simt_sgemm_128x64_8x5_nn_align1",
        ),
        # A first template argument that is no name (a bracket at its index 0 holding a space
        # and a comma) leaves the wrapper's own name.
        ("void cutlass::Kernel<(a b, c)>(P)", "Kernel"),
    ],
)
def test_short_names(name: str, short: str) -> None:
    assert short_kernel_name(name) == short


@pytest.mark.parametrize(
    "name",
    # The last two: brackets of different kinds do not match (`(` … `>`).
    ["x<y>z>(int)", "k>", "void f(a))", "(", "void f<(>(int)", "void kern(int>", "k(a>(b)"],
)
def test_unbalanced_names_come_back_clipped(name: str) -> None:
    assert short_kernel_name(name) == name[:80]
