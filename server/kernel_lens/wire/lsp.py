"""The Kernel Lens language-server protocol: the ``kernelLens/*`` methods, the command ids, and
their params and results, defined once.

The server structures params into the dataclasses here (``lsp/convert.py``) and builds the
results as the ``TypedDict``\\ s here; ``extension/generated/wire.ts`` is generated from this
module (``scripts/gen_wire.py``), types and run-time checks alike, and ``extension/protocol.ts``
makes its method objects from that. Namespaces: methods ``kernelLens/…``, commands and settings
``kernelLens.…``.

A result may hold keys its type does not list: they pass through (the TypeScript side reads only
what it declares). tests/data/protocol/ holds one recorded answer of each request, checked
against :data:`RESULT_TYPES` here (tests/lsp/test_protocol_answers.py) and by the generated
checks in the TypeScript tests.
"""

# No ``from __future__ import annotations``: a TypedDict's ``NotRequired`` keys must be known at
# run time (``__optional_keys__``), where scripts/gen_wire.py and the tests read them.
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, get_args

from kernel_lens.wire._compat import NotRequired
from kernel_lens.wire.errors import ErrorObject
from kernel_lens.wire.results import (
    CompiledResult,
    GpuClocks,
    GraphTimingInfo,
    InlineResult,
    LineMapEntry,
    NcuKernel,
    NcuResult,
    Profile,
    SweepStageResult,
    TimingPolicy,
)

__all__ = [
    "DEFAULT_BUDGET_MS",
    "DEFAULT_SWEEP_BUDGET_MS",
    "DEFAULT_WARMUP_MS",
    "ASM_POINTER_TYPES",
    "ASM_SCALAR_TYPES",
    "ASM_STAGES",
    "CLIENT_COMMANDS",
    "CLIENT_VSCODE",
    "CMD_APPLY_PARAMETER",
    "CMD_ATTRIBUTE_INSIDE",
    "CMD_OPEN_ASSEMBLY",
    "CMD_OPEN_GENERATED_CODE",
    "CMD_OPEN_REPORT",
    "CMD_COMPARE_ASSEMBLY",
    "CMD_PROFILE",
    "CMD_PROFILE_ALL",
    "CMD_PROFILE_LIGHT",
    "CMD_PROFILE_SCRIPT_LIGHT",
    "CMD_PROFILE_SCRIPT_WINDOW",
    "CMD_RUN_NCU",
    "CMD_SET_BASELINE",
    "CMD_REVEAL_LINE",
    "CMD_SHOW_ASSEMBLY",
    "CMD_SHOW_ERROR",
    "CMD_SHOW_GENERATED_CODE",
    "CMD_SHOW_INLINE",
    "CMD_SHOW_REPORT",
    "CMD_SHOW_VALUES",
    "CMD_DEBUG_KERNEL",
    "CMD_PROFILE_KERNEL_LINES",
    "CMD_MORE_ACTIONS",
    "CMD_SET_BASELINE_AT_CURSOR",
    "CMD_CHOOSE_INTERPRETER",
    "CMD_SHOW_OUTPUT",
    "CLIENT_COMMANDS_WITHOUT_ARGUMENT",
    "MoreAction",
    "MoreActionsArgs",
    "SetBaselineAtCursorArgs",
    "REQ_KERNEL_LINES",
    "KernelLinesParams",
    "KernelLinesResult",
    "KernelLinesKernel",
    "KernelLinesRow",
    "KernelLinesSass",
    "KernelLinesRemedy",
    "ProfileKernelLinesArgs",
    "CMD_CHECK_MEMORY",
    "CheckMemoryArgs",
    "CheckMemoryCommandResult",
    "CMD_SWEEP",
    "CMD_SET_SCRIPT_ARGUMENTS",
    "CMD_SCRIPT_ARGUMENTS_OF",
    "CMD_DRIVER_CHOICES",
    "CMD_SET_DRIVER",
    "CMD_CHOOSE_DRIVER",
    "CMD_SCRIPT_ARGUMENTS",
    "SetScriptArgumentsArgs",
    "ScriptArgumentsQuery",
    "ScriptArgumentsInfo",
    "DriverQuery",
    "DriverCandidate",
    "DriverChoices",
    "SetDriverArgs",
    "ScriptArgumentsArgs",
    "NOTIFICATIONS",
    "NOTIFY_RESULTS_CHANGED",
    "NOTIFY_REVEAL",
    "NOTIFY_SET_TRUSTED",
    "NOTIFY_STATUS",
    "NOTIFY_TRACE_PROGRESS",
    "NOTIFY_TRACE_READY",
    "REQUESTS",
    "REQ_VALUES",
    "ValuesParams",
    "ValuesResult",
    "ValuesLine",
    "KernelValue",
    "OutOfBounds",
    "InterpreterStop",
    "ShowValuesArgs",
    "DebugKernelArgs",
    "REQ_ASM_DIFF",
    "REQ_ASSEMBLY",
    "REQ_COMPARE",
    "REQ_FUNCTIONS",
    "REQ_GENERATED_CODE",
    "REQ_HISTORY",
    "REQ_INLINE",
    "REQ_NCU_FILE",
    "REQ_REPORT",
    "REQ_SET_BASELINE",
    "REQ_TIMELINE_WINDOW",
    "REQ_TRACE_FILE",
    "RESULT_TYPES",
    "SERVER_COMMANDS",
    "SERVER_STATES",
    "ApplyParameterArgs",
    "ApplyParameterResult",
    "AsmStage",
    "AsmCompiledFrom",
    "AsmTypesFrom",
    "ErrorAction",
    "AttributeInsideArgs",
    "RevealLineArgs",
    "ShowErrorArgs",
    "ShownError",
    "AsmDiffDocument",
    "AsmDiffParams",
    "AsmDiffResult",
    "AsmDiffSide",
    "AsmDiffStage",
    "AsmDiffSummary",
    "AsmDiffTarget",
    "AssemblyParams",
    "AssemblyResult",
    "AutotuneChoice",
    "AutotuneConfig",
    "CommandResult",
    "CompareParams",
    "CompareResult",
    "CompareVerdict",
    "DiagnosticData",
    "FileParams",
    "FunctionEntry",
    "FunctionKind",
    "FunctionsParams",
    "FunctionsResult",
    "GeneratedCodeParams",
    "GeneratedCodeResult",
    "GitState",
    "HistoryParams",
    "HistoryResult",
    "HistoryRun",
    "InitializationOptions",
    "InlineParams",
    "OpenAssemblyArgs",
    "OpenDocumentResult",
    "OpenFunctionArgs",
    "KernelDelta",
    "MemoryDelta",
    "LaneKind",
    "LineDelta",
    "NcuCommandResult",
    "NcuFileResult",
    "Position",
    "ProfileAllArgs",
    "ProfileArgs",
    "ProfileCommandResult",
    "ProfileLightArgs",
    "ProfileScriptArgs",
    "LightRunSummary",
    "ReportInputs",
    "ReportParams",
    "ReportResult",
    "ResultsChangedParams",
    "RevealReportParams",
    "RevealTab",
    "RunNcuArgs",
    "RunTiming",
    "ServerState",
    "SetBaselineParams",
    "SetBaselineResult",
    "SetTrustedParams",
    "ShowAssemblyArgs",
    "ShowGeneratedCodeArgs",
    "ShowInlineExtensionArgs",
    "ShowReportArgs",
    "StatusParams",
    "SweepArgs",
    "SweepCommandResult",
    "SweepResult",
    "Timeline",
    "TimelineCollective",
    "TimelineEvent",
    "TimelineLane",
    "TimelineRank",
    "TimelineRankSource",
    "TimelineTop",
    "TimelineWindowParams",
    "TimingOptions",
    "TraceFileResult",
    "TracePartial",
    "TraceProgress",
    "TraceReady",
]

#: Timing warm-up before the repetitions, milliseconds: the one default of the agent, the CLI,
#: the language server, the notebook magic and the editor's settings (generated into wire.ts).
DEFAULT_WARMUP_MS: float = 25.0
#: Timing budget for the repetitions of a profile, milliseconds.
DEFAULT_BUDGET_MS: float = 500.0
#: Timing budget per value of a sweep, milliseconds.
DEFAULT_SWEEP_BUDGET_MS: float = 200.0

