"""Custom LSP methods and command arguments of Kernel Lens.

Mirrored by ``extension/protocol.ts``: change both together.
"""

from __future__ import annotations

from typing import Literal

import attrs

__all__ = [
    "CMD_PROFILE",
    "CMD_PROFILE_ALL",
    "NOTIFY_SET_TRUSTED",
    "NOTIFY_STATUS",
    "ProfileAllArgs",
    "ProfileArgs",
    "SetTrustedParams",
    "StatusParams",
]

#: ``workspace/executeCommand``: profile one function. Argument: :class:`ProfileArgs`.
CMD_PROFILE = "kernelLens.profile"
#: ``workspace/executeCommand``: profile every function of a file (:class:`ProfileAllArgs`).
CMD_PROFILE_ALL = "kernelLens.profileAll"
#: server → client notification: :class:`StatusParams`.
NOTIFY_STATUS = "kernelLens/status"
#: client → server notification: :class:`SetTrustedParams`.
NOTIFY_SET_TRUSTED = "kernelLens/setTrusted"

StatusState = Literal["idle", "profiling", "error"]


@attrs.define
class ProfileArgs:
    """Which function to profile: by qualified name, or by 0-based line."""

    uri: str
    function: str | None = None
    line: int | None = None


@attrs.define
class ProfileAllArgs:
    """Profile every function of the document at ``uri``."""

    uri: str


@attrs.define
class StatusParams:
    """The server's state, for the status bar item."""

    state: StatusState
    message: str
    uri: str | None = None


@attrs.define
class SetTrustedParams:
    """The workspace's trust changed (VS Code only ever grants trust while running)."""

    trusted: bool
