"""Custom LSP methods and command arguments of Kernel Lens.

Mirrored by ``extension/protocol.ts``: change both together.
"""

# No ``from __future__ import annotations`` here: the result types' ``NotRequired`` keys must be
# known at run time (``__optional_keys__``), where tests check recorded answers against them.
from typing import Any, Literal, TypeVar

import attrs
import cattrs
from lsprotocol.types import Position
from typing_extensions import NotRequired, TypedDict

T = TypeVar("T")

#: Plain names (``start_us``): lsprotocol's converter would look for camelCase keys.
_CONVERTER = cattrs.Converter()


def _plain(value: Any) -> Any:
    """JSON-like data from pygls' namedtuples (how it hands over custom-request params)."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class JsonReady(dict[str, Any]):
    """A result that is JSON already (plain dicts, lists, strings, numbers): the server's
    converter sends it as it is (`server_converter`), where cattrs would walk every value
    of it — a tenth of a second for the 26k-item overview of a 1M-event trace."""


def server_converter() -> cattrs.Converter:
    """pygls's converter, sending `JsonReady` results unwalked."""
    from pygls.protocol import default_converter

    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_unstructure_hook(JsonReady, dict)
    return converter


def structure(cls: type[T], raw: Any) -> T:
    """Custom-request params as ``cls``: pygls hands them over as a namedtuple without the
    optional fields the client left out (``position`` becomes an LSP ``Position``)."""
    if isinstance(raw, cls):
        return raw
    names = {f.name for f in attrs.fields(cls)}  # type: ignore[arg-type]
    values = {k: v for k, v in (_plain(raw) or {}).items() if k in names}
    return _CONVERTER.structure(values, cls)


