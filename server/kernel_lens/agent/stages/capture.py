"""Inputs taken from the script's own run.

For a function with parameters and neither a directive nor ``<name>_inputs()``, the file runs
as ``python FILE`` would (``__name__ == "__main__"``, ``sys.argv == [FILE]``, the file's folder
as the current folder and first on ``sys.path``) under a profile hook that watches the target's
code object. At the target's first call — from module level, from the ``__main__`` block,
through a helper (``time_fn(square_2, b)``) or through ``nn.Module.__call__`` — the hook takes
the call's arguments and raises :class:`_Captured`, which stops the script there: the rest of
it never runs. The module the script ran in is the one the stages profile. A driver script
(``--from DRIVER``) runs the same way, the target's file loaded from the editor's buffer
wherever the driver imports it from. Both runs are
:func:`kernel_lens.agent.usercode.run_until`'s (the Triton stage's launches are caught by the
same), with this module's watch.

Python 3.12+ watches with ``sys.monitoring`` (``PY_START``), older versions with
``sys.setprofile``: on both, an exception raised by the callback at the target's start
propagates out of its frame. Only the main thread is watched.
"""

from __future__ import annotations

import os
import sys
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kernel_lens.agent.context import CallContext, snapshot
from kernel_lens.agent.errors import format_exception, user_line_from_traceback
from kernel_lens.agent.usercode import (
    NEEDS_GPU_MESSAGE,
    RunEnd,
    compile_text,
    import_failure,
    needs_gpu,
    read_source,
    run_until,
)
from kernel_lens.analysis.functions import FunctionInfo
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.results import InputArg

__all__ = [
    "Capture",
    "describe_value",
    "find_code",
    "run_driver_until_call",
    "run_until_call",
    "suggested_directive",
]

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08
# torch.compile's wrapper: Dynamo runs the function's frame as transformed code, so the
# target's own code object never starts; the wrapper (``_fn`` or ``compile_wrapper``, by torch
# version: a closure over ``fn``, called with ``*args, **kwargs``) holds the call instead.
_DYNAMO_FILE = os.path.join("_dynamo", "eval_frame.py")


class _Captured(BaseException):
    """Raised by the hook once the target's arguments are taken (never seen by the user)."""


@dataclass
class Capture:
    """The script's first call of the target.

    Attributes:
        module: the namespace the script ran in (``__name__ == "__main__"``).
        args: positional arguments as the code object received them (``self`` first for a
            method).
        kwargs: keyword-only arguments and ``**kwargs``.
        line: the line of the file the call came from (the outermost line of the file on the
            stack: the module-level statement that led to it).
        call: the callers inside the file, outermost first, ending with the target.
        setup_s: seconds the script ran before the call.
        context: torch's state at the call (autocast, grad mode, backends flags, matmul
            precision, device): every stage replays it.
        driver: the driver script the call came from (``--from``), ``None`` for the file's
            own run; then ``line`` is the driver's line and ``call`` starts with its text.
    """

    module: types.ModuleType
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    line: int | None
    call: str
    setup_s: float
    context: CallContext | None = None
    driver: str | None = None


def find_code(code: types.CodeType, qualname: str, def_line: int) -> types.CodeType | None:
    """The code object of ``qualname`` compiled in ``code`` (the one closest above
    ``def_line`` when the name is defined more than once)."""
    best: types.CodeType | None = None
    stack = [code]
    while stack:
        current = stack.pop()
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                if const.co_qualname == qualname and const.co_firstlineno <= def_line:
                    if best is None or const.co_firstlineno > best.co_firstlineno:
                        best = const
                stack.append(const)
    return best


def _frame_args(frame: types.FrameType) -> tuple[tuple[Any, ...], dict[str, Any]]:
    code = frame.f_code
    local = frame.f_locals
    names = code.co_varnames
    n_pos = code.co_argcount
    n_kw = code.co_kwonlyargcount
    args: list[Any] = [local[n] for n in names[:n_pos] if n in local]
    kwargs: dict[str, Any] = {n: local[n] for n in names[n_pos : n_pos + n_kw] if n in local}
    index = n_pos + n_kw
    if code.co_flags & _CO_VARARGS:
        args.extend(local.get(names[index], ()))
        index += 1
    if code.co_flags & _CO_VARKEYWORDS:
        kwargs.update(local.get(names[index], {}))
    return tuple(args), kwargs


