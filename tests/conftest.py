"""Shared test helpers: run the CLI as a user does, and skip GPU tests without CUDA."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import resource
import shutil
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


# The modules that take longest (their slowest tests' wall seconds under `--durations`, a run
# of 2026-12-05) go first: pytest-xdist's `--dist loadfile` hands modules out in collection
# order, and a long module handed out last keeps one worker busy after the others are done.
# The rest keep their order.
_SLOW_MODULES_FIRST = (
    "tests/cli/test_distributed_cli.py",
    "tests/lsp/test_clean_agent.py",
    "tests/lsp/test_protocol_answers.py",
    "tests/cli/test_compiled_cli.py",
    "tests/cli/test_compare_compiled_cli.py",
    "tests/cli/test_asm_diff_cli.py",
    "tests/lsp/test_generated_lsp.py",
    "tests/cli/test_inline_cli.py",
    "tests/lsp/test_editors_lsp.py",
    "tests/lsp/test_driver_jobs_lsp.py",
    "tests/cli/test_packages_cli.py",
    "tests/cli/test_driver_jobs_cli.py",
    "tests/lsp/test_remote_agent.py",
    "tests/lsp/test_compiled_lsp.py",
    "tests/cli/test_compiled_lines_cli.py",
    "tests/lsp/test_trace_files_lsp.py",
    "tests/cli/test_script_cli.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(_SLOW_MODULES_FIRST)}
    last = len(rank)
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], last))
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# KERNEL_LENS_TEST_CPU=N: after the run, the N tests that used the most CPU seconds (user +
# system, of the test's process and of every process it started and waited for: a language
# server, an agent, a compiler), setup and teardown included. Wall times (``--durations``) on a
# shared 2-core machine mostly measure the load; CPU seconds say what a test costs. Works under
# pytest-xdist (the workers send it with each report). The agents and language servers forked
# from the worker's warm templates (below) are not the test's children: each template logs
# each one's CPU seconds with the test it ran for, and that is added to the test; the templates
# themselves, reaped in the last test's teardown, are taken out of that test and said apart.
_CPU_TOP = int(os.environ.get("KERNEL_LENS_TEST_CPU") or 0)
_CPU_START = pytest.StashKey[tuple[float, float]]()
#: The templates' logs (``… 1.15 CPU s, exit -9, tests/x.py::test_y (call)``), read as they grow.
_FORK_LOGS: dict[Path, int] = {}
_FORKED_CPU: dict[str, float] = {}
#: CPU seconds of the templates reaped so far (their own and their forked children's), and of
#: their forked children charged to this worker's tests.
_TEMPLATES_REAPED = [0.0]
_CHARGED = [0.0]
_FORKED_LINE = re.compile(
    r": (?:agent|server) \d+: ([0-9.]+) CPU s, (?:exit [^,]*, )?"
    r"(.*?)(?: \((?:setup|call|teardown)\))?$"
)


def _children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + _children_cpu()


def _read_fork_logs() -> None:
    """Adds the templates' newly logged forked processes to :data:`_FORKED_CPU` by test."""
    for path, pos in list(_FORK_LOGS.items()):
        try:
            with open(path, "rb") as f:
                f.seek(pos)
                data = f.read()
        except OSError:
            continue
        end = data.rfind(b"\n") + 1  # whole lines only
        _FORK_LOGS[path] = pos + end
        for line in data[:end].decode(errors="replace").splitlines():
            found = _FORKED_LINE.search(line)
            if found:
                test = found.group(2) or ""
                _FORKED_CPU[test] = _FORKED_CPU.get(test, 0.0) + float(found.group(1))