__all__ = [
    "JsonReady",
    "server_converter",
    "RESULT_TYPES",
    "REQ_FUNCTIONS",
    "FunctionsParams",
    "FunctionsResult",
    "FunctionEntry",
    "AssemblyResult",
    "GeneratedCodeResult",
    "InlineResult",
    "ReportResult",
    "TraceFileResult",
    "TraceProgress",
    "NOTIFY_TRACE_PROGRESS",
    "NcuFileResult",
    "Timeline",
    "TimelineTop",
    "Profile",
    "NcuResult",
    "SweepResult",
    "StatusState",
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
#: client -> server request: :class:`FunctionsParams` -> :class:`FunctionsResult` (for pickers).
REQ_FUNCTIONS = "kernelLens/functions"
#: server → client notification: :class:`RevealParams` (open the report panel on a tab).
NOTIFY_REVEAL = "kernelLens/revealReport"
#: server → client notification: :class:`ResultsChangedParams` (a function's results changed:
#: an open report panel on it reloads).
NOTIFY_RESULTS_CHANGED = "kernelLens/resultsChanged"
#: server → client notification: :class:`TraceProgress` (a trace file being read: the trace
#: viewer shows it; the cancellable ``$/progress`` of the same reading is the notification's).
NOTIFY_TRACE_PROGRESS = "kernelLens/traceProgress"
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
    """Which function to profile: by qualified name, by ``position`` (the function around the
    cursor, never a kernel), or by 0-based line. The name wins over the position."""

    uri: str
    function: str | None = None
    line: int | None = None
    position: Position | None = None
    #: The whole file, run once as ``__main__`` (``function``/``line``/``position`` ignored).
    script: bool = False


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
    kernel: str | None = None
    stage: AsmStage = "ptx"
    arch: int | None = None
    position: Position | None = None
    """The cursor, when ``kernel`` is not given: the ``@triton.jit`` kernel around it."""


@attrs.define
class GeneratedCodeParams:
    """torch.compile one function of a document (by name, or the one around ``position``)."""

    uri: str
    function: str | None = None
    position: Position | None = None


@attrs.define
class InlineParams:
    """The ``load_inline`` modules of a document: PTX for ``arch``; ``build`` also builds."""

    uri: str
    arch: int = 90
    build: bool = False


@attrs.define
class ReportParams:
    """The report of one function of a document (by name, or the one around ``position``)."""

    uri: str
    function: str | None = None
    position: Position | None = None


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
    """Run Nsight Compute on a function (by name, or the one around ``position``); ``set`` is
    ncu's section set."""

    uri: str
    function: str | None = None
    set: str = "basic"
    position: Position | None = None


@attrs.define(kw_only=True)
class SweepArgs:
    """Sweep ``param`` of a function (by name, or the one around ``position``) over ``values``
    (default: powers of two)."""

    uri: str
    function: str | None = None
    param: str
    values: list[int] | None = None
    position: Position | None = None


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


@attrs.define
class FunctionsParams:
    """The functions and kernels of one document."""

    uri: str


# Results of the custom requests (``kernelLens/*``), mirrored by the result interfaces of
# ``extension/protocol.ts``; tests/data/protocol/ holds one recorded answer of each, checked
# against these types here (tests/lsp/test_protocol_answers.py) and in the TS unit tests.
# Keys a type does not list may pass through (the TS side reads only what it declares).


class LineMapEntry(TypedDict):
    """Source line -> the lines of the assembly generated from it (both 1-based)."""

    source_line: int
    asm_lines: list[int]


class AssemblyResult(TypedDict):
    """Result of ``kernelLens/assembly``: one stage of one compiled ``@triton.jit`` kernel."""

    kernel: str
    stage: str
    arch: str
    """Target architecture, e.g. ``sm_90``."""
    asm: str
    line_map: list[LineMapEntry]
    registers: int | None
    """Registers per thread (``ptxas -v``), when known."""
    spills: int
    """Spill stores + spill loads, in bytes."""
    launcher: str | None
    warnings: list[str]


class GeneratedKernel(TypedDict):
    """One kernel call in inductor's output."""

    name: str
    kind: Literal["triton", "cpp", "extern"]
    lines: list[int]
    """1-based lines of the user's source fused into this kernel."""
    def_line: NotRequired[int | None]
    call_line: int


class RunSummary(TypedDict):
    """Time (ms) and kernel launches (CUDA) or top-level ops (CPU) per call (an average)."""

    median_ms: float
    kernels: float


class GeneratedCodeResult(TypedDict):
    """Result of ``kernelLens/generatedCode``: torch.compile's output for a function."""

    function: str
    """The function's qualified name (resolved from the position when none was given)."""
    language: Literal["triton", "cpp"]
    code: str
    code_path: str
    kernels: list[GeneratedKernel]
    summary: str
    eager: RunSummary
    compiled: RunSummary
    speedup: float | None


class NvccProblem(TypedDict):
    """One nvcc error or warning, located in cuda.cu and in the .py file (1-based lines)."""

    severity: str
    message: str
    cuda_line: int | None
    line: int | None


InlineFiles = TypedDict(
    "InlineFiles",
    {"main.cpp": str, "cuda.cu": str | None, "build.ninja": NotRequired[str | None]},
)
"""The files load_inline writes into its build folder, as the server rebuilt them."""


class InlineModule(TypedDict):
    """One ``load_inline(...)`` call of the document and what nvcc made of it."""

    name: str
    call_line: int
    arch: str
    nvcc: str
    files: InlineFiles
    ptx: str | None
    line_map: list[LineMapEntry]
    errors: list[NvccProblem]
    build_log: str | None
    build_directory: str | None
    ptx_seconds: NotRequired[float]


class InlineResult(TypedDict):
    """Result of ``kernelLens/inlineExtension``."""

    path: str
    modules: list[InlineModule]


class ProfileKernel(TypedDict):
    """One kernel launched by an op of a profiled line; device time in µs per call."""

    name: str
    short_name: str
    device_us: float
    calls: int


class ProfileOp(TypedDict):
    """One ATen op dispatched by a profiled line; times in µs per call."""

    name: str
    dispatch: NotRequired[list[str]]
    device_us: float
    cpu_us: float
    calls: int
    kernels: list[ProfileKernel]


class ProfileLine(TypedDict):
    """One source line (1-based) of a profiled function."""

    line: int
    source: str
    ops: list[ProfileOp]


class ProfileKernelTotal(ProfileKernel):
    """A kernel's totals over the whole function, with the 1-based lines that launched it."""

    lines: NotRequired[list[int]]


class ProfileTiming(TypedDict):
    """The timing stage: median in ms, spread in % of the median."""

    median_ms: float
    spread_pct: float
    reps: int
    method: NotRequired[str]


class Profile(TypedDict):
    """The profile of one function (the agent's ``profile`` result; more keys pass through)."""

    function: str
    device: str
    device_kind: NotRequired[str]
    timing: ProfileTiming | None
    lines: list[ProfileLine]
    kernels: list[ProfileKernelTotal]
    trace_path: NotRequired[str | None]


class TimelineEvent(TypedDict):
    """One event (or merged block) of a lane; times in µs from the trace's first event."""

    start: float
    dur: float
    depth: int
    name: str
    short: str
    cat: str
    line: int | None
    count: NotRequired[int]
    merged: NotRequired[bool]


class TimelineTop(TypedDict):
    """A name with much of a lane's own time in view (an event's time less its children's)."""

    name: str
    us: float
    share: float
    """Of the lane's own time in view, 0–1."""


class TimelineLane(TypedDict):
    """A CPU thread, the CUDA runtime, or a GPU stream."""

    id: str
    title: str
    kind: Literal["cpu", "runtime", "gpu"]
    events: list[TimelineEvent]
    top: NotRequired[list[TimelineTop]]
    """Where the lane's time goes in view: the names with the most own time, most first."""


class Timeline(TypedDict):
    """A trace reduced to lanes; also the result of ``kernelLens/timelineWindow``."""

    span_us: float
    window: NotRequired[list[float] | None]
    """``[start_us, end_us]`` of a zoomed window; null for the whole trace."""
    path: NotRequired[str]
    event_count: int
    kept: int
    lanes: list[TimelineLane]


class NcuHint(TypedDict):
    """One Nsight Compute rule result; speedup in percent."""

    rule: str
    section: str
    kind: Literal["OPT", "WRN", "ERR"]
    title: str
    message: str
    speedup_pct: float | None
    speedup_type: str | None


class NcuKernel(TypedDict):
    """One profiled kernel launch: µs, % of peak, GB/s; null when not collected."""

    id: int
    name: str
    demangled: str
    device: str | None
    duration_us: float | None
    compute_throughput_pct: float | None
    memory_throughput_pct: float | None
    dram_throughput_pct: float | None
    dram_bandwidth_gbs: float | None
    achieved_occupancy_pct: float | None
    theoretical_occupancy_pct: float | None
    registers: float | None
    grid_size: float | None
    block_size: float | None
    waves: float | None
    grid: str | None
    block: str | None
    line: NotRequired[int | None]
    hints: list[NcuHint]


class NcuResult(TypedDict):
    """An Nsight Compute run on a function."""

    report_path: str
    set: NotRequired[str]
    reader: str
    kernels: list[NcuKernel]


class SweepRow(TypedDict):
    """One value of a sweep: timed (ms, %, bytes, GB/s), or failed with ``error``."""

    value: int
    median_ms: NotRequired[float | None]
    spread_pct: NotRequired[float | None]
    reps: NotRequired[int | None]
    bytes: NotRequired[int | None]
    gb_per_s: NotRequired[float | None]
    error: str | None


class SweepBest(TypedDict):
    """The fastest value of a sweep."""

    value: int
    median_ms: float


class SweepResult(TypedDict):
    """The sweep of an int parameter of a function."""

    param: str
    current: int | None
    rows: list[SweepRow]
    best: SweepBest
    method: str
    device: str
    ties: NotRequired[list[int]]
    """Values equal to the fastest within noise (empty: ``best`` is significantly faster)."""
    verdict: NotRequired[str | None]
    """``BLOCK_SIZE 512–1024 equal within noise`` / ``BLOCK_SIZE 512 fastest (significantly)``."""


class ReportInputs(TypedDict):
    """Where the profiled run's inputs came from, as the hover and the CLI say it."""

    source: str
    """``captured at square.py:31 (time_fn → square_2) after 0.42 s of the script``,
    ``directive, line 11``, ``square_inputs()``…"""
    args: list[str]
    """One entry per argument: ``a: Tensor float32[64, 32] cpu``; ``self`` first for a method."""


class ReportResult(TypedDict):
    """Result of ``kernelLens/report``: everything known of one function (null: not run)."""

    function: str
    """The function's qualified name (resolved from the position when none was given)."""
    uri: str
    int_parameters: dict[str, int]
    profile: Profile | None
    timeline: Timeline | None
    ncu: NcuResult | None
    sweep: SweepResult | None
    inputs: NotRequired[ReportInputs | None]
    """The profiled run's inputs (null before a run)."""


class TraceProgress(TypedDict):
    """How far reading a trace file has got (``kernelLens/traceProgress``)."""

    path: str
    percentage: int
    message: str


class TraceFileResult(TypedDict):
    """Result of ``kernelLens/traceFile``: a trace file's timeline and summary."""

    path: str
    timeline: Timeline
    summary: dict[str, Any]


class NcuFileResult(TypedDict):
    """Result of ``kernelLens/ncuFile``: the kernels of a ``.ncu-rep`` (or CSV) file."""

    report_path: str
    reader: str
    kernels: list[NcuKernel]


class FunctionEntry(TypedDict):
    """One function, method or ``@triton.jit`` kernel of a document."""

    name: str
    """The qualified name (``Class.method`` for a method)."""
    line: int
    """0-based line of the ``def`` keyword."""
    kind: Literal["function", "method", "triton_kernel"]


class FunctionsResult(TypedDict):
    """Result of ``kernelLens/functions``, in source order."""

    functions: list[FunctionEntry]


# The optimisation loop (issue 11): history of runs, baselines, comparisons.

#: client → server request: :class:`HistoryParams` → :class:`HistoryResult`.
REQ_HISTORY = "kernelLens/history"
#: client → server request: :class:`SetBaselineParams` → :class:`SetBaselineResult`.
REQ_SET_BASELINE = "kernelLens/setBaseline"
#: client → server request: :class:`CompareParams` → :class:`CompareResult`.
REQ_COMPARE = "kernelLens/compare"
#: ``workspace/executeCommand`` (the summary lens): pin the latest run (:class:`SetBaselineParams`).
CMD_SET_BASELINE = "kernelLens.setBaseline"


@attrs.define
class HistoryParams:
    """The history of one function of a document (by name, or the one around ``position``)."""

    uri: str
    function: str | None = None
    position: Position | None = None


@attrs.define
class SetBaselineParams:
    """Pin a run as the function's baseline: ``run`` is an id, ``-1`` (the latest, the default)
    or ``-2``…; ``clear`` unpins."""

    uri: str
    function: str | None = None
    position: Position | None = None
    run: str | None = None
    clear: bool = False


@attrs.define
class CompareParams:
    """Compare two runs of a function: ids, ``-1`` (latest), ``-2``…, or ``baseline``."""

    uri: str
    function: str | None = None
    position: Position | None = None
    before: str = "-2"
    after: str = "-1"


class GitState(TypedDict):
    """The repository's commit, and whether the file differed from it."""

    commit: str
    dirty: bool


class RunTiming(TypedDict):
    """A run's timing in milliseconds (spread: half the IQR, % of the median)."""

    median_ms: float
    spread_pct: NotRequired[float]
    reps: NotRequired[int]
    method: NotRequired[str]
    q1_ms: NotRequired[float]
    q3_ms: NotRequired[float]
    min_ms: NotRequired[float]
    max_ms: NotRequired[float]
    warning: NotRequired[str | None]


class CompareVerdict(TypedDict):
    """How a run's time compares with a reference (``text``: ``−49.8% vs 0.383 ms``)."""

    before_ms: float
    after_ms: float
    change_pct: float
    interval_pct: float
    p_value: float | None
    significant: bool
    method: Literal["mann-whitney", "iqr", "none"]
    reference: str
    text: str


class HistoryRun(TypedDict):
    """One run of a function in its history."""

    id: str
    time: str | None
    function: str | None
    path: str | None
    device: str | None
    device_kind: str | None
    git: GitState | None
    file_hash: str | None
    versions: dict[str, Any]
    inputs: str | None
    timing: RunTiming
    kernel_count: float
    text: NotRequired[list[str]]
    """The function's lines when it ran (in the history's list)."""
    verdict: NotRequired[CompareVerdict | None]
    """Against the run before it (in the history's list; null for the first)."""


class HistoryResult(TypedDict):
    """Result of ``kernelLens/history``: the runs, oldest first, and the pinned baseline."""

    function: str
    uri: str
    path: str
    baseline: str | None
    current_text: list[str] | None
    runs: list[HistoryRun]


class SetBaselineResult(TypedDict):
    """Result of ``kernelLens/setBaseline`` (``baseline``: null once unpinned)."""

    function: str
    baseline: HistoryRun | None


class LineDelta(TypedDict):
    """One line of the later run (or one removed line): kernels (or ops) and time (µs), both
    sides; ``text``: ``2 → 1 kernels: fused · device −48%``, null when nothing changed."""

    status: Literal["same", "changed", "added", "removed"]
    line: int | None
    before_lines: list[int]
    source: str
    kernels_before: float
    kernels_after: float
    time_before_us: float
    time_after_us: float
    unit: NotRequired[Literal["kernels", "ops"]]
    """What ``kernels_before``/``kernels_after`` count: launches (CUDA) or ATen ops (CPU)."""
    text: str | None


class KernelDelta(TypedDict):
    """One kernel in two runs: launches and device time (µs) per call."""

    name: str
    short_name: str
    status: Literal["same", "added", "removed"]
    calls_before: float
    calls_after: float
    device_us_before: float
    device_us_after: float


class CompareResult(TypedDict):
    """Result of ``kernelLens/compare``: the verdict, line and kernel deltas of two runs."""

    function: str
    before: HistoryRun
    after: HistoryRun
    reference: str
    reference_id: str | None
    verdict: CompareVerdict
    lines: list[LineDelta]
    kernels: list[KernelDelta]
    kernel_count: list[float]


#: Each custom request -> the declared type of its result.
RESULT_TYPES: dict[str, Any] = {
    REQ_ASSEMBLY: AssemblyResult,
    REQ_GENERATED_CODE: GeneratedCodeResult,
    REQ_INLINE: InlineResult,
    REQ_REPORT: ReportResult,
    REQ_TRACE_FILE: TraceFileResult,
    REQ_NCU_FILE: NcuFileResult,
    REQ_TIMELINE_WINDOW: Timeline,
    REQ_FUNCTIONS: FunctionsResult,
    REQ_HISTORY: HistoryResult,
    REQ_SET_BASELINE: SetBaselineResult,
    REQ_COMPARE: CompareResult,
}

__all__ += [
    "CMD_SET_BASELINE",
    "REQ_COMPARE",
    "REQ_HISTORY",
    "REQ_SET_BASELINE",
    "CompareParams",
    "CompareResult",
    "HistoryParams",
    "HistoryResult",
    "HistoryRun",
    "SetBaselineParams",
    "SetBaselineResult",
]
