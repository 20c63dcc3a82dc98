"""What Show Values says of each local (agent/stages/interp_values.py ``describe_value``): real
``tl.tensor`` objects as Triton's interpreter holds them (a ``TensorHandle`` over a NumPy
array), real tensors as the launch's storages; every kind of value the hover shows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import triton.language as tl
from triton.runtime.interpreter import TensorHandle

from kernel_lens.agent.stages.interp_values import MAX_ELEMENTS, Storages, describe_value


def _tensor(data: Any, ty: Any) -> Any:
    """A value of the interpreter: ``data`` held by a handle, typed ``ty``."""
    return tl.tensor(TensorHandle(data, getattr(ty, "scalar", ty)), ty)


def _block(data: Any, dtype: Any, shape: list[int]) -> Any:
    return _tensor(data, tl.block_type(dtype, shape))


def _storages(x: torch.Tensor) -> tuple[Storages, int]:
    """``x`` as the launch's argument ``x_ptr``, and its first element's address."""
    storages = Storages()
    storages.add("x_ptr", x)
    return storages, x.data_ptr()


def _head(name: str, kind: str, dtype: str, shape: list[int]) -> dict[str, Any]:
    return {"name": name, "kind": kind, "dtype": dtype, "shape": shape}


def test_float_block_min_max_and_nans() -> None:
    data = np.array([1.5, -2.25, np.nan, np.inf], dtype=np.float32)
    assert describe_value("x", _block(data, tl.float32, [4])) == {
        **_head("x", "block", "float32", [4]),
        "truncated": False,
        "data": [1.5, -2.25, None, None],
        "min": -2.25,
        "max": 1.5,
        "nan": 1,
        "text": "x: float32[4] min −2.25 max 1.5 · 1 NaN",
    }
    no_finite = _block(np.array([np.nan, np.nan], dtype=np.float32), tl.float32, [2])
    assert describe_value("y", no_finite) == {
        **_head("y", "block", "float32", [2]),
        "truncated": False,
        "data": [None, None],
        "nan": 2,
        "text": "y: float32[2] (no finite value) · 2 NaN",
    }


def test_a_large_block_is_cut_but_its_range_is_whole() -> None:
    n = 2 * MAX_ELEMENTS
    got = describe_value("big", _block(np.arange(n, dtype=np.float32), tl.float32, [n]))
    assert got is not None
    assert got["truncated"] is True
    assert len(got["data"]) == MAX_ELEMENTS
    assert (got["min"], got["max"]) == (0.0, float(n - 1))
    assert got["text"] == f"big: float32[{n}] min 0 max {n - 1}"


def test_int_blocks_list_1d_and_range_2d() -> None:
    offs = _block(np.arange(-2, 6, dtype=np.int32), tl.int32, [8])
    assert describe_value("offs", offs) == {
        **_head("offs", "block", "int32", [8]),
        "truncated": False,
        "data": [-2, -1, 0, 1, 2, 3, 4, 5],
        "min": -2,
        "max": 5,
        "text": "offs: int32[8] −2 −1 0 … 5",
    }
    idx = _block(np.arange(8, dtype=np.int32).reshape(2, 4), tl.int32, [2, 4])
    assert describe_value("idx", idx) == {
        **_head("idx", "block", "int32", [2, 4]),
        "truncated": False,
        "data": list(range(8)),
        "min": 0,
        "max": 7,
        "text": "idx: int32[2×4] min 0 max 7",
    }
    # A value broadcast to its block's shape (the interpreter keeps one element).
    broadcast = _block(np.array([3], dtype=np.int32), tl.int32, [2, 2])
    got = describe_value("b", broadcast)
    assert got is not None
    assert (got["data"], got["text"]) == ([3, 3, 3, 3], "b: int32[2×2] min 3 max 3")


@pytest.mark.parametrize(
    ("lanes", "masked", "tail"),
    [
        ([1, 1, 1, 1], 0, "all lanes on"),
        ([0, 0, 0, 0], 4, "all lanes masked"),
        ([1, 1, 1, 0], 1, "1 lanes masked"),
    ],
)
def test_mask_blocks_count_lanes_off(lanes: list[int], masked: int, tail: str) -> None:
    mask = _block(np.array(lanes, dtype=np.bool_), tl.int1, [4])
    assert describe_value("m", mask) == {
        **_head("m", "block", "bool", [4]),
        "truncated": False,
        "masked": masked,
        "data": [bool(v) for v in lanes],
        "text": f"m: bool[4] · {tail}",
    }


def test_pointer_blocks_are_offsets_into_their_argument() -> None:
    x = torch.arange(8, dtype=torch.float32)
    storages, base = _storages(x)
    ptrs = np.array([base + 4 * i for i in range(8)], dtype=np.uint64)
    block = _block(ptrs, tl.pointer_type(tl.float32), [8])
    assert describe_value("p", block, storages) == {
        **_head("p", "pointers", "*float32", [8]),
        "truncated": False,
        "arg": "x_ptr",
        "data": list(range(8)),
        "min": 0,
        "max": 7,
        "text": "p: *float32[8] → x_ptr + 0 1 2 … 7",
    }
    outside = _block(np.array([16, 32], dtype=np.uint64), tl.pointer_type(tl.float32), [2])
    assert describe_value("p", outside, storages) == {
        **_head("p", "pointers", "*float32", [2]),
        "truncated": False,
        "text": "p: *float32[2] (addresses outside every argument)",
    }


def test_scalars_numbers_and_pointers() -> None:
    x = torch.arange(8, dtype=torch.float32)
    storages, base = _storages(x)
    ptr = _tensor(np.array([base + 8], dtype=np.uint64), tl.pointer_type(tl.float32))
    assert describe_value("q", ptr, storages) == {
        **_head("q", "scalar", "*float32", []),
        "text": "q: *float32 → x_ptr + 2",
    }
    unknown = _tensor(np.array([4096], dtype=np.uint64), tl.pointer_type(tl.float16))
    assert describe_value("q", unknown) == {
        **_head("q", "scalar", "*float16", []),
        "text": "q: *float16 → 0x1000",
    }
    number = _tensor(np.array([-0.125], dtype=np.float32), tl.float32)
    assert describe_value("f", number) == {
        **_head("f", "scalar", "float32", []),
        "text": "f: float32 −0.125",
        "value": -0.125,
    }


def test_python_values_and_constexprs() -> None:
    assert describe_value("n", 5) == {**_head("n", "scalar", "int", []), "text": "n: 5", "value": 5}
    assert describe_value("flag", True) == {
        **_head("flag", "scalar", "bool", []),
        "text": "flag: 1",
        "value": True,
    }
    assert describe_value("BLOCK", tl.constexpr(128)) == {
        **_head("BLOCK", "constexpr", "constexpr", []),
        "text": "BLOCK: constexpr 128",
        "value": 128,
    }
    # Not values: the interpreter's own names, a constexpr string, a function.
    assert describe_value("_n", 5) is None
    assert describe_value("ACT", tl.constexpr("relu")) is None
    assert describe_value("f", len) is None
