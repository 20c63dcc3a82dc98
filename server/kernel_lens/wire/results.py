"""The agent's stage results, as the JSON they are: one ``TypedDict`` per object.

The stages build these dicts directly (mypy checks every key and value against the types
here); the language server stores and forwards them, and the extension's types and run-time
checks are generated from them (``extension/generated/wire.ts``). A key a type does not list
may still pass through (the TypeScript side reads only what is declared).
"""

# No ``from __future__ import annotations``: a TypedDict's ``NotRequired`` keys must be known at
# run time (``__optional_keys__``), where scripts/gen_wire.py and the tests read them.
from typing import Any, Literal, TypedDict

from kernel_lens.wire._compat import NotRequired

__all__ = [
    "Accounting",
    "AccountingRemainder",
    "AutocastInfo",
    "BackwardPassInfo",
    "CallContextInfo",
    "CompiledCountedOn",
    "CompiledKernelInfo",
    "CompiledLineElsewhere",
    "CompiledResult",
    "DeviceWorkKind",
    "GeneratedKernel",
    "InlineFiles",
    "InlineKernel",
    "InlineModule",
    "InlineResult",
    "InputArg",
    "InputsInfo",
    "LightKernel",
    "LightLine",
    "LightResult",
    "LineMapEntry",
    "LineMemory",
    "LiveGroup",
    "MemoryDevice",
    "NcuHint",
    "NcuKernel",
    "NcuResult",
    "NvccProblem",
    "OomMemory",
    "KernelRoofline",
    "Profile",
    "ProfileBackward",
    "ProfileHead",
    "ProfileKernel",
    "ProfileKernelTotal",
    "ProfileLine",
    "InsidePackage",
    "FileShare",
    "ProfileMemory",
    "ProfileOp",
    "ProfileSharedOp",
    "ProfileTiming",
    "TimingPolicy",
    "GpuReading",
    "GpuClocks",
    "GraphTimingInfo",
    "RemainderKernel",
    "RemainderReason",
    "RunSummary",
    "SweepBest",
    "SweepRow",
    "SweepStageResult",
]


class LineMapEntry(TypedDict):
    """Source line -> the lines of the assembly generated from it (both 1-based)."""

    source_line: int
    asm_lines: list[int]


# The profile (stages target, timing, ops, trace).


#: What a piece of device work is: a kernel, a memcpy or a memset.
DeviceWorkKind = Literal["kernel", "memcpy", "memset"]


class ProfileKernel(TypedDict):
    """One kernel launched by an op of a profiled line."""

    name: str
    """The demangled name (full of ``<``, ``>``, ``&``)."""
    short_name: str
    device_us: float
    """Device time, in microseconds, per call of the function."""
    calls: float
    """Launches per call of the function (an average over the profiled calls)."""
    kind: NotRequired[DeviceWorkKind]
    """``kernel``, ``memcpy`` or ``memset`` (absent in runs stored before it: a kernel)."""


class CompiledLineElsewhere(TypedDict):
    """A line of another file that a compiled graph's kernel fused."""

    path: str
    line: int


class CompiledCountedOn(TypedDict):
    """The line a compiled graph's kernel is counted on (``path``: when in another file)."""

    line: int
    path: NotRequired[str]


class CompiledKernelInfo(TypedDict):
    """A kernel (or extern call) of a torch.compile graph, on a line's op."""

    kernel: str
    """Its name in the output code (``triton_per_fused_…``, ``extern_kernels.mm``)."""
    graph: str
    """``forward``, ``backward``, ``inference`` or ``graph``."""
    graph_key: str
    nodes: list[str]
    """The FX nodes it was generated from."""
    aten: list[str]
    """Their ATen ops."""
    lines: list[int]
    """The lines of this row's file it fused (attribution keys before the result is built)."""
    elsewhere: NotRequired[list[CompiledLineElsewhere]]
    """The lines of other files it fused."""
    shared_with: NotRequired[list[int]]
    """Its other lines of this row's file."""
    counted_on: NotRequired[CompiledCountedOn]
    """Where it is counted, when not on this line."""