def _reap_template(proc: subprocess.Popen[bytes], *, kill: bool) -> None:
    """Waits for a template (killed first if ``kill``), its CPU kept apart from the test's."""
    before = _children_cpu()
    if kill:
        proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    _TEMPLATES_REAPED[0] += _children_cpu() - before


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _CPU_TOP:
        item.stash[_CPU_START] = (_cpu_seconds(), _TEMPLATES_REAPED[0])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    if _CPU_TOP and call.when == "teardown" and _CPU_START in item.stash:
        start, reaped = item.stash[_CPU_START]
        templates = _TEMPLATES_REAPED[0] - reaped
        _read_fork_logs()
        forked = _FORKED_CPU.pop(item.nodeid, 0.0)
        _CHARGED[0] += forked
        spent = _cpu_seconds() - start - templates + forked
        report = outcome.get_result()
        report.user_properties.append(("cpu_s", round(spent, 2)))
        if templates:
            # what the templates forked under a name that is no test's (a module's server,
            # tests/lsp/client.py), each on a line of its own; the rest is the templates' own
            # start and what they forked for no test, less what this worker's tests were charged
            named = {k: v for k, v in _FORKED_CPU.items() if k}
            report.user_properties.append(("named_cpu_s", sorted(named.items())))
            rest = templates - _CHARGED[0] - sum(named.values())
            report.user_properties.append(("templates_cpu_s", round(rest, 2)))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _CPU_TOP:
        return
    spent: list[tuple[float, str]] = []
    templates = 0.0
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "teardown":
                continue
            for name, value in getattr(report, "user_properties", []):
                if name == "cpu_s":
                    spent.append((value, report.nodeid))
                elif name == "named_cpu_s":
                    spent.extend((round(cpu, 2), label) for label, cpu in value)
                elif name == "templates_cpu_s":
                    templates += value
    terminalreporter.write_sep("=", f"most CPU seconds (top {_CPU_TOP} of {len(spent)})")
    for value, nodeid in sorted(spent, reverse=True)[:_CPU_TOP]:
        terminalreporter.write_line(f"{value:8.2f}s cpu  {nodeid}")
    terminalreporter.write_line(f"{sum(v for v, _ in spent):8.1f}s cpu  in all")
    if templates:
        terminalreporter.write_line(
            f"{templates:8.1f}s cpu  the warm templates (their start, and what they forked"
            " for no test), less what the tests were charged"
        )


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


# The test session's shared agent template (docs/testing.md, "One warm agent template per
# worker"): every local agent the tests start (the CLI's, the language servers', AgentClient's)
# is forked from one warm process per pytest worker instead of importing torch again, when the
# fork would be the agent a fresh start gives (same interpreter, same environment but for the
# per-test history and run-choices files, no PYTHONPATH entry shadowing what is imported);
# otherwise the agent starts fresh, as for users. KERNEL_LENS_TEST_FORK_SERVER=0 turns it off;
# a test marked ``fresh_agents`` never uses it.
_FORK_SERVER = os.environ.get("KERNEL_LENS_TEST_FORK_SERVER", "1") != "0"
_FORK_SERVER_ENV = "KERNEL_LENS_AGENT_FORK_SERVER"


# The language servers of the LSP tests fork from one warm template per worker too
# (tests/lsp/fork_server.py): the tests' server command is tests/lsp/launch.py, which asks the
# template at this socket and starts `python -m kernel_lens.lsp` itself where it is not there or
# refuses. Set at import, before the test modules build their server configurations; each
# pytest-xdist worker imports this file itself and replaces the path it inherited.
_LSP_FORK_ENV = "KERNEL_LENS_TEST_LSP_FORK"
if _FORK_SERVER:
    _lsp_fork_folder = tempfile.mkdtemp(prefix="kl-lsp-")  # short: a socket path has 107 bytes
    os.environ[_LSP_FORK_ENV] = os.path.join(_lsp_fork_folder, "lsp.sock")
    atexit.register(shutil.rmtree, _lsp_fork_folder, ignore_errors=True)
else:
    os.environ.pop(_LSP_FORK_ENV, None)