# Method names and command ids.

#: ``workspace/executeCommand``: profile one function. Argument: :class:`ProfileArgs`.
CMD_PROFILE = "kernelLens.profile"
#: ``workspace/executeCommand``: profile every function of a file (:class:`ProfileAllArgs`).
CMD_PROFILE_ALL = "kernelLens.profileAll"
#: ``workspace/executeCommand``: Nsight Compute on a function (:class:`RunNcuArgs`).
#: ``workspace/executeCommand``: the light whole-run profile of a script (Triton's Proton,
#: issue 36). Argument: :class:`ProfileLightArgs`.
CMD_PROFILE_LIGHT = "kernelLens.profileLight"
#: The extension's *Profile Script (Light)* (the palette, the script's lenses and More…): runs
#: :data:`CMD_PROFILE_LIGHT` and offers Profile Script where the light profile cannot run.
#: Argument: :class:`ProfileScriptArgs` (none from the palette: the active editor's file).
CMD_PROFILE_SCRIPT_LIGHT = "kernelLens.profileScriptLight"
#: The extension's *Profile Script: a Window of Its Steps or Time…* (the deep trace of part of a
#: run; asks for the window). Argument: :class:`ProfileScriptArgs` (none: the active editor's).
CMD_PROFILE_SCRIPT_WINDOW = "kernelLens.profileScriptWindow"
CMD_RUN_NCU = "kernelLens.runNcu"
#: ``workspace/executeCommand``: Check Memory, a function's call under compute-sanitizer on a
#: GPU, its reports as diagnostics on their lines (:class:`CheckMemoryArgs`).
CMD_CHECK_MEMORY = "kernelLens.checkMemory"
#: ``workspace/executeCommand``: sweep an int parameter (:class:`SweepArgs`).
CMD_SWEEP = "kernelLens.sweep"
#: ``workspace/executeCommand``: write a parameter's new default (:class:`ApplyParameterArgs`).
CMD_APPLY_PARAMETER = "kernelLens.applyParameter"
#: ``workspace/executeCommand`` (the summary lens): pin the latest run (:class:`SetBaselineParams`).
CMD_SET_BASELINE = "kernelLens.setBaseline"
#: ``workspace/executeCommand``, for editors other than VS Code (which opens the Report panel
#: instead): a function's last profile as the CLI's per-line text, written under the cache and
#: opened with ``window/showDocument`` (:class:`OpenFunctionArgs`).
CMD_OPEN_REPORT = "kernelLens.openReport"
#: ``workspace/executeCommand``, for other editors: torch.compile's code for a function, a
#: read-only file under the cache opened with ``window/showDocument`` (:class:`OpenFunctionArgs`).
CMD_OPEN_GENERATED_CODE = "kernelLens.openGeneratedCode"
#: ``workspace/executeCommand``, for other editors: a ``@triton.jit`` kernel's assembly, a
#: read-only file under the cache opened with ``window/showDocument`` (:class:`OpenAssemblyArgs`).
CMD_OPEN_ASSEMBLY = "kernelLens.openAssembly"
#: Client-side command the server's lenses invoke: the report panel (:class:`ShowReportArgs`).
CMD_SHOW_REPORT = "kernelLens.showReport"
#: Client-side command: a ``load_inline`` call's build (:class:`ShowInlineExtensionArgs`).
CMD_SHOW_INLINE = "kernelLens.showInlineExtension"
#: Client-side command: a ``@triton.jit`` kernel's assembly (:class:`ShowAssemblyArgs`).
CMD_SHOW_ASSEMBLY = "kernelLens.showAssembly"
#: Client-side command (a kernel's ``…``, its assembly view, the palette): compare its assembly
#: with another kernel's (:class:`ShowAssemblyArgs`).
CMD_COMPARE_ASSEMBLY = "kernelLens.compareAssembly"
#: ``workspace/executeCommand``: set (or clear) a script's arguments, kept per workspace and used
#: by every run of the script (:class:`SetScriptArgumentsArgs`).
CMD_SET_SCRIPT_ARGUMENTS = "kernelLens.setScriptArguments"
#: ``workspace/executeCommand``: a script's arguments, where they come from and what would put
#: it on the CPU (:class:`ScriptArgumentsQuery` -> :class:`ScriptArgumentsInfo`).
CMD_SCRIPT_ARGUMENTS_OF = "kernelLens.scriptArgumentsOf"
#: ``workspace/executeCommand``: the drivers a function can take its inputs from, and the one
#: chosen (:class:`DriverQuery` -> :class:`DriverChoices`).
CMD_DRIVER_CHOICES = "kernelLens.driverChoices"
#: ``workspace/executeCommand``: choose, change or clear a function's driver, kept per
#: workspace (:class:`SetDriverArgs`).
CMD_SET_DRIVER = "kernelLens.setDriver"
#: Client-side command (a function's lens, a failed profile's quick fix and dialog, the
#: palette): pick the function's driver, then profile it (:class:`DriverQuery`).
CMD_CHOOSE_DRIVER = "kernelLens.chooseDriver"
#: Client-side command (the ``args:`` lens, a quick fix, the failure dialog, the palette): ask
#: for a script's arguments, keep them, then run the script or ``then``
#: (:class:`ScriptArgumentsArgs`).
CMD_SCRIPT_ARGUMENTS = "kernelLens.scriptArguments"
#: Client-side command: torch.compile's code for a function (:class:`ShowGeneratedCodeArgs`).
CMD_SHOW_GENERATED_CODE = "kernelLens.showGeneratedCode"
#: Client-side command (a failed profile's lens): the whole error and its actions
#: (:class:`ShowErrorArgs`).
CMD_SHOW_ERROR = "kernelLens.showError"
#: Client-side command (an error's *Go to Line*): reveal a line of a file (:class:`RevealLineArgs`).
CMD_REVEAL_LINE = "kernelLens.revealLine"
#: Client-side command (a line mostly inside an installed package): re-run with the package
#: attributed inside, and offer to add it to the setting (:class:`AttributeInsideArgs`).
CMD_ATTRIBUTE_INSIDE = "kernelLens.attributeInside"
#: Client-side command: a ``@triton.jit`` kernel's values per line under Triton's interpreter,
#: for a program (:class:`ShowValuesArgs`; ``pick``: the program-id picker first).
CMD_SHOW_VALUES = "kernelLens.showValues"
#: Client-side command: a debug session (debugpy) of a kernel's launch under Triton's
#: interpreter, stopped on its first line for a program (:class:`DebugKernelArgs`).
CMD_DEBUG_KERNEL = "kernelLens.debugKernel"
#: Client-side command: Profile Kernel Lines, Nsight Compute's source counters of a kernel's
#: launches on its own lines (:class:`ProfileKernelLinesArgs`).
CMD_PROFILE_KERNEL_LINES = "kernelLens.profileKernelLines"
#: Client-side command (a function's ``…`` lens): the actions that do not fit on its row, in a
#: quick pick (:class:`MoreActionsArgs`).
CMD_MORE_ACTIONS = "kernelLens.moreActions"
#: Client-side command (a function's More…, the palette): pin the function's latest run as its
#: baseline, with a toast and Undo (:class:`SetBaselineAtCursorArgs`; none: the function at
#: the cursor).
CMD_SET_BASELINE_AT_CURSOR = "kernelLens.setBaselineAtCursor"
#: Client-side command (an error's *Choose Interpreter*, the palette): pick the Python that runs
#: the server and the agent. No argument.
CMD_CHOOSE_INTERPRETER = "kernelLens.chooseInterpreter"
#: Client-side command (an error's *Show Output*, the status item): the output channel. No
#: argument.
CMD_SHOW_OUTPUT = "kernelLens.showOutput"

#: Server -> client notification: :class:`StatusParams`.
NOTIFY_STATUS = "kernelLens/status"
#: Client -> server notification: :class:`SetTrustedParams`.
NOTIFY_SET_TRUSTED = "kernelLens/setTrusted"
#: Server -> client notification: :class:`RevealReportParams` (open the report panel on a tab).
NOTIFY_REVEAL = "kernelLens/revealReport"
#: Server -> client notification: :class:`ResultsChangedParams` (a function's results changed:
#: an open report panel on it reloads).
NOTIFY_RESULTS_CHANGED = "kernelLens/resultsChanged"
#: Server -> client notification: :class:`TraceProgress` (a trace file being read: the trace
#: viewer shows it; the cancellable ``$/progress`` of the same reading is the notification's).
NOTIFY_TRACE_PROGRESS = "kernelLens/traceProgress"
#: Server -> client notification: :class:`TraceReady` (a trace file answered with a first view,
#: ``partial``, is now read whole: ask ``kernelLens/traceFile`` again for the full view).
NOTIFY_TRACE_READY = "kernelLens/traceReady"

