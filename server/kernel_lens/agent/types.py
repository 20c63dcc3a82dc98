"""The agent's job types: the only module shared by the server, the CLI and the agent.

Every agent method's request (``profile``, ``sweep``, ``asm``, ``inline``, ``ncu``) with
``to_json``/``from_json``, the closed set of error kinds, :class:`ProfileError`, and the result
dataclasses of the stages whose JSON is built here. Standard library only: the language server
imports this module and must not pull in torch (like esbonio's ``sphinx_agent/types``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar, get_args

__all__ = [
    "ALL_STAGES",
    "DEFAULT_STAGES",
    "ERROR_KINDS",
    "METHOD_NAMES",
    "AsmRequest",
    "CompiledKernel",
    "CompiledResult",
    "CompiledSide",
    "ErrorKind",
    "InlineModule",
    "InputArg",
    "InputsInfo",
    "JobRequest",
    "InlineResult",
    "NcuRequest",
    "NcuResult",
    "ProfileError",
    "ProfileRequest",
    "InlineRequest",
    "SweepRequest",
    "SweepResult",
    "SweepRow",
    "suggested_directive_in",
]

#: Kinds of failure, as they appear in JSON (``error.kind``) and in lens titles.
ErrorKind = Literal[
    "syntax",  # the buffer does not parse (or cannot be decoded)
    "not-found",  # no such file / function / kernel / load_inline call
    "import",  # module-level code raised while loading the file
    "inputs",  # the inputs directive or FUNC_inputs() failed, or does not fit the signature
    "runtime",  # the function raised
    "exit",  # the user's code called sys.exit() / raised SystemExit
    "interrupted",  # the user's code raised KeyboardInterrupt
    "unsupported",  # the function needs something this machine lacks (CUDA, nvcc, ncu, …)
    "timeout",  # the job ran past its time limit
    "crash",  # the agent process died (segfault, os._exit, CUDA fault)
    "cancelled",  # the user cancelled the job
    "untrusted",  # the workspace is not trusted: nothing was run (language server)
    "trace",  # a trace file cannot be read (``kernel-lens trace summarize``)
    "ncu",  # an Nsight Compute report cannot be read (``kernel-lens ncu show``)
    "internal",  # a bug in Kernel Lens
]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)

#: Stages of the ``profile`` method, in the order they run.
DEFAULT_STAGES: tuple[str, ...] = ("timing", "ops", "trace")
ALL_STAGES: tuple[str, ...] = ("timing", "ops", "trace", "compiled", "sweep")

#: The agent's job methods (besides ``ping`` and ``shutdown``).
METHOD_NAMES: tuple[str, ...] = ("profile", "sweep", "asm", "inline", "ncu")


def error_kind(value: object) -> ErrorKind:
    """``value`` as an :data:`ErrorKind`; anything outside the set is ``internal``."""
    for kind in ERROR_KINDS:
        if value == kind:
            return kind
    return "internal"


_SUGGESTED_RE = re.compile(r"this directive above the def: (# kernel-lens: inputs = .+)$")


def suggested_directive_in(message: str) -> str | None:
    """The ``# kernel-lens: inputs = …`` line an ``inputs`` error's message ends with."""
    m = _SUGGESTED_RE.search(message)
    return m.group(1) if m else None


