"""The deep tracer (:mod:`kernel_lens.agent.stages.deep`): which files are the workspace's,
the ranges it opens (nested across files, innermost last), the step markers, the window, and
the attribution of a whole run's ranges to each file's lines."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from kernel_lens.agent.results import line_results
from kernel_lens.agent.stages.deep import (
    DeepTracer,
    Window,
    WindowDone,
    is_workspace_file,
    mark_line_ranges,
    step_marker_lines,
)
from kernel_lens.analysis.line_attribution import FILE_STRIDE, attribute_trace


class _Ranges:
    """A range factory that records what opens and closes (innermost structure kept)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def __call__(self, name: str) -> Any:
        log = self.events

        class _Range:
            def __enter__(self) -> None:
                log.append(("enter", name))

            def __exit__(self, *exc: object) -> None:
                log.append(("exit", name))

        return _Range()


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_workspace_files_are_under_the_roots_and_never_the_libraries(tmp_path: Path) -> None:
    mine = tmp_path / "model.py"
    mine.write_text("x = 1\n")
    assert is_workspace_file(str(mine), [str(tmp_path)])
    assert not is_workspace_file(str(mine), [str(tmp_path / "elsewhere")])
    assert not is_workspace_file(torch.__file__, [str(Path(torch.__file__).parents[3])])
    assert not is_workspace_file("<string>", [str(tmp_path)])
    vendored = tmp_path / ".venv" / "lib" / "site-packages" / "pkg.py"
    assert not is_workspace_file(str(vendored), [str(tmp_path)])


def test_step_markers_are_the_marked_statement_or_the_next_one() -> None:
    text = (
        "for i in range(3):\n"  # 1
        "    work()  # kernel-lens: step\n"  # 2
        "    # kernel-lens: step\n"  # 3
        "\n"  # 4
        "    log(i)\n"  # 5
        "    other()  # not a marker\n"  # 6
    )
    assert step_marker_lines(text) == {2, 5}
    assert step_marker_lines("x = (\n") == set()  # does not tokenize: no markers


def test_ranges_nest_across_workspace_files_and_skip_torch(tmp_path: Path) -> None:
    (tmp_path / "deep_helper_mod.py").write_text(
        "import torch\n\n\ndef inner(x):\n    y = torch.relu(x)\n    return y\n"
    )
    main = tmp_path / "deep_main_mod.py"
    main.write_text(
        "from deep_helper_mod import inner\n\n\ndef outer(x):\n    return inner(x) + 1\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        outer = _load(main, "deep_main_mod").outer
        ranges = _Ranges()
        tracer = DeepTracer(str(main), [str(tmp_path)], range_factory=ranges)
        with tracer:
            outer(torch.ones(3))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("deep_helper_mod", None)
        sys.modules.pop("deep_main_mod", None)
    helper = str(tmp_path / "deep_helper_mod.py")
    assert tracer.files == [str(main), helper]
    assert ranges.events == [
        ("enter", "src:5"),  # return inner(x) + 1
        ("enter", "src:1:5"),  # y = torch.relu(x), inside the call's range
        ("exit", "src:1:5"),
        ("enter", "src:1:6"),
        ("exit", "src:1:6"),  # the helper returned
        ("exit", "src:5"),
    ]


def _window(**kw: Any) -> tuple[Window, list[str]]:
    calls: list[str] = []
    window = Window(
        start=lambda: calls.append("start"), stop_run=lambda: calls.append("stop"), **kw
    )
    return window, calls


def test_a_window_skips_then_profiles_then_stops() -> None:
    window, calls = _window(skip=2, steps=2)
    window.begin()
    assert calls == []
    window.step("optimizer.step()")
    window.step("profiler step()")  # another source of steps: not counted
    window.step("optimizer.step()")
    assert calls == ["start"] and window.started_at == 2
    window.step("optimizer.step()")
    with pytest.raises(WindowDone):
        window.step("optimizer.step()")
    assert calls == ["start", "stop"]
    assert window.to_json()["steps_profiled"] == 2 and window.to_json()["stopped"]


def test_no_window_starts_at_once_and_never_stops() -> None:
    window, calls = _window()
    assert not window.active
    window.begin()
    for _ in range(5):
        window.step("marker")
    assert calls == ["start"]


def test_a_whole_runs_ranges_put_each_op_on_its_files_innermost_line() -> None:
    def ev(name: str, ts: float, dur: float, cat: str = "cpu_op") -> dict[str, Any]:
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}

    trace = {
        "traceEvents": [
            ev("src:12", 0, 100),  # main(): the call line
            ev("src:1:5", 10, 40),  # model.py line 5, inside it
            ev("aten::mm", 15, 10),
            ev("src:2:9", 60, 30),  # helpers.py line 9, after it
            ev("aten::relu", 65, 5),
            ev("aten::add", 95, 2),  # on the call line itself
        ]
    }
    assert mark_line_ranges(trace) == 3
    found = attribute_trace(trace)
    assert set(found.lines) == {12, FILE_STRIDE + 5, 2 * FILE_STRIDE + 9}
    assert list(found.lines[FILE_STRIDE + 5].ops) == ["aten::mm"]
    out = line_results(
        trace,
        runs=1,
        source_of=lambda n: f"main {n}",
        only_with_ops=True,
        files=["/ws/main.py", "/ws/model.py", "/ws/helpers.py"],
        sources=lambda path, n: f"{path.rsplit('/', 1)[-1]} {n}",
    )
    assert [(r["line"], [o["name"] for o in r["ops"]]) for r in out["lines"]] == [
        (12, ["aten::add"])
    ]
    assert out["files"]["/ws/model.py"][0]["line"] == 5
    assert out["files"]["/ws/model.py"][0]["source"] == "model.py 5"
    assert [o["name"] for o in out["files"]["/ws/helpers.py"][0]["ops"]] == ["aten::relu"]