class ProfileOp(TypedDict):
    """One ATen op dispatched by a profiled line; times in µs per call."""

    name: str
    dispatch: NotRequired[list[str]]
    """The ops it dispatched to (e.g. ``aten::square`` -> ``aten::pow``)."""
    device_us: float
    cpu_us: float
    calls: float
    """Occurrences per call of the function (an average over the profiled calls)."""
    kernels: list[ProfileKernel]
    compiled: NotRequired[CompiledKernelInfo]
    """For a kernel of a torch.compile graph: the graph's kernel (``kernel``, ``graph``,
    ``graph_key``, ``nodes``, ``aten``), the lines of this row's file it fused (``lines``), those
    of other files (``elsewhere``), its other lines (``shared_with``) and where it is counted
    (``counted_on``)."""


class ProfileSharedOp(ProfileOp):
    """A compiled graph's kernel fused from this line and others, counted on another line:
    shown on this one, never added to its totals."""

    backward: bool
    """The backward graph's kernel (the line's backward part)."""


class ProfileBackward(TypedDict):
    """The backward work a line's forward ops caused — the autograd nodes they made
    (``AddmmBackward0``), wherever the engine ran them — per call of the function."""

    cpu_us: float
    device_us: float
    ops: list[ProfileOp]
    """One entry per autograd node kind, costliest first; ``dispatch`` holds its ATen ops."""


class BackwardPassInfo(TypedDict):
    """The backward pass that ran while a line ran (``loss.backward()``), per call: its total,
    which the forward lines also carry as their ``backward`` parts."""

    device_us: float
    cpu_us: float
    lines: list[int]
    """The forward lines its work was attributed to."""
    other_files: NotRequired[int]
    """How many other files hold forward lines of it too (a named package's, another workspace
    module's): their rows carry those parts."""


class LineMemory(TypedDict):
    """What one line allocated and freed on one device, bytes per call of the function
    (``profile_memory``); the backward's allocations are on the forward line that caused them."""

    device: str
    """``cpu`` or ``cuda:N``."""
    allocated_bytes: int
    freed_bytes: int
    live_bytes: int | None
    """The device's total allocated when the line's last forward allocation or free was made
    (CPU: of the blocks the profiled calls allocated; the CPU allocator keeps no total)."""
    backward_allocated_bytes: NotRequired[int]
    """The part of ``allocated_bytes`` made by the backward of the line's ops."""


class LiveGroup(TypedDict):
    """Bytes alive at a moment (the peak, an out-of-memory), allocated by one line."""

    line: int
    source: str
    bytes: int
    kind: NotRequired[Literal["backward", "saved for backward"]]
    """``backward``: allocated by the backward of the line's ops; ``saved for backward``:
    allocated by its forward and alive while the backward ran."""
    file: NotRequired[str]
    """A workspace file other than the function's (an out-of-memory's frames)."""


class MemoryDevice(TypedDict):
    """One device's memory over the profiled calls: the peak, the line it was reached on and
    what was alive then, by line; the live total over time (the Report's memory lane)."""

    device: str
    label: str
    """``CPU``, ``GPU 0``."""
    peak_bytes: int
    peak_line: int | None
    """The line whose work reached the peak (a backward's forward line)."""
    peak_in_backward: bool
    peak_host_line: int | None
    """The line that was running at the peak (``loss.backward()`` for a backward's)."""
    live_at_peak: list[LiveGroup]
    """Largest first (at most 20)."""
    outside_bytes: int
    """Alive at the peak, allocated in the profiled calls off the function's lines."""
    before_bytes: int
    """Alive at the peak, allocated before the profiled calls (parameters, inputs, state)."""
    timeline: list[list[float]]
    """``[t_us, live_bytes]`` from the first memory event (at most 2000 points)."""
    timeline_offset_us: NotRequired[float]
    """The first memory event's time on the Report timeline's clock (µs from the trace's first
    complete event): the memory lane drawn under the timeline's zoom."""
    allocated_outside_bytes: NotRequired[int]