def _unwrap(obj: Any) -> types.CodeType | None:
    """The code object under ``functools.wraps`` layers (``None`` for anything else)."""
    for _ in range(20):
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is None:
            break
        obj = wrapped
    code = getattr(getattr(obj, "__func__", obj), "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _is_dynamo_wrapper(code: types.CodeType) -> bool:
    return "fn" in code.co_freevars and code.co_filename.endswith(_DYNAMO_FILE)


class _Watch:
    """While entered, calls ``take(frame)`` at the start of Python frames (the run's watch for
    :func:`~kernel_lens.agent.usercode.run_until`); on leaving, :attr:`replaced` says whether
    the script had replaced it (``sys.setprofile`` only).

    Python 3.12+: ``sys.monitoring`` ``PY_START`` (every other code object is disabled after
    its first start, so the script runs at full speed, and a profiler the script starts does
    not remove the watch); else ``sys.setprofile``."""

    def __init__(
        self,
        take: Callable[[types.FrameType], None],
        is_target: Callable[[types.CodeType], bool],
    ) -> None:
        self._take = take
        self._is_target = is_target
        self._tool: int | None = None
        self._monitoring: Any = getattr(sys, "monitoring", None)
        self.replaced = False

    def __enter__(self) -> _Watch:
        monitoring = self._monitoring
        if monitoring is not None:
            free = [t for t in (monitoring.PROFILER_ID, 3, 4) if monitoring.get_tool(t) is None]
            if free:
                self._tool = free[0]
                monitoring.use_tool_id(self._tool, "kernel-lens capture")
                monitoring.register_callback(self._tool, monitoring.events.PY_START, self._on_start)
                monitoring.set_events(self._tool, monitoring.events.PY_START)
                return self
        self._previous = sys.getprofile()
        sys.setprofile(self._on_profile)
        return self

    def __exit__(self, *exc: object) -> None:
        self.replaced = self.stop()

    def _on_start(self, code: types.CodeType, offset: int) -> Any:
        if not self._is_target(code) and not _is_dynamo_wrapper(code):
            return self._monitoring.DISABLE
        self._take(sys._getframe(1))
        return None

    def _on_profile(self, frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call":
            self._take(frame)

    def stop(self) -> bool:
        """Remove the watch; whether the script had replaced it (``sys.setprofile`` only)."""
        if self._tool is not None:
            monitoring = self._monitoring
            monitoring.set_events(self._tool, 0)
            monitoring.register_callback(self._tool, monitoring.events.PY_START, None)
            monitoring.restart_events()
            monitoring.free_tool_id(self._tool)
            self._tool = None
            return False
        replaced = sys.getprofile() != self._on_profile
        sys.setprofile(self._previous)
        return replaced


def _call_site(frame: types.FrameType, path: str) -> tuple[int | None, str]:
    chain: list[str] = []
    line: int | None = None
    current: types.FrameType | None = frame
    while current is not None:
        if current.f_code.co_filename == path:
            if current.f_code.co_name == "<module>":
                line = current.f_lineno
            else:
                chain.append(current.f_code.co_qualname)
                if current is not frame:
                    line = current.f_lineno
        current = current.f_back
    return line, " → ".join(reversed(chain))


def _argv_problem(exc: BaseException) -> str | None:
    """The command-line reader a ``SystemExit`` came out of (argparse, click, fire, typer,
    hydra, configurator.py…: the script wants other arguments), ``None`` for a script's own
    exit."""
    from kernel_lens.analysis.script_args import exit_reader

    return exit_reader(f.filename for f in traceback.extract_tb(exc.__traceback__))


def suggested_directive(info: FunctionInfo, text: str | None = None) -> str:
    """A ``# kernel-lens: inputs = …`` line built from the function's type hints, defaults and
    parameter names, without running it (a value chosen from a name says it is a guess); see
    :func:`kernel_lens.agent.stages.suggest.checked_directive` for the one that is run."""
    from kernel_lens.agent.stages.suggest import unchecked_directive

    return unchecked_directive(info, text)


#: ``(info, text, path, module) -> directive``: the suggestion for a function the run never
#: called, checked in the namespace the run left (the target stage passes one that runs it).
SuggestFn = Callable[[FunctionInfo, str, str, "types.ModuleType | None"], str]


def _checked(
    suggest: SuggestFn | None,
    info: FunctionInfo,
    text: str,
    path: str,
    module: types.ModuleType | None,
) -> str:
    if suggest is None:
        return suggested_directive(info, text)
    return suggest(info, text, path, module)


def _loaded_from(real_path: str) -> types.ModuleType | None:
    """The module in ``sys.modules`` loaded from ``real_path``, if any."""
    for mod in list(sys.modules.values()):
        file = getattr(mod, "__file__", None)
        if file and os.path.realpath(file) == real_path:
            return mod
    return None


#: A call the watch took: its frame, its arguments and torch's state at it.
_Seen = tuple[types.FrameType, tuple[Any, ...], dict[str, Any], CallContext]


def _first_call(
    is_target: Callable[[types.CodeType], bool], seen: list[_Seen]
) -> Callable[[types.FrameType], None]:
    """The watch's ``take``: at the target's call (``is_target`` of its code object, or of the
    function a torch.compile wrapper holds), keep the call's arguments in ``seen`` and raise
    :class:`_Captured`, which stops the run there."""

    def take(frame: types.FrameType) -> None:
        code = frame.f_code
        if is_target(code):
            args, kwargs = _frame_args(frame)
        elif _is_dynamo_wrapper(code):
            local = frame.f_locals
            inner = _unwrap(local.get("fn"))
            if inner is None or not is_target(inner):
                return
            args, kwargs = tuple(local.get("args", ())), dict(local.get("kwargs", {}))
        else:
            return
        seen.append((frame, args, kwargs, snapshot()))
        raise _Captured

    return take


def run_until_call(
    path: str,
    text: str,
    code: types.CodeType,
    target_code: types.CodeType,
    info: FunctionInfo,
    *,
    suggest: SuggestFn | None = None,
) -> Capture:
    """Run the compiled file ``code`` as ``__main__`` until ``target_code``'s first call.

    Raises:
        ProfileError: ``inputs`` on the def line (with ``suggested_directive``) when the script
            ends, exits or raises before calling the target; ``interrupted`` on Ctrl-C.
    """
    seen: list[_Seen] = []

    def is_target(code: types.CodeType) -> bool:
        return code is target_code

    watch = _Watch(_first_call(is_target, seen), is_target)
    end = run_until(path, code, _Captured, watch=watch)
    if seen:
        frame, args, kwargs, context = seen[0]
        line, chain = _call_site(frame, path)
        if frame.f_code is not target_code:
            chain = f"{chain} → {target_code.co_qualname}" if chain else target_code.co_qualname
        del seen[:]
        return Capture(end.module, args, kwargs, line, chain, round(end.elapsed_s, 3), context)
    raise _script_missed_call(end, watch.replaced, path, text, info, suggest)


def _needs_gpu(
    failure: BaseException, label: str, where: str, name: str, line: int | None
) -> ProfileError | None:
    """An ``unsupported`` error on ``line`` when the run (``label``: ``the script``, a driver's
    name) failed asking for CUDA on a machine without it, before calling ``name``."""
    if not isinstance(failure, Exception) or not needs_gpu(str(failure)):
        return None
    return ProfileError(
        "unsupported",
        f"{NEEDS_GPU_MESSAGE} ({label} raised {type(failure).__name__}: {failure}{where}, "
        f"before calling {name})",
        line,
        format_exception(failure),
    )


def _how_it_ended(
    failure: BaseException,
    label: str,
    where: str,
    elapsed: float,
    name: str,
    needs_args: Callable[[str, str], str],
) -> str:
    """The run's own ending in words: it exited or raised (``where``: at which line) before
    calling ``name``; an exit of a command-line reader (argparse, click…) is worded by
    ``needs_args(reader, status)``."""
    if isinstance(failure, SystemExit):
        status = "" if failure.code is None else repr(failure.code)
        reader = _argv_problem(failure)
        if reader:
            return needs_args(reader, status)
        return f"{label} exited (sys.exit({status})){where} before calling {name}"
    return (
        f"{label} raised {type(failure).__name__}: {failure}{where} after {elapsed:.1f} s, "
        f"before calling {name}"
    )


def _script_missed_call(
    end: RunEnd,
    replaced: bool,
    path: str,
    text: str,
    info: FunctionInfo,
    suggest: SuggestFn | None,
) -> ProfileError:
    """Why the file's own run ended without calling the function, with the directive to use
    instead (on the def line; the script's own line for Ctrl-C and a missing GPU)."""
    name = info.qualname
    failure, elapsed = end.failure, end.elapsed_s
    if failure is not None:
        failed = import_failure(failure, path, f"the script (before calling {name})")
        if failed is not None:  # a module it imports is missing: no directive can help
            return failed
    fix = _checked(suggest, info, text, path, end.module)
    missed = (
        " (a call Kernel Lens could see: the script replaced the profile hook that watches for "
        "it, with sys.setprofile or a profiler such as torch.profiler)"
    )
    factory = info.qualname.replace(".", "_") + "_inputs()"
    hint = f"; define {factory} returning the inputs, or add this directive above the def: {fix}"
    if failure is None:
        why = f"the script ran to its end ({elapsed:.1f} s) without calling {name}"
        why += missed if replaced else ""
        return ProfileError("inputs", why + hint, info.def_line, suggested_directive=fix)
    if isinstance(failure, KeyboardInterrupt):
        return ProfileError(
            "interrupted",
            f"the script raised KeyboardInterrupt before calling {name}",
            user_line_from_traceback(failure.__traceback__, path),
            format_exception(failure),
        )
    at = user_line_from_traceback(failure.__traceback__, path)
    where = f" at line {at}" if at else ""
    # The script itself needs CUDA before it reaches the function: said on its line.
    gpu = _needs_gpu(failure, "the script", where, name, at or info.def_line)
    if gpu is not None:
        return gpu

    def needs_args(reader: str, status: str) -> str:
        return (
            f"the script needs command-line arguments: {reader} exited (sys.exit({status})) "
            f"{where.strip()} after {elapsed:.1f} s, before calling {name} "
            "(Kernel Lens runs it as `python FILE`, with no arguments)"
        )

    why = _how_it_ended(failure, "the script", where, elapsed, name, needs_args)
    return ProfileError(
        "inputs",
        why + (missed if replaced else "") + hint,
        info.def_line,
        format_exception(failure),
        suggested_directive=fix,
    )


def describe_value(name: str, value: Any) -> InputArg:
    """What the inputs description shows of one argument (type, shape, dtype, device)."""
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    device = getattr(value, "device", None)
    try:
        text = repr(value)
    except Exception:
        text = f"<{kind}>"
    text = " ".join(text.split())
    if len(text) > 60:
        text = text[:57] + "…"
    if shape is not None and dtype is not None:
        try:
            dims = [int(d) for d in shape]
        except (TypeError, ValueError):
            dims = None
        if dims is not None:
            return {
                "name": name,
                "type": "Tensor" if kind in ("Tensor", "Parameter") else kind,
                "shape": dims,
                "dtype": str(dtype).removeprefix("torch."),
                "device": str(device) if device is not None else None,
                "repr": text,
            }
    return {"name": name, "type": kind, "shape": None, "dtype": None, "device": None, "repr": text}


def _driver_site(frame: types.FrameType, driver: str, target: str) -> tuple[int | None, str]:
    """The driver's innermost line on the stack and the chain from its text to the target
    (``model(X, Y) → GPT.forward → Block.forward → CausalSelfAttention.forward``)."""
    import linecache

    from kernel_lens.agent.stages.deep import is_workspace_file

    roots = [os.path.dirname(driver), os.path.dirname(target)]
    chain: list[str] = []
    line: int | None = None
    text = ""
    current: types.FrameType | None = frame.f_back
    while current is not None:
        filename = current.f_code.co_filename
        if filename == driver:
            line = current.f_lineno
            text = linecache.getline(driver, line).strip()
            break
        if is_workspace_file(filename, roots) and current.f_code.co_name != "<module>":
            chain.append(current.f_code.co_qualname)
        current = current.f_back
    names = list(reversed(chain))
    if len(names) > 3:
        names = [names[0], "…", names[-1]]
    parts = ([text] if text else []) + names + [frame.f_code.co_qualname]
    return line, " → ".join(parts)


def run_driver_until_call(
    driver: str,
    argv: list[str],
    path: str,
    text: str,
    info: FunctionInfo,
    *,
    cwd: str | None = None,
    suggest: SuggestFn | None = None,
) -> Capture:
    """Run ``driver`` as ``python DRIVER ARGV…`` would until the first call of ``info``'s
    function of ``path`` (imported by the driver, directly or not, from the buffer ``text``).

    Raises:
        ProfileError: ``inputs`` on the def line when the driver ends, exits or raises before
            calling it; ``not-found`` when the driver cannot be read.
    """
    driver = os.path.abspath(driver)
    real_target = os.path.realpath(path)
    driver_code = compile_text(driver, read_source(driver))
    name = info.qualname
    seen: list[_Seen] = []

    def is_target(code: types.CodeType) -> bool:
        return code.co_qualname == name and os.path.realpath(code.co_filename) == real_target

    watch = _Watch(_first_call(is_target, seen), is_target)
    end = run_until(
        driver,
        driver_code,
        _Captured,
        watch=watch,
        argv=argv,
        cwd=cwd,
        from_buffer=(path, text),
    )
    if seen:
        frame, args, kwargs, context = seen[0]
        line, chain = _driver_site(frame, driver, path)
        home_name = frame.f_globals.get("__name__")
        home = sys.modules.get(str(home_name)) if home_name else None
        if home is None or getattr(home, "__dict__", None) is not frame.f_globals:
            home = types.ModuleType(str(home_name or "_kernel_lens_driver_target"))
            home.__dict__.update(frame.f_globals)
        del seen[:]
        elapsed = round(end.elapsed_s, 3)
        return Capture(home, args, kwargs, line, chain, elapsed, context, driver)
    # Where the target's module was loaded, to check a suggestion in.
    home = _loaded_from(real_target)
    raise _driver_missed_call(end, watch.replaced, driver, argv, path, text, info, home, suggest)


def _driver_missed_call(
    end: RunEnd,
    replaced: bool,
    driver: str,
    argv: list[str],
    path: str,
    text: str,
    info: FunctionInfo,
    home: types.ModuleType | None,
    suggest: SuggestFn | None,
) -> ProfileError:
    """Why a driver's run ended without calling the function, with the directive to use
    instead (on the def line)."""
    name = info.qualname
    failure, elapsed = end.failure, end.elapsed_s
    label = os.path.basename(driver)
    if failure is not None:
        failed = import_failure(failure, driver, f"{label} (before calling {name})")
        if failed is not None:  # a module it imports is missing: no directive can help
            return failed
    fix = _checked(suggest, info, text, path, home)
    hint = f"; add this directive above the def instead: {fix}"
    if failure is None:
        why = f"{label} ran to its end ({elapsed:.1f} s) without calling {name}"
        if replaced:
            why += " (it replaced the profile hook that watches for the call)"
        return ProfileError("inputs", why + hint, info.def_line, suggested_directive=fix)
    if isinstance(failure, KeyboardInterrupt):
        return ProfileError(
            "interrupted",
            f"{label} raised KeyboardInterrupt before calling {name}",
            info.def_line,
            format_exception(failure),
        )
    at = user_line_from_traceback(failure.__traceback__, driver)
    where = f" at {label}:{at}" if at else ""
    gpu = _needs_gpu(failure, label, where, name, info.def_line)
    if gpu is not None:
        return gpu

    def needs_args(reader: str, status: str) -> str:
        return (
            f"{label} needs command-line arguments: {reader} exited (sys.exit({status})){where}"
            f" with sys.argv[1:] = {argv!r}, before calling {name} (give them after --)"
        )

    why = _how_it_ended(failure, label, where, elapsed, name, needs_args)
    return ProfileError(
        "inputs", why + hint, info.def_line, format_exception(failure), suggested_directive=fix
    )
