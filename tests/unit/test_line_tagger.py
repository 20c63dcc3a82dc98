"""Which frames the line tagger instruments, with a stand-in for ``record_function``.

The tagger must open one ``src:<line>`` range per executed line of the profiled function's own
(outermost) frame, close it before the next line's and on return, and leave helpers, recursion,
comprehensions and decorator wrappers on the calling line. ``load_target`` must hand it the
undecorated function's code object.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.stages.ops import LineTagger
from kernel_lens.agent.stages.target import load_target


class Ranges:
    """``record_function`` stand-in: logs ``open src:N`` / ``close src:N``."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def __call__(self, name: str) -> Any:
        log = self.log

        class Range:
            def __enter__(self) -> Range:
                log.append(f"open {name}")
                return self

            def __exit__(self, *exc: object) -> None:
                log.append(f"close {name}")

        return Range()

    def opened(self) -> list[int]:
        return [int(x.split(":")[1]) for x in self.log if x.startswith("open")]

    def balanced(self) -> bool:
        """Every range closed before the next one opens."""
        depth = 0
        for entry in self.log:
            depth += 1 if entry.startswith("open") else -1
            if depth not in (0, 1):
                return False
        return depth == 0


def helper(x: int) -> int:
    y = x + 1
    return y


def profiled(n: int) -> int:
    a = helper(n)
    b = [i * 2 for i in range(3)]
    if n > 0:
        a += profiled(n - 1)
    return a + len(b)


def _line(fn: Any, offset: int) -> int:
    return int(fn.__code__.co_firstlineno) + offset


def test_only_the_outermost_frame_of_the_code_is_tagged() -> None:
    ranges = Ranges()
    with LineTagger(profiled.__code__, range_factory=ranges):
        assert profiled(2) == 15
    # Each line of the body once (the recursive calls, helper and the comprehension stay on
    # their calling line).
    assert ranges.opened() == [_line(profiled, i) for i in (1, 2, 3, 4, 5)]
    assert ranges.balanced()
    assert ranges.log[0] == f"open src:{_line(profiled, 1)}"
    assert ranges.log[-1] == f"close src:{_line(profiled, 5)}"


def test_each_call_in_the_block_is_tagged_and_the_tracer_restored() -> None:
    ranges = Ranges()
    seen: list[str] = []

    def previous(frame: Any, event: str, arg: Any) -> None:
        seen.append(event)

    sys.settrace(previous)
    try:
        with LineTagger(helper.__code__, range_factory=ranges):
            helper(1)
            helper(2)
        assert sys.gettrace() is previous
    finally:
        sys.settrace(None)
    assert ranges.opened() == [_line(helper, 1), _line(helper, 2)] * 2
    assert ranges.balanced()


def test_a_raising_line_closes_its_range() -> None:
    ranges = Ranges()

    def boom() -> None:
        x = 1
        raise ValueError(x)

    with pytest.raises(ValueError), LineTagger(boom.__code__, range_factory=ranges):
        boom()
    assert ranges.opened() == [_line(boom, 1), _line(boom, 2)]
    assert ranges.balanced()


def test_other_code_is_not_tagged() -> None:
    ranges = Ranges()
    with LineTagger(helper.__code__, range_factory=ranges):
        profiled(0)  # calls helper once: only helper's own lines
    assert ranges.opened() == [_line(helper, 1), _line(helper, 2)]


SOURCE = textwrap.dedent(
    """\
    import functools


    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        return wrapper


    def helper(x):
        y = x + 1
        return y


    @deco
    @deco
    def f():
        a = helper(1)
        b = [i for i in range(3)]
        return a + len(b)


    class K:
        def m(self):
            return helper(2)
    """
)


def test_load_target_tags_the_undecorated_function(tmp_path: Path) -> None:
    path = tmp_path / "decorated.py"
    path.write_text(SOURCE)
    target = load_target(str(path), name="f")
    assert target.code.co_name == "f" and target.code.co_firstlineno == 17  # its decorators
    assert target.code.co_filename == str(path)
    ranges = Ranges()
    with LineTagger(target.code, range_factory=ranges):
        assert target.call() == 5
    # The body's lines, not the wrappers' `return fn(...)` (line 7) nor helper's (13, 14).
    assert ranges.opened() == [20, 21, 22]
    assert ranges.balanced()


def test_load_target_tags_a_method_body(tmp_path: Path) -> None:
    path = tmp_path / "method.py"
    path.write_text(SOURCE)
    target = load_target(str(path), name="K.m")
    assert target.code.co_name == "m" and target.code.co_firstlineno == 26
    ranges = Ranges()
    with LineTagger(target.code, range_factory=ranges):
        assert target.call() == 3
    assert ranges.opened() == [27]


KINDS = textwrap.dedent(
    """\
    import functools


    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        return wrapper


    class K:
        @staticmethod
        def s():
            return 1

        @classmethod
        def c(cls):
            return cls.__name__

        @deco
        def m(self):
            return 2


    def deep():
        return 3


    for _ in range(25):
        deep = deco(deep)


    class Callable:
        def __call__(self):
            return 4


    def obj():
        return 5


    obj = Callable()
    """
)


@pytest.mark.parametrize(
    "name, first, value",
    [("K.s", 13, 1), ("K.c", 17, "K"), ("K.m", 21, 2)],
)
def test_static_class_and_decorated_methods(
    tmp_path: Path, name: str, first: int, value: object
) -> None:
    path = tmp_path / "kinds.py"
    path.write_text(KINDS)
    target = load_target(str(path), name=name)
    assert target.code.co_name == name.split(".")[1]
    assert target.code.co_firstlineno == first
    ranges = Ranges()
    with LineTagger(target.code, range_factory=ranges):
        assert target.call() == value
    assert ranges.opened() == [first + 2]  # the decorator line, the def, then the body


@pytest.mark.parametrize("name, line", [("deep", 26), ("obj", 39)])
def test_what_cannot_be_seen_into_is_said(tmp_path: Path, name: str, line: int) -> None:
    from kernel_lens.agent.errors import ProfileError

    path = tmp_path / "kinds.py"
    path.write_text(KINDS)
    with pytest.raises(ProfileError) as info:
        load_target(str(path), name=name)
    assert (info.value.kind, info.value.line) == ("unsupported", line)
    assert info.value.message == (
        f"'{name}' is not a plain Python function of this file (a compiled or wrapped object "
        "Kernel Lens cannot see into)"
    )


def stops_tracing() -> int:
    a = 1
    sys.settrace(None)  # a debugger or coverage tool turning tracing off mid-call
    return a


def test_a_block_left_inside_the_frame_closes_its_range_and_the_tagger_tags_again() -> None:
    ranges = Ranges()
    tagger = LineTagger(stops_tracing.__code__, range_factory=ranges)
    with tagger:
        stops_tracing()
    # No return event came: leaving the block closes the open range and forgets the frame.
    assert ranges.opened() == [_line(stops_tracing, 1), _line(stops_tracing, 2)]
    assert ranges.balanced()
    with tagger:
        stops_tracing()
    assert ranges.opened() == [_line(stops_tracing, 1), _line(stops_tracing, 2)] * 2
    assert ranges.balanced()