class ProfileMemory(TypedDict):
    """The result's ``memory`` (a profile with *Profile memory* / ``--memory``)."""

    devices: list[MemoryDevice]
    source: str
    """``profile_memory`` (the profiler's allocation events)."""
    auto: NotRequired[bool]
    """Recorded by default (a CUDA run: its cost there is under 10%), not asked for: the lenses
    put each line's time first and its memory after."""


class OomMemory(TypedDict):
    """What was alive at an out-of-memory, by line, read from the allocator's snapshot taken
    by its out-of-memory observer (never by re-running)."""

    device: str
    label: str
    failed_bytes: int | None
    """The size of the allocation that failed."""
    failed_line: NotRequired[int]
    live_bytes: int
    live_by_line: list[LiveGroup]
    no_frame_bytes: int
    """Alive with no frame of the user's files (allocated before recording, or by C++)."""
    device_free_bytes: NotRequired[int]
    source: str


class InsidePackage(TypedDict):
    """The part of a line's time spent inside one installed package's code."""

    package: str
    """The package's top-level name (``transformers``)."""
    cpu_us: float
    """Wall time on the CPU inside the package's frames while the line ran, µs (per call of a
    function; a whole run's total)."""
    share: float
    """``cpu_us`` over the line's own wall time on the CPU, 0..1."""


class ProfileLine(TypedDict):
    """One source line of a profiled function."""

    line: int
    """1-based line of the document."""
    source: str
    ops: list[ProfileOp]
    hits: NotRequired[float]
    """Times the line ran per call of the function."""
    cpu_us: NotRequired[float]
    device_us: NotRequired[float]
    """Device time of the line's own (forward) kernels, µs per call."""
    backward: NotRequired[ProfileBackward]
    backward_pass: NotRequired[BackwardPassInfo]
    shared: NotRequired[list[ProfileSharedOp]]
    """Kernels of a compiled graph fused from this line and others, counted on another line."""
    compile: NotRequired[dict[str, Any]]
    """torch.compile's work for this line while the function ran (its compiles, graph breaks):
    ``agent/inductor_capture.py``'s report."""
    memory: NotRequired[list[LineMemory]]
    """Per device (a profile with memory)."""
    inside: NotRequired[list[InsidePackage]]
    """A whole run: the installed packages (not named for attribution) this line's Python call
    spent its time in, most first (``out = model(x)`` → 98% inside ``transformers``)."""


class RemainderKernel(TypedDict):
    """A kernel of a remainder, by its device time per call (µs)."""

    name: str
    device_us: float


#: Why device time is on no line (``analysis/line_attribution.py``'s ``REMAINDER_REASONS``).
RemainderReason = Literal[
    "no-launch", "other-thread", "outside", "backward-unlinked", "backward-seed", "compile"
]


class AccountingRemainder(TypedDict):
    """Device time on no line, for one reason, per call (µs)."""

    reason: RemainderReason
    text: str
    """The reason in words (``launched from another thread, outside the function's lines``)."""
    device_us: float
    kernels: list[RemainderKernel]
    """Its costliest kernels (at most five)."""


class Accounting(TypedDict):
    """Where the trace's device time went, per call: ``device_us == on_lines_us + Σ
    remainder``."""

    device_us: float
    """Every kernel, memcpy and memset of the trace, µs per call."""
    on_lines_us: float
    on_lines_pct: float
    remainder: list[AccountingRemainder]


class ProfileKernelTotal(ProfileKernel):
    """A kernel's totals over the whole function."""

    lines: NotRequired[list[int]]
    """1-based lines that launched it."""