#: Client -> server request: :class:`AssemblyParams` -> :class:`AssemblyResult`.
REQ_ASSEMBLY = "kernelLens/assembly"
#: Client -> server request: :class:`ValuesParams` -> :class:`ValuesResult`; the out-of-bounds
#: accesses are also published as diagnostics on their lines.
REQ_VALUES = "kernelLens/values"
#: Client -> server request: :class:`KernelLinesParams` -> :class:`KernelLinesResult` (Profile
#: Kernel Lines: a kernel's source counters per line).
REQ_KERNEL_LINES = "kernelLens/kernelLines"
#: Client -> server request: :class:`AsmDiffParams` -> :class:`AsmDiffResult`.
REQ_ASM_DIFF = "kernelLens/asmDiff"
#: Client -> server request: :class:`GeneratedCodeParams` -> :class:`GeneratedCodeResult`.
REQ_GENERATED_CODE = "kernelLens/generatedCode"
#: Client -> server request: :class:`InlineParams` -> the ``inline`` CLI's JSON; nvcc errors
#: are also published as diagnostics on the Python lines.
REQ_INLINE = "kernelLens/inlineExtension"
#: Client -> server request: :class:`ReportParams` -> everything the report panel shows.
REQ_REPORT = "kernelLens/report"
#: Client -> server request: :class:`FileParams` -> a trace file's timeline and summary.
REQ_TRACE_FILE = "kernelLens/traceFile"
#: Client -> server request: :class:`FileParams` -> a ``.ncu-rep`` file's kernels.
REQ_NCU_FILE = "kernelLens/ncuFile"
#: Client -> server request: :class:`TimelineWindowParams` -> the timeline of a window, in detail.
REQ_TIMELINE_WINDOW = "kernelLens/timelineWindow"
#: Client -> server request: :class:`FunctionsParams` -> :class:`FunctionsResult` (for pickers).
REQ_FUNCTIONS = "kernelLens/functions"
#: Client -> server request: :class:`HistoryParams` -> :class:`HistoryResult`.
REQ_HISTORY = "kernelLens/history"
#: Client -> server request: :class:`SetBaselineParams` -> :class:`SetBaselineResult`.
REQ_SET_BASELINE = "kernelLens/setBaseline"
#: Client -> server request: :class:`CompareParams` -> :class:`CompareResult`.
REQ_COMPARE = "kernelLens/compare"

# Start-up, status and trust.


class TimingOptions(TypedDict):
    """Timing configuration, also pulled at run time from the ``kernelLens.timing`` settings."""

    warmupMs: float
    """Warm-up time before timing, in milliseconds."""
    budgetMs: float
    """Time budget for the repetitions of one timing, in milliseconds."""
    reps: int
    """Number of timed repetitions; 0 = adaptive (as many as fit in ``budgetMs``)."""


class InitializationOptions(TypedDict):
    """``initializationOptions`` of the ``initialize`` request (read by ``lsp/settings.py``)."""

    agentCommand: list[str] | None
    """argv prefix that starts the profiling agent; null = the server's own interpreter."""
    timeoutSeconds: float
    """Time limit for one profiling job, in seconds."""
    compileTimeoutSeconds: float
    """Time limit for a compiler job (nvcc, Triton, torch.compile) when above ``timeoutSeconds``."""
    workspaceTrusted: bool
    """False in Restricted Mode: the server runs no code until ``kernelLens/setTrusted``."""
    timing: TimingOptions
    client: NotRequired[Literal["vscode"]]
    """``vscode`` from the Kernel Lens extension: lens titles with ``$(icon)`` markup, hover links
    to ``command:`` URIs and lenses that run the extension's own commands (the Report panel,
    Generated Code, More…). Any other client (Neovim, Helix, Emacs, Zed) gets plain titles,
    links only to commands the server executes, code actions and inlay hints."""


#: The ``client`` value of the Kernel Lens extension (:class:`InitializationOptions`).
CLIENT_VSCODE = "vscode"


#: What the server is doing, as shown in the status bar.
ServerState = Literal["idle", "profiling", "error"]
#: The server states, for exhaustive checks.
SERVER_STATES: tuple[ServerState, ...] = get_args(ServerState)


@dataclass
class Position:
    """A 0-based line and UTF-16 character offset, as in every LSP message."""

    line: int
    character: int


@dataclass
class StatusParams:
    """The server's state, for the status bar item. ``message``: for ``profiling``, what is
    being profiled (``square``); for ``error``, a one-line explanation; for ``idle``, an
    optional note (why nothing runs in Restricted Mode, say), possibly empty."""

    state: ServerState
    message: str
    uri: str | None = None
    """The document the status is about, if any."""


@dataclass
class SetTrustedParams:
    """The workspace's trust changed (VS Code only ever grants trust while running)."""

    trusted: bool


# Profiling commands.


@dataclass
class ProfileArgs:
    """Which function to profile: by qualified name, by ``position`` (the function around the
    cursor, never a kernel), or by 0-based line. The name wins over the position."""

    uri: str
    function: str | None = None
    line: int | None = None
    """0-based line."""
    position: Position | None = None
    script: bool = False
    """The whole file, run once as ``__main__`` (``function``/``line``/``position`` ignored)."""
    backward: bool = False
    """*Profile with backward*: each call followed by the backward of the function's output."""
    memory: bool = False
    """*Profile memory*: each line's allocations, the peak and what is alive at it."""
    compare_compiled: bool = False
    """*Eager vs Compiled*: the function also ``torch.compile``'d, profiled and timed; per line
    what compilation changed, and the speed-up (the ``compare_compiled`` stage)."""
    budget_scale: float | None = None
    """*Re-profile longer*: this run's timing budget is ``kernelLens.timing.budgetMs`` × this
    (at most 20)."""
    driver: str | None = None
    """A script that calls the function (a path): its inputs, ``self`` and calling context are
    those of the function's first call in a run of the driver; remembered per function."""
    argv: list[str] | None = None
    """The script's (or a launch configuration's) ``sys.argv[1:]``; a script's are kept for
    every run of it (``None``: the ones kept, else a launch configuration's, else none)."""
    cwd: str | None = None
    """The run's folder (a launch configuration's ``cwd``; default: the script's folder)."""
    env: dict[str, str] | None = None
    """Environment variables for the run (a launch configuration's ``env`` and ``envFile``)."""
    driver_config: str | None = None
    """The launch configuration ``driver``/``argv``/``cwd``/``env`` come from (read again from
    ``launch.json`` at each later run); null with a driver and no ``argv``: a workspace script,
    run with its own arguments as set for it."""
    skip: int = 0
    """A whole script's window: steps run unprofiled first."""
    steps: int | None = None
    """A whole script's window: steps profiled, then the script is stopped."""
    nproc_per_node: int = 0
    """*Profile on N ranks*: run under torchrun on this many ranks (0: one process)."""
    after_s: float | None = None
    """A whole script's wall-clock window: profiling starts no earlier than this many seconds
    into the run (at the first step end past it, or the first line when no step was seen)."""
    packages: list[str] | None = None
    """Installed packages whose code counts as the user's for this run, added to
    ``kernelLens.attributeInPackages`` (*Attribute inside transformers*)."""


@dataclass
class ProfileLightArgs:
    """*Profile Script (Light)*: the file at ``uri`` run once as ``__main__`` under Triton's
    Proton: every workspace line's GPU kernel time for the whole run (a CUDA GPU needed)."""

    uri: str
    argv: list[str] | None = None
    """The script's ``sys.argv[1:]``, kept for every run of it (``None``: the ones kept)."""


class ProfileScriptArgs(TypedDict):
    """Argument of the extension's script commands a lens or More… carries (*Profile Script
    (Light)*, *a Window…*): the script."""

    uri: str


