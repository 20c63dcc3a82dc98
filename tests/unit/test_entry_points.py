"""``python -m kernel_lens.lsp`` (and the trace reader it starts) never import a module of the
folder they were started in; every other use of the package keeps that folder on ``sys.path``
(issue 50: a project's ``attrs.py`` killed the server that Neovim started in the project)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
SHADOWED = ("attrs", "cattrs", "typing_extensions", "pygls", "lsprotocol", "pandas", "numpy",
            "json", "asyncio", "msgspec")  # fmt: skip


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    markers = tmp_path / "markers"
    markers.mkdir()
    cwd = tmp_path / "project"
    cwd.mkdir()
    for name in SHADOWED:
        (cwd / f"{name}.py").write_text(
            f"import os\nopen(os.path.join({str(markers)!r}, {name!r}), 'w').close()\n"
            "raise SystemExit(3)\n"
        )
    return cwd, markers


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    env.pop("KERNEL_LENS_EARLY_AGENT", None)
    return env


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["-m", "kernel_lens.lsp"],
        ["-mkernel_lens.lsp"],
        ["-X", "utf8", "-m", "kernel_lens.lsp.__main__"],
        ["-m", "kernel_lens.traces.reader", "--serve"],
    ],
)
def test_server_modules_import_nothing_from_the_working_directory(
    tmp_path: Path, argv: list[str]
) -> None:
    cwd, markers = _folder(tmp_path)
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        env=_env(),
        stdin=subprocess.DEVNULL,  # the server and the reader end at the end of their input
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert os.listdir(markers) == [], done.stderr
    assert done.returncode != 3, done.stderr


def test_everything_else_keeps_the_working_directory(tmp_path: Path) -> None:
    """The agent and the magic run the user's code as ``python FILE`` would: the folder stays."""
    code = "import sys, kernel_lens; print(repr(sys.path[0]))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=_env(), capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "''"
    (tmp_path / "probe.py").write_text("import sys, kernel_lens\nprint(repr(sys.path[0]))\n")
    done = subprocess.run(
        [sys.executable, "-m", "probe"], cwd=tmp_path, env=_env(), capture_output=True,
        text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == repr(os.path.realpath(tmp_path))


@pytest.mark.slow
def test_a_trailing_colon_in_pythonpath_does_not_bring_the_folder_back(tmp_path: Path) -> None:
    """``PYTHONPATH=/x:`` — an empty entry, the working directory again — is dropped too, for
    the server only (found by the headless Neovim test, whose environment had one)."""
    cwd, markers = _folder(tmp_path)
    env = {**_env(), "PYTHONPATH": str(ROOT / "server") + os.pathsep}
    done = subprocess.run(
        [sys.executable, "-m", "kernel_lens.lsp"], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert os.listdir(markers) == [], done.stderr