class TimingPolicy(TypedDict):
    """How a time was made (issue 25): said on every number."""

    l2: str
    """``cold`` (flushed before each repetition), ``warm``, or ``n/a`` (CPU)."""
    mode: str
    """``eager`` (each call launched from Python) or ``graph`` (replayed in a CUDA graph)."""
    cpu_overhead: str
    """``included`` (the CPU's launch cost is inside the time) or ``excluded``."""
    reps: int
    rel_stdev_pct: NotRequired[float | None]
    """Standard deviation of the samples, percent of their mean."""
    stable: NotRequired[bool]
    """Relative standard deviation under 2% (Nsight Python's rule)."""
    nvml: NotRequired[str]
    """Why no GPU clocks were read (no ``nvidia-ml-py``, NVML did not start)."""
    stopped: NotRequired[str]
    """Why the repetitions stopped: ``converged (CI ±0.8%)`` (the median's ~95% interval
    within ±1%), ``not shrinking (CI ±3.1%)`` (drifting or bimodal samples), ``budget`` (the
    time budget ran out first) or ``fixed reps``."""
    ci_pct: NotRequired[float | None]
    """Half-width of the median's ~95% interval when it stopped, percent of the median."""
    text: str
    """The policy in one line: ``eager · L2 cold · CPU launch overhead included · …``."""


class GpuReading(TypedDict):
    """One NVML reading of the GPU (any field null where NVML cannot say)."""

    sm_mhz: int | None
    mem_mhz: int | None
    temperature_c: int | None
    slowdown_c: int | None
    """The temperature at which the GPU slows its clocks down."""
    throttle: int | None
    """NVML's clocks-event (throttle) reasons, a bit mask."""
    power_w: float | None


class GpuClocks(TypedDict):
    """NVML readings before and after timing."""

    before: GpuReading | None
    after: GpuReading | None


class GraphTimingInfo(TypedDict):
    """A launch-bound function timed captured in a CUDA graph, or why it was not."""

    calls: NotRequired[int]
    """Calls captured into one graph."""
    why: NotRequired[str | None]
    """Why it was timed in a graph: ``median 3.6 µs < 20 µs``, ``device idle 77% …``."""
    reason: NotRequired[str]
    """Why it could not be captured (``host sync during capture …``, ``not applicable on
    CPU``); absent when it was."""
    median_ms: NotRequired[float | None]
    """Time per call in the graph (flush subtracted), ms."""
    min_ms: NotRequired[float]
    max_ms: NotRequired[float]
    retries: NotRequired[int]
    flush_ms: NotRequired[float | None]
    """The L2 flush's own time per call, measured in a flush-only graph and subtracted."""
    kernels_us: NotRequired[float | None]
    """Summed kernel device time per call (the ops stage), µs."""
    policy: NotRequired[TimingPolicy]


class ProfileTiming(TypedDict):
    """The timing stage's result: median in ms, spread in % of the median."""

    median_ms: float
    spread_pct: float
    """Spread of the repetitions around the median, in percent of it."""
    reps: int
    method: NotRequired[str]
    """``cuda-events`` or ``perf-counter``."""
    device: NotRequired[str]
    """``cuda`` or ``cpu``: what was timed."""
    mean_ms: NotRequired[float]
    min_ms: NotRequired[float]
    max_ms: NotRequired[float]
    q1_ms: NotRequired[float]
    q3_ms: NotRequired[float]
    """The samples' quartiles, ms."""
    warmup_calls: NotRequired[int]
    """Calls made before the timed repetitions."""
    samples_ms: NotRequired[list[float]]
    """Each repetition's time, ms (absent where the samples were left out)."""
    l2_flushed: NotRequired[bool]
    warnings: NotRequired[list[str]]
    warning: NotRequired[str | None]
    policy: NotRequired[TimingPolicy]
    """How the median was made (L2, eager, CPU overhead, reps, stable)."""
    clocks: NotRequired[GpuClocks]
    """CUDA: the GPU's clocks and temperature before and after timing (NVML)."""
    graph: NotRequired[GraphTimingInfo]
    """A launch-bound CUDA function's time in a CUDA graph (or why not)."""


