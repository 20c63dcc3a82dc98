"""Shared test helpers: run the CLI as a user does, and skip GPU tests without CUDA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The language servers the tests start keep no spare trace reader (a Python process with numpy
# and pandas imported, per server): tests/lsp/test_trace_files_lsp.py turns it on and tests it.
os.environ.setdefault("KERNEL_LENS_TRACE_SPARE", "0")
# Under pytest-xdist (``make test`` runs workers) each worker keeps its own cache folder (traces,
# views, remote bundles), as it keeps its own temp dirs: workers never write one file at once.
if os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("KERNEL_LENS_CACHE"):
    os.environ["KERNEL_LENS_CACHE"] = tempfile.mkdtemp(
        prefix=f"kernel-lens-cache-{os.environ['PYTEST_XDIST_WORKER']}-"
    )
KERNELS = ROOT / "kernels"
EXAMPLES = ROOT / "tests" / "data" / "examples"


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


HAS_CUDA = _has_cuda()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_cli(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None
) -> tuple[int, Any, str]:
    """Run ``python -m kernel_lens ARGS``: (exit code, stdout as JSON or text, stderr)."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "kernel_lens", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=ROOT,
    )
    out: Any = proc.stdout
    if "--json" in args:
        out = json.loads(proc.stdout)
    return proc.returncode, out, proc.stderr


def profile_json(spec: str, trace_dir: Any, *extra: str) -> dict[str, Any]:
    """``kernel-lens profile SPEC --json`` into ``trace_dir``: the result, asserting exit 0."""
    code, out, err = run_cli("profile", spec, "--json", "--trace-dir", str(trace_dir), *extra)
    assert code == 0, (out, err)
    return out  # type: ignore[no-any-return]


def line_starting(result: dict[str, Any], start: str) -> dict[str, Any]:
    """The profile result's line whose source starts with ``start``."""
    return next(x for x in result["lines"] if x["source"].startswith(start))


#: The CLI's fastest timing options, for tests about how a run ends rather than its numbers.
FAST = ["--budget-ms", "50", "--warmup-ms", "2", "--runs", "1"]


def kl(*args: str, cwd: Path | None = None, timeout: float = 240) -> tuple[int, Any, str, float]:
    """``python -m kernel_lens ARGS``: (exit code, stdout — JSON with --json —, stderr, seconds)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT / "server")}
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "kernel_lens", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd or ROOT,
    )
    elapsed = time.monotonic() - t0
    out: Any = proc.stdout
    if "--json" in args:
        assert proc.stdout.count("\n") == 1, (proc.stdout, proc.stderr)
        out = json.loads(proc.stdout)
    return proc.returncode, out, proc.stderr, elapsed


def write(tmp_path: Path, body: str, name: str = "user.py") -> Path:
    """``tmp_path/name``: ``import torch`` and ``body`` (dedented)."""
    path = tmp_path / name
    path.write_text("import torch\n\n\n" + textwrap.dedent(body))
    return path


def lineno(path: Path, text: str) -> int:
    """The 1-based number of the first line of ``path`` that holds ``text``."""
    return next(i for i, x in enumerate(path.read_text().splitlines(), 1) if text in x)


@pytest.fixture
def trace_dir(tmp_path: Path) -> str:
    return str(tmp_path / "traces")


@pytest.fixture(autouse=True)
def _own_history(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps its own profile history (issue 11): servers and CLI runs it starts
    compare only with runs it made, never with another test's or the user's cache."""
    monkeypatch.setenv("KERNEL_LENS_HISTORY", str(tmp_path_factory.mktemp("history")))
    # and its own kept arguments and drivers (kernel_lens/run_choices.py)
    choices = tmp_path_factory.mktemp("choices") / "run-choices.json"
    monkeypatch.setenv("KERNEL_LENS_RUN_CHOICES", str(choices))


@pytest.fixture(autouse=True)
def _main_module_kept() -> Any:
    """Each test leaves ``sys.modules["__main__"]`` as it found it: an in-process IPython shell
    (tests/cli/test_magic.py) puts its own ``__main__`` there, without the ``__spec__`` that
    multiprocessing's spawn reads when a later test starts a worker process."""
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main
