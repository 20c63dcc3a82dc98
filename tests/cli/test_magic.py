"""The ``%%kernel_lens`` / ``%kernel_lens`` magic in an in-process IPython shell, on CPU torch."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("IPython")
torch = pytest.importorskip("torch")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from kernel_lens.analysis.report_html import format_profile_html  # noqa: E402
from kernel_lens.notebook.magic import (  # noqa: E402
    MagicOptions,
    MagicUsageError,
    ProfileView,
    parse_options,
)

FAST = "--reps 3 --budget-ms 20 --warmup-ms 1 --runs 1"


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "cache"))
    shell = InteractiveShell.instance()
    shell.reset()
    shell.run_line_magic("colors", "nocolor")
    shell.run_line_magic("load_ext", "kernel_lens")
    ok = shell.run_cell("import torch\nx = torch.randn(64, 64)")
    assert ok.success
    yield shell
    shell.reset()


def _ops(result: dict[str, Any]) -> dict[int, list[str]]:
    return {line["line"]: [op["name"] for op in line["ops"]] for line in result["lines"]}


def _run(ip: InteractiveShell, text: str) -> dict[str, Any]:
    out = ip.run_cell(text)
    assert out.success, out.error_in_exec
    assert isinstance(out.result, ProfileView)
    return out.result.result


def test_cell_ops_land_on_the_cells_own_lines(ip: InteractiveShell, tmp_path: Path) -> None:
    result = _run(ip, f"%%kernel_lens {FAST}\n# scale, then reduce\nw = x * 3\ns = w.sum()\n")
    ops = _ops(result)
    assert "aten::mul" in ops[2]
    assert "aten::sum" in ops[3]
    assert 1 not in ops  # the comment ran nothing
    assert [line["source"] for line in result["lines"]] == ["w = x * 3", "s = w.sum()"]
    assert result["function"].startswith("cell")
    assert result["device_kind"] == "cpu"
    assert Path(result["trace_path"]).is_file()
    assert Path(result["trace_path"]).is_relative_to(tmp_path / "cache")


def test_cell_timing_has_the_agents_keys_and_the_asked_reps(ip: InteractiveShell) -> None:
    timing = _run(ip, f"%%kernel_lens {FAST}\ny = x @ x\n")["timing"]
    for key in ("median_ms", "spread_pct", "reps", "method", "min_ms", "q1_ms", "q3_ms"):
        assert key in timing
    assert timing["reps"] == 3
    assert timing["method"] == "perf-counter"
    assert timing["median_ms"] > 0
    assert len(timing["samples_ms"]) == 3


def test_a_cell_leaves_the_results_of_one_normal_run(ip: InteractiveShell) -> None:
    ip.run_cell("n = 0")
    _run(ip, f"%%kernel_lens {FAST}\nn = n + 1\nw = x * 2\n")
    # Timed and profiled runs write a scratch namespace: one run's results stay.
    assert ip.user_ns["n"] == 1
    assert torch.equal(ip.user_ns["w"], ip.user_ns["x"] * 2)


def test_line_magic_attributes_the_called_functions_lines(ip: InteractiveShell) -> None:
    ip.run_cell("def f(a):\n    b = a * 3\n    return b.relu()\n")
    result = _run(ip, f"%kernel_lens {FAST} f(x)")
    assert result["function"] == "f"
    ops = _ops(result)
    assert "aten::mul" in ops[2]
    assert "aten::relu" in ops[3]
    assert result["first_line"] == 1 and result["last_line"] == 3
    assert result["timing"]["reps"] == 3


def test_line_magic_unwraps_functools_wraps(ip: InteractiveShell) -> None:
    ip.run_cell(
        "import functools\n"
        "def deco(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def inner(*a):\n"
        "        return fn(*a)\n"
        "    return inner\n"
        "@deco\n"
        "def g(a):\n"
        "    c = a + 1\n"
        "    return c.sin()\n"
    )
    result = _run(ip, f"%kernel_lens {FAST} g(x)")
    assert result["function"] == "g"
    ops = _ops(result)
    assert "aten::add" in ops[9]
    assert "aten::sin" in ops[10]


def test_line_magic_on_a_builtin_puts_everything_on_the_call(ip: InteractiveShell) -> None:
    result = _run(ip, f"%kernel_lens {FAST} torch.mm(x, x)")
    assert _ops(result) == {1: ["aten::mm"]}
    assert result["lines"][0]["source"] == "torch.mm(x, x)"


def test_text_and_html_renderings(ip: InteractiveShell) -> None:
    out = ip.run_cell(f"%%kernel_lens {FAST}\nw = x * 3\n")
    view = out.result
    assert isinstance(view, ProfileView)
    text = repr(view)
    assert "aten::mul" in text and "perf_counter" in text and view.result["trace_path"] in text
    page = view._repr_html_()
    assert "<table>" in page and "aten::mul" in page
    assert Path(view.result["trace_path"]).as_uri() in page


def test_html_escapes_kernel_names_and_source() -> None:
    result = {
        "function": "cell<1>",
        "device": "NVIDIA H200",
        "device_kind": "cuda",
        "timing": {
            "median_ms": 0.2,
            "spread_pct": 0.3,
            "reps": 10,
            "min_ms": 0.19,
            "method": "cuda-events",
            "warnings": ["<b>noisy</b>"],
        },
        "profiled_runs": 3,
        "lines": [
            {
                "line": 1,
                "source": "y = x < 2 & m",
                "ops": [
                    {
                        "name": "aten::lt",
                        "dispatch": [],
                        "calls": 1,
                        "cpu_us": 3.0,
                        "device_us": 2.0,
                        "kernels": [
                            {
                                "name": "void k<float, 4>(float*)",
                                "short_name": "k<float, 4>",
                                "calls": 1,
                                "device_us": 2.0,
                            }
                        ],
                    }
                ],
            }
        ],
        "kernels": [
            {"name": "void k<float, 4>(float*)", "device_us": 2.0, "calls": 1, "lines": [1]}
        ],
        "trace_path": "/tmp/a&b/t.json",
    }
    page = format_profile_html(result)
    assert "<b>noisy" not in page and "&lt;b&gt;noisy" in page
    assert "k&lt;float, 4&gt;" in page and "k<float" not in page
    assert "y = x &lt; 2 &amp; m" in page
    assert "cell&lt;1&gt;" in page
    assert "CUDA events, L2 flushed" in page


def test_a_failing_cell_is_its_own_traceback_and_fails_the_cell(
    ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ip.run_cell("%%kernel_lens\nq = 1\nraise ValueError('boom')\n")
    assert not out.success
    assert isinstance(out.error_in_exec, ValueError)
    shown = capsys.readouterr().out
    assert "raise ValueError('boom')" in shown
    assert "kernel_lens/notebook/magic.py" not in shown  # the magic's own frames are hidden
    assert ip.user_ns["q"] == 1  # the lines before it ran, as in a normal run
    assert not torch.autograd.profiler._is_profiler_enabled


def test_a_cell_failing_in_a_later_run_leaves_no_profiler(
    ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first (normal) run passes; the timed runs see `done` and raise.
    ip.run_cell("done = False")
    out = ip.run_cell(
        f"%%kernel_lens {FAST}\nif done:\n    raise RuntimeError('second run')\ndone = True\n"
    )
    assert isinstance(out.error_in_exec, RuntimeError)
    shown = capsys.readouterr().out
    assert "raise RuntimeError('second run')" in shown
    # The timing stage's frames (kernel_lens/agent/…) are Kernel Lens's too: hidden.
    assert "kernel_lens/agent/" not in shown and "kernel_lens/notebook/" not in shown
    assert ip.user_ns["done"] is True
    assert not torch.autograd.profiler._is_profiler_enabled
    assert sys.gettrace() is None


def test_a_failing_call_shows_the_functions_line(
    ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.run_cell("def h(v):\n    return 1 / v\n")
    out = ip.run_cell("%kernel_lens h(0)")
    assert isinstance(out.error_in_exec, ZeroDivisionError)
    assert "return 1 / v" in capsys.readouterr().out
    assert not torch.autograd.profiler._is_profiler_enabled


def test_a_line_that_is_not_a_call_is_a_usage_error(ip: InteractiveShell) -> None:
    out = ip.run_cell("%kernel_lens x")
    assert not out.success
    assert "one call" in str(out.error_in_exec)


def test_parse_options() -> None:
    assert parse_options("--reps 5 --budget-ms=20 f(x, y=2)") == (
        MagicOptions(reps=5, budget_ms=20.0),
        "f(x, y=2)",
    )
    assert parse_options("") == (MagicOptions(), "")
    with pytest.raises(MagicUsageError, match="unknown option --fast"):
        parse_options("--fast 1")
    with pytest.raises(MagicUsageError, match="takes a number"):
        parse_options("--reps many")
    with pytest.raises(MagicUsageError, match="positive"):
        parse_options("--budget-ms 0")


def test_import_kernel_lens_does_not_import_ipython() -> None:
    code = "import sys, kernel_lens; print('IPython' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
