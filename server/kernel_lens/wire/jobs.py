"""The agent's job requests: one dataclass per method (``profile``, ``sweep``, ``asm``,
``inline``, ``ncu``), sent as the envelope's ``params`` by field name (unknown keys ignored).

The server and the CLI build them; the agent's engine reads them back (:meth:`from_json`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from kernel_lens.wire.lsp import DEFAULT_BUDGET_MS, DEFAULT_SWEEP_BUDGET_MS, DEFAULT_WARMUP_MS

__all__ = [
    "ALL_STAGES",
    "DEFAULT_STAGES",
    "METHOD_NAMES",
    "AsmRequest",
    "InlineRequest",
    "JobRequest",
    "KernelLinesRequest",
    "LightRequest",
    "NcuRequest",
    "ProfileRequest",
    "SanitizerRequest",
    "SweepRequest",
    "ValuesRequest",
]

#: Stages of the ``profile`` method, in the order they run.
DEFAULT_STAGES: tuple[str, ...] = ("timing", "ops", "trace")
ALL_STAGES: tuple[str, ...] = (
    "timing",
    "ops",
    "trace",
    "compiled",
    "compare_compiled",
    "sweep",
)

#: The agent's job methods (besides ``ping`` and ``shutdown``).
METHOD_NAMES: tuple[str, ...] = (
    "profile",
    "sweep",
    "asm",
    "inline",
    "ncu",
    "values",
    "sanitize",
    "kernel_lines",
    "light",
)

_R = TypeVar("_R", bound="JobRequest")


@dataclass
class JobRequest:
    """A job for the agent: the file it is about, and JSON by field name (unknown keys ignored)."""

    #: The agent method that runs this request.
    method: ClassVar[str] = ""

    path: str

    def to_json(self) -> dict[str, Any]:
        """The ``params`` object of the agent protocol."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls: type[_R], obj: dict[str, Any]) -> _R:
        """Build from the agent protocol's ``params`` object (unknown keys are ignored)."""
        known: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in obj:
                continue
            value = obj[f.name]
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            if value is None and has_default and f.default is not None:
                continue  # ``"stages": null`` means "the default", as a missing key does
            if f.name == "stages" and isinstance(value, list):
                value = tuple(value)
            known[f.name] = value
        return cls(**known)


@dataclass
class ProfileRequest(JobRequest):
    """One profiling job (method ``profile``).

    Attributes:
        path: the file's path.
        text: the buffer text (``None``: read the file as Python does, PEP 263).
        function: ``func`` or ``Class.method``; or ``None`` with ``line``.
        line: 1-based line inside the function.
        stages: stages to run, from :data:`ALL_STAGES`.
        warmup_ms: timing warm-up in milliseconds.
        budget_ms: timing budget in milliseconds.
        reps: fixed timing repetitions (0 = adaptive).
        profile_runs: calls inside the profiler for *ops*/*trace*.
        trace_dir: where to write the Chrome trace (absolute; default: the engine's cache).
        keep_samples: include raw timing samples in the JSON.
        extra: ``sweep_param`` / ``sweep_values`` when ``stages`` holds ``sweep``.
        script: profile the whole file, run once as ``__main__`` (``function`` and ``line``
            are ignored).
        backward: *Profile with backward*: each call is followed by the backward of the
            function's output (seeded with ones), so its lines carry their backward parts.
        argv: the script's ``sys.argv[1:]`` (a whole script's, or the driver's with
            ``driver``).
        driver: a script that calls ``function`` (``--from bench.py``): it runs as
            ``python DRIVER ARGV…`` would, and the function's inputs, ``self`` and calling
            context are those of its first call, in whatever workspace module it is defined.
        workspace: the workspace folders; a whole run's lines are those of files under them
            (default: the enclosing git checkout, else the script's folder).
        packages: top-level names of installed packages whose files count as the user's: a
            whole run, a window and a function profile attribute to the innermost frame in the
            workspace or in these packages' files (found in the agent's interpreter), never
            torch's own.
        skip: a whole script's window: steps run unprofiled before the profiler starts.
        steps: steps profiled, after which the script is stopped (``None``: to its end).
        after_s: the window starts no earlier than this many seconds into the run.
        cwd: the folder the script (or driver) runs in (default: its own folder).
        env: environment variables set for the run.
        memory: *Profile memory*: the profiled pass records every allocation and free
            (``profile_memory``), so each line carries what it allocated and the result the
            peak; on CUDA an out-of-memory is read from the allocator's snapshot at the failure.
        memory_auto: record memory as ``memory`` does when the function's first call ran on
            CUDA (the default of the editor and the CLI: its cost there is under 10%, see
            docs/benchmarks.md; on the CPU allocator it is not, so CPU runs are left alone).
    """

    method: ClassVar[str] = "profile"

    path: str
    text: str | None = None
    function: str | None = None
    line: int | None = None
    stages: tuple[str, ...] = DEFAULT_STAGES
    warmup_ms: float = DEFAULT_WARMUP_MS
    budget_ms: float = DEFAULT_BUDGET_MS
    reps: int = 0
    profile_runs: int = 3
    trace_dir: str | None = None
    keep_samples: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    script: bool = False
    backward: bool = False
    argv: list[str] = field(default_factory=list)
    driver: str | None = None
    workspace: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    skip: int = 0
    steps: int | None = None
    after_s: float | None = None
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    memory: bool = False
    memory_auto: bool = False
    only_lines: tuple[int, int] | None = None
    """A whole run (``script``): tag only these lines of the file (a notebook's profiled cell),
    so a call into code outside them stays on its calling line."""
    nproc_per_node: int = 0
    """Profile on this many ranks, launched as ``torchrun --nproc-per-node N FILE`` would (0: one
    process, no launcher): each rank profiles the function, the result merges them."""


