"""The agent's wire format: JSON lines over pipes, their messages and their limits.

Server → agent (stdin), one object per line (:class:`JobMessage`)::

    {"id": 1, "method": "profile", "params": {<ProfileRequest fields>}, "timeout": 120}
    {"id": 2, "method": "ping"}
    {"method": "hurry"}                  # a warming spare: a job waits for it (HURRY)
    {"method": "stop"}                   # cancel: a whole-script run stops, keeping its part (STOP)

A job for a remote agent (``kernelLens.agentCommand`` = ``ssh …``, ``srun …``) carries the
workspace modules the file imports (``bundle``, :class:`BundleFile`) and asks for the files its
result names to come back (``send_files``): before the result, one :class:`FileMessage` per file.

Agent → server (the original stdout; user output is moved to stderr), one object per line::

    {"event": "warming", "phase": "importing torch"}                # WarmingMessage
    {"event": "ready", "pid": 123, "python": "3.11.7", "torch": "2.13.0", "cuda": false}
                                                                    # ReadyMessage
    {"id": 1, "progress": {"stage": "timing", "message": "…"}}      # ProgressMessage
    {"id": 1, "partial": {"result": {…}, "final": […], "stage": "timing"}}   # PartialMessage
    {"id": 1, "file": {"path", "rel", "data"}}                      # FileMessage (remote)
    {"id": 1, "result": {…}}                                        # ResultMessage

A ``partial`` message streams what is known before the job ends (issue 28): ``result`` holds the
result's top-level keys that changed since the last one (the per-line ``lines`` and ``kernels``
of the profiled pass first, then ``timing`` as it converges), to be merged into what came
before; ``final`` lists the keys that will not change any more and ``stage`` says what runs now.
The ``result`` message at the end is whole and stands on its own: a reader may ignore partials.
    {"id": 1, "error": {"kind", "message", "line", "traceback"}}    # ErrorMessage

An error object carries ``suggested_directive`` too when the job has one (an ``inputs`` error).

A fork template (a local machine) says ``ready`` with ``"template": true``; then, for each
spare it forks, ``{"event": "spawned", "pid"}`` (:class:`SpawnedMessage`) and, when that spare
ends, ``{"event": "exit", "pid", "code"}`` (:class:`ExitMessage`).

The agent builds each message as its ``TypedDict`` (``ProgressMessage(id=…, progress=…)``);
the parent reads them through :func:`job_reply`, :func:`ready_message`,
:func:`warming_phase` and :func:`template_event`, and the agent reads a job through
:func:`decode_job`. A ``TypedDict`` is not checked at run time: a reader checks what it uses
(the other end may not be ours to trust).
"""

# No ``from __future__ import annotations``: a TypedDict's ``NotRequired`` keys must be known at
# run time (``__optional_keys__``).
import asyncio
import json
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast, final

from kernel_lens.wire._compat import NotRequired
from kernel_lens.wire.errors import ErrorObject, ProfileError

__all__ = [
    "HURRY",
    "STOP",
    "MAX_MESSAGE_BYTES",
    "MAX_MESSAGE_CHARS",
    "MAX_TRACEBACK_CHARS",
    "AgentMessage",
    "BundleFile",
    "ErrorMessage",
    "ExitMessage",
    "FileMessage",
    "JobMessage",
    "JobReply",
    "PartialMessage",
    "PartialUpdate",
    "ProgressMessage",
    "ProgressUpdate",
    "ReadyMessage",
    "RemoteJobFields",
    "ResultMessage",
    "ReturnedFile",
    "SpawnedMessage",
    "TemplateEvent",
    "WarmingMessage",
    "clip",
    "decode",
    "decode_job",
    "encode",
    "error_from_object",
    "error_object",
    "job_reply",
    "merge_partial",
    "read_message_line",
    "ready_message",
    "template_event",
    "warming_phase",
]

#: Tells a warming spare that a job waits for it (it warms under ``SCHED_IDLE`` until then).
HURRY = b'{"method":"hurry"}'
#: Cancel, for a job that can end early with what it has (a whole-script run): stop at the next
#: line and send the part that ran; the server kills the agent if no result comes soon.
STOP = b'{"method":"stop"}'
#: Characters of an error message kept, both sides (a 70 MB exception message helps no one).
MAX_MESSAGE_CHARS = 20_000
#: Characters of an error's traceback kept, both sides.
MAX_TRACEBACK_CHARS = 200_000
#: The largest protocol message accepted, in bytes (results are far smaller; lines have no limit
#: below this: a 70 MB line is read whole).
MAX_MESSAGE_BYTES = 1 << 30


