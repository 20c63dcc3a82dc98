"""``async def`` functions are awaited and generator functions consumed: the body runs, its lines
have their ops, and the result says how the function was run."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli

PATH = EXAMPLES / "nosetup" / "async_gen.py"
FAST = ["--budget-ms", "60", "--warmup-ms", "5"]


def _profile(function: str, trace_dir: str) -> dict[str, Any]:
    code, out, err = run_cli(
        "profile", f"{PATH}::{function}", "--json", "--trace-dir", trace_dir, *FAST
    )
    assert code == 0, (out, err)
    return out  # type: ignore[no-any-return]


def _ops(result: dict[str, Any], source_start: str) -> list[str]:
    for line in result["lines"]:
        if line["source"].startswith(source_start):
            return [op["name"] for op in line["ops"]]
    raise AssertionError(f"no line {source_start!r} in {[x['source'] for x in result['lines']]}")


@pytest.mark.parametrize(
    ("function", "style", "last_line", "op"),
    [
        ("scaled", "awaited", "return x * 3", "aten::mul"),
        ("chunks", "consumed", "yield x * i", "aten::mul"),
        ("async_chunks", "consumed", "yield x + i", "aten::add"),
        ("plain", "called", "return torch.ones(n) * 2", "aten::mul"),
    ],
)
def test_the_body_runs_and_the_result_says_how(
    function: str, style: str, last_line: str, op: str, trace_dir: str
) -> None:
    result = _profile(function, trace_dir)
    assert result["call_style"] == style
    # The body ran to its end: its last line's op was recorded, and the time is of that run.
    assert op in _ops(result, last_line)
    assert result["timing"]["median_ms"] > 0