class KernelRoofline(TypedDict):
    """One kernel against the hardware's limit, per launch; null where unknown (nothing is
    invented: a kernel with neither bytes nor FLOPs has no entry)."""

    name: str
    short_name: str
    duration_us: float
    """Device time of one launch."""
    calls: float
    bytes: float | None
    flops: float | None
    source: Literal["inductor", "tensors", "ncu"]
    """Where bytes/FLOPs came from: Inductor's launch metadata, the function's tensor sizes
    (inputs read, result written; a function of one kernel only), Nsight Compute."""
    tb_per_s: float | None
    tflop_per_s: float | None
    bandwidth_pct: float | None
    """Of the device's peak bandwidth (a measured copy where the table has one)."""
    flop_pct: float | None
    intensity: float | None
    """FLOP per byte."""
    bound: Literal["memory", "compute"] | None
    peak_note: str | None
    """Which peaks, and whether datasheet or measured."""
    peak_tbs: NotRequired[float]
    peak_tflops: NotRequired[float]
    math: NotRequired[str]
    """The compute peak's precision and unit (``FP32``, ``BF16 tensor``…)."""
    impossible: NotRequired[str | None]
    """Why a rate above a peak cannot be the kernel's own (data from L2, a wrong FLOP count):
    shown instead of the percentage, never as a win."""
    text: str
    """``square_kernel 0.192 ms · 4.16 TB/s · 97% of peak bandwidth``."""


class FileShare(TypedDict):
    """One file's part of a run: the sum of its lines' own times."""

    path: str
    package: str | None
    """The named package the file is in (``None``: a workspace file)."""
    cpu_us: float
    device_us: float
    """Forward and backward device time of its lines, µs per call."""


class ProfileHead(TypedDict):
    """A profile result's head: what ran, where, on which device (``agent/results.py``'s
    ``profile_head``); the stages' keys follow it (:class:`Profile`)."""

    function: str
    path: NotRequired[str | None]
    """The file (or pseudo file: a notebook cell's) the lines are of (null in a run restored
    from a history entry that did not keep it)."""
    def_line: NotRequired[int]
    """1-based line of the ``def`` (1 for a script or a cell)."""
    first_line: NotRequired[int | None]
    """As ``path``, null in a restored run that did not keep it."""
    last_line: NotRequired[int]
    device: str
    """The device's name (``NVIDIA H200``, ``CPU``)."""
    device_kind: NotRequired[str]
    """``cuda`` or ``cpu``."""
    inputs: NotRequired[Any]
    """Where the inputs came from (``InputsInfo`` for a function; ``{"source": "none"}``,
    ``{"source": "script", …}`` otherwise); a label (``directive``) in runs recorded before
    the object."""
    versions: NotRequired[dict[str, str]]
    """``torch`` and ``python`` of the run."""
    stages: NotRequired[list[str]]
    """The stages that ran."""
    call_style: NotRequired[str]
    """How the body ran: ``called``, ``awaited``, ``consumed``, ``script``, ``cell``…"""
    triton_interpreter: NotRequired[bool]
    """Whether Triton kernels ran under Triton's interpreter (absent: unknown)."""


class Profile(ProfileHead):
    """The profile of one function, as ``kernel-lens profile --json`` prints it (the agent's
    ``profile`` result, built by ``agent/results.py``): the head, then the stages' keys; a
    stage's object not listed here (``compiled``, ``compare_compiled``, ``sweep``, ``script``,
    ``notes``…) passes through."""

    timing: ProfileTiming | None
    lines: list[ProfileLine]
    kernels: list[ProfileKernelTotal]
    unattributed: NotRequired[list[ProfileKernel]]
    """Device work launched on no line of the function (per call), by device time."""
    profiled_runs: NotRequired[int]
    """Calls of the function the profiled pass made (its numbers are per call)."""
    trace: NotRequired[dict[str, Any]]
    """The trace's summary (``kernel-lens trace summarize``'s object)."""
    compile: NotRequired[dict[str, Any]]
    """What torch.compile did while the function ran (``compiles``, ``graph_breaks``)."""
    notes: NotRequired[list[dict[str, Any]]]
    """Notes on lines (``{"line", "path"?, "message", "kind"}``: a graph break, …)."""
    trace_path: NotRequired[str | None]
    trace_error: NotRequired[str | None]
    """Why the trace was not saved (``trace not saved: <why>``: a full disk, a cache path that
    is a file…); the profile's numbers stand, ``trace_path`` is then null."""
    accounting: NotRequired[Accounting]
    files: NotRequired[dict[str, list[ProfileLine]]]
    """A whole run (a script): the lines of the other workspace files it executed, by path
    (the script's own are ``lines``)."""
    packages: NotRequired[dict[str, str]]
    """The installed packages named for attribution, by name: the folder their files are in
    (``files`` under it are the package's, the others the workspace's)."""
    by_file: NotRequired[list[FileShare]]
    """Where a whole run's time is, file by file (the workspace's and the named packages')."""
    file_order: NotRequired[list[str]]
    """A run of several files: the files in the order of the trace's line ranges
    (``src:<k>:<line>`` is a line of the ``k``-th), so the timeline can name them."""
    memory: NotRequired[ProfileMemory]
    roofline: NotRequired[list[KernelRoofline]]
    """Each kernel whose bytes or FLOPs are known, against the device's peak (on a GPU)."""


