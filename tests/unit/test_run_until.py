"""``usercode.run_until``: the one "run the script until the call" of the capture (a function's
first call, from the file or a driver) and the Triton stage (a kernel's first launch), run here
in-process on small scripts; and how a driver's run that never called the function is said."""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel_lens.agent.stages.capture import Capture, run_driver_until_call
from kernel_lens.agent.usercode import compile_text, run_until
from kernel_lens.analysis.functions import find_function
from kernel_lens.wire.errors import ProfileError


class _Stop(BaseException):
    """What the test's watch raises where the run is to stop."""


@contextlib.contextmanager
def _stop_at_marker() -> Iterator[None]:
    """A watch: while it is on, ``kl_stop()`` in the script raises :class:`_Stop`."""

    def stop() -> None:
        raise _Stop

    builtins.kl_stop = stop  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del builtins.kl_stop  # type: ignore[attr-defined]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A run changes the working directory, ``sys.path`` and ``sys.argv`` (the agent runs one
    job per process): restored after each test."""
    monkeypatch.chdir(os.getcwd())
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    return tmp_path


def _script(folder: Path, name: str, text: str) -> tuple[str, types.CodeType]:
    path = str(folder / name)
    Path(path).write_text(text)
    return path, compile_text(path, text)


def test_the_run_stops_where_the_watch_raises_and_the_rest_never_runs(fresh: Path) -> None:
    path, code = _script(
        fresh,
        "script.py",
        "import sys, os\nseen = (list(sys.argv), os.getcwd(), __name__)\nkl_stop()\n"
        "raise SystemExit('the rest ran')\n",
    )
    before = sys.modules.get("__main__")
    end = run_until(path, code, _Stop, watch=_stop_at_marker(), argv=["--n", "3"])
    # kl_stop exists only while the watch is on: the run stopped there, and it is off again.
    assert end.stopped and end.failure is None and end.elapsed_s >= 0
    assert not hasattr(builtins, "kl_stop")
    assert end.module.__dict__["seen"] == ([path, "--n", "3"], str(fresh), "__main__")
    assert sys.modules.get("__main__") is before


@pytest.mark.parametrize(
    "body, kind",
    [
        ("x = 1\n", None),
        ("raise SystemExit(3)\n", SystemExit),
        ("raise KeyboardInterrupt\n", KeyboardInterrupt),
        ("def f():\n    raise ValueError('boom')\nf()\n", ValueError),
    ],
)
def test_a_run_that_ends_on_its_own_says_how_and_raises_nothing(
    fresh: Path, body: str, kind: type[BaseException] | None
) -> None:
    path, code = _script(fresh, "script.py", body)
    end = run_until(path, code, _Stop)
    assert not end.stopped
    assert (type(end.failure) if end.failure is not None else None) is kind


def test_a_file_the_run_imports_comes_from_the_buffer_and_the_finder_leaves(
    fresh: Path,
) -> None:
    name = "kl_rooms_buffered"
    target = fresh / "lib" / f"{name}.py"
    target.parent.mkdir()
    target.write_text("WHERE = 'disk'\n")
    path, code = _script(
        fresh,
        "drive.py",
        f"import sys\nsys.path.insert(0, 'lib')\nimport {name}\nWHERE = {name}.WHERE\n"
        f"FILE = {name}.__file__\n",
    )
    finders = list(sys.meta_path)
    try:
        end = run_until(path, code, _Stop, from_buffer=(str(target), "WHERE = 'buffer'\n"))
    finally:
        sys.modules.pop(name, None)
    assert end.failure is None, end.failure
    assert end.module.__dict__["WHERE"] == "buffer"
    assert end.module.__dict__["FILE"] == str(target)
    assert sys.meta_path == finders


TARGET = "def f(x):\n    return x\n"


def _drive(fresh: Path, driver_text: str, argv: list[str] | None = None) -> Capture:
    name = "kl_rooms_target"
    target = fresh / f"{name}.py"
    target.write_text(TARGET)
    buffer = TARGET + "MARK = 'buffer'\n"
    info = find_function(buffer, name="f", filename=str(target))
    assert info is not None
    driver = fresh / "drive.py"
    driver.write_text(driver_text.replace("TARGET", name))
    try:
        return run_driver_until_call(str(driver), argv or [], str(target), buffer, info)
    finally:
        sys.modules.pop(name, None)


def test_a_driver_s_first_call_is_taken_from_the_buffer_s_function(fresh: Path) -> None:
    cap = _drive(
        fresh, "import TARGET\nassert TARGET.MARK == 'buffer'\nTARGET.f(7)\nraise SystemExit(9)\n"
    )
    assert cap.args == (7,)
    assert cap.line == 3
    assert cap.driver == str(fresh / "drive.py")


@pytest.mark.parametrize(
    "driver_text, argv, says",
    [
        ("import TARGET\nx = 1\n", [], "drive.py ran to its end ("),
        (
            "import argparse\nargparse.ArgumentParser().add_argument('--n', required=True)\n"
            "argparse.ArgumentParser().parse_args()\n",
            ["--m"],
            "drive.py needs command-line arguments: argparse exited (sys.exit(2)) at drive.py:3"
            " with sys.argv[1:] = ['--m'], before calling f (give them after --)",
        ),
        (
            "import TARGET\nraise ValueError('boom')\n",
            [],
            "drive.py raised ValueError: boom at drive.py:2",
        ),
        (
            "import sys\nsys.exit(4)\n",
            [],
            "drive.py exited (sys.exit(4)) at drive.py:2 before calling f",
        ),
    ],
)
def test_a_driver_that_never_calls_says_why_on_the_def_line(
    fresh: Path, driver_text: str, argv: list[str], says: str
) -> None:
    with pytest.raises(ProfileError) as caught:
        _drive(fresh, driver_text, argv)
    err = caught.value
    assert err.kind == "inputs" and err.line == 1
    assert says in err.message, err.message
    assert "; add this directive above the def instead: # kernel-lens: inputs = " in err.message
