"""Suggested inputs directives from type hints, defaults and names (issue 23, item 5): the pure
candidate builder; the agent runs each candidate (tests/cli/test_capture_cli.py)."""

from __future__ import annotations

from kernel_lens.analysis.functions import find_function
from kernel_lens.analysis.suggest_inputs import Param, candidates, params_of


def _params(text: str, name: str) -> list[Param]:
    info = find_function(text, name=name)
    assert info is not None
    return params_of(text, info)


def test_hints_defaults_and_keyword_only_parameters_are_read_from_the_def() -> None:
    text = (
        "from typing import Optional\n"
        "class A:\n"
        "    def f(self, x: torch.Tensor, n: int, mask: Optional[Tensor] = None, *, eps: float,"
        " tag: str = 'a'):\n"
        "        pass\n"
    )
    assert _params(text, "A.f") == [
        Param("x", "torch.Tensor"),
        Param("n", "int"),
        Param("mask", "Optional[Tensor]", has_default=True),
        Param("eps", "float", keyword_only=True),
        Param("tag", "str", has_default=True, keyword_only=True),
    ]


def test_a_typed_signature_gives_typed_values_and_leaves_defaults_alone() -> None:
    params = [
        Param("x", "torch.Tensor"),
        Param("n", "int"),
        Param("mask", "Optional[Tensor]", has_default=True),
        Param("eps", "float", keyword_only=True),
    ]
    first = candidates(params)[0]
    assert first.expr == "((), dict(x=torch.randn(1024), n=1024, eps=1.0))"
    assert first.guessed == () and first.shape == (1024,)


def test_an_optional_without_default_is_none_and_ints_come_from_size_names() -> None:
    params = [Param("x"), Param("bias", "Tensor | None"), Param("BLOCK_SIZE")]
    first = candidates(params)[0]
    assert first.expr == "((), dict(x=torch.randn(1024), bias=None, BLOCK_SIZE=128))"
    assert first.guessed == ("BLOCK_SIZE",)


def test_tensors_are_tried_at_each_rank_matrices_first_for_two_of_them() -> None:
    one = [c.shape for c in candidates([Param("x")])]
    assert one == [(1024,), (64, 64), (4, 64, 64), (2, 4, 64, 64)]
    two = [c.shape for c in candidates([Param("a"), Param("b")])]
    assert two[:2] == [(64, 64), (1024,)]


def test_nothing_to_shape_gives_one_candidate_and_no_parameter_an_empty_tuple() -> None:
    assert [c.expr for c in candidates([Param("n", "int"), Param("flag", "bool")])] == [
        "((), dict(n=1024, flag=False))"
    ]
    assert [c.expr for c in candidates([Param("x", has_default=True)])] == ["()"]


def test_cuda_candidates_put_the_device_on_every_tensor() -> None:
    first = candidates([Param("x"), Param("idx")], device="cuda")[0]
    assert first.expr == (
        "((), dict(x=torch.randn(1024, device='cuda'), "
        "idx=torch.randint(0, 16, (1, 64), device='cuda')))"
    )