class InputArg(TypedDict):
    """One input of the profiled call, described (never the value itself)."""

    name: str
    type: str
    shape: list[int] | None
    dtype: str | None
    device: str | None
    repr: str


class AutocastInfo(TypedDict):
    """One device type's autocast state at the call."""

    device_type: str
    dtype: str
    enabled: bool
    cache_enabled: bool


class CallContextInfo(TypedDict):
    """torch's state a call ran under (autocast, grad mode, backends flags, matmul precision,
    device): taken at the script's call, or given by a ``# kernel-lens: context = …``
    directive."""

    source: Literal["captured", "directive"]
    label: str
    """What differs from the agent's own state: ``autocast cuda bfloat16 · no_grad``; empty
    when nothing does."""
    autocast: list[AutocastInfo]
    grad: Literal["enabled", "no_grad", "inference_mode"]
    matmul_precision: str
    backends: dict[str, bool]
    cuda_device: int | None


class InputsInfo(TypedDict):
    """Where the profiled call's inputs came from (the profile result's ``inputs`` object)."""

    source: Literal["captured", "directive", "factory", "none"]
    """``captured`` (the script's own first call), ``directive``, ``factory``
    (``<name>_inputs()``) or ``none`` (no parameters)."""
    label: str
    """``directive``, ``square_inputs()``, ``captured``, ``none``."""
    line: int | None
    """The captured call's line, the directive's line or the factory's def line."""
    call: str | None
    """For ``captured``: the caller chain inside the file (``time_fn → square_2``)."""
    setup_s: float | None
    """For ``captured``: how long the script ran before the call, in seconds."""
    args: list[InputArg]
    self: NotRequired[dict[str, Any]]
    """For methods: ``{"class", "how", "name", "made_at"}``."""
    context: NotRequired[CallContextInfo]
    """The calling context every stage replays (a captured call's, or a directive's)."""
    driver: NotRequired[str]
    """For ``captured`` from a driver script (``--from bench.py``): its path; ``line`` is then
    the driver's line and ``call`` starts with that line's text."""


# torch.compile (the *compiled* stage).


class GeneratedKernel(TypedDict):
    """One kernel call in inductor's output module."""

    name: str
    """``triton_poi_…``, ``cpp_fused_…`` or ``extern_kernels.mm``."""
    kind: Literal["triton", "cpp", "extern"]
    def_line: NotRequired[int | None]
    """1-based line of its definition in the code (absent for extern kernels)."""
    call_line: int
    """1-based line of its call in the code."""
    lines: list[int]
    """1-based lines of the user's source fused into this kernel."""
    asm: NotRequired[dict[str, Any]]
    """CUDA only: the Triton kernel's PTX… from the Triton cache."""


class RunSummary(TypedDict):
    """Eager or compiled: median time (ms), its spread (%), and device work per call."""

    median_ms: float
    spread_pct: float
    kernels: float
    """Kernel launches per call (CUDA), or top-level ATen ops per call (CPU)."""


class CompiledResult(TypedDict):
    """The *compiled* stage: torch.compile's generated code, eager vs compiled numbers."""

    backend: str
    language: Literal["triton", "cpp"]
    code_path: str | None
    """Where the agent saved ``code`` (null: it could not, see ``code_error``)."""
    code_error: NotRequired[str]
    """``generated code not saved: <why>`` (a full disk…); ``code`` is still here."""
    code: str
    """Inductor's output module (Python), shown unchanged so that the kernels' lines apply."""
    provenance: bool
    """Whether inductor's provenance tracking said which lines each kernel fused."""
    kernels: list[GeneratedKernel]
    """In call order (a kernel called twice appears twice)."""
    eager: RunSummary
    compiled: RunSummary
    speedup: float | None
    """Eager over compiled median time; null when not measured."""
    summary: str


