"""The parent side of the agent boundary (issue 14): messages of any size, an output line of any
size, a malformed message, stack dumps parsed to the user's line, and no process left behind.

Small stand-in agents (``python -c``) speak the protocol so the sizes are exact and fast; the
real agent's behaviour is covered in tests/lsp/test_clean_agent*.py.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap

import pytest

from kernel_lens.client import AgentClient, StackFrame, failing_frame, fault_frames, where_text
from kernel_lens.wire.envelope import read_message_line
from kernel_lens.wire.errors import ProfileError

READY = 'import json, sys\nsys.stdout.write(json.dumps({"event": "ready", "pid": 0}) + "\\n")\n'


def stand_in(body: str) -> list[str]:
    """An agent command whose job loop is ``body`` (``job`` is the parsed request)."""
    code = READY + "sys.stdout.flush()\njob = json.loads(sys.stdin.readline())\n"
    return [sys.executable, "-c", code + textwrap.dedent(body)]


def client(body: str, lines: list[str] | None = None) -> AgentClient:
    log = lines if lines is not None else []
    return AgentClient(stand_in(body), log.append, local=False, spare=False, ship_agent=False)


async def test_a_70_mib_result_line_is_read_whole() -> None:
    agent = client(
        """
        blob = "x" * (70 << 20)
        sys.stdout.write(json.dumps({"id": job["id"], "result": {"blob": blob}}) + "\\n")
        sys.stdout.flush()
        """
    )
    result = await agent.run({"path": "f.py"}, timeout=60)
    assert len(result["blob"]) == 70 << 20
    assert not agent.running


async def test_a_70_mib_error_message_is_clipped_into_a_profile_error() -> None:
    agent = client(
        """
        error = {"kind": "runtime", "message": "boom " * (14 << 20), "line": 3}
        sys.stdout.write(json.dumps({"id": job["id"], "error": error}) + "\\n")
        sys.stdout.flush()
        """
    )
    with pytest.raises(ProfileError) as info:
        await agent.run({"path": "f.py"}, timeout=60)
    err = info.value
    assert err.kind == "runtime" and err.line == 3
    assert err.message.startswith("boom boom") and err.message.endswith("more characters)")
    assert len(err.message) < 30_000


async def test_one_huge_output_line_neither_kills_the_reader_nor_fills_the_pipe() -> None:
    lines: list[str] = []
    agent = client(
        """
        sys.stderr.write(str(list(range(10**7))) + "\\n")  # one 78 MB line
        sys.stderr.write("after the big line\\n")
        sys.stderr.flush()
        sys.stdout.write(json.dumps({"id": job["id"], "result": {"ok": True}}) + "\\n")
        sys.stdout.flush()
        """,
        lines,
    )
    assert await agent.run({"path": "f.py"}, timeout=60) == {"ok": True}
    big = next(line for line in lines if line.startswith("[0, 1, 2"))
    assert len(big) < 3_000 and big.endswith("more bytes on this line)")
    assert "after the big line" in lines


async def test_a_malformed_message_is_a_profile_error() -> None:
    agent = client('sys.stdout.write("{not json\\n"); sys.stdout.flush()')
    with pytest.raises(ProfileError) as info:
        await agent.run({"path": "f.py"}, timeout=60)
    assert info.value.kind == "internal" and "malformed" in info.value.message


async def test_a_crash_names_the_last_frames_not_no_output() -> None:
    path = "/work/user/model.py"
    dump = (
        "Fatal Python error: Segmentation fault\n\n"
        "Current thread 0x00007f0000000001 (most recent call first):\n"
        f'  File "{path}", line 12 in kernel\n'
        f'  File "{path}", line 30 in f\n'
        '  File "/lib/runner.py", line 5 in run\n\n'
        "Extension modules: torch._C (total: 1)\n"
    )
    agent = client(f"sys.stderr.write({dump!r}); sys.stderr.flush()\nimport os\nos._exit(139)")
    with pytest.raises(ProfileError) as info:
        await agent.run({"path": path}, timeout=60)
    err = info.value
    assert err.kind == "crash" and err.line == 12
    assert (
        "exit code 139" in err.message and "Fatal Python error: Segmentation fault" in err.message
    )
    assert "in kernel (model.py:12) ← f (model.py:30)" in err.message


async def test_a_client_used_once_leaves_no_process() -> None:
    agent = client(
        """
        import os
        print(os.getpid(), file=sys.stderr, flush=True)
        sys.stdout.write(json.dumps({"id": job["id"], "result": {"pid": os.getpid()}}) + "\\n")
        sys.stdout.flush()
        """
    )
    agent.prewarm()  # a one-job client keeps no spare
    pid = (await agent.run({"path": "f.py"}, timeout=60))["pid"]
    assert not agent.running
    await asyncio.sleep(0.2)
    assert not os.path.exists(f"/proc/{pid}") or _zombie(pid)


async def test_kill_stops_the_spare_too() -> None:
    agent = AgentClient(
        stand_in("import time; time.sleep(60)"), [].append, local=False, ship_agent=False
    )
    agent.prewarm()
    for _ in range(100):
        if agent.running and agent._spare_task is not None and agent._spare_task.done():  # noqa: SLF001
            break
        await asyncio.sleep(0.05)
    spare = agent._spare_task.result()  # type: ignore[union-attr]  # noqa: SLF001
    assert spare.proc is not None
    pid = spare.proc.pid
    await agent.kill()
    assert not agent.running
    assert not os.path.exists(f"/proc/{pid}") or _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def test_read_message_line_has_no_length_limit() -> None:
    reader = asyncio.StreamReader(limit=1024)
    reader.feed_data(b"a" * 5000 + b"\nrest")
    reader.feed_eof()
    assert await read_message_line(reader) == b"a" * 5000 + b"\n"
    assert await read_message_line(reader) == b"rest"
    assert await read_message_line(reader) == b""


TIMEOUT_DUMP = """\
some user output
Timeout (0:00:04)!
Thread 0x00007fd89564a6c0 (most recent call first):
  File "/srv/agent/__main__.py", line 76 in _read_requests
  File "/usr/lib/python3.11/threading.py", line 982 in run

