"""Debug Kernel through the real ``debugpy`` adapter over the Debug Adapter Protocol: the session
the extension starts (``python -m debugpy.adapter``, then a ``launch`` of
``kernel_lens.agent.stages.interp_debug``) stops on the kernel's first line for the chosen
program, steps, and shows a block as an array."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import pytest

from tests.conftest import KERNELS, ROOT

debugpy = pytest.importorskip("debugpy")

INSIDE = KERNELS / "triton_inside.py"
PLUGINS = ROOT / "server" / "kernel_lens" / "agent" / "debug_plugins"


class Dap:
    """A minimal DAP client over the adapter's stdio (Content-Length framed JSON)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "debugpy.adapter"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.seq = 0
        self.messages: Queue[dict[str, Any]] = Queue()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            self.messages.put(json.loads(out.read(length)))

    def send(self, command: str, arguments: dict[str, Any] | None = None) -> int:
        self.seq += 1
        body = json.dumps(
            {"seq": self.seq, "type": "request", "command": command, "arguments": arguments or {}}
        ).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return self.seq

    def wait(self, kind: str, name: str, seq: int | None = None, timeout: float = 120) -> Any:
        """The next response to ``seq`` (``kind="response"``) or event ``name``."""
        end = time.monotonic() + timeout
        for event in self.events:
            if kind == "event" and event.get("event") == name:
                self.events.remove(event)
                return event
        while time.monotonic() < end:
            try:
                msg = self.messages.get(timeout=max(0.1, end - time.monotonic()))
            except Empty:
                break
            if kind == "response" and msg.get("type") == "response":
                if msg.get("request_seq") == seq:
                    assert msg.get("success"), msg
                    return msg.get("body") or {}
                continue
            if msg.get("type") == "event":
                if kind == "event" and msg.get("event") == name:
                    return msg
                self.events.append(msg)
        raise AssertionError(f"no {kind} {name} within {timeout} s; events: {self.events[-5:]}")

    def request(self, command: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.wait("response", command, self.send(command, arguments))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _variables(dap: Dap, reference: int) -> dict[str, dict[str, Any]]:
    body = dap.request("variables", {"variablesReference": reference})
    return {v["name"]: v for v in body["variables"]}


@pytest.mark.timeout(300)
def test_debug_kernel_stops_on_the_first_line_for_the_last_program() -> None:
    dap = Dap()
    try:
        dap.request(
            "initialize",
            {
                "clientID": "kernel-lens-test",
                "adapterID": "kernelLens",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "pathFormat": "path",
                "supportsVariableType": True,
            },
        )
        env = {
            "TRITON_INTERPRET": "1",
            "PYTHONPATH": os.pathsep.join([str(PLUGINS), str(ROOT / "server")]),
        }
        dap.send(
            "launch",
            {
                "type": "kernelLens",
                "request": "launch",
                "name": "Debug Kernel",
                "python": [sys.executable],
                "module": "kernel_lens.agent.stages.interp_debug",
                "args": [str(INSIDE), "scale_kernel", "--pid", "last"],
                "cwd": str(INSIDE.parent),
                "env": env,
                "console": "internalConsole",
                "justMyCode": True,
            },
        )
        dap.wait("event", "initialized")
        dap.request("configurationDone")
        stopped = dap.wait("event", "stopped", timeout=180)
        thread = stopped["body"]["threadId"]
        frames = dap.request("stackTrace", {"threadId": thread})["stackFrames"]
        top = frames[0]
        assert top["name"] == "scale_kernel"
        assert Path(top["source"]["path"]).resolve() == INSIDE.resolve()
        assert top["line"] == _line(INSIDE, "pid = tl.program_id(axis=0)")
        # step over `pid = …` and `offs = …`: the last program of four
        for _ in range(2):
            dap.send("next", {"threadId": thread})
            dap.wait("event", "stopped")
        frames = dap.request("stackTrace", {"threadId": thread})["stackFrames"]
        assert frames[0]["line"] == _line(INSIDE, "mask = offs < n")
        frame_id = frames[0]["id"]
        scopes = dap.request("scopes", {"frameId": frame_id})["scopes"]
        local = _variables(dap, scopes[0]["variablesReference"])
        assert {"out_ptr", "in_ptr", "n", "factor", "BLOCK", "pid", "offs"} <= set(local)
        assert local["pid"]["value"] == "int32 3"
        assert local["offs"]["value"] == "int32[1024] 3072 3073 3074 … 4095"
        # the block's children: its array (a NumPy ndarray, as debugpy shows arrays)
        children = _variables(dap, local["offs"]["variablesReference"])
        assert children["shape"]["value"] == "(1024,)"
        block = children["block"]
        assert block["type"] == "ndarray"
        items = _variables(dap, block["variablesReference"])
        assert "3072" in items["min"]["value"] and "4095" in items["max"]["value"]
        # a watch on a block
        evaluated = dap.request(
            "evaluate", {"expression": "offs", "frameId": frame_id, "context": "watch"}
        )
        assert evaluated["result"].startswith("int32[1024] 3072")
        dap.send("continue", {"threadId": thread})
        dap.wait("event", "terminated", timeout=120)
    finally:
        dap.close()