class BundleFile(TypedDict):
    """A workspace file a remote job needs (the target's buffer, a module it imports)."""

    path: str
    """The file's absolute path on the editor's machine (its code is compiled under it)."""
    root: str
    """The ``sys.path`` folder it was found under there (its import name is relative to it)."""
    text: str


class ReturnedFile(TypedDict):
    """A file a remote job's result names (a trace, a report), brought back whole."""

    path: str
    """Its path on the agent's machine, as the result names it."""
    rel: str
    """Its path relative to the agent's cache root (``traces/…``): where it goes locally."""
    data: str
    """Its bytes, zlib-compressed, base64."""


@final
class FileMessage(TypedDict):
    """A file of job ``id``'s result, sent before the result (remote agents only)."""

    id: int | None
    """(Each reply to a job echoes its ``id``, as it came.)"""
    file: ReturnedFile


class JobMessage(TypedDict):
    """A job for the agent (``params``: the request's fields, :mod:`kernel_lens.wire.jobs`);
    ``ping`` and ``shutdown`` have no params."""

    id: int
    method: str
    params: NotRequired[dict[str, Any]]
    timeout: NotRequired[float]
    """Seconds the parent waits: the agent dumps its stack just before."""
    send_files: NotRequired[bool]
    """(A remote agent) send the files the result names back (:class:`FileMessage`)."""
    bundle: NotRequired[list[BundleFile]]
    """(A remote agent) the workspace files the job needs, put on its ``sys.path``."""


@final
class RemoteJobFields(TypedDict, total=False):
    """The keys a job for a remote agent adds to its :class:`JobMessage`, in this order."""

    send_files: bool
    bundle: list[BundleFile]


class ReadyMessage(TypedDict, total=False):
    """The agent is warm and takes its job (a template: forks spares). The agent always sends
    ``event`` and ``pid``; the rest says what it found (``torch`` is ``None`` when torch did
    not import, with ``torch_error``), and a parent reads every key as maybe absent."""

    event: Literal["ready"]
    template: bool
    """A fork template, not a job agent."""
    pid: int
    python: str
    executable: str
    main_thread: int
    """The ident of the thread that runs jobs (its frames are the user's in a stack dump)."""
    cupti_teardown: bool
    torch: str | None
    torch_error: str
    cuda: bool
    device: str
    warm_s: float
    """Seconds the warm-up took."""
    profiler_error: str


class WarmingMessage(TypedDict):
    """Before ``ready``: the phase of the warm-up the agent is in (``importing torch``)."""

    event: Literal["warming"]
    phase: str


@final
class SpawnedMessage(TypedDict):
    """(A template) it forked the spare ``pid`` for the last request on its socket."""

    event: Literal["spawned"]
    pid: int


@final
class ExitMessage(TypedDict):
    """(A template) its spare ``pid`` ended with exit status ``code``."""

    event: Literal["exit"]
    pid: int
    code: int


#: What a template says after its ``ready``.
TemplateEvent = SpawnedMessage | ExitMessage


class ProgressUpdate(TypedDict):
    """One line of progress for the user."""

    stage: str
    message: str


@final
class ProgressMessage(TypedDict):
    """The agent is at ``progress.stage`` of job ``id``."""

    id: int | None
    progress: ProgressUpdate


class PartialUpdate(TypedDict):
    """Part of a job's result, known before the job ends."""

    result: dict[str, Any]
    """The result's top-level keys that changed since the last partial (merge them in)."""
    final: list[str]
    """The result's keys whose values will not change any more (``lines``, ``kernels``…)."""
    stage: str
    """What the job does now (``timing``, ``trace``, …)."""


@final
class PartialMessage(TypedDict):
    """Job ``id`` knows part of its result (see the module docstring)."""

    id: int | None
    partial: PartialUpdate


@final
class ResultMessage(TypedDict):
    """Job ``id`` succeeded: ``result`` is its JSON (the profile result, say)."""

    id: int | None
    result: Mapping[str, Any]