Thread 0x00007fd8963edb80 (most recent call first):
  File "/home/u/m.py", line 5 in hang
  File "/home/u/m.py", line 9 in f
  File "/srv/agent/stages/target.py", line 59 in call
  File "<string>", line 1 in <module>
more output
""".splitlines()


def test_fault_frames_take_the_main_thread_of_the_last_dump() -> None:
    frames = fault_frames(TIMEOUT_DUMP, main_thread=0x00007FD8963EDB80)
    assert frames[:2] == [StackFrame("/home/u/m.py", 5, "hang"), StackFrame("/home/u/m.py", 9, "f")]
    assert failing_frame(frames, "/home/u/m.py") == StackFrame("/home/u/m.py", 5, "hang")
    assert failing_frame(frames, "/home/u/other.py") is None
    # Without the main thread's ident: the first thread of the dump.
    assert fault_frames(TIMEOUT_DUMP)[0].name == "_read_requests"
    # A later dump wins; a module-level hang is a <module> frame.
    later = [
        "Timeout (0:00:09)!",
        "Current thread 0x0000000000000001 (most recent call first):",
        '  File "/home/u/m.py", line 2 in <module>',
    ]
    assert fault_frames(TIMEOUT_DUMP + later)[0] == StackFrame("/home/u/m.py", 2, "<module>")
    assert fault_frames(["no dump here"]) == []


def test_where_text_names_the_users_frames_never_kernel_lens_or_the_stdlib() -> None:
    """A timeout in an nvcc build (no frame of the user's) must not name ``select
    (selectors.py:415)``: the user's file first, else their libraries, else nothing."""
    user = StackFrame("/home/u/m.py", 5, "hang")
    torch_frame = StackFrame("/venv/lib/python3.12/site-packages/torch/utils/x.py", 9, "load")
    stdlib = StackFrame("/usr/lib/python3.11/selectors.py", 415, "select")
    ours = StackFrame("/srv/server/kernel_lens/agent/stages/inline_ext.py", 109, "_ptx")
    assert where_text([stdlib, user], "/home/u/m.py") == "in hang (m.py:5)"
    assert where_text([stdlib, ours, torch_frame]) == "in load (x.py:9)"
    assert where_text([stdlib, ours, StackFrame("<string>", 1, "<module>")]) == ""


def test_pygls_does_not_log_a_request_failure_as_a_server_traceback() -> None:
    """A RequestFailed is the request's answer in the user's words (logged once by the server):
    pygls's ``logger.exception`` of it is dropped; any other handler error is kept."""
    import logging
    import sys

    from kernel_lens.lsp.common import QuietRequestFailures, RequestFailed

    quiet = QuietRequestFailures()

    def record(exc: BaseException) -> logging.LogRecord:
        try:
            raise exc
        except BaseException:
            info = sys.exc_info()
        return logging.LogRecord("pygls", logging.ERROR, __file__, 1, "Exception", (), info)

    assert quiet.filter(record(RequestFailed("timeout: no result", RequestFailed.CODE))) is False
    assert quiet.filter(record(ValueError("a bug"))) is True
    plain = logging.LogRecord("x", logging.WARNING, __file__, 1, "a warning", (), None)
    assert quiet.filter(plain) is True


async def test_a_job_waiting_for_a_warming_agent_says_what_it_waits_for(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A click before the spare is ready (issue 28): the job waits for that spare — never a
    # second cold agent — and its progress names the spare's phase and the seconds so far.
    starts = tmp_path / "starts"
    code = (
        "import json, os, sys, time\n"
        f"open({str(starts)!r}, 'a').write(str(os.getpid()) + '\\n')\n"
        "for phase in ('importing torch', 'initialising CUDA'):\n"
        "    sys.stdout.write(json.dumps({'event': 'warming', 'phase': phase}) + '\\n')\n"
        "    sys.stdout.flush()\n"
        "    time.sleep(1.2)\n"
        "sys.stdout.write(json.dumps({'event': 'ready', 'pid': os.getpid()}) + '\\n')\n"
        "sys.stdout.flush()\n"
        "for line in sys.stdin:  # past the parent's hurry line, to the job\n"
        "    job = json.loads(line) if line.startswith('{') else {}\n"
        "    if 'id' in job:\n"
        "        break\n"
        "sys.stdout.write(json.dumps({'id': job['id'], 'result': {'ok': 1}}) + '\\n')\n"
        "sys.stdout.flush()\n"
    )
    agent = AgentClient(
        [sys.executable, "-c", code], [].append, local=False, spare=True, ship_agent=False
    )
    said: list[tuple[str, str]] = []
    try:
        agent.prewarm()
        await asyncio.sleep(0.2)
        result = await agent.run({}, timeout=30, on_progress=lambda s, t: said.append((s, t)))
    finally:
        await agent.close()
    assert result == {"ok": 1}
    texts = [t for s, t in said if s == "agent"]
    assert any(t.startswith("starting the agent: importing torch… ") for t in texts), said
    assert any(t.startswith("starting the agent: initialising CUDA… ") for t in texts), said
    seconds = [float(t.rsplit("… ", 1)[1].removesuffix(" s")) for t in texts]
    assert seconds == sorted(seconds) and seconds[-1] >= 1.0
    # one agent for the job (the spare that was warming); the next spare may have started since
    assert len(starts.read_text().split()) <= 2
