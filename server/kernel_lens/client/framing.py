"""The job framing of the agent protocol on the parent's side: one JSON line of any length
read whole, the limits on what is kept of an agent's messages and output, and an error message
turned back into a :class:`ProfileError`.

The messages themselves are :mod:`kernel_lens.agent.protocol`'s (encode/decode).
"""

from __future__ import annotations

import asyncio
from typing import Any

from kernel_lens.agent.types import ProfileError, error_kind  # until wire/ lands
from kernel_lens.client.faults import clip

__all__ = [
    "HURRY",
    "MAX_LINE_CHARS",
    "MAX_LOG_LINES_PER_JOB",
    "MAX_MESSAGE_BYTES",
    "MAX_MESSAGE_CHARS",
    "MAX_TRACEBACK_CHARS",
    "START_TIMEOUT_S",
    "error_from_message",
    "read_message_line",
]

#: Starting the agent imports torch (and creates a CUDA context): seconds, more over ssh.
START_TIMEOUT_S = 180.0
#: Lines of agent output forwarded per job: a print in a timed function runs thousands of times.
MAX_LOG_LINES_PER_JOB = 300
#: Characters of one output line kept (``print(list(range(10**7)))`` is one 70 MB line).
MAX_LINE_CHARS = 2_000
#: Characters of an error message kept (a 70 MB exception message would swamp the editor).
MAX_MESSAGE_CHARS = 20_000
MAX_TRACEBACK_CHARS = 200_000
#: The largest protocol message accepted, in bytes (results are far smaller; lines have no limit
#: below this: a 70 MB line is read whole).
MAX_MESSAGE_BYTES = 1 << 30
#: Tells a warming spare that a job waits for it (it warms under ``SCHED_IDLE`` until then).
HURRY = b'{"method":"hurry"}'


async def read_message_line(stream: asyncio.StreamReader) -> bytes:
    """One protocol line of any length (up to :data:`MAX_MESSAGE_BYTES`); ``b""`` at EOF.

    ``StreamReader.readline`` fails on a line over the reader's limit (the 64 MiB of old); this
    reads such a line in pieces.

    Raises:
        ProfileError: the line is over :data:`MAX_MESSAGE_BYTES`.
    """
    parts: list[bytes] = []
    size = 0
    while True:
        try:
            parts.append(await stream.readuntil(b"\n"))
            return b"".join(parts)
        except asyncio.IncompleteReadError as exc:
            parts.append(exc.partial)
            return b"".join(parts)
        except asyncio.LimitOverrunError as exc:
            piece = await stream.readexactly(max(exc.consumed, 1))
            parts.append(piece)
            size += len(piece)
            if size > MAX_MESSAGE_BYTES:
                raise ProfileError(
                    "internal",
                    f"the agent sent a message of over {MAX_MESSAGE_BYTES >> 20} MiB",
                ) from None


def error_from_message(err: dict[str, Any]) -> ProfileError:
    """The job's error from the agent's ``{"error": {"kind", "message", "line", "traceback"}}``
    (message and traceback clipped to :data:`MAX_MESSAGE_CHARS` / :data:`MAX_TRACEBACK_CHARS`)."""
    line = err.get("line")
    tb = err.get("traceback")
    return ProfileError(
        error_kind(err.get("kind", "internal")),
        clip(str(err.get("message", "")), MAX_MESSAGE_CHARS),
        line if isinstance(line, int) else None,
        clip(tb, MAX_TRACEBACK_CHARS) if isinstance(tb, str) else None,
    )
