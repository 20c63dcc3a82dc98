"""The agent's wire format: JSON lines over pipes. Imports nothing heavy.

Server → agent (stdin), one object per line::

    {"id": 1, "method": "profile", "params": {<ProfileRequest fields>}}
    {"id": 2, "method": "ping"}

Agent → server (the original stdout; user output is moved to stderr), one object per line::

    {"event": "ready", "pid": 123, "python": "3.11.7", "torch": "2.13.0", "cuda": false}
    {"id": 1, "progress": {"stage": "timing", "message": "…"}}
    {"id": 1, "result": {…}}            # the CLI's --json object
    {"id": 1, "error": {"kind", "message", "line", "traceback"}}
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["decode", "encode"]


def encode(message: dict[str, Any]) -> bytes:
    """One message as a UTF-8 JSON line."""
    return (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")


def decode(line: bytes | str) -> dict[str, Any]:
    """Parse one JSON line; raises ``ValueError`` when it is not a JSON object."""
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value