@dataclass
class SweepRequest(JobRequest):
    """Time a function across values of one integer parameter (method ``sweep``).

    Attributes:
        path: the file's path.
        text: the buffer text (``None``: read the file).
        function: ``func`` or ``Class.method``.
        param: the integer parameter, e.g. ``BLOCK_SIZE``.
        values: the values to time (empty: powers of two around the current one).
        warmup_ms: timing warm-up per value, milliseconds.
        budget_ms: timing budget per value, milliseconds.
        reps: fixed repetitions per value (0 = adaptive).
        driver: a script that calls ``function`` (``--from bench.py``): its inputs and ``self``
            are those of the function's first call in ``python DRIVER ARGV…`` (as a profile's).
        argv: the driver's ``sys.argv[1:]``; cwd: its folder (default: the driver's own);
            env: environment variables set for the run.
    """

    method: ClassVar[str] = "sweep"

    path: str
    function: str
    param: str
    text: str | None = None
    values: list[int] = field(default_factory=list)
    warmup_ms: float = DEFAULT_WARMUP_MS
    budget_ms: float = DEFAULT_SWEEP_BUDGET_MS
    reps: int = 0
    driver: str | None = None
    argv: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class AsmRequest(JobRequest):
    """Compile ``@triton.jit`` kernels ahead of time (method ``asm``).

    Attributes:
        path: the file's path.
        text: the buffer text (``None``: read the file).
        kernel: one kernel's name; ``None``: every kernel of the file (result ``{"kernels": […]}``).
        arch: compute capability (``90``); ``None``: the GPU's, else 90.
        stage: with a stage (``ptx``…), ``asm``/``line_map`` hold that stage only.
        overrides: argument types (``*fp16``, ``i64``) and constexpr values picked by the user.
        driver: a script that launches the kernel (``--from bench.py``): the types are those
            of the kernel's first launch in a run of ``python DRIVER ARGV…`` (the kernel's file
            loaded from ``text`` wherever the driver imports it).
        argv: the driver's ``sys.argv[1:]``; cwd: its folder (default: the driver's own);
            env: environment variables set for the run.
        config: an ``@triton.autotune`` kernel's config to show (its index in the kernel's
            list) instead of the chosen one.
    """

    method: ClassVar[str] = "asm"

    path: str
    text: str | None = None
    kernel: str | None = None
    arch: int | None = None
    stage: str | None = None
    overrides: dict[str, str] | None = None
    driver: str | None = None
    argv: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    config: int | None = None


@dataclass
class InlineRequest(JobRequest):
    """What ``load_inline`` builds from a file (method ``inline``).

    Attributes:
        path: the file's path.
        text: the buffer text (``None``: read the file).
        arch: compute capability for the PTX.
        build: also build it with load_inline (its log and ``build.ninja``).
        sass: also assemble the PTX (``ptxas``) and disassemble it (``nvdisasm -g``).
    """

    method: ClassVar[str] = "inline"

    path: str
    text: str | None = None
    arch: int = 90
    build: bool = False
    sass: bool = False


