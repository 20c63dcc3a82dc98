"""The tests' warm language-server template (tests/lsp/fork_server.py, tests/lsp/launch.py): a
forked server is the server a fresh ``python -m kernel_lens.lsp`` would be, or the launcher
starts that fresh one; its life and exit are the launcher's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lsp.client import LAUNCH, ROOT
from tests.lsp.fork_server import refusal


def test_a_request_is_refused_where_a_fresh_start_could_differ() -> None:
    base = {"PATH": "/usr/bin", "KERNEL_LENS_HISTORY": "/a"}
    ok = {"executable": sys.executable, "cwd": str(ROOT)}
    # a test's own folders reach the server's code when it reads them: forked
    assert refusal({**ok, "env": {**base, "KERNEL_LENS_HISTORY": "/b"}}, base) is None
    assert refusal({**ok, "env": {**base, "KERNEL_LENS_CACHE": "/c"}}, base) is None
    # what Python or the server's imports read before the first request: a fresh start
    for key, value in [
        ("PYTHONPATH", "/elsewhere"),
        ("PYTHONDEVMODE", "1"),
        ("LC_ALL", "C"),
        ("KERNEL_LENS_EARLY_AGENT", "1"),
    ]:
        reason = refusal({**ok, "env": {**base, key: value}}, base)
        assert reason is not None and key in reason, (key, reason)
    assert "interpreter" in str(
        refusal({**ok, "executable": "/usr/bin/python3", "env": base}, base)
    )
    assert refusal({**ok, "cwd": "/no/such/folder", "env": base}, base) is not None


def test_the_server_modules_read_no_environment_at_import() -> None:
    """What the template relies on: the server reads its variables when it runs, so a fork with
    the request's environment sees a test's own. A module-level read would make the template
    refuse to serve (every server would start fresh again)."""
    code = (
        "import json, kernel_lens.lsp.__main__, kernel_lens.lsp.server\n"
        "from tests.lsp.fork_server import import_time_reads\n"
        "print(json.dumps(import_time_reads()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert json.loads(out.stdout) == []


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


@pytest.mark.skipif(not os.environ.get("KERNEL_LENS_TEST_LSP_FORK"), reason="template off")
def test_a_forked_server_answers_and_its_exit_is_the_launchers(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert os.path.exists(os.environ["KERNEL_LENS_TEST_LSP_FORK"])
    proc = subprocess.Popen(
        [sys.executable, "-S", str(LAUNCH)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}}
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    started = time.monotonic()
    out = proc.stdout.read()
    code = proc.wait(timeout=60)
    assert b'"codeLensProvider"' in out  # the initialize answer: the real server's capabilities
    assert code == 0, proc.stderr.read() if proc.stderr else ""
    assert time.monotonic() - started < 30
    # forked, not started fresh: the template says so, with this test's name
    log = (tmp_path_factory.getbasetemp() / "lsp-fork-server.log").read_text()
    test = os.environ["PYTEST_CURRENT_TEST"].split(" ")[0]
    assert any(line.startswith("lsp fork server: server ") and test in line
               for line in log.splitlines()), log[-2000:]  # fmt: skip