@dataclass
class ProfileError(Exception):
    """A failed job: ``kind``, a message, and the 1-based user line it belongs to."""

    kind: ErrorKind
    message: str
    line: int | None = None
    traceback: str | None = None
    #: For an ``inputs`` error: a ``# kernel-lens: inputs = …`` line to put above the def.
    suggested_directive: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {self.kind!r}")
        if self.suggested_directive is None and self.kind == "inputs":
            # The agent's and the client's error objects carry kind, message, line and
            # traceback only: the directive travels at the end of the message.
            self.suggested_directive = suggested_directive_in(self.message)

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind}: {self.message}{where}"

    def to_json(self) -> dict[str, Any]:
        """The ``{"kind", "message", "line", "traceback"}`` object of the CLI and the agent
        (plus ``suggested_directive`` when there is one)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "message": self.message,
            "line": self.line,
            "traceback": self.traceback,
        }
        if self.suggested_directive is not None:
            out["suggested_directive"] = self.suggested_directive
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> ProfileError:
        """From the agent's ``error`` object; an unknown kind becomes ``internal``."""
        line = obj.get("line")
        tb = obj.get("traceback")
        suggested = obj.get("suggested_directive")
        return cls(
            error_kind(obj.get("kind", "internal")),
            str(obj.get("message", "")),
            line if isinstance(line, int) else None,
            tb if isinstance(tb, str) else None,
            suggested if isinstance(suggested, str) else None,
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
    """

    method: ClassVar[str] = "profile"

    path: str
    text: str | None = None
    function: str | None = None
    line: int | None = None
    stages: tuple[str, ...] = DEFAULT_STAGES
    warmup_ms: float = 25.0
    budget_ms: float = 500.0
    reps: int = 0
    profile_runs: int = 3
    trace_dir: str | None = None
    keep_samples: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    script: bool = False


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
    """

    method: ClassVar[str] = "sweep"

    path: str
    function: str
    param: str
    text: str | None = None
    values: list[int] = field(default_factory=list)
    warmup_ms: float = 25.0
    budget_ms: float = 200.0
    reps: int = 0


@dataclass
class AsmRequest(JobRequest):
    """Compile ``@triton.jit`` kernels ahead of time (method ``asm``).

    Attributes:
        path: the file's path.
        text: the buffer text (``None``: read the file).
        kernel: one kernel's name; ``None``: every kernel of the file (result ``{"kernels": […]}``).
        arch: compute capability (``90``); ``None``: the GPU's, else 90.
        stage: with a stage (``ptx``…), ``asm``/``line_map`` hold that stage only.
    """

    method: ClassVar[str] = "asm"

    path: str
    text: str | None = None
    kernel: str | None = None
    arch: int | None = None
    stage: str | None = None


@dataclass
class InlineRequest(JobRequest):
    """What ``load_inline`` builds from a file (method ``inline``).

    Attributes:
        path: the file's path.
        text: the buffer text (``None``: read the file).
        arch: compute capability for the PTX.
        build: also build it with load_inline (its log and ``build.ninja``).
    """

    method: ClassVar[str] = "inline"

    path: str
    text: str | None = None
    arch: int = 90
    build: bool = False


@dataclass
class NcuRequest(JobRequest):
    """Nsight Compute on one function's kernels (method ``ncu``).

    Attributes:
        path: the file's path.
        function: ``func`` or ``Class.method``.
        text: the buffer text (``None``: read the file).
        set: ncu's section set: ``basic``, ``detailed`` or ``full``.
        timeout: seconds ncu may run.
    """

    method: ClassVar[str] = "ncu"

    path: str
    function: str
    text: str | None = None
    set: str = "basic"
    timeout: float = 600.0


@dataclass
class CompiledSide:
    """Eager or compiled: median time (ms), its spread (%), and kernels per call."""

    median_ms: float
    spread_pct: float
    kernels: float

    def to_json(self) -> dict[str, Any]:
        """``{"median_ms", "spread_pct", "kernels"}``."""
        return {"median_ms": self.median_ms, "spread_pct": self.spread_pct, "kernels": self.kernels}


@dataclass
class CompiledKernel:
    """One kernel of inductor's output module.

    Attributes:
        name: ``triton_poi_…``, ``cpp_fused_…`` or ``extern_kernels.mm``.
        kind: ``triton``, ``cpp`` or ``extern``.
        call_line: 1-based line of its call in the generated module.
        def_line: 1-based line of its definition there (``None`` for extern kernels).
        lines: the user's lines it fused.
        asm: CUDA only: the Triton kernel's PTX… from the Triton cache.
    """

    name: str
    kind: str
    call_line: int
    def_line: int | None = None
    lines: list[int] = field(default_factory=list)
    asm: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The kernel's JSON (``def_line`` and ``asm`` only when known)."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.def_line is not None:
            out["def_line"] = self.def_line
        out["call_line"] = self.call_line
        out["lines"] = self.lines
        if self.asm is not None:
            out["asm"] = self.asm
        return out


@dataclass
class CompiledResult:
    """The *compiled* stage: torch.compile's generated code and eager vs compiled numbers."""

    backend: str
    language: str
    code_path: str
    code: str
    provenance: bool
    kernels: list[CompiledKernel]
    eager: CompiledSide
    compiled: CompiledSide
    speedup: float | None
    summary: str

    def to_json(self) -> dict[str, Any]:
        """The ``compiled`` key of the profile result."""
        return {
            "backend": self.backend,
            "language": self.language,
            "code_path": self.code_path,
            "code": self.code,
            "provenance": self.provenance,
            "kernels": [k.to_json() for k in self.kernels],
            "eager": self.eager.to_json(),
            "compiled": self.compiled.to_json(),
            "speedup": self.speedup,
            "summary": self.summary,
        }


@dataclass
class SweepRow:
    """One value of a sweep: its timing, bytes moved and bandwidth; or the error it raised."""

    value: int
    median_ms: float | None = None
    spread_pct: float | None = None
    reps: int | None = None
    bytes: int | None = None
    gb_per_s: float | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"value", "error"}`` for a failed value, else every field."""
        if self.error is not None:
            return {"value": self.value, "error": self.error}
        return {
            "value": self.value,
            "median_ms": self.median_ms,
            "spread_pct": self.spread_pct,
            "reps": self.reps,
            "bytes": self.bytes,
            "gb_per_s": self.gb_per_s,
            "error": None,
        }


@dataclass
class SweepResult:
    """The *sweep* stage: each value's row, the best, and the timing method."""

    param: str
    current: Any
    rows: list[SweepRow]
    best_value: int
    best_median_ms: float
    method: str
    #: Values whose times equal the fastest's within noise (empty: the best is significantly
    #: faster than the runner-up), and the sentence that says so (issue 11).
    ties: list[int] = field(default_factory=list)
    verdict: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``sweep`` key of the profile result (``ties``/``verdict`` once judged)."""
        out: dict[str, Any] = {
            "param": self.param,
            "current": self.current,
            "rows": [r.to_json() for r in self.rows],
            "best": {"value": self.best_value, "median_ms": self.best_median_ms},
            "method": self.method,
        }
        if self.verdict is not None:
            out["ties"] = list(self.ties)
            out["verdict"] = self.verdict
        return out


@dataclass
class InlineModule:
    """One ``load_inline(...)`` call: generated sources, PTX and its line map, errors, build."""

    name: str
    call_line: int
    arch: str
    nvcc: str
    files: dict[str, str | None]
    ptx: str | None = None
    line_map: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    build_log: str | None = None
    build_directory: str | None = None
    ptx_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The module's JSON (``ptx_seconds`` only when the CUDA source was compiled)."""
        out: dict[str, Any] = {
            "name": self.name,
            "call_line": self.call_line,
            "arch": self.arch,
            "nvcc": self.nvcc,
            "files": self.files,
            "ptx": self.ptx,
            "line_map": self.line_map,
            "errors": self.errors,
            "build_log": self.build_log,
            "build_directory": self.build_directory,
        }
        if self.ptx_seconds is not None:
            out["ptx_seconds"] = self.ptx_seconds
        return out


