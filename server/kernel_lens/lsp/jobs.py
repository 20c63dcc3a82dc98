"""One agent job as the user sees it: a cancellable progress notification, the status item, the
stages in the log, and cancellation from the notification (``window/workDoneProgress/cancel``).

Whatever goes wrong in a job (the job's own error, a crash, a timeout, a reply the client
cannot read, a bug) ends it with a :class:`ProfileError`, so every caller has one error path
and no lens stays on "Profiling…".
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from kernel_lens.analysis.safe_text import link_safe
from kernel_lens.client.pool import PartialCallback
from kernel_lens.lsp.common import failure_message, refuse_package_file, status
from kernel_lens.lsp.language_server import KernelLensServer
from kernel_lens.lsp.state import Job
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import JobRequest

__all__ = ["agent_call", "run_job"]


async def agent_call(
    ls: KernelLensServer,
    request: JobRequest,
    *,
    job: Job | None = None,
    on_progress: Callable[[str, str], None] | None = None,
    compiler: bool = False,
    on_partial: PartialCallback | None = None,
) -> dict[str, Any]:
    """Run ``request`` on the agent; any failure becomes a :class:`ProfileError`.

    ``on_partial`` gets the parts of the result the job streams before its end.

    A ``compiler`` job (nvcc, Triton's compiler, torch.compile) runs under the larger of the
    two limits, ``timeoutSeconds`` and ``compileTimeoutSeconds``.

    A failure that is not the job's own (an unreadable or oversized reply, a bug in the client)
    also stops the agent: its output stream is in an unknown state, the next job starts afresh.

    Raises:
        ProfileError: the job's error, ``timeout``, ``crash``, ``cancelled`` or ``internal``.
    """
    # Nothing runs in an untrusted workspace, whatever request asked (every job passes here:
    # a request that forgot its own check — Show Values, Check Memory — is still refused).
    if not ls.settings.workspace_trusted:
        raise ProfileError(
            "untrusted", "Kernel Lens runs your code: trust this workspace first (nothing was run)."
        )
    # An installed package's file never becomes a target, whatever asked (issue 48).
    refuse_package_file(ls, getattr(request, "path", None))
    refuse_package_file(ls, getattr(request, "driver", None))
    timeout, limit_name = ls.settings.timeout_seconds, "kernelLens.timeoutSeconds"
    if compiler and ls.settings.compile_timeout_seconds > timeout:
        timeout = ls.settings.compile_timeout_seconds
        limit_name = "kernelLens.compileTimeoutSeconds"
    try:
        return await ls.agent.run(
            request.to_json(),
            timeout=timeout,
            limit_name=limit_name,
            on_progress=on_progress,
            cancelled=job.cancelled if job is not None else None,
            method=request.method,
            on_partial=on_partial,
        )
    except ProfileError:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        ls.log(f"the agent job failed: {failure_message(exc)}", types.MessageType.Error)
        try:
            await ls.agent.kill()
        except Exception as kill_exc:  # nothing more can be done about it here
            ls.log(f"could not stop the agent: {kill_exc}", types.MessageType.Error)
        raise ProfileError(
            "internal",
            f"the job failed ({failure_message(exc)}); the agent was stopped and will restart "
            "for the next job",
        ) from None


async def run_job(
    ls: KernelLensServer,
    *,
    uri: str,
    qualname: str,
    title: str,
    request: JobRequest,
    on_partial: PartialCallback | None = None,
) -> dict[str, Any]:
    """Run ``request`` on the agent with progress; the caller reports success (and shows the
    parts of the result that ``on_partial`` gets before the end).

    On failure the status item shows the error (or idle after a cancel) and the error is raised.

    Raises:
        ProfileError: the job's error, ``timeout``, ``crash``, ``cancelled`` or ``internal``.
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
                types.WorkDoneProgressBegin(
                    title=link_safe(title), message="starting", cancellable=True
                ),
            )
            progress = True
        except Exception as exc:
            ls.log(f"no progress notification: {exc}")
    status(ls, "profiling", qualname, uri)

    def on_progress(stage: str, message: str) -> None:
        ls.log(f"  [{stage}] {message}")
        if progress:
            ls.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=link_safe(message))
            )

    try:
        return await agent_call(
            ls, request, job=job, on_progress=on_progress, on_partial=on_partial
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