@dataclass
class NcuRequest(JobRequest):
    """Nsight Compute on one function's kernels (method ``ncu``).

    Attributes:
        path: the file's path.
        function: ``func`` or ``Class.method``.
        text: the buffer text (``None``: read the file).
        set: ncu's section set: ``basic``, ``detailed`` or ``full``.
        timeout: seconds ncu may run.
        driver: a script that calls ``function`` (``--from bench.py``): the profiled process
            runs ``python DRIVER ARGV…`` to the function's first call and profiles the function
            with that call's inputs, ``self`` and calling context (the driver's set-up kernels
            are never profiled).
        argv: the driver's ``sys.argv[1:]``; cwd: its folder (default: the driver's own);
            env: environment variables set for the profiled process.
    """

    method: ClassVar[str] = "ncu"

    path: str
    function: str
    text: str | None = None
    set: str = "basic"
    timeout: float = 600.0
    driver: str | None = None
    argv: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class ValuesRequest(JobRequest):
    """Run one ``@triton.jit`` kernel's launch under Triton's interpreter (method ``values``):
    what each line of its body assigned for one program, and every load and store checked
    against the storage its pointer belongs to.

    Attributes:
        path: the file's path.
        kernel: the kernel's name.
        text: the buffer text (``None``: read the file).
        program: the program whose values are kept: ``first``, ``last`` or ``x[,y[,z]]``.
        iteration: a line that ran several times (a loop's body): ``first``, ``last`` or the
            1-based pass (as text) to show.
        driver: a script that calls the kernel's launcher (``--from bench.py``): its inputs are
            those of the launcher's first call in ``python DRIVER ARGV…`` (as a profile's).
        argv: the driver's ``sys.argv[1:]``; cwd: its folder (default: the driver's own);
            env: environment variables set for the run.
    """

    method: ClassVar[str] = "values"

    path: str
    kernel: str
    text: str | None = None
    program: str = "first"
    iteration: str = "first"
    driver: str | None = None
    argv: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class SanitizerRequest(JobRequest):
    """Check Memory: one call of a function under NVIDIA's ``compute-sanitizer`` (method
    ``sanitize``), each report on the source line it names (a GPU and the CUDA toolkit needed).

    Attributes:
        path: the file's path.
        function: ``func`` or ``Class.method``.
        text: the buffer text (``None``: read the file).
        tool: ``memcheck`` (out-of-bounds, misaligned), ``racecheck`` (shared-memory hazards),
            ``initcheck`` or ``synccheck``.
        timeout: seconds the checked process may run.
        driver, argv, cwd, env: the inputs from a driver's call, as for Nsight Compute.
    """

    method: ClassVar[str] = "sanitize"

    path: str
    function: str
    text: str | None = None
    tool: str = "memcheck"
    timeout: float = 600.0
    driver: str | None = None
    argv: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class KernelLinesRequest(JobRequest):
    """Inside a kernel (method ``kernel_lines``): Nsight Compute's source counters (warp-stall
    samples and executed instructions per SASS instruction) for a kernel's launches, folded
    onto the kernel's own lines.

    Attributes:
        path: the file's path (the kernel's; a ``load_inline`` kernel's Python file).
        function: the function whose call launches the kernel; ``None``: the kernel's
            launcher in its file (or package), found as Show Assembly finds it.
        kernel: the kernel's name (a ``@triton.jit`` def, a ``__global__`` function):
            only its launches are profiled; ``None``: every kernel the call launches.
        text: the buffer text (``None``: read the file).
        launches: launches profiled at most (``ncu -c``).
        min_samples: fewer samples than this and the call is profiled again, repeated.
        report: a recorded ``.ncu-rep`` to read instead of running ncu (no GPU needed).
        sass: ``cuobjdump -sass`` of the kernel's binary (a file), for the blame.
        timeout: seconds ncu may run.
        driver, argv, cwd, env: the inputs from a driver's call, as for Nsight Compute.
    """

    method: ClassVar[str] = "kernel_lines"

    path: str
    function: str | None = None
    kernel: str | None = None
    text: str | None = None
    launches: int = 3
    min_samples: int = 200
    report: str | None = None
    sass: str | None = None
    timeout: float = 600.0
    driver: str | None = None
    argv: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class LightRequest(JobRequest):
    """The light whole-run profile (method ``light``, issue 36): the script run once as
    ``__main__`` under Triton's Proton in a process of its own, every workspace line's GPU
    kernel time aggregated by calling context (no event trace; a CUDA GPU needed).

    Attributes:
        path: the script's path.
        text: the buffer text, run as the file (``None``: read the file).
        argv: the script's ``sys.argv[1:]``.
        workspace: the folders whose files' lines get results (empty: the script's checkout,
            or its folder).
        cwd: the run's folder (default: the script's folder).
        env: environment variables for the run.
        timeout: seconds the run may take (the job's own limit kills it sooner).
    """

    method: ClassVar[str] = "light"

    path: str
    text: str | None = None
    argv: list[str] = field(default_factory=list)
    workspace: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    timeout: float = 600.0
