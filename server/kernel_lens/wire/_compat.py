"""``NotRequired`` on every Python the agent may run on (3.10 has no ``typing.NotRequired``).

The marker matters to type checkers and to ``scripts/gen_wire.py`` (both on 3.11+); on 3.10 a
stand-in keeps the modules importable, where nothing reads which keys are required.
"""

import sys

__all__ = ["NotRequired"]

if sys.version_info >= (3, 11):
    from typing import NotRequired as NotRequired
else:  # pragma: no cover - Python 3.10

    class NotRequired:
        """``NotRequired[T]`` is ``T`` (the key counts as required at run time on 3.10)."""

        def __class_getitem__(cls, item: object) -> object:
            return item
