"""``%%kernel_lens`` and ``%kernel_lens``: profile a cell, or one call, in the running kernel.

``%load_ext kernel_lens`` registers the magic (see :func:`kernel_lens.load_ipython_extension`).
It runs in the user's own Jupyter (or terminal IPython) kernel, so it sees the notebook's live
state — no agent, no re-run of the cells above — and uses the agent's engine pieces unchanged:

* **a cell** (``%%kernel_lens`` on its first line): the cell's text is compiled under a pseudo
  file name registered in :mod:`linecache` (tracebacks and line numbers are the cell's) and run
  **once** in the user's namespace, as a normal run would (its assignments stay). Then it is
  timed over repeated runs with :func:`~kernel_lens.agent.stages.timing.time_function` and run
  in one profiled pass with each of its lines tagged
  (:func:`~kernel_lens.agent.stages.ops.profile_pass`). Those further runs read the user's
  namespace but write into a scratch one (as ``%%timeit`` does), so the namespace holds the
  results of the one normal run; in-place changes (``x.add_(1)``, ``list.append``) do repeat.
* **a call** (``%kernel_lens f(x)``): the callee and its arguments are evaluated once, the call
  is made once (warm-up), timed and profiled, each line of the called function tagged (its own
  code object, through ``functools.wraps``; an ``nn.Module`` gives its ``forward``). A callee
  without Python source (a builtin, ``torch.mm``) gets everything on the call's own line.

Timing is never under the profiler: CUDA events with an L2 flush on a GPU, ``perf_counter`` on
a CPU, median ± half the interquartile range. The output is an HTML table in Jupyter and text
in a terminal IPython (one object with both representations, rendered by
:mod:`kernel_lens.analysis.report_html` and :mod:`~kernel_lens.analysis.report_text`), with the
trace file's path. The magic's value is that object (``.result`` is the CLI's ``--json``
object). Options: ``--reps N`` (fixed timed repetitions; default adaptive), ``--budget-ms M``
(timing budget, default 500), ``--warmup-ms W`` (default 25), ``--runs R`` (profiled runs,
default 3).

A failure of the user's code shows as that code's normal traceback (the magic's own frames left
out); a profiler is never left running.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import linecache
import os
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernel_lens.analysis.report_html import format_profile_html
from kernel_lens.analysis.report_text import format_profile
from kernel_lens.wire.lsp import DEFAULT_BUDGET_MS, DEFAULT_WARMUP_MS

__all__ = [
    "KernelLensMagic",
    "MagicOptions",
    "ProfileView",
    "load_ipython_extension",
    "parse_options",
    "profile_call",
    "profile_cell",
]

#: The magic's name: ``%%kernel_lens`` / ``%kernel_lens``.
MAGIC_NAME = "kernel_lens"
#: Label of a cell's result (its ``function``).
CELL_LABEL = "cell"
#: Kernel Lens's package folder: frames under it (the magic's, the agent's stages') are cut
#: from the user's traceback.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_USAGE = (
    "usage: %%kernel_lens [--reps N] [--budget-ms M] [--warmup-ms W] [--runs R] on a cell's "
    "first line, or %kernel_lens [options] f(x) on one call"
)


class MagicUsageError(ValueError):
    """Bad options or a line that is not a call (shown as IPython's ``UsageError``)."""


@dataclass(frozen=True)
class MagicOptions:
    """The magic's options (the agent's ``ProfileRequest`` defaults).

    Attributes:
        reps: fixed timed repetitions; 0 = adaptive within ``budget_ms``.
        budget_ms: timing budget, milliseconds.
        warmup_ms: timing warm-up, milliseconds.
        runs: runs inside the profiler for the per-line ops (numbers are per run).
    """

    reps: int = 0
    budget_ms: float = DEFAULT_BUDGET_MS
    warmup_ms: float = DEFAULT_WARMUP_MS
    runs: int = 3


_OPTION_RE = re.compile(r"\s*--(?P<name>[a-z][a-z-]*)(?:=|\s+)(?P<value>[^\s]+)")
_INT_OPTIONS = {"reps": "reps", "runs": "runs"}
_FLOAT_OPTIONS = {"budget-ms": "budget_ms", "warmup-ms": "warmup_ms"}


def parse_options(line: str) -> tuple[MagicOptions, str]:
    """Leading ``--name value`` options of a magic line, and the rest (the call). Pure.

    Raises:
        MagicUsageError: an unknown option or a value that is not a positive number.
    """
    values: dict[str, Any] = {}
    rest = line
    while rest.lstrip().startswith("--"):
        match = _OPTION_RE.match(rest)
        if match is None:
            raise MagicUsageError(f"{rest.strip().split()[0]} needs a value; {_USAGE}")
        name, raw = match.group("name"), match.group("value")
        try:
            if name in _INT_OPTIONS:
                value: float = int(raw)
                key = _INT_OPTIONS[name]
            elif name in _FLOAT_OPTIONS:
                value = float(raw)
                key = _FLOAT_OPTIONS[name]
            else:
                raise MagicUsageError(f"unknown option --{name}; {_USAGE}")
        except ValueError as exc:
            if isinstance(exc, MagicUsageError):
                raise
            raise MagicUsageError(f"--{name} takes a number, not {raw!r}") from None
        if value < (0 if name == "reps" else 1e-9) or value != value:
            raise MagicUsageError(f"--{name} must be positive, not {raw}")
        values[key] = value
        rest = rest[match.end() :]
    return MagicOptions(**values), rest.strip()


def _register_source(text: str, stem: str) -> str:
    """A pseudo file name for ``text``, registered in :mod:`linecache` (so tracebacks,
    ``inspect.getsource`` and the result's source column read the cell)."""
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    filename = f"<kernel_lens-{stem}-{digest}>"
    # mtime None: linecache.checkcache leaves the entry alone (as IPython's own cells).
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    return filename


def _user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without its leading Kernel Lens frames: the user's code's own traceback."""
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        tb = tb.tb_next
    return tb


class UserCodeError(Exception):
    """The user's code raised (or exited): ``original`` carries its trimmed traceback."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original.with_traceback(_user_traceback(original.__traceback__))


def _guard(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        raise UserCodeError(exc) from None


def _trace_dir() -> str:
    from kernel_lens.wire.paths import CacheDirs

    return CacheDirs.from_env().traces


def _measure(
    call: Callable[[], Any],
    code: types.CodeType,
    *,
    options: MagicOptions,
    label: str,
    source_of: Callable[[int], str],
    first_line: int,
    last_line: int,
    only_with_ops: bool = False,
) -> dict[str, Any]:
    """Time ``call`` (already called once), then one profiled pass with ``code``'s lines
    tagged: the device and the ``timing``, ``lines``, ``kernels`` and trace keys of a result
    (a cell's lines that ran no op, ``import``/``def``, left out with ``only_with_ops``)."""
    import torch

    from kernel_lens.agent.results import device_of_run, line_results
    from kernel_lens.agent.stages.ops import profile_pass
    from kernel_lens.agent.stages.timing import TimingConfig, time_function

    device, device_name = device_of_run()
    if device == "cuda":
        torch.cuda.synchronize()
    config = TimingConfig(
        warmup_ms=options.warmup_ms, budget_ms=options.budget_ms, reps=options.reps
    )
    timing = _guard(lambda: time_function(call, device=device, config=config))
    passed = _guard(
        lambda: profile_pass(
            call, code, device=device, runs=options.runs, trace_dir=_trace_dir(), label=label
        )
    )
    return {
        "device": device_name,
        "device_kind": device,
        "timing": timing.to_json(with_samples=True),
        "trace_path": passed.trace_path,
        **({"trace_error": passed.trace_error} if passed.trace_error else {}),
        "profiled_runs": passed.runs,
        **line_results(
            passed.trace,
            runs=passed.runs,
            source_of=source_of,
            within=(first_line, last_line),
            only_with_ops=only_with_ops,
        ),
    }


def profile_cell(
    cell: str,
    user_global_ns: dict[str, Any],
    user_ns: dict[str, Any],
    *,
    options: MagicOptions | None = None,
    name: str = CELL_LABEL,
) -> dict[str, Any]:
    """Run a cell once in the user's namespace, then time it and profile each of its lines.

    Args:
        cell: the cell's Python text (IPython syntax already transformed).
        user_global_ns: the namespace the cell's globals are (IPython's ``user_global_ns``).
        user_ns: the namespace its first run writes (IPython's ``user_ns``).
        options: timing and profiling options.
        name: the cell's label in the result and the trace file's name.

    Returns:
        A result object like the CLI's ``--json`` one: ``function`` (``cell``), ``path`` (the
        pseudo file name), ``timing`` (one run of the cell), ``lines`` (the cell's lines),
        ``kernels``, ``trace_path``.

    Raises:
        SyntaxError: the cell does not compile (its file name is the pseudo one).
        UserCodeError: the cell raised, in its first run or a later one.
    """
    options = options or MagicOptions()
    filename = _register_source(cell, name)
    code = compile(cell, filename, "exec", dont_inherit=True)
    _guard(lambda: exec(code, user_global_ns, user_ns))

    def again() -> None:
        # Later runs read the user's names, write a scratch namespace (as %%timeit).
        exec(code, user_global_ns, {})

    source = cell.splitlines()
    last = max(1, len(source))

    def source_of(no: int) -> str:
        return source[no - 1].strip() if 1 <= no <= len(source) else ""

    measured = _measure(
        again,
        code,
        options=options,
        label=re.sub(r"[^\w-]", "_", name),
        source_of=source_of,
        first_line=1,
        last_line=last,
        only_with_ops=True,
    )
    return _result(
        measured,
        function=name,
        path=filename,
        def_line=1,
        first_line=1,
        last_line=last,
        inputs={"source": "none", "label": "the kernel's live namespace", "args": []},
        call_style="cell",
    )


def _result(measured: dict[str, Any], **head: Any) -> dict[str, Any]:
    """The result object of a cell or a call (the agent's builder, so its keys and their order
    are the CLI's): ``head`` (what ran), then what :func:`_measure` measured."""
    from kernel_lens.agent.results import profile_result

    parts = dict(measured)
    device, device_kind = parts.pop("device"), parts.pop("device_kind")
    return profile_result(
        **head,
        device=device,
        device_kind=device_kind,
        stages=["timing", "ops", "trace"],
        **parts,
    )


def _target_code(fn: Any) -> types.CodeType | None:
    """The Python code object a call of ``fn`` runs: through ``functools.wraps``, bound methods,
    an ``nn.Module``'s ``forward`` and a callable object's ``__call__``; ``None`` for a builtin."""
    seen = 0
    while seen < 20:
        seen += 1
        fn = inspect.unwrap(fn)
        if isinstance(fn, types.MethodType):
            fn = fn.__func__
            continue
        if isinstance(fn, types.FunctionType):
            return fn.__code__
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(fn, torch.nn.Module):
            # Module.__call__ runs hooks, then forward: forward's lines are the user's.
            forward = getattr(type(fn), "forward", None)
            if isinstance(forward, types.FunctionType):
                return forward.__code__
        for klass in type(fn).__mro__:
            call = vars(klass).get("__call__")
            if isinstance(call, types.FunctionType):
                return call.__code__
        return None
    return None


def _parse_call(expr: str, filename: str) -> ast.Call:
    tree = ast.parse(expr, filename, mode="eval")
    if not isinstance(tree.body, ast.Call):
        raise MagicUsageError(f"%kernel_lens profiles one call, like f(x); got {expr!r}")
    return tree.body


def _evaluate_call(
    expr: str, filename: str, user_global_ns: dict[str, Any], user_ns: dict[str, Any]
) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The callee, positional and keyword arguments of the call ``expr``, each evaluated once
    in the user's namespaces (the call itself not made).

    Raises:
        MagicUsageError: ``expr`` is not a call.
        UserCodeError: evaluating the callee or an argument raised.
    """
    call_node = _parse_call(expr, filename)
    pack = "__kernel_lens_pack__"
    packed = ast.Expression(
        ast.Call(
            func=ast.Name(pack, ast.Load()),
            args=[call_node.func, *call_node.args],
            keywords=call_node.keywords,
        )
    )
    ast.copy_location(packed.body, call_node)
    ast.fix_missing_locations(packed)
    packer = compile(packed, filename, "eval", dont_inherit=True)

    def pack_args(*args: Any, **kwargs: Any) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
        return args[0], args[1:], kwargs

    local_ns = {**user_ns, pack: pack_args}
    packed_call: tuple[Any, tuple[Any, ...], dict[str, Any]] = _guard(
        lambda: eval(packer, user_global_ns, local_ns)
    )
    return packed_call


@dataclass(frozen=True)
class _Callee:
    """What a profiled call runs, and the lines it is tagged with.

    Attributes:
        path: the file (or pseudo file) of the lines.
        first_line: the first of the lines.
        last_line: the last of the lines.
        tagged: the code object whose lines are tagged.
        source_of: a line's text by its number.
        call: makes the call once.
    """

    path: str
    first_line: int
    last_line: int
    tagged: types.CodeType
    source_of: Callable[[int], str]
    call: Callable[[], Any]


def _callee(
    code: types.CodeType | None,
    runner: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    expr: str,
    filename: str,
) -> _Callee:
    """The callee's own lines (``code``'s source), or, for a callee without Python source of
    its own (a builtin, ``torch.mm``), one line — the call's — under a tiny code object."""
    if code is not None and not code.co_filename.startswith("<kernel_lens-call"):
        try:
            body, start = inspect.getsourcelines(code)
        except (OSError, TypeError):
            body, start = [], code.co_firstlineno

        def source_of(no: int) -> str:
            return body[no - start].strip() if start <= no < start + len(body) else ""

        def call() -> Any:
            return runner(*args, **kwargs)

        last = start + max(1, len(body)) - 1
        return _Callee(code.co_filename, start, last, code, source_of, call)
    tagged = compile("f(*a, **k)", filename, "eval", dont_inherit=True)
    holder = {"f": runner, "a": args, "k": kwargs}

    def one_line(no: int) -> str:
        return expr.strip() if no == 1 else ""

    def call_in_line() -> Any:
        return eval(tagged, holder)

    return _Callee(filename, 1, 1, tagged, one_line, call_in_line)


def profile_call(
    expr: str,
    user_global_ns: dict[str, Any],
    user_ns: dict[str, Any],
    *,
    options: MagicOptions | None = None,
) -> dict[str, Any]:
    """Profile one call ``f(args)``: the callee and arguments are evaluated once, the call made
    once (warm-up), then timed and profiled with each line of the callee tagged.

    Args:
        expr: the call's text, e.g. ``square(x)`` or ``model(x)``.
        user_global_ns: globals the expression is evaluated in.
        user_ns: locals the expression is evaluated in.
        options: timing and profiling options.

    Returns:
        The result object (see :func:`profile_cell`); ``function`` is the callee's qualified
        name, ``lines`` its source lines (by their line numbers in the file or cell that
        defined it).

    Raises:
        MagicUsageError: ``expr`` is not a call.
        SyntaxError: it does not parse.
        UserCodeError: evaluating the callee or arguments, or the call, raised.
    """
    from kernel_lens.agent.usercode import call_style, with_call_style

    options = options or MagicOptions()
    filename = _register_source(expr, "call")
    fn, args, kwargs = _evaluate_call(expr, filename, user_global_ns, user_ns)
    code = _target_code(fn)
    label = getattr(inspect.unwrap(fn), "__qualname__", None) or type(fn).__qualname__
    runner = with_call_style(fn) if code is not None and call_style(code) != "called" else fn

    callee = _callee(code, runner, args, kwargs, expr, filename)
    _guard(callee.call)
    first, last = callee.first_line, callee.last_line
    measured = _measure(
        callee.call,
        callee.tagged,
        options=options,
        label=re.sub(r"[^\w-]", "_", str(label)),
        source_of=callee.source_of,
        first_line=first,
        last_line=last,
    )
    return _result(
        measured,
        function=str(label),
        path=callee.path,
        def_line=first,
        first_line=first,
        last_line=last,
        inputs={"source": "call", "label": expr.strip(), "args": []},
        call_style=call_style(code) if code is not None else "called",
    )


class ProfileView:
    """A magic's result: HTML in Jupyter, text in a terminal IPython.

    Attributes:
        result: the result object (the CLI's ``--json`` shape).
    """

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result

    def _repr_html_(self) -> str:
        return format_profile_html(self.result)

    def __repr__(self) -> str:
        return format_profile(self.result)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(format_profile(self.result))


class KernelLensMagic:
    """The ``kernel_lens`` line-and-cell magic of one IPython shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, line: str, cell: str | None = None) -> ProfileView | None:
        """``%%kernel_lens [options]`` over a cell, or ``%kernel_lens [options] f(x)``."""
        from IPython.core.error import UsageError

        try:
            options, rest = parse_options(line)
            if cell is None and not rest:
                raise MagicUsageError(_USAGE)
            if cell is not None and rest:
                raise MagicUsageError(f"unexpected {rest!r} after the options; {_USAGE}")
        except MagicUsageError as exc:
            raise UsageError(str(exc)) from None
        shell = self.shell
        try:
            if cell is not None:
                text = shell.transform_cell(cell)
                count = getattr(shell, "execution_count", 0)
                result = profile_cell(
                    text,
                    shell.user_global_ns,
                    shell.user_ns,
                    options=options,
                    name=f"{CELL_LABEL}-{count}",
                )
            else:
                result = profile_call(rest, shell.user_global_ns, shell.user_ns, options=options)
        except MagicUsageError as exc:
            raise UsageError(str(exc)) from None
        except SyntaxError as exc:
            __tracebackhide__ = True  # noqa: F841
            raise exc.with_traceback(None) from None
        except UserCodeError as exc:
            # Raised again, so that the cell fails (Run All stops there); the frames above the
            # user's code (IPython's, this magic's) are hidden from IPython's traceback.
            __tracebackhide__ = True  # noqa: F841
            raise exc.original from None
        return ProfileView(result)


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%kernel_lens`` / ``%kernel_lens`` on ``ipython`` (``%load_ext kernel_lens``)."""
    ipython.register_magic_function(
        KernelLensMagic(ipython), magic_kind="line_cell", magic_name=MAGIC_NAME
    )
