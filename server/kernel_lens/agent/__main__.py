"""``python -m kernel_lens.agent``: the long-lived profiling process (one job at a time).

It imports torch once (and initialises CUDA when present) so each job starts warm. The protocol
uses the process's original stdout; fd 1 and ``sys.stdout`` are pointed at stderr first, so user
prints, C extensions and compilers can never corrupt it — the server shows stderr in its log.
"""

from __future__ import annotations

import os
import platform
import sys
import traceback
from typing import Any, BinaryIO

from kernel_lens.agent.engine import METHODS


def _take_protocol_channel() -> BinaryIO:
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "wb", buffering=0)


def main() -> int:
    """Serve jobs from stdin until it closes."""
    channel = _take_protocol_channel()

    from kernel_lens.agent.errors import ProfileError, format_exception
    from kernel_lens.agent.protocol import decode, encode

    def send(message: dict[str, Any]) -> None:
        channel.write(encode(message))

    ready: dict[str, Any] = {
        "event": "ready",
        "pid": os.getpid(),
        "python": platform.python_version(),
        "executable": sys.executable,
    }
    try:
        import torch

        ready["torch"] = torch.__version__
        ready["cuda"] = bool(torch.cuda.is_available())
        if ready["cuda"]:
            ready["device"] = torch.cuda.get_device_name()
            torch.cuda.init()
    except Exception as exc:  # a missing torch is reported per job, not fatal here
        ready["torch"] = None
        ready["torch_error"] = f"{type(exc).__name__}: {exc}"
    send(ready)

    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        try:
            message = decode(raw)
        except ValueError as exc:
            send({"id": None, "error": {"kind": "internal", "message": f"bad request: {exc}"}})
            continue
        job_id = message.get("id")
        method = str(message.get("method"))
        if method == "ping":
            send({"id": job_id, "result": {"pong": True}})
            continue
        if method == "shutdown":
            send({"id": job_id, "result": {}})
            break
        handler = METHODS.get(method)
        if handler is None:
            send({"id": job_id, "error": {"kind": "internal", "message": f"unknown {method!r}"}})
            continue

        def progress(stage: str, text: str, job_id: Any = job_id) -> None:
            send({"id": job_id, "progress": {"stage": stage, "message": text}})

        try:
            send({"id": job_id, "result": handler(message.get("params") or {}, progress)})
        except ProfileError as exc:
            send({"id": job_id, "error": exc.to_json()})
        except ImportError as exc:
            error = {
                "kind": "unsupported",
                "message": f"{exc} — is torch installed in {sys.executable}?",
                "line": None,
                "traceback": format_exception(exc),
            }
            send({"id": job_id, "error": error})
        except Exception as exc:
            traceback.print_exc()
            error = {
                "kind": "internal",
                "message": f"{type(exc).__name__}: {exc}",
                "line": None,
                "traceback": format_exception(exc),
            }
            send({"id": job_id, "error": error})
        sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
