"""No string of a trace, a report, the history or user code drives the terminal (issue 45 item
8): ``kernel-lens trace summarize`` and ``kernel-lens history`` in text mode, fed names holding
OSC 52 (clipboard), OSC 0 (window title), CSI 2J (clear screen), OSC 8 (a link) and a bidi
override, print the names without the escapes; ``--json`` stays JSON (escaped)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from kernel_lens.history import History, make_entry
from tests.conftest import run_cli

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
OSC0 = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
OSC8 = "\x1b]8;;http://evil.example\x1b\\"
HOSTILE = f"{OSC52}{OSC0}{CLEAR}{OSC8}kern\u202eel{OSC8}"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _clean(text: str) -> None:
    assert not _CONTROL.search(text), repr(text[:500])
    assert "\u202e" not in text
    assert "pwned" not in text and "evil.example" not in text and "ZWNo" not in text


def _trace(path: Path) -> Path:
    events = [
        {"ph": "X", "cat": "cpu_op", "name": f"aten::{HOSTILE}", "ts": 0, "dur": 50,
         "pid": 1, "tid": 1, "args": {"External id": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 5, "dur": 5,
         "pid": 1, "tid": 1, "args": {"External id": 1, "correlation": 9}},
        {"ph": "X", "cat": "kernel", "name": f"{HOSTILE}_kernel", "ts": 20, "dur": 30,
         "pid": 0, "tid": 7, "args": {"External id": 1, "correlation": 9, "stream": 7,
                                      "device": 0}},
    ]  # fmt: skip
    doc = {"traceEvents": events, "deviceProperties": [{"id": 0, "name": f"GPU {HOSTILE}"}]}
    path.write_text(json.dumps(doc))
    return path


def test_trace_summarize_text_strips_escapes(tmp_path: Path) -> None:
    path = _trace(tmp_path / "hostile.pt.trace.json")
    code, out, stderr = run_cli("trace", "summarize", str(path), timeout=60)
    assert code == 0, stderr[-2000:]
    _clean(out)
    assert "kern<U+202E>el" in out and "Top kernels" in out  # the device name, shown visibly
    code, data, _ = run_cli("trace", "summarize", str(path), "--json", timeout=60)
    assert code == 0
    assert data["device"] == f"GPU {HOSTILE}"  # JSON keeps the data (escaped by JSON)


def test_history_text_strips_escapes(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    return 1\n")
    result = {
        "function": "f",
        "device": f"GPU {HOSTILE}",
        "timing": {"median_ms": 1.0, "spread_pct": 1.0, "reps": 3},
        "lines": [],
    }
    history = History(Path(os.environ["KERNEL_LENS_HISTORY"]))
    history.add(str(source), "f", make_entry(result, text=None, file_text=None, git=None))
    code, out, stderr = run_cli("history", f"{source}::f", timeout=60)
    assert code == 0, stderr[-2000:]
    _clean(out)
    assert "kern<U+202E>el" in out
