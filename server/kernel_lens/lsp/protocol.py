"""Custom LSP methods and command arguments of Kernel Lens.

Mirrored by ``extension/protocol.ts``: change both together.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import attrs

T = TypeVar("T")


def structure(cls: type[T], raw: Any) -> T:
    """Custom-request params as ``cls``: pygls hands them over as a namedtuple without the
    optional fields the client left out."""
    if isinstance(raw, cls):
        return raw
    values = raw._asdict() if hasattr(raw, "_asdict") else dict(raw or {})
    names = {f.name for f in attrs.fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in values.items() if k in names})


__all__ = [
    "ApplyParameterArgs",
    "CMD_APPLY_PARAMETER",
    "CMD_RUN_NCU",
    "CMD_SHOW_REPORT",
    "CMD_SWEEP",
    "NOTIFY_REVEAL",
    "NOTIFY_RESULTS_CHANGED",
    "ResultsChangedParams",
    "NcuArgs",
    "REQ_NCU_FILE",
    "REQ_REPORT",
    "REQ_TRACE_FILE",
    "REQ_TIMELINE_WINDOW",
    "TimelineWindowParams",
    "ReportParams",
    "RevealParams",
    "SweepArgs",
    "TraceFileParams",
    "structure",
    "CMD_PROFILE",
    "CMD_PROFILE_ALL",
    "NOTIFY_SET_TRUSTED",
    "NOTIFY_STATUS",
    "AssemblyParams",
    "CMD_SHOW_ASSEMBLY",
    "CMD_SHOW_GENERATED_CODE",
    "GeneratedCodeParams",
    "REQ_ASSEMBLY",
    "REQ_INLINE",
    "CMD_SHOW_INLINE",
    "InlineParams",
    "REQ_GENERATED_CODE",
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
#: client → server request: :class:`AssemblyParams` → the ``asm`` CLI's JSON for one stage.
REQ_ASSEMBLY = "kernelLens/assembly"
#: client → server request: :class:`GeneratedCodeParams` → the *compiled* stage's JSON.
REQ_GENERATED_CODE = "kernelLens/generatedCode"
#: client → server request: :class:`InlineParams` → the ``inline`` CLI's JSON; nvcc errors
#: are also published as diagnostics on the Python lines.
REQ_INLINE = "kernelLens/inlineExtension"
#: client → server request: :class:`ReportParams` → everything the report panel shows.
REQ_REPORT = "kernelLens/report"
#: client → server request: :class:`TraceFileParams` → a trace file's timeline and summary.
REQ_TRACE_FILE = "kernelLens/traceFile"
#: client → server request: :class:`TraceFileParams` → a ``.ncu-rep`` file's kernels.
REQ_NCU_FILE = "kernelLens/ncuFile"
#: client → server request: :class:`TimelineWindowParams` → the timeline of a window, in detail.
REQ_TIMELINE_WINDOW = "kernelLens/timelineWindow"
#: server → client notification: :class:`RevealParams` (open the report panel on a tab).
NOTIFY_REVEAL = "kernelLens/revealReport"
#: server → client notification: :class:`ResultsChangedParams` (a function's results changed:
#: an open report panel on it reloads).
NOTIFY_RESULTS_CHANGED = "kernelLens/resultsChanged"
#: ``workspace/executeCommand``: Nsight Compute on a function (:class:`NcuArgs`).
CMD_RUN_NCU = "kernelLens.runNcu"
#: ``workspace/executeCommand``: sweep an int parameter (:class:`SweepArgs`).
CMD_SWEEP = "kernelLens.sweep"
#: ``workspace/executeCommand``: write a parameter's new default (:class:`ApplyParameterArgs`).
CMD_APPLY_PARAMETER = "kernelLens.applyParameter"
#: client-side command: open the report panel (``[{uri, function}]``).
CMD_SHOW_REPORT = "kernelLens.showReport"
#: client-side commands the server's lenses invoke (registered by the extension).
CMD_SHOW_INLINE = "kernelLens.showInlineExtension"
CMD_SHOW_ASSEMBLY = "kernelLens.showAssembly"
CMD_SHOW_GENERATED_CODE = "kernelLens.showGeneratedCode"

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


AsmStage = Literal["ttir", "ttgir", "llir", "ptx", "sass"]


@attrs.define
class AssemblyParams:
    """One ``@triton.jit`` kernel of a document, compiled for ``arch`` (default: the device's)."""

    uri: str
    kernel: str
    stage: AsmStage = "ptx"
    arch: int | None = None


@attrs.define
class GeneratedCodeParams:
    """torch.compile one function of a document."""

    uri: str
    function: str


@attrs.define
class InlineParams:
    """The ``load_inline`` modules of a document: PTX for ``arch``; ``build`` also builds."""

    uri: str
    arch: int = 90
    build: bool = False


@attrs.define
class ReportParams:
    """The report of one function of a document."""

    uri: str
    function: str


@attrs.define
class TraceFileParams:
    """A file on disk: a Chrome trace (``.json``/``.json.gz``) or a ``.ncu-rep``."""

    path: str


@attrs.define
class RevealParams:
    """Open the report panel for a function, on ``tab`` (timeline, ncu, sweep)."""

    uri: str
    function: str
    tab: str


@attrs.define
class NcuArgs:
    """Run Nsight Compute on a function; ``set`` is ncu's section set."""

    uri: str
    function: str
    set: str = "basic"


@attrs.define
class SweepArgs:
    """Sweep ``param`` of a function over ``values`` (default: powers of two)."""

    uri: str
    function: str
    param: str
    values: list[int] | None = None


@attrs.define
class ApplyParameterArgs:
    """Make ``value`` the default of ``param`` (and its entry in the inputs directive)."""

    uri: str
    function: str
    param: str
    value: int


@attrs.define
class TimelineWindowParams:
    """A trace file's events between ``start_us`` and ``end_us`` (from the trace's start)."""

    path: str
    start_us: float
    end_us: float


@attrs.define
class ResultsChangedParams:
    """A function's stored results (profile, ncu, sweep, source) changed."""

    uri: str
    function: str