@dataclass
class ProfileAllArgs:
    """Profile every function of the document at ``uri``."""

    uri: str


class CommandResult(TypedDict):
    """What a server command returns: ``ok``, with the function it ran on (resolved from
    ``position`` when the argument had no name), or the failure the server has already shown.
    Each command's own result adds its keys."""

    ok: bool
    function: NotRequired[str]
    """The function's qualified name (the profile, Nsight Compute and sweep commands)."""
    error: NotRequired[ErrorObject]
    """Why it failed (``ok: false``)."""
    message: NotRequired[str]
    """Why it failed, for commands that give only a message."""


class LightRunSummary(TypedDict):
    """A light whole-run profile in numbers (the lenses and hovers show its lines)."""

    wall_s: float
    """The run's wall time, Proton on (seconds)."""
    total_kernel_us: float
    """GPU kernel time of the whole run (µs)."""
    other_us: float
    """Kernel time on no workspace line (backward, library threads; µs)."""
    launches: int
    lines: int
    """Workspace lines with kernel time."""
    files: int
    """Workspace files with kernel time."""


class ProfileCommandResult(CommandResult):
    """Result of ``kernelLens.profile`` (one item per function for ``kernelLens.profileAll``)."""

    timing: NotRequired[dict[str, Any]]
    """The profiled function's timing stage (empty without one)."""
    script: NotRequired[dict[str, Any]]
    """For a whole script: its run (``wall_s``…)."""
    lines: NotRequired[list[int]]
    """For a notebook cell: its first and last line in the notebook's script."""
    light: NotRequired[LightRunSummary]
    """For *Profile Script (Light)*: what the run recorded."""


# Generated code: assembly, torch.compile, load_inline.

#: Compilation stages of a ``@triton.jit`` kernel, in pipeline order.
AsmStage = Literal["ttir", "ttgir", "llir", "ptx", "sass"]
#: The stages, in pipeline order, for pickers.
ASM_STAGES: tuple[AsmStage, ...] = get_args(AsmStage)


@dataclass
class AssemblyParams:
    """One ``@triton.jit`` kernel of a document (by name, else the kernel around ``position``),
    compiled for ``arch`` (compute capability, ``90`` = sm_90; default: the device's) to one
    stage."""

    uri: str
    kernel: str | None = None
    """The kernel's qualified name (``square_kernel``)."""
    stage: AsmStage = "ptx"
    arch: int | None = None
    position: Position | None = None
    """The cursor, when ``kernel`` is not given: the ``@triton.jit`` kernel around it."""
    overrides: dict[str, str] | None = None
    """Argument types picked by the user (``{"x_ptr": "*fp16", "BLOCK_SIZE": "256"}``), over
    those of the launch or of the text."""


#: The argument types a user may pick in Show Assembly's *Argument Types…* (Triton's names).
ASM_POINTER_TYPES: tuple[str, ...] = (
    "*fp32",
    "*fp16",
    "*bf16",
    "*fp8e4nv",
    "*fp8e5",
    "*i8",
    "*i32",
    "*i64",
    "*u8",
)
ASM_SCALAR_TYPES: tuple[str, ...] = ("i32", "i64", "fp32", "i1")

#: Where a compiled kernel's argument types came from: a real launch of it, a real launch on
#: suggested inputs that were checked to run (their dtypes and sizes a guess), the launch's text
#: (the launcher could not run here), or the user's picks over one of those.
AsmTypesFrom = Literal["launch", "suggested", "text", "user"]

#: Where a kernel's assembly and resources came from: the launch's own compiled kernel
#: (Triton's JIT cache after a real GPU launch) or a compile made again here ahead of time.
AsmCompiledFrom = Literal["launch", "ahead_of_time"]


class AutotuneConfig(TypedDict):
    """One config an ``@triton.autotune`` kernel measured."""

    config: str
    """``BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3``."""
    ms: float | None
    """Its measured time (the autotuner's median), when it kept one."""
    chosen: bool


class AutotuneChoice(TypedDict):
    """What an ``@triton.autotune`` kernel chose at the launch."""

    chosen: str
    chosen_kwargs: dict[str, Any]
    configs: list[AutotuneConfig]
    """Fastest first."""


class AssemblyResult(TypedDict):
    """Result of ``kernelLens/assembly``: one stage of one compiled ``@triton.jit`` kernel."""

    kernel: str
    stage: str
    arch: str
    """Target architecture, e.g. ``sm_90``."""
    asm: str
    """The stage's text; shown unchanged, so that ``line_map`` applies to it."""
    line_map: list[LineMapEntry]
    registers: int | None
    """Registers per thread (``ptxas -v``), when known."""
    spills: int
    """Spill stores + spill loads, in bytes."""
    launcher: str | None
    """The function whose launch gave the kernel's signature, if any."""
    warnings: list[str]
    signature: dict[str, str]
    """The Triton type of each parameter the kernel was compiled for (``constexpr`` for those)."""
    constexprs: dict[str, Any]
    types_from: AsmTypesFrom
    types_note: str | None
    """How the types were found, when not from a real launch (what was assumed)."""
    compiled_from: NotRequired[AsmCompiledFrom]
    """``launch``: the kernel that ran (its registers are the driver's); ``ahead_of_time``:
    compiled again here, with the launch's specialisation where it was known."""
    compiled_note: NotRequired[str | None]
    """``compiled ahead of time for sm_90, not the launch (why)``; null from the launch."""
    shared_bytes: NotRequired[int | None]
    num_warps: NotRequired[int | None]
    num_stages: NotRequired[int | None]
    autotune: NotRequired[AutotuneChoice | None]
    """An autotuned kernel's chosen config and each config's measured time."""


#: The stages two kernels' assembly can be compared at.
AsmDiffStage = Literal["ptx", "sass"]


@dataclass
class AsmDiffTarget:
    """One side of an assembly comparison: a ``@triton.jit`` kernel of a document, or a CUDA
    kernel (or the host function launching it) of a document's ``load_inline`` source."""

    uri: str
    kernel: str
    text: str | None = None
    """Another version of the document's text (an earlier one: git's, the saved file's);
    ``None``: the document as it is now."""
    overrides: dict[str, str] | None = None
    """A Triton kernel's argument types or constexpr values (``{"BLOCK_SIZE": "64"}``)."""
    label: str | None = None
    """Said in the side's title (``HEAD``, ``as saved``)."""


@dataclass
class AsmDiffParams:
    """Compare two kernels' assembly at ``stage`` for ``arch`` (default: the device's, else
    90)."""

    a: AsmDiffTarget
    b: AsmDiffTarget
    stage: AsmDiffStage = "ptx"
    arch: int | None = None


class AsmDiffDocument(TypedDict):
    """One side's document: the summary header (``//`` comments), then the assembly."""

    text: str
    line_map: list[LineMapEntry]
    """Lines of the side's source file -> lines of ``text`` (the header's lines map to none)."""


class AsmDiffSummary(TypedDict):
    """One side's instruction mix and resources (``analysis/asm_diff.py``)."""

    instructions: int
    classes: dict[str, int]
    """``global_load``, ``global_store``, ``atomic``, ``shared``, ``local``, ``alu``, ``tensor``,
    ``control``, ``other`` -> instructions."""
    fma: int
    load_widths: dict[str, int]
    """Bits per thread of a global load instruction -> how many there are."""
    store_widths: dict[str, int]
    registers: int | None
    spills: int | None
    shared_bytes: int | None
    block_size: int | None
    block_from: str | None


class AsmDiffSide(TypedDict):
    """One kernel of the comparison."""

    kind: Literal["triton", "inline"]
    title: str
    path: str
    """The source file its line maps point into."""
    kernel: str
    arch: str
    summary: AsmDiffSummary
    header: list[str]
    normalised: AsmDiffDocument
    """Registers, labels, parameters and addresses canonicalised, directives dropped."""
    original: AsmDiffDocument
    """The assembly as compiled (for load_inline: its kernel's part of the module)."""


class AsmDiffResult(TypedDict):
    """Result of ``kernelLens/asmDiff``."""

    stage: str
    verdict: str
    """What differs most, in one line."""
    identical: bool
    """The normalised texts are the same."""
    a: AsmDiffSide
    b: AsmDiffSide