@dataclass
class InlineResult:
    """The *inline_ext* stage: every ``load_inline`` call of a file."""

    path: str
    modules: list[InlineModule]

    def to_json(self) -> dict[str, Any]:
        """``{"path", "modules"}``."""
        return {"path": self.path, "modules": [m.to_json() for m in self.modules]}


@dataclass
class NcuResult:
    """The *ncu* stage: the report file and each kernel's metrics, hints and source line."""

    report_path: str
    set: str
    reader: str
    kernels: list[dict[str, Any]]
    ncu_log: str

    def to_json(self) -> dict[str, Any]:
        """``{"report_path", "set", "reader", "kernels", "ncu_log"}``."""
        return {
            "report_path": self.report_path,
            "set": self.set,
            "reader": self.reader,
            "kernels": self.kernels,
            "ncu_log": self.ncu_log,
        }


@dataclass
class InputArg:
    """One input of the profiled call, described (never the value itself)."""

    name: str
    type: str
    shape: list[int] | None = None
    dtype: str | None = None
    device: str | None = None
    repr: str = ""

    def to_json(self) -> dict[str, Any]:
        """``{"name", "type", "shape", "dtype", "device", "repr"}``."""
        return dataclasses.asdict(self)

    def label(self) -> str:
        """``Tensor float32[10000, 10000] cuda:0``, else the short repr."""
        if self.shape is not None:
            dims = ", ".join(str(d) for d in self.shape)
            return f"{self.type} {self.dtype}[{dims}] {self.device}".rstrip()
        return f"{self.type} {self.repr}".rstrip()


@dataclass
class InputsInfo:
    """Where the profiled call's inputs came from (the result's ``inputs`` object).

    Attributes:
        source: ``captured`` (the script's own first call), ``directive``, ``factory``
            (``<name>_inputs()``) or ``none`` (no parameters).
        line: the captured call's line, the directive's line or the factory's def line.
        label: ``directive``, ``square_inputs()``, ``captured``, ``none`` (the old string).
        call: for ``captured``: the caller chain inside the file (``time_fn → square_2``).
        setup_s: for ``captured``: how long the script ran before the call.
        args: each input.
        self_: for methods: ``{"class", "how", "made_at"}``.
    """

    source: Literal["captured", "directive", "factory", "none"]
    label: str
    line: int | None = None
    call: str | None = None
    setup_s: float | None = None
    args: list[InputArg] = field(default_factory=list)
    self_: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The result's ``inputs`` object."""
        out: dict[str, Any] = {
            "source": self.source,
            "label": self.label,
            "line": self.line,
            "call": self.call,
            "setup_s": self.setup_s,
            "args": [a.to_json() for a in self.args],
        }
        if self.self_ is not None:
            out["self"] = self.self_
        return out
