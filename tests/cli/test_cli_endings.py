"""The CLI keeps its error contract however user code ends (issue 14): exit 1 and
``{"error": {"kind", "message", "line"}}`` with ``--json``, one line on stderr without, and it
returns even when the code hangs or leaves threads running. Real agent, real torch (CPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FAST, kl, lineno, write


def error_of(path: Path, func: str, *extra: str) -> dict[str, Any]:
    code, out, err, _ = kl("profile", f"{path}::{func}", "--json", *FAST, *extra)
    assert code == 1, (out, err)
    assert set(out) == {"error"}
    error: dict[str, Any] = out["error"]
    assert {"kind", "message", "line"} <= set(error)
    return error


def test_sys_exit_inside_the_function_is_an_exit_error(tmp_path: Path) -> None:
    path = write(tmp_path, "import sys\n\n\ndef f():\n    x = torch.ones(3)\n    sys.exit(3)\n")
    err = error_of(path, "f")
    assert err["kind"] == "exit"
    assert err["line"] == lineno(path, "sys.exit(3)")
    assert "sys.exit(3)" in err["message"]


def test_os_exit_is_a_crash(tmp_path: Path) -> None:
    path = write(tmp_path, "import os\n\n\ndef f():\n    os._exit(1)\n")
    err = error_of(path, "f")
    assert err["kind"] == "crash"
    assert "exit code 1" in err["message"]


def test_a_segfault_is_a_crash(tmp_path: Path) -> None:
    path = write(tmp_path, "import ctypes\n\n\ndef f():\n    ctypes.string_at(0)\n")
    err = error_of(path, "f")
    assert err["kind"] == "crash"
    assert "SIGSEGV" in err["message"]
    assert err["line"] == lineno(path, "ctypes.string_at(0)")


def test_keyboard_interrupt_raised_by_the_code_is_interrupted(tmp_path: Path) -> None:
    path = write(tmp_path, "def f():\n    raise KeyboardInterrupt\n")
    err = error_of(path, "f")
    assert err["kind"] == "interrupted"
    assert err["line"] == lineno(path, "raise KeyboardInterrupt")


def test_keyboard_interrupt_at_import_is_interrupted(tmp_path: Path) -> None:
    path = write(tmp_path, "raise KeyboardInterrupt\n\n\ndef f():\n    return 1\n")
    err = error_of(path, "f")
    assert err["kind"] == "interrupted"
    assert err["line"] == lineno(path, "raise KeyboardInterrupt")


@pytest.mark.serial  # a 3 s job timeout: on a loaded machine the agent may not reach the loop
@pytest.mark.parametrize(
    "body",
    [
        "def f():\n    while True:\n        pass\n",
        "while True:\n    pass\n\n\ndef f():\n    return torch.ones(2)\n",
    ],
    ids=["in-the-function", "at-import"],
)
def test_an_infinite_loop_ends_at_the_timeout(tmp_path: Path, body: str) -> None:
    path = write(tmp_path, body)
    code, out, err, seconds = kl("profile", f"{path}::f", "--json", "--timeout", "3", *FAST)
    assert code == 1, err
    assert out["error"]["kind"] == "timeout"
    assert "3 s" in out["error"]["message"] and "--timeout" in out["error"]["message"]
    # The line that was running when the time ran out (the agent's stack dump).
    assert out["error"]["line"] in (lineno(path, "while True"), lineno(path, "pass"))
    # The agent's start is not part of the job's time; the job itself stopped at 3 s.
    assert seconds < 120


def test_threads_left_running_do_not_keep_the_cli_alive(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        import threading
        import time


        def spin():
            while True:
                time.sleep(0.01)


        def f():
            threading.Thread(target=spin).start()
            return torch.ones(4) * 2
        """,
    )
    code, out, err, _ = kl("profile", f"{path}::f", "--json", *FAST, timeout=180)
    assert code == 0, err
    assert out["function"] == "f" and out["timing"]["median_ms"] > 0