@dataclass
class GeneratedCodeParams:
    """torch.compile one function of a document (by name, or the one around ``position``)."""

    uri: str
    function: str | None = None
    """The function's qualified name (``square``, ``Class.method``)."""
    position: Position | None = None


class GeneratedCodeResult(CompiledResult):
    """Result of ``kernelLens/generatedCode``: torch.compile's output for a function."""

    function: str
    """The function's qualified name (resolved from the position when none was given)."""


@dataclass
class InlineParams:
    """The ``load_inline`` modules of a document: PTX for ``arch`` (the server's default is 90);
    ``build`` also builds each module with load_inline (ninja, nvcc, c++) and returns its log."""

    uri: str
    arch: int = 90
    build: bool = False


class ShowAssemblyArgs(TypedDict):
    """Argument of ``kernelLens.showAssembly`` from a code lens."""

    uri: str
    kernel: str


class ShowValuesArgs(TypedDict):
    """Argument of ``kernelLens.showValues`` from a kernel's lens."""

    uri: str
    kernel: str
    program: NotRequired[str]
    """``first`` (the default), ``last`` or ``x,y,z``."""
    pick: NotRequired[bool]
    """Ask for the program (and a loop's pass) first."""


class DebugKernelArgs(TypedDict):
    """Argument of ``kernelLens.debugKernel`` from a kernel's lens."""

    uri: str
    kernel: str
    program: NotRequired[str]


class ProfileKernelLinesArgs(TypedDict):
    """Argument of ``kernelLens.profileKernelLines`` from a kernel's lens."""

    uri: str
    kernel: str
    function: NotRequired[str]
    """The function whose call launches it (default: its launcher in the file)."""
    report: NotRequired[str]
    """A recorded ``.ncu-rep`` to read instead of running Nsight Compute."""


# Inside the kernel: Nsight Compute's source counters per line (Profile Kernel Lines).


@dataclass
class KernelLinesParams:
    """Profile Kernel Lines: the source counters of a kernel's launches (by name, else the
    kernel around ``position``), from a call of ``function`` (default: the kernel's launcher
    in its file or package), or read from a recorded ``report``."""

    uri: str
    kernel: str | None = None
    function: str | None = None
    position: Position | None = None
    report: str | None = None


class KernelLinesSass(TypedDict):
    """One SASS instruction of a kernel line."""

    offset: int
    """Bytes from the function's start."""
    text: str
    samples: float
    executed: float
    blamed: NotRequired[float]
    """Once blamed (issue 43): the stall samples this instruction caused (those of the
    instructions that waited on it); 0 for one that caused none."""
    waits_on: NotRequired[list[int]]
    """Once blamed: the offsets of the instructions this one's stalls were moved onto."""
    cause: NotRequired[str]
    """Once blamed, for a culprit: what it is (``global load, 32 sectors per request …``)."""


class KernelLinesRow(TypedDict):
    """One line of the kernel: its share of the samples and of the instructions."""

    line: int
    """1-based line of the document (a helper's instructions folded onto its call)."""
    samples: float
    share_pct: float
    executed: float
    inst_share_pct: float
    stall: str | None
    """The dominant stall reason (``long_scoreboard``…)."""
    stall_label: str | None
    stalls: dict[str, float]
    helpers: list[str]
    """Helpers folded onto this line (``leaky_relu``, ``maximum → where``)."""
    by_address: bool
    """Some instructions came here by address (a helper whose call was not found)."""
    blamed_pct: float | None
    """The share of the stalls this line causes (issue 43's blame), once computed."""
    text: str
    """``38% of samples · long scoreboard (waiting on memory) · 12% of instructions``."""
    hover: str
    """Markdown: the figures, the stalls and the line's SASS with their samples."""
    sass: list[KernelLinesSass]
    before_pct: NotRequired[float | None]
    """The line's share in the kernel's previous run (``None``: no such line then)."""


class KernelLinesRemedy(TypedDict):
    """The hottest line's stall reason, said in one sentence with the usual remedy."""

    reason: str
    text: str
    rule: NotRequired[str]
    rule_title: NotRequired[str]
    rule_message: NotRequired[str]
    """Nsight Compute's own rule text (plain)."""
    rule_url: NotRequired[str]


class KernelLinesKernel(TypedDict):
    """One kernel's source counters on the document's lines."""

    kernel: str
    demangled: str
    duration_us: float | None
    """The mean launch's time under Nsight Compute."""
    launches: int
    samples: float
    executed: float
    interval_cycles: float | None
    sampling: str
    """``1,234 samples · 1 every 2,048 cycles per SM sub-partition · 3 launches``."""
    lines: list[KernelLinesRow]
    """Hottest first."""
    unplaced_samples: float
    unplaced_executed: float
    unplaced_why: list[str]
    files: dict[str, str]
    """Each report file mapped onto the document, and how."""
    remedy: KernelLinesRemedy | None
    blamed: bool
    notes: list[str]
    """Honest limits: few samples, samples on no line of the file."""
    span: list[int] | None
    """The kernel's first and last line in the document."""
    before_duration_us: NotRequired[float | None]


class KernelLinesResult(TypedDict):
    """Result of ``kernelLens/kernelLines``."""

    report_path: str
    function: str | None
    kernel: str | None
    repeat: int | None
    """How many times the call ran in the profiled range (more for a short kernel)."""
    kernels: list[KernelLinesKernel]


# Values under Triton's interpreter (Show Values).


@dataclass
class ValuesParams:
    """Run one ``@triton.jit`` kernel's launch (by name, else the kernel around ``position``)
    under Triton's interpreter, keeping each line's values for ``program``."""

    uri: str
    kernel: str | None = None
    position: Position | None = None
    program: str = "first"
    """``first``, ``last`` or ``x[,y[,z]]``."""
    iteration: str = "first"
    """A line that ran several times (a loop's body): ``first``, ``last`` or the pass (1-based)."""


#: What a value of a kernel's line is: a block, a block of pointers (shown as offsets into the
#: argument they point in), a scalar or a ``constexpr``.
KernelValueKind = Literal["block", "pointers", "scalar", "constexpr"]


class KernelValue(TypedDict):
    """One local a kernel's line bound, for the chosen program."""

    name: str
    kind: KernelValueKind
    dtype: str
    """``float32``, ``bool``, ``*float32`` (a pointer), ``constexpr``."""
    shape: list[int]
    """The block's shape (``[]`` for a scalar)."""
    text: str
    """``offs: int32[1024] 0 1 2 … 1023``, ``mask: bool[1024] · 24 lanes masked``."""
    data: NotRequired[list[Any]]
    """The block's elements, row-major, at most 4096 (pointers: offsets into ``arg``)."""
    truncated: NotRequired[bool]
    masked: NotRequired[int]
    """A bool block's lanes that are off."""
    min: NotRequired[Any]
    max: NotRequired[Any]
    nan: NotRequired[int]
    arg: NotRequired[str]
    """Pointers: the argument they point into."""
    value: NotRequired[Any]
    """A scalar's value."""


class ValuesLine(TypedDict):
    """What one line of the kernel's body bound for the chosen program."""

    line: int
    """1-based."""
    hits: int
    """How many times the line ran in that program (a loop's body: once per pass)."""
    hit: int
    """The pass shown (1-based)."""
    values: list[KernelValue]
    hover: NotRequired[str]
    """The line's values as Markdown (the server's): each block whole, a 2-D block as a grid
    with a heat map, masked lanes marked."""


class OutOfBounds(TypedDict):
    """Loads or stores of one line that fell outside the storage their pointers belong to."""

    line: int
    op: Literal["load", "store"]
    arg: str
    """The argument whose storage the block points into."""
    pid: list[int]
    """The first program it happened in."""
    lane: list[int]
    """Its first lane (an index into the block)."""
    offset: int
    """That lane's element offset from the argument's start."""
    numel: int
    lanes: int
    """Lanes out of bounds, in every program."""
    programs: int
    message: str


class InterpreterStop(TypedDict):
    """What stopped the interpreter (a feature it cannot run, an error in the kernel)."""

    line: int | None
    message: str