@final
class ErrorMessage(TypedDict):
    """Job ``id`` failed (``id`` null: a request that could not be read)."""

    id: int | None
    error: ErrorObject


#: What the agent says about one job, by its one key besides ``id``.
JobReply = ProgressMessage | PartialMessage | FileMessage | ResultMessage | ErrorMessage
#: Everything the agent writes on the protocol's output.
AgentMessage = JobReply | ReadyMessage | WarmingMessage | TemplateEvent


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as a UTF-8 JSON line."""
    return (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")


def decode(line: bytes | str) -> dict[str, Any]:
    """Parse one JSON line; raises ``ValueError`` when it is not a JSON object."""
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


def decode_job(line: bytes | str) -> JobMessage:
    """One job line as the :class:`JobMessage` it was sent as; its fields are not checked (the
    agent reads ``id`` and ``method`` as they come and the stages check their params).

    Raises:
        ValueError: the line is not a JSON object.
    """
    return cast(JobMessage, decode(line))


#: The keys of a job's reply, in the order a reader looks for them.
_REPLY_KEYS = ("progress", "partial", "file", "result", "error")


def job_reply(message: Mapping[str, Any], job_id: int) -> JobReply | None:
    """``message`` (decoded) as job ``job_id``'s :data:`JobReply`, told by its first key of
    ``progress``, ``partial``, ``file``, ``result``, ``error``; ``None`` for another job's
    message or one of none of them. What the key holds is the reader's to check."""
    if message.get("id") != job_id or not any(key in message for key in _REPLY_KEYS):
        return None
    return cast(JobReply, message)


def ready_message(message: Mapping[str, Any]) -> ReadyMessage:
    """The agent's first line (after its ``warming`` ones) as its :class:`ReadyMessage`: any
    JSON object is taken (each key is read as maybe absent)."""
    return cast(ReadyMessage, dict(message))


def warming_phase(message: Mapping[str, Any]) -> str | None:
    """The phase of a :class:`WarmingMessage` (``warming up`` when it names none), else
    ``None`` (the agent's ``ready``, or anything else)."""
    if message.get("event") != "warming":
        return None
    return str(message.get("phase") or "warming up")


def template_event(message: Mapping[str, Any]) -> TemplateEvent | None:
    """A template's ``spawned`` or ``exit`` line, its ``pid`` an int (an exit status that is
    not one reads ``-1``); ``None`` for anything else."""
    pid = message.get("pid")
    if not isinstance(pid, int):
        return None
    if message.get("event") == "spawned":
        return SpawnedMessage(event="spawned", pid=pid)
    if message.get("event") == "exit":
        code = message.get("code")
        return ExitMessage(event="exit", pid=pid, code=code if isinstance(code, int) else -1)
    return None


def merge_partial(known: dict[str, Any], final: list[str], update: Mapping[str, Any]) -> str:
    """Merge one ``partial`` message's :class:`PartialUpdate` into ``known`` (the result so far,
    changed in place) and ``final`` (its final keys, in order); returns its ``stage``.

    Raises:
        ValueError: ``update`` is not a partial update.
    """
    result = update.get("result")
    keys = update.get("final")
    if not isinstance(result, dict) or not isinstance(keys, list):
        raise ValueError("a partial update has a 'result' object and a 'final' list")
    known.update(result)
    final.extend(str(k) for k in keys if str(k) not in final)
    return str(update.get("stage") or "")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def error_object(err: ProfileError) -> ErrorObject:
    """``err`` as the envelope's error object, its message and traceback clipped."""
    out = err.to_json()
    out["message"] = clip(err.message, MAX_MESSAGE_CHARS)
    out["traceback"] = clip(err.traceback, MAX_TRACEBACK_CHARS) if err.traceback else err.traceback
    return out


def error_from_object(obj: Mapping[str, Any]) -> ProfileError:
    """The envelope's error object as a :class:`ProfileError` (an unknown kind is ``internal``),
    its message and traceback clipped: the agent may not be ours to trust on sizes."""
    err = ProfileError.from_json(obj)
    err.message = clip(err.message, MAX_MESSAGE_CHARS)
    if err.traceback is not None:
        err.traceback = clip(err.traceback, MAX_TRACEBACK_CHARS)
    return err


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