def test_without_json_one_error_line_on_stderr(tmp_path: Path) -> None:
    path = write(tmp_path, "import os\n\n\ndef f():\n    os._exit(1)\n")
    code, out, err, _ = kl("profile", f"{path}::f", "-q", *FAST)
    assert code == 1 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("error (")]
    assert len(errors) == 1 and errors[0].startswith("error (crash)")


def test_progress_lines_go_to_stderr(tmp_path: Path) -> None:
    path = write(tmp_path, "def f():\n    return torch.ones(4) + 1\n")
    code, out, err, _ = kl("profile", f"{path}::f", "--stages", "timing", *FAST)
    assert code == 0, err
    assert "[target] loading the file" in err and "[timing]" in err
    assert "[target]" not in out and "median" in out


def test_latin1_file_with_a_coding_line_profiles(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(
        "# -*- coding: latin-1 -*-\nimport torch\n\nLABEL = 'café'\n\n\n"
        "def f():\n    x = torch.ones(8)\n    return x * 2  # déjà\n".encode("latin-1")
    )
    code, out, err, _ = kl("profile", f"{path}::f", "--json", *FAST)
    assert code == 0, err
    assert [line["source"] for line in out["lines"]][-1] == "return x * 2  # déjà"


def test_utf8_bom_file_profiles(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfimport torch\n\n\ndef f():\n    return torch.ones(3) * 2\n")
    code, out, err, _ = kl("profile", f"{path}::f", "--json", "--stages", "ops", *FAST)
    assert code == 0, err
    assert out["lines"][0]["line"] == 5


def test_a_directive_of_the_wrong_shape_is_an_inputs_error_on_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "# kernel-lens: inputs = [1, 2, 3]\ndef f(x):\n    return x\n")
    err = error_of(path, "f")
    assert err["kind"] == "inputs"
    assert err["line"] == lineno(path, "inputs = [1, 2, 3]")
    assert "gives f(int, int, int), which does not fit f(x)" in err["message"]
    assert "too many positional arguments" in err["message"]


def test_no_inputs_for_a_function_with_parameters_says_how(tmp_path: Path) -> None:
    path = write(tmp_path, "def f(x, y):\n    return x + y\n")
    err = error_of(path, "f")
    assert err["kind"] == "inputs" and err["line"] == lineno(path, "def f(")
    assert "# kernel-lens: inputs = " in err["message"] and "f_inputs()" in err["message"]


def test_a_failing_directive_points_at_the_directive_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, "# kernel-lens: inputs = (torch.ones(2) / missing,)\ndef f(x):\n    return x\n"
    )
    err = error_of(path, "f")
    line = lineno(path, "inputs = (torch.ones(2) / missing,)")
    assert err["kind"] == "inputs" and err["line"] == line
    # The traceback names the directive's line, not line 1 of the file.
    assert f'File "{path}", line {line}' in err["traceback"]
    assert f'File "{path}", line 1,' not in err["traceback"]


def test_a_relative_trace_dir_is_the_cli_folder_not_the_users_chdir(tmp_path: Path) -> None:
    work = tmp_path / "work"
    elsewhere = tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    path = write(
        tmp_path,
        f"import os\n\n\ndef f():\n    os.chdir({str(elsewhere)!r})\n    return torch.ones(2)\n",
    )
    code, out, err, _ = kl(
        "profile", f"{path}::f", "--json", "--trace-dir", "traces", *FAST, cwd=work
    )
    assert code == 0, err
    assert Path(out["trace_path"]).parent == work / "traces"
    assert Path(out["trace_path"]).is_file()
    assert not (elsewhere / "traces").exists()


def test_a_missing_file_is_not_found_without_starting_an_agent(tmp_path: Path) -> None:
    code, out, _, _ = kl("sweep", f"{tmp_path}/nope.py::f", "--param", "B", "--json")
    assert code == 1 and out["error"]["kind"] == "not-found"
    assert "cannot read" in out["error"]["message"]


def test_bad_timeout_is_a_usage_error() -> None:
    code, _, err, _ = kl("profile", "x.py::f", "--timeout", "0")
    assert code == 2 and "positive number of seconds" in err