class ValuesResult(TypedDict):
    """Result of ``kernelLens/values``: one kernel's launch under Triton's interpreter."""

    kernel: str
    def_line: int
    launcher: str
    """The function whose launch ran (``<script>`` for a module-level launch)."""
    grid: list[int]
    pid: list[int]
    """The program whose values are kept."""
    program: str
    in_grid: bool
    iteration: Any
    """``first``, ``last`` or a pass number."""
    programs_run: int
    lines: list[ValuesLine]
    oob: list[OutOfBounds]
    error: InterpreterStop | None
    interpreter: bool
    label: str
    """Where the values come from (Triton's interpreter: semantics, not performance)."""
    inputs: NotRequired[Any]


class ErrorAction(TypedDict):
    """One action that can fix an error: a VS Code command and its arguments."""

    label: str
    command: str
    arguments: list[Any]


class ShownError(TypedDict):
    """The error a lens shows in full."""

    kind: str
    message: str
    line: NotRequired[int | None]


class ShowErrorArgs(TypedDict):
    """Argument of ``kernelLens.showError`` from a failed profile's lens."""

    function: str
    error: ShownError
    actions: list[ErrorAction]


class MoreAction(TypedDict):
    """One action of a function's ``…``: one to run (``command`` and its ``arguments``), or
    one that cannot work here, listed with why (``disabled``), never a click that fails."""

    label: str
    detail: NotRequired[str]
    command: NotRequired[str]
    arguments: NotRequired[list[Any]]
    disabled: NotRequired[str]
    """Why the action cannot work here (then it has no ``command``)."""


class MoreActionsArgs(TypedDict):
    """Argument of ``kernelLens.moreActions`` from a function's ``…`` lens."""

    function: str
    items: list[MoreAction]


class AttributeInsideArgs(TypedDict):
    """Argument of ``kernelLens.attributeInside``: the run to repeat (a script, or a function
    of it) and the installed package to attribute inside."""

    uri: str
    """The workspace file that ran (never the package's)."""
    package: str
    """The package's top-level name (``transformers``)."""
    function: str | None
    """The function profiled (``None``: the whole script)."""
    packages: list[str]
    """The packages the repeated run was already attributed inside."""


class RevealLineArgs(TypedDict):
    """Argument of ``kernelLens.revealLine``: a 1-based line of a document."""

    uri: str
    line: int


class ShowGeneratedCodeArgs(TypedDict):
    """Argument of ``kernelLens.showGeneratedCode`` from a code lens."""

    uri: str
    function: str


class ShowInlineExtensionArgs(TypedDict):
    """Argument of ``kernelLens.showInlineExtension`` from a code lens."""

    uri: str
    line: NotRequired[int]
    """1-based line of the lens's ``load_inline(`` call; absent = ask when there are several."""


# The report: profile, timeline, Nsight Compute, sweep.


@dataclass
class ReportParams:
    """The report of one function of a document (by name, or the one around ``position``)."""

    uri: str
    function: str | None = None
    """The function's qualified name."""
    position: Position | None = None


#: Where a timeline lane's events ran.
LaneKind = Literal["cpu", "runtime", "gpu"]


class TimelineEvent(TypedDict):
    """One event (or a block of merged short events) of a lane; times in µs from the trace's
    first event."""

    start: float
    dur: float
    depth: int
    """Nesting depth within the lane (0 = outermost)."""
    name: str
    short: str
    """A short display name (kernels: without template arguments)."""
    cat: str
    """The trace category (``cpu_op``, ``kernel``, ``memcpy``, ``cuda_runtime``, …)."""
    line: int | None
    """1-based source line it comes from, when known."""
    count: NotRequired[int]
    """For a merged block: how many events it stands for."""
    merged: NotRequired[bool]


class TimelineTop(TypedDict):
    """A name with much of a lane's own time in view (an event's time less its children's)."""

    name: str
    us: float
    """Its own time in view, microseconds."""
    share: float
    """Of the lane's own time in view, 0–1."""


class TimelineLane(TypedDict):
    """A CPU thread, the CUDA runtime, or a GPU stream."""

    id: str
    title: str
    kind: LaneKind
    events: list[TimelineEvent]
    """Sorted by depth, then start."""
    top: NotRequired[list[TimelineTop]]
    """Where the lane's time goes in view: the names with the most own time, most first."""
    rank: NotRequired[int]
    """A distributed step's timeline: the rank whose trace the lane is of (its id is then
    ``rank<N>/<the lane's id in that trace>``)."""


class TimelineRank(TypedDict):
    """One rank's lane group of a distributed step's timeline (``analysis/rank_timeline.py``)."""

    rank: int
    path: str | None
    """The rank's trace file."""
    shift_us: float
    """How much later the rank's events are drawn than in its own trace, so that every rank's
    first collective starts at the same time (0 for the rank that reached it latest)."""
    first_collective_us: float | None
    """Its first collective's start, µs from its trace's start (null: it made none, and is
    aligned on its trace's start)."""
    straggler: bool
    """The rank the others wait for (the least total wait in collectives)."""
    wait_us: float | None
    """Its total wait in the collectives every rank made."""
    lanes: list[str]
    """Its lanes' ids, in order."""


class TimelineCollective(TypedDict):
    """A collective every rank made, with its skew across ranks (a marker on each rank's group)."""

    index: int
    """Its place in the ranks' order of collectives (0: the first, where they are aligned)."""
    name: str
    """``all_reduce``, ``reduce_scatter``, …"""
    line: int | None
    skew_us: float
    """The last rank's start less the first's, on the trace clocks."""
    first_rank: int | None
    last_rank: int | None
    starts: list[float | None]
    """Each rank's start of it on the merged time axis (null: not found in its trace)."""
    durs: list[float | None]


class Timeline(TypedDict):
    """A trace reduced to lanes (``analysis/timeline.py``); also the result of
    ``kernelLens/timelineWindow``."""

    span_us: float
    """Time from the first event's start to the last event's end, in microseconds."""
    window: NotRequired[tuple[float, float] | None]
    """``[start_us, end_us]`` of a zoomed window (only events overlapping it, merged at its
    scale); null or absent for the whole trace."""
    path: NotRequired[str]
    """The trace file it was read from (for ``kernelLens/timelineWindow``)."""
    event_count: int
    """Complete events in the trace."""
    kept: int
    """Items left after merging short neighbours."""
    lanes: list[TimelineLane]
    ranks: NotRequired[list[TimelineRank]]
    """A distributed step: one lane group per rank, aligned on the first collective."""
    collectives: NotRequired[list[TimelineCollective]]


class SweepResult(SweepStageResult):
    """The sweep of an int parameter of a function, as the server keeps it."""

    device: str


class ReportInputs(TypedDict):
    """Where the profiled run's inputs came from, in the hover's words (the server writes them)."""

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
    """The function's parameters whose default is an int literal, with that default."""
    profile: Profile | None
    timeline: Timeline | None
    ncu: NcuResult | None
    sweep: SweepResult | None
    inputs: NotRequired[ReportInputs | None]
    """The profiled run's inputs (null before a run)."""
    outdated: NotRequired[bool]
    """The function's text changed since the run (its lines and source are the run's): the
    Summary says so, as the lens does."""


@dataclass
class FileParams:
    """A file on disk (a file system path, not a URI): a Chrome trace (``.json``/``.json.gz``)
    or a ``.ncu-rep``."""

    path: str


class TraceProgress(TypedDict):
    """How far reading a trace file has got (``kernelLens/traceProgress``)."""

    path: str
    percentage: int
    """0 to 100."""
    message: str


class TracePartial(TypedDict):
    """What a first view of a trace covers."""

    fraction: float
    """About which fraction of the file's events it holds (0 to 1)."""
    events: int
    """How many complete events it holds."""


class TraceFileResult(TypedDict):
    """Result of ``kernelLens/traceFile``: a trace file's timeline and summary."""

    path: str
    timeline: Timeline
    summary: dict[str, Any]
    """The trace summary (top kernels, ops, GPU busy time); shown in part."""
    partial: NotRequired[TracePartial]
    """Present when this is a first view of a big trace from its first events while the rest is
    read; ``kernelLens/traceReady`` follows when the whole trace is read."""


class TraceReady(TypedDict):
    """A trace file is read whole (``kernelLens/traceReady``)."""

    path: str


class NcuFileResult(TypedDict):
    """Result of ``kernelLens/ncuFile``: the kernels of a ``.ncu-rep`` (or CSV) file."""

    report_path: str
    reader: str
    kernels: list[NcuKernel]