# nvcc's PTX of a CUDA source, kept for the whole run (all workers: the run's temp folder) by
# the hash of the command and the source (agent/stages/inline_ext.py, tests only): four tests
# compile the same load_inline square, each on its own surface; the first to come compiles it.
# KERNEL_LENS_TEST_PTX_CACHE=0 turns it off.
_PTX_CACHE_ENV = "KERNEL_LENS_TEST_PTX_CACHE"


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's temp folder, the same for every pytest-xdist worker of the run."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _agent_fork_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    # (first: the fork server's environment must be the one the tests' agents get)
    if os.environ.get(_PTX_CACHE_ENV) is None:
        os.environ[_PTX_CACHE_ENV] = str(_run_folder(tmp_path_factory) / "ptx-cache")
    elif os.environ[_PTX_CACHE_ENV] == "0":
        del os.environ[_PTX_CACHE_ENV]
    if not _FORK_SERVER or os.environ.get(_FORK_SERVER_ENV):
        yield None
        return
    from kernel_lens.early_agent import agent_argv, agent_env

    folder = tempfile.mkdtemp(prefix="kl-fork-")  # short: a socket path has 107 bytes
    path = os.path.join(folder, "agents.sock")
    os.environ[_FORK_SERVER_ENV] = path
    env = {**agent_env(dict(os.environ)), "KERNEL_LENS_AGENT_FORK_SERVER_LISTEN": path}
    log = tmp_path_factory.getbasetemp() / "fork-server.log"
    _FORK_LOGS.setdefault(log, log.stat().st_size if log.exists() else 0)
    with open(log, "ab") as err:
        proc = subprocess.Popen(
            agent_argv([sys.executable]), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=err, env=env, cwd=ROOT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    yield path
    os.environ.pop(_FORK_SERVER_ENV, None)
    assert proc.stdin is not None
    proc.stdin.close()  # it ends when its input closes; its agents when theirs do
    _reap_template(proc, kill=False)
    if proc.stdout is not None:
        proc.stdout.close()
    with contextlib.suppress(OSError):
        os.unlink(path)
        os.rmdir(folder)


@pytest.fixture(scope="session", autouse=True)
def _lsp_fork_server(_agent_fork_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The worker's warm language-server template (after the agents' fork server: the servers
    it forks get the agents' socket in their environment)."""
    path = os.environ.get(_LSP_FORK_ENV)
    if not _FORK_SERVER or not path or os.path.exists(path):
        yield None
        return
    log = tmp_path_factory.getbasetemp() / "lsp-fork-server.log"
    _FORK_LOGS.setdefault(log, log.stat().st_size if log.exists() else 0)
    with open(log, "ab") as err:
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "lsp" / "fork_server.py"), path],
            stdin=subprocess.DEVNULL, stdout=err, stderr=err, cwd=ROOT,
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    yield path
    _reap_template(proc, kill=True)


@pytest.fixture(autouse=True)
def _fresh_agents(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test marked ``fresh_agents`` starts its agents as users' do, never from the fork server
    (tests of the product's own template, of how an agent's orphans are reaped); so does every
    test of tests/unit (those that start agents test the pool itself, in-process)."""
    unit = request.node.path.is_relative_to(ROOT / "tests" / "unit")
    if unit or request.node.get_closest_marker("fresh_agents") is not None:
        monkeypatch.delenv(_FORK_SERVER_ENV, raising=False)


@pytest.fixture(autouse=True)
def _own_history(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps its own profile history (issue 11): servers and CLI runs it starts
    compare only with runs it made, never with another test's or the user's cache."""
    monkeypatch.setenv("KERNEL_LENS_HISTORY", str(tmp_path_factory.mktemp("history")))
    # and its own kept arguments and drivers (kernel_lens/run_choices.py)
    choices = tmp_path_factory.mktemp("choices") / "run-choices.json"
    monkeypatch.setenv("KERNEL_LENS_RUN_CHOICES", str(choices))


@pytest.fixture(autouse=True)
def _environ_kept() -> Any:
    """Each test leaves ``os.environ`` as it found it: a unit test that runs the agent's runner
    in-process gets its ``TRITON_INTERPRET=1`` (set for an agent's one job, on a machine without
    CUDA), which stayed for every later test of the worker — Triton's jit then made interpreted
    functions in tests that compile, and every agent the worker started had it."""
    before = dict(os.environ)
    yield
    if dict(os.environ) != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(autouse=True)
def _main_module_kept() -> Any:
    """Each test leaves ``sys.modules["__main__"]`` as it found it: an in-process IPython shell
    (tests/cli/test_magic.py) puts its own ``__main__`` there, without the ``__spec__`` that
    multiprocessing's spawn reads when a later test starts a worker process."""
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main
