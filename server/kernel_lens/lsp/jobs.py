"""One agent job as the user sees it: a cancellable progress notification, the status item, the
stages in the log, and cancellation from the notification (``window/workDoneProgress/cancel``)."""

from __future__ import annotations

import uuid
from typing import Any

from lsprotocol import types

from kernel_lens.agent.errors import ProfileError
from kernel_lens.lsp.protocol import NOTIFY_STATUS, StatusParams
from kernel_lens.lsp.server import Job, KernelLensServer

__all__ = ["run_job", "status"]


def status(ls: KernelLensServer, state: str, message: str, uri: str | None = None) -> None:
    """Send ``kernelLens/status`` (``idle``, ``profiling`` or ``error``)."""
    ls.protocol.notify(NOTIFY_STATUS, StatusParams(state=state, message=message, uri=uri))  # type: ignore[arg-type]


async def run_job(
    ls: KernelLensServer,
    *,
    uri: str,
    qualname: str,
    title: str,
    params: dict[str, Any],
    method: str = "profile",
) -> dict[str, Any]:
    """Run ``method`` on the agent with progress; the caller reports success.

    On failure the status item shows the error (or idle after a cancel) and the error is raised.

    Raises:
        ProfileError: the job's error, ``timeout``, ``crash`` or ``cancelled``.
    """
    token = f"kernel-lens-{uuid.uuid4()}"
    job = Job(uri=uri, qualname=qualname, token=token)
    ls.jobs[token] = job
    progress = False
    caps = ls.client_capabilities.window
    if caps and caps.work_done_progress:
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(title=title, message="starting", cancellable=True),
            )
            progress = True
        except Exception as exc:
            ls.log(f"no progress notification: {exc}")
    status(ls, "profiling", qualname, uri)

    def on_progress(stage: str, message: str) -> None:
        ls.log(f"  [{stage}] {message}")
        if progress:
            ls.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))

    try:
        return await ls.agent.run(
            params,
            timeout=ls.settings.timeout_seconds,
            on_progress=on_progress,
            cancelled=job.cancelled,
            method=method,
        )
    except ProfileError as err:
        if err.kind == "cancelled":
            status(ls, "idle", f"{qualname}: cancelled", uri)
        else:
            status(ls, "error", f"{qualname}: {err.kind}", uri)
        raise
    finally:
        ls.jobs.pop(token, None)
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