@dataclass
class TimelineRankSource:
    """One rank's trace in a distributed step's timeline window, and its shift."""

    path: str
    shift_us: float


@dataclass
class TimelineWindowParams:
    """A trace file's events between ``start_us`` and ``end_us`` (from the trace's start); with
    ``ranks``, the window of a distributed step's merged timeline (every rank's trace, shifted)."""

    path: str
    start_us: float
    end_us: float
    ranks: list[TimelineRankSource] | None = None


#: The report panel's tabs a server notification may ask for.
RevealTab = Literal["timeline", "ncu", "sweep"]


@dataclass
class RevealReportParams:
    """Open (or reveal) the report panel of a function on ``tab``."""

    uri: str
    function: str
    tab: RevealTab


@dataclass
class ResultsChangedParams:
    """A function's stored results (profile, ncu, sweep, source) changed."""

    uri: str
    function: str


class ShowReportArgs(TypedDict):
    """Argument of ``kernelLens.showReport`` from a code lens."""

    uri: str
    function: str


class SetBaselineAtCursorArgs(TypedDict):
    """Argument of ``kernelLens.setBaselineAtCursor`` from a function's More…."""

    uri: str
    function: str


@dataclass
class OpenFunctionArgs:
    """A function of a document, for the commands that open a document about it."""

    uri: str
    function: str


@dataclass
class OpenAssemblyArgs:
    """A ``@triton.jit`` kernel of a document, for ``kernelLens.openAssembly``: one stage
    compiled for ``arch`` (default: the device's)."""

    uri: str
    kernel: str
    stage: AsmStage = "ptx"
    arch: int | None = None


class OpenDocumentResult(TypedDict):
    """What the commands that open a document return: ``ok`` and the file they wrote."""

    ok: bool
    path: NotRequired[str]
    """The read-only file that was opened (under the cache)."""
    message: NotRequired[str]
    """Why nothing was opened (``ok: false``)."""


@dataclass
class RunNcuArgs:
    """Nsight Compute on a function (by name, or the one around ``position``); ``set`` is ncu's
    section set (the server's default is ``basic``)."""

    uri: str
    function: str | None = None
    set: str = "basic"
    position: Position | None = None


class NcuCommandResult(CommandResult):
    """Result of ``kernelLens.runNcu``."""

    kernels: NotRequired[int]
    """Kernels profiled."""
    hints: NotRequired[int]
    """Rule hints published as diagnostics on the lines that launched them."""
    report_path: NotRequired[str]


@dataclass
class CheckMemoryArgs:
    """Check Memory of a function (by name, or the one around ``position``): one call under
    ``compute-sanitizer --tool TOOL`` (``memcheck``, ``racecheck``, ``initcheck``,
    ``synccheck``)."""

    uri: str
    function: str | None = None
    tool: str = "memcheck"
    position: Position | None = None


class CheckMemoryCommandResult(CommandResult):
    """Result of ``kernelLens.checkMemory``."""

    errors: NotRequired[int]
    """compute-sanitizer's error count."""
    lines: NotRequired[int]
    """Diagnostics published on lines."""


@dataclass(kw_only=True)
class SweepArgs:
    """Sweep ``param`` of a function (by name, or the one around ``position``) over ``values``
    (default: powers of two around the current value)."""

    uri: str
    function: str | None = None
    param: str
    values: list[int] | None = None
    position: Position | None = None


class SweepCommandResult(CommandResult, SweepResult):
    """Result of a successful ``kernelLens.sweep``: the sweep as the report shows it (a failed
    one returns a :class:`CommandResult`)."""


@dataclass
class ApplyParameterArgs:
    """Make ``value`` the default of ``param`` (and its entry in the inputs directive)."""

    uri: str
    function: str
    param: str
    value: int


class ApplyParameterResult(CommandResult):
    """Result of ``kernelLens.applyParameter``."""

    edits: NotRequired[int]
    """Text edits applied."""


# The functions of a document.


@dataclass
class FunctionsParams:
    """The functions and kernels of one document."""

    uri: str


#: What a function of the document is.
FunctionKind = Literal["function", "method", "triton_kernel"]


class FunctionEntry(TypedDict):
    """One function, method or ``@triton.jit`` kernel of a document, as the lenses name it."""

    name: str
    """The qualified name (``Class.method`` for a method)."""
    line: int
    """0-based line of the ``def`` keyword."""
    kind: FunctionKind


class FunctionsResult(TypedDict):
    """Result of ``kernelLens/functions``."""

    functions: list[FunctionEntry]
    """In source order."""


# The optimisation loop (issue 11): history of runs, baselines, comparisons.


@dataclass
class HistoryParams:
    """The history of one function of a document (by name, or the one around ``position``)."""

    uri: str
    function: str | None = None
    position: Position | None = None


@dataclass
class SetBaselineParams:
    """Pin a run as the function's baseline: ``run`` is an id, ``-1`` (the latest, the default)
    or ``-2``…; ``clear`` unpins."""

    uri: str
    function: str | None = None
    position: Position | None = None
    run: str | None = None
    clear: bool = False


@dataclass
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
    """A run's timing in milliseconds (``spread_pct``: half the IQR, % of the median;
    ``warning``: why the timing may not be trusted, null when nothing was seen)."""

    median_ms: float
    spread_pct: NotRequired[float]
    reps: NotRequired[int]
    method: NotRequired[str]
    q1_ms: NotRequired[float]
    q3_ms: NotRequired[float]
    min_ms: NotRequired[float]
    max_ms: NotRequired[float]
    warning: NotRequired[str | None]
    policy: NotRequired[TimingPolicy]
    """How the time was made (L2, eager, CPU overhead, reps, stable)."""
    clocks: NotRequired[GpuClocks]
    """The GPU's clocks before and after timing: runs on different clocks are not compared."""
    graph: NotRequired[GraphTimingInfo]


class CompareVerdict(TypedDict):
    """How a run's time compares with a reference (``text``: ``−49.8% vs 0.383 ms``)."""

    before_ms: float
    after_ms: float
    change_pct: float
    interval_pct: float
    """Half-width of the ~95% interval of the ratio of medians, percent."""
    p_value: float | None
    """The Mann–Whitney p-value (null without raw samples)."""
    significant: bool
    method: Literal["mann-whitney", "iqr", "none", "incomparable"]
    """``incomparable``: the runs were timed on different GPU clocks or under a different
    policy (``note`` says which); no change is called."""
    reference: str
    note: NotRequired[str | None]
    kind: NotRequired[Literal["faster", "slower", "same", "ambiguous", "incomparable", "untested"]]
    """The four-way verdict (or why there is none); absent in runs stored before it."""
    shape: NotRequired[str | None]
    """Why the verdict is ambiguous although the test called a change: a run drifted or was
    bimodal while timed (``this run drifts +6.1% while timed``)."""
    unconverged: NotRequired[str | None]
    """Which run's timing did not converge (``this run``, ``the reference``, ``both runs``),
    said after the verdict; null when both did or a run does not say."""
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
    peak_bytes: NotRequired[dict[str, int]]
    """A run profiled with memory: each device's (``cuda:0``, ``cpu``) peak in bytes."""


class HistoryResult(TypedDict):
    """Result of ``kernelLens/history``: the runs, oldest first, and the pinned baseline's id."""

    function: str
    uri: str
    path: str
    baseline: str | None
    current_text: list[str] | None
    """The function's lines in the document now (null: it no longer parses or exists)."""
    runs: list[HistoryRun]
    unreadable: NotRequired[list[str]]
    """The runs of the store that could not be read, each named with why (``run 7: not a
    run (no timing.median_ms)``, ``f-….jsonl line 3: not UTF-8 …``)."""


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
    alloc_before_bytes: NotRequired[int]
    """Bytes the line allocated per call, where both runs were profiled with memory."""
    alloc_after_bytes: NotRequired[int]


class KernelDelta(TypedDict):
    """One kernel in two runs: launches and device time (µs) per call."""

    name: str
    short_name: str
    status: Literal["same", "added", "removed"]
    calls_before: float
    calls_after: float
    device_us_before: float
    device_us_after: float