# Parameter sweeps (the *sweep* stage).


class SweepRow(TypedDict):
    """One value of a sweep: timed (ms, %, bytes, GB/s), or failed with ``error``."""

    value: int
    median_ms: NotRequired[float | None]
    spread_pct: NotRequired[float | None]
    reps: NotRequired[int | None]
    bytes: NotRequired[int | None]
    """Bytes read and written per call (tensor arguments and results)."""
    gb_per_s: NotRequired[float | None]
    error: str | None
    """Why this value failed; null when it was timed."""
    cooldown_s: NotRequired[float]
    """Seconds waited for a hot GPU to cool before this value was timed."""
    warnings: NotRequired[list[str]]
    """A clock drop or throttling while this value was timed (NVML)."""
    stopped: NotRequired[str]
    """Why this value's repetitions stopped (``converged (CI ±0.6%)``, ``budget``…)."""


class SweepBest(TypedDict):
    """The fastest value of a sweep."""

    value: int
    median_ms: float


class SweepStageResult(TypedDict):
    """The *sweep* stage: each value's row, the best, and the timing method."""

    param: str
    current: float | None
    """The value the function is called with now, if known (an int, unless the call passed
    another number)."""
    rows: list[SweepRow]
    best: SweepBest
    method: str
    ties: NotRequired[list[int]]
    """Values equal to the fastest within noise (empty: ``best`` is significantly faster)."""
    verdict: NotRequired[str | None]
    """``BLOCK_SIZE 512–1024 equal within noise`` / ``BLOCK_SIZE 512 fastest (significantly)``."""
    note: NotRequired[str]
    """What the times mean where they are not the device's (the Triton interpreter)."""


# load_inline (the *inline_ext* stage).


class NvccProblem(TypedDict):
    """One nvcc error or warning, located in cuda.cu and in the .py file (1-based lines)."""

    severity: str
    """``error`` or ``warning``."""
    message: str
    cuda_line: int | None
    line: int | None


InlineFiles = TypedDict(
    "InlineFiles",
    {"main.cpp": str, "cuda.cu": str | None, "build.ninja": NotRequired[str | None]},
)
"""The files load_inline writes into its build folder, as the agent rebuilt them: main.cpp
(the cpp_sources and the bindings of functions=), cuda.cu (null without cuda_sources), and
build.ninja (present only after a build; null if torch wrote none)."""


class InlineKernel(TypedDict):
    """One ``__global__`` kernel of a load_inline module's PTX and what ``ptxas -v`` said of it."""

    entry: str
    """The PTX entry (mangled: ``_Z13square_kernelPKfPfl``)."""
    registers: int | None
    spills: int | None
    """Spill stores + spill loads, in bytes."""
    shared_bytes: int | None


class InlineModule(TypedDict):
    """One ``load_inline(...)`` call of the file and what nvcc made of it."""

    name: str
    """The extension's ``name=``."""
    call_line: int
    """1-based line of the ``load_inline(`` call."""
    arch: str
    """Target architecture, e.g. ``sm_90``."""
    nvcc: str
    """The nvcc that compiled it."""
    files: InlineFiles
    ptx: str | None
    """``nvcc -ptx -lineinfo`` of cuda.cu; null when it failed or there are no cuda_sources."""
    line_map: list[LineMapEntry]
    """Lines of the .py file -> lines of ``ptx``."""
    errors: list[NvccProblem]
    build_log: str | None
    """load_inline's verbose build output; null unless built."""
    build_directory: str | None
    """Where load_inline built the module; null unless built."""
    ptx_seconds: NotRequired[float]
    """Time nvcc took for the PTX, in seconds (absent without cuda_sources)."""
    kernels: NotRequired[list[InlineKernel]]
    """Each ``__global__`` kernel of the PTX with its registers (``ptxas -v``), in PTX order."""
    sass: NotRequired[str | None]
    """``nvdisasm -g`` of the PTX assembled by ``ptxas`` (asked with ``sass``); null if that
    failed."""
    sass_line_map: NotRequired[list[LineMapEntry]]
    """Lines of the .py file -> lines of ``sass``."""


