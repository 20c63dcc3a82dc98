"""The agent's JSON lines are ``wire/envelope.py``'s types (issue 37): every message a real
agent writes has the keys of the TypedDict it is built as, no more and none missing, and the
parent's readers take each kind of message as the ``elif`` chain before them did."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from kernel_lens.wire import envelope
from kernel_lens.wire.errors import ErrorObject
from tests.conftest import ROOT

#: Each kind of message the agent writes, by the key that tells it (``event`` by its value).
_REPLY_TYPES: dict[str, Any] = {
    "progress": envelope.ProgressMessage,
    "partial": envelope.PartialMessage,
    "file": envelope.FileMessage,
    "result": envelope.ResultMessage,
    "error": envelope.ErrorMessage,
}
_EVENT_TYPES: dict[str, Any] = {
    "ready": envelope.ReadyMessage,
    "warming": envelope.WarmingMessage,
    "spawned": envelope.SpawnedMessage,
    "exit": envelope.ExitMessage,
}


def _type_of(message: dict[str, Any]) -> Any:
    if "event" in message:
        return _EVENT_TYPES[message["event"]]
    (kind,) = [k for k in _REPLY_TYPES if k in message]
    return _REPLY_TYPES[kind]


def _assert_keys(message: dict[str, Any], typed: Any) -> None:
    keys = set(message)
    assert typed.__required_keys__ <= keys, (typed.__name__, message)
    assert keys <= set(typed.__annotations__), (typed.__name__, sorted(keys))


def _run_agent(tmp_path: Path, jobs: list[bytes]) -> list[dict[str, Any]]:
    """Every line a real ``python -m kernel_lens.agent`` writes for ``jobs``, then
    ``shutdown`` (its input stays open until then: an agent whose input closes ends at once)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    env.pop("KERNEL_LENS_AGENT_TEMPLATE_FD", None)
    with (tmp_path / "stderr.txt").open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernel_lens.agent"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=tmp_path,
        )
    assert proc.stdin is not None and proc.stdout is not None
    stop = threading.Timer(300, proc.kill)
    stop.start()
    try:
        proc.stdin.write(b"".join(jobs) + b'{"id": 99, "method": "shutdown"}\n')
        proc.stdin.flush()
        messages = []
        for line in proc.stdout:
            messages.append(json.loads(line))
            if messages[-1].get("id") == 99:
                break
        proc.stdin.close()
        proc.wait(60)
    finally:
        stop.cancel()
        proc.kill()
    assert messages and messages[-1].get("id") == 99, (tmp_path / "stderr.txt").read_text()[-2000:]
    return messages


def test_every_message_of_a_real_agent_has_the_keys_of_its_envelope_type(tmp_path: Path) -> None:
    source = tmp_path / "small.py"
    source.write_text(
        textwrap.dedent(
            """
            import torch

            def double(x):
                return x * 2

            double_inputs = lambda: (torch.ones(8),)
            """
        )
    )
    profile = {
        "path": str(source),
        "function": "double",
        "stages": ["timing", "ops"],
        "warmup_ms": 1.0,
        "budget_ms": 5.0,
        "trace_dir": str(tmp_path / "traces"),
    }
    jobs = [
        b'{"id": 1, "method": "ping"}\n',
        b"not json\n",
        b'{"id": 2, "method": "no-such-method"}\n',
        envelope.encode(envelope.JobMessage(id=3, method="profile", params=profile, timeout=240)),
        b'{"id": 4, "method": "profile", "params": {"path": "/nowhere/x.py", "function": "f"}}\n',
    ]
    messages = _run_agent(tmp_path, jobs)
    for message in messages:
        _assert_keys(message, _type_of(message))
        if "error" in message:
            _assert_keys(message["error"], ErrorObject)
        for key, inner in (
            ("progress", envelope.ProgressUpdate),
            ("partial", envelope.PartialUpdate),
        ):
            if key in message:
                _assert_keys(message[key], inner)
    kinds = [
        (m.get("id"), m.get("event") or next(k for k in _REPLY_TYPES if k in m)) for m in messages
    ]
    assert kinds[: kinds.index((None, "ready")) + 1][-1] == (None, "ready")
    assert (1, "result") in kinds and (None, "error") in kinds and (2, "error") in kinds
    assert {(3, "progress"), (3, "partial"), (3, "result")} <= set(kinds), kinds
    assert (4, "error") in kinds and kinds[-1] == (99, "result")
    ready = next(m for m in messages if m.get("event") == "ready")
    assert ready["pid"] > 0 and ready["python"] and "main_thread" in ready
    assert next(m for m in messages if m.get("id") == 1)["result"] == {"pong": True}


def test_job_reply_tells_a_reply_by_its_key_in_the_order_the_parent_reads_them() -> None:
    both = {"id": 7, "progress": {"stage": "timing", "message": "…"}, "result": {}}
    reply = envelope.job_reply(both, 7)
    assert reply is not None and "progress" in reply
    assert envelope.job_reply(both, 8) is None  # another job's
    assert envelope.job_reply({"id": 7, "event": "ready"}, 7) is None  # no reply key
    assert envelope.job_reply({"id": 7, "result": "not an object"}, 7) == {
        "id": 7,
        "result": "not an object",
    }  # what a key holds is the reader's to check


def test_template_events_and_warming_phases_are_read_as_before() -> None:
    assert envelope.template_event({"event": "spawned", "pid": 12}) == {
        "event": "spawned",
        "pid": 12,
    }
    assert envelope.template_event({"event": "exit", "pid": 12, "code": None}) == {
        "event": "exit",
        "pid": 12,
        "code": -1,
    }
    assert envelope.template_event({"event": "exit", "pid": "12", "code": 0}) is None
    assert envelope.template_event({"event": "ready", "pid": 12}) is None
    assert envelope.warming_phase({"event": "warming", "phase": "importing torch"}) == (
        "importing torch"
    )
    assert envelope.warming_phase({"event": "warming"}) == "warming up"
    assert envelope.warming_phase({"event": "ready", "pid": 1}) is None


def test_a_message_built_as_its_type_is_the_bytes_of_the_literal_it_replaced() -> None:
    update = envelope.ProgressUpdate(stage="timing", message="timing 3 reps")
    assert envelope.encode(envelope.ProgressMessage(id=1, progress=update)) == (
        b'{"id":1,"progress":{"stage":"timing","message":"timing 3 reps"}}\n'
    )
    job = envelope.JobMessage(
        id=2, method="profile", params={}, timeout=5.0, **envelope.RemoteJobFields(send_files=True)
    )
    assert envelope.encode(job) == (
        b'{"id":2,"method":"profile","params":{},"timeout":5.0,"send_files":true}\n'
    )