class MemoryDelta(TypedDict):
    """A device's peak in two runs profiled with memory (exact bytes: memory is deterministic on
    a given input); ``text``: ``peak −38% (1.9 → 1.2 GiB)``."""

    device: str
    before_bytes: int
    after_bytes: int
    change_pct: float
    text: str


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
    """Kernel launches (ops on the CPU) per call: [before, after]."""
    memory: NotRequired[list[MemoryDelta]]
    """The devices whose peak changed (both runs profiled with memory)."""


# Arguments and drivers (kept per workspace: ``kernel_lens/run_choices.py``).


@dataclass
class SetScriptArgumentsArgs:
    """Set a script's ``sys.argv[1:]`` for every run of it; ``argv`` null forgets them (a
    launch configuration's, if any, apply again)."""

    uri: str
    argv: list[str] | None = None


@dataclass
class ScriptArgumentsQuery:
    """Which script's arguments (a file URI)."""

    uri: str


class ScriptArgumentsInfo(TypedDict):
    """A script's arguments as every run of it gets them."""

    ok: bool
    argv: list[str]
    source: str | None
    """``set`` (given in the editor or the CLI), ``launch configuration “…”``, or null (none)."""
    reader: str | None
    """How the script reads them (``argparse``, ``click``, ``fire``, ``configurator.py``,
    ``sys.argv`` …), read from its text; null: it reads none."""
    form: str
    """The reader's form, for the prompt (``--key=value``, ``--option value``)."""
    cpu: list[str] | None
    """The arguments changed to run it on the CPU, in its own form (null: no device option)."""


@dataclass
class DriverQuery:
    """A function (by name, else at ``position``) of a document."""

    uri: str
    function: str | None = None
    position: Position | None = None


class DriverCandidate(TypedDict):
    """One driver a function can take its inputs from."""

    label: str
    detail: str
    kind: str
    """``script``, ``launch``, or ``none`` (the function's own inputs: its directive, factory
    or file)."""
    driver: str | None
    config: str | None


class DriverChoices(TypedDict):
    """The drivers offered for a function, the chosen one first."""

    ok: bool
    function: str
    current: str | None
    """The chosen driver as shown (``bench_synth.py --device=cpu``); null: its own inputs."""
    candidates: list[DriverCandidate]
    message: NotRequired[str]


@dataclass
class SetDriverArgs:
    """Choose a function's driver (``kind`` ``script`` or ``launch``), or clear it (``none``)."""

    uri: str
    function: str
    kind: str = "none"
    driver: str | None = None
    config: str | None = None


class ScriptArgumentsArgs(TypedDict):
    """Argument of ``kernelLens.scriptArguments``: the script and its current arguments; with
    ``then``, that function is profiled after (the script is its driver) instead of the script."""

    uri: str
    argv: list[str]
    suggested: NotRequired[list[str] | None]
    """Prefilled instead of ``argv`` (the CPU arguments after a device failure)."""
    then: NotRequired[DriverQuery | None]


# Diagnostics.


class DiagnosticData(TypedDict):
    """``data`` of a Kernel Lens diagnostic: what its quick fix needs (the editor sends it back
    with the diagnostic in ``textDocument/codeAction``)."""

    suggested_directive: NotRequired[str]
    """For an ``inputs`` error: the ``# kernel-lens: inputs = …`` line to put above the def."""


# The tables: each method's types.

#: Each custom request -> (its params, its result).
REQUESTS: dict[str, tuple[Any, Any]] = {
    REQ_ASSEMBLY: (AssemblyParams, AssemblyResult),
    REQ_ASM_DIFF: (AsmDiffParams, AsmDiffResult),
    REQ_GENERATED_CODE: (GeneratedCodeParams, GeneratedCodeResult),
    REQ_INLINE: (InlineParams, InlineResult),
    REQ_REPORT: (ReportParams, ReportResult),
    REQ_TRACE_FILE: (FileParams, TraceFileResult),
    REQ_NCU_FILE: (FileParams, NcuFileResult),
    REQ_TIMELINE_WINDOW: (TimelineWindowParams, Timeline),
    REQ_FUNCTIONS: (FunctionsParams, FunctionsResult),
    REQ_HISTORY: (HistoryParams, HistoryResult),
    REQ_SET_BASELINE: (SetBaselineParams, SetBaselineResult),
    REQ_COMPARE: (CompareParams, CompareResult),
    REQ_VALUES: (ValuesParams, ValuesResult),
    REQ_KERNEL_LINES: (KernelLinesParams, KernelLinesResult),
}

#: Each custom request -> the declared type of its result.
RESULT_TYPES: dict[str, Any] = {method: result for method, (_, result) in REQUESTS.items()}

#: Each custom notification -> its params (the direction is in the method's comment above).
NOTIFICATIONS: dict[str, Any] = {
    NOTIFY_STATUS: StatusParams,
    NOTIFY_SET_TRUSTED: SetTrustedParams,
    NOTIFY_REVEAL: RevealReportParams,
    NOTIFY_RESULTS_CHANGED: ResultsChangedParams,
    NOTIFY_TRACE_PROGRESS: TraceProgress,
    NOTIFY_TRACE_READY: TraceReady,
}

#: Each server command (``workspace/executeCommand``, advertised by the server) -> (its
#: argument, its result).
SERVER_COMMANDS: dict[str, tuple[Any, Any]] = {
    CMD_PROFILE: (ProfileArgs, ProfileCommandResult),
    CMD_PROFILE_ALL: (ProfileAllArgs, list[ProfileCommandResult]),
    CMD_PROFILE_LIGHT: (ProfileLightArgs, ProfileCommandResult),
    CMD_RUN_NCU: (RunNcuArgs, NcuCommandResult | CommandResult),
    CMD_CHECK_MEMORY: (CheckMemoryArgs, CheckMemoryCommandResult | CommandResult),
    CMD_SWEEP: (SweepArgs, SweepCommandResult | CommandResult),
    CMD_APPLY_PARAMETER: (ApplyParameterArgs, ApplyParameterResult),
    CMD_SET_BASELINE: (SetBaselineParams, SetBaselineResult),
    CMD_OPEN_REPORT: (OpenFunctionArgs, OpenDocumentResult),
    CMD_OPEN_GENERATED_CODE: (OpenFunctionArgs, OpenDocumentResult),
    CMD_OPEN_ASSEMBLY: (OpenAssemblyArgs, OpenDocumentResult),
    CMD_SET_SCRIPT_ARGUMENTS: (SetScriptArgumentsArgs, CommandResult),
    CMD_SCRIPT_ARGUMENTS_OF: (ScriptArgumentsQuery, ScriptArgumentsInfo),
    CMD_DRIVER_CHOICES: (DriverQuery, DriverChoices),
    CMD_SET_DRIVER: (SetDriverArgs, CommandResult),
}

#: Each command the server's lenses carry that the extension registers itself -> its argument.
CLIENT_COMMANDS: dict[str, Any] = {
    CMD_SHOW_ASSEMBLY: ShowAssemblyArgs,
    CMD_COMPARE_ASSEMBLY: ShowAssemblyArgs,
    CMD_SHOW_GENERATED_CODE: ShowGeneratedCodeArgs,
    CMD_SHOW_REPORT: ShowReportArgs,
    CMD_SHOW_INLINE: ShowInlineExtensionArgs,
    CMD_SHOW_ERROR: ShowErrorArgs,
    CMD_REVEAL_LINE: RevealLineArgs,
    CMD_ATTRIBUTE_INSIDE: AttributeInsideArgs,
    CMD_SHOW_VALUES: ShowValuesArgs,
    CMD_DEBUG_KERNEL: DebugKernelArgs,
    CMD_CHOOSE_DRIVER: DriverQuery,
    CMD_SCRIPT_ARGUMENTS: ScriptArgumentsArgs,
    CMD_PROFILE_KERNEL_LINES: ProfileKernelLinesArgs,
    CMD_MORE_ACTIONS: MoreActionsArgs,
    CMD_SET_BASELINE_AT_CURSOR: SetBaselineAtCursorArgs,
    CMD_PROFILE_SCRIPT_LIGHT: ProfileScriptArgs,
    CMD_PROFILE_SCRIPT_WINDOW: ProfileScriptArgs,
}
#: Commands the server's actions carry (an error's) that the extension registers itself and
#: that take no argument.
CLIENT_COMMANDS_WITHOUT_ARGUMENT: tuple[str, ...] = (CMD_CHOOSE_INTERPRETER, CMD_SHOW_OUTPUT)