class InlineResult(TypedDict):
    """The *inline_ext* stage: every ``load_inline`` call of a file, in syntax-tree order."""

    path: str
    modules: list[InlineModule]


# Nsight Compute (the *ncu* stage).


class NcuHint(TypedDict):
    """One Nsight Compute rule result; speedup in percent."""

    rule: str
    section: str
    kind: Literal["OPT", "WRN", "ERR", "INF"]
    """``INF``: a rule of ncu's CSV page with no type (information)."""
    title: str
    message: str
    speedup_pct: float | None
    """Estimated speedup in percent, if the rule gives one."""
    speedup_type: str | None
    """``local`` or ``global``."""


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
    """``(x, y, z)`` as text, when known."""
    block: str | None
    dram_bytes_read: NotRequired[float | None]
    """DRAM bytes the launch read (``dram__bytes_read.sum``), when collected."""
    dram_bytes_write: NotRequired[float | None]
    flops: NotRequired[float | None]
    """FLOPs of the launch from ncu's counters: CUDA cores (an FMA counts twice) and tensor
    cores."""
    tensor_flops: NotRequired[float | None]
    """The tensor cores' part of ``flops`` (null: the chip's tensor counters not collected)."""
    math: NotRequired[str | None]
    """What most FLOPs were done in (``bf16 tensor``, ``fp32``…): the compute roof used."""
    line: NotRequired[int | None]
    """1-based source line that launched it (absent in a report opened from a file)."""
    hints: list[NcuHint]
    """Ranked: errors, then optimisations by estimated speedup, then warnings."""


class NcuResult(TypedDict):
    """The *ncu* stage: the report file and each kernel's metrics, hints and source line."""

    report_path: str
    set: NotRequired[str]
    """ncu's section set (``basic``, ``full``)."""
    reader: str
    """``ncu_report`` or ``csv``."""
    kernels: list[NcuKernel]
    ncu_log: NotRequired[str]
    """ncu's own ``==PROF==`` / ``==WARNING==`` lines."""
    roofline: NotRequired[list[KernelRoofline]]
    """Each measured kernel against the device's peaks, from ncu's DRAM bytes and FLOPs
    (``source: "ncu"``); merged into the profile's ``roofline`` where the two meet."""


class LightKernel(TypedDict):
    """One kernel of a line in the light whole-run profile (Proton, aggregated)."""

    name: str
    us: float
    """Its GPU time on the line over the whole run (µs)."""
    count: int
    """Its launches from the line."""


class LightLine(TypedDict):
    """One workspace line's GPU kernel time over a whole run, light profile."""

    line: int
    """1-based."""
    source: str
    """The line's text when it ran (stripped): a lens goes where the text is still the same."""
    kernel_us: float
    launches: int
    kernels: list[LightKernel]
    """By time, longest first."""


class LightResult(TypedDict):
    """The light whole-run profile (agent method ``light``, ``kernel_lens.agent.light``):
    every workspace line's kernel time for a whole run, aggregated by Python calling context
    under Triton's Proton. What it leaves out is ``label``: the ATen op names, and backward's
    kernels on the forward lines (``other_us``)."""

    mode: Literal["light"]
    path: str
    """The script run."""
    device: str
    files: dict[str, list[LightLine]]
    """Each workspace file's lines with kernel time (the script's own among them)."""
    total_kernel_us: float
    other_us: float
    """Kernel time with no workspace frame on its stack (backward, library threads)."""
    launches: int
    label: str
    """What the light profile is and leaves out (``analysis.light_lines.LIGHT_LABEL``)."""
    wall_s: float
    """The run's wall time, Proton on."""
    stored_bytes: int
    """Size of Proton's profile file."""
    profile_path: str
    triton: str
