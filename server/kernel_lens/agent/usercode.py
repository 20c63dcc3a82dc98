"""The user's code, as the agent runs it: read and parse the buffer, compile it under the file's
real path, run it as a module or as ``__main__``, and call into it so that however it ends badly
it becomes a :class:`ProfileError` on the user's line.

A leaf below the stages (:mod:`kernel_lens.agent.stages`) and the runner: every stage that loads
or runs user code takes these pieces from here, never from another stage or the runner.

The text is compiled under the file's real path, so line numbers in tracebacks, in
``inspect.getsource`` (which Triton's ``@jit`` uses) and in the profiler match the editor, even
for unsaved edits.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import importlib.util
import inspect
import linecache
import os
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from kernel_lens.agent import remote
from kernel_lens.agent.errors import (
    ErrorKind,
    ProfileError,
    format_exception,
    user_line_from_traceback,
)

__all__ = [
    "NEEDS_GPU_MESSAGE",
    "CallStyle",
    "as_main",
    "as_needs_gpu",
    "call_style",
    "call_user",
    "compile_text",
    "exec_module",
    "main_module",
    "module_name_for",
    "needs_gpu",
    "parse_source",
    "read_source",
    "with_call_style",
]

CallStyle = Literal["called", "awaited", "consumed"]

#: The message of an ``unsupported`` error for code that asks for CUDA on a machine without it.
NEEDS_GPU_MESSAGE = "this code needs an NVIDIA GPU — run the agent on one (kernelLens.agentCommand)"
#: What torch (and the CUDA runtime) say when code asks for CUDA that is not there.
_NO_CUDA_MARKERS = (
    "Torch not compiled with CUDA enabled",
    "no CUDA GPUs are available",
    "Found no NVIDIA driver",
    "CUDA driver initialization failed",
    "0 active drivers",
)


def read_source(path: str) -> str:
    """The text of a Python file, decoded as Python decodes it: a PEP 263 coding line or a
    UTF-8 BOM, else UTF-8; newlines universal.

    A file a job from another machine carried (:mod:`kernel_lens.agent.remote`) is read from
    what it carried.

    Raises:
        ProfileError: ``not-found`` (cannot read), ``syntax`` (undecodable, bad coding line).
    """
    carried = remote.bundled_text(path)
    if carried is not None:
        return carried
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ProfileError("not-found", f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise ProfileError(
            "syntax", f"cannot decode {os.path.basename(path)}: {exc}", getattr(exc, "lineno", None)
        ) from None


def parse_source(text: str, path: str) -> ast.Module:
    """``ast.parse`` of the file's text; a ``syntax`` error on its line when it does not parse."""
    try:
        return ast.parse(text, path)
    except SyntaxError as exc:
        raise ProfileError("syntax", f"{exc.msg}", exc.lineno) from None
    except (MemoryError, RecursionError):
        from kernel_lens.analysis.functions import too_deep

        deep = too_deep(text)
        raise ProfileError("syntax", str(deep), deep.line) from None


def compile_text(path: str, text: str) -> types.CodeType:
    """The module code of ``text`` compiled under ``path``, its lines registered in
    :mod:`linecache` (so ``inspect.getsource`` reads the buffer, not the file on disk).

    Raises:
        ProfileError: ``syntax`` on its line.
    """
    try:
        code = compile(text, path, "exec")
    except SyntaxError as exc:
        raise ProfileError("syntax", f"{exc.msg}", exc.lineno) from None
    # inspect.getsource (Triton's @jit) must see this text, not what is saved on disk: a cache
    # entry with mtime None is never invalidated by linecache.checkcache.
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)
    return code


def module_name_for(path: str) -> str:
    """The name the file's module gets when a function of it is profiled: the name
    ``import STEM`` gives it with the file's folder first on ``sys.path`` (as when the user
    imports it), so that what pickles its functions by name — ``multiprocessing`` with spawn or
    forkserver, whose workers import the module from disk — finds it again. When that name is
    already a module of another file in this process (a user ``json.py`` while the agent has
    the standard library's), ``_kernel_lens_target_<stem>``: the agent's own modules are never
    replaced.
    """
    stem = os.path.splitext(os.path.basename(path))[0]
    taken = sys.modules.get(stem)
    ours = taken is not None and sys.modules.get(f"_kernel_lens_target_{stem}") is taken
    if stem.isidentifier() and (
        taken is None
        or ours  # a user file loaded before (in-process callers load several)
        or os.path.abspath(str(getattr(taken, "__file__", None) or "")) == path
    ):
        return stem
    return f"_kernel_lens_target_{stem}"


def exec_module(path: str, text: str) -> types.ModuleType:
    """Run ``text`` as the module :func:`module_name_for` names (imported, not ``__main__``;
    ``_kernel_lens_target_<stem>`` names it too), the file's folder first on ``sys.path`` so
    that sibling imports work and the workers of a spawn ``multiprocessing`` pool can import it.

    Raises:
        ProfileError: ``syntax``; ``import`` (the file raised or exited while loading);
            ``interrupted`` (its own Ctrl-C).
    """
    code = compile_text(path, text)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = module_name_for(path)
    module = types.ModuleType(name)
    module.__file__ = path
    module.__dict__["__builtins__"] = __builtins__
    sys.modules[name] = module
    sys.modules[f"_kernel_lens_target_{stem}"] = module
    folder = os.path.dirname(path)
    if folder not in sys.path:
        # Sibling imports work as they do when the user runs the file.
        sys.path.insert(0, folder)
    try:
        exec(code, module.__dict__)
    except BaseException as exc:
        # sys.exit() at import is an ``import`` error (the file is not meant to be imported);
        # Ctrl-C raised by the file's own code is ``interrupted``. Neither ends the agent.
        kind: ErrorKind = "interrupted" if isinstance(exc, KeyboardInterrupt) else "import"
        raise ProfileError(
            kind,
            f"loading the file raised {type(exc).__name__}: {exc}",
            user_line_from_traceback(exc.__traceback__, path),
            format_exception(exc),
        ) from None
    return module


@contextlib.contextmanager
def main_module(
    path: str, argv: Sequence[str] = (), cwd: str | None = None
) -> Iterator[types.ModuleType]:
    """A fresh ``__main__`` namespace for running ``path`` as ``python FILE ARGS…`` would.

    ``sys.argv == [path, *argv]``, the file's folder (or ``cwd``) is the current folder, the
    file's folder is first on ``sys.path`` (these stay: the agent runs one job per process),
    and ``sys.modules["__main__"]`` is the namespace while the block runs (``pickle``,
    dataclasses and ``typing`` look it up).
    """
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__dict__["__builtins__"] = __builtins__
    module.__dict__["__name__"] = "__main__"
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.dirname(path)
    sys.modules[f"_kernel_lens_target_{stem}"] = module
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)
    sys.argv = [path, *argv]
    os.chdir(remote.local_folder(cwd or folder))
    previous_main = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        yield module
    finally:
        if previous_main is not None:
            sys.modules["__main__"] = previous_main


@contextlib.contextmanager
def as_main(module: types.ModuleType) -> Iterator[None]:
    """``module`` as ``sys.modules["__main__"]`` while the block runs, when it ran as ``__main__``.

    A function captured from the script's own run lives in the script's ``__main__`` namespace;
    whatever looks its module up by name afterwards (torch.compile's guards read
    ``sys.modules[fn.__globals__["__name__"]]``; ``pickle``; dataclasses) must find that
    namespace, not the agent's.
    """
    if module.__dict__.get("__name__") != "__main__":
        yield
        return
    previous = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        yield
    finally:
        if previous is not None:
            sys.modules["__main__"] = previous


def needs_gpu(message: str) -> bool:
    """Whether an error message says the code asked for CUDA on a machine without it."""
    lowered = message.lower()
    return any(marker.lower() in lowered for marker in _NO_CUDA_MARKERS)


def as_needs_gpu(err: ProfileError) -> ProfileError:
    """``err`` as an ``unsupported`` error when it says that CUDA is missing."""
    if err.kind in ("import", "inputs", "runtime") and needs_gpu(err.message):
        return ProfileError(
            "unsupported", f"{NEEDS_GPU_MESSAGE} ({err.message})", err.line, err.traceback
        )
    return err


def call_style(code: types.CodeType) -> CallStyle:
    """How a function's body runs: ``awaited`` (``async def``), ``consumed`` (a generator,
    sync or async) or ``called``."""
    if code.co_flags & inspect.CO_COROUTINE:
        return "awaited"
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR):
        return "consumed"
    return "called"


async def _drain(agen: Any) -> list[Any]:
    return [item async for item in agen]


def _run_body(value: Any) -> Any:
    """Run what a call returned when it is a body not run yet: a coroutine is awaited on a
    fresh event loop, a generator (sync or async) is consumed to the end (its items returned
    as a list)."""
    if inspect.iscoroutine(value):
        return asyncio.run(value)
    if inspect.isasyncgen(value):
        return asyncio.run(_drain(value))
    if inspect.isgenerator(value):
        return list(value)
    return value


def with_call_style(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped so that each call runs its body to the end (see :func:`_run_body`); the
    signature is ``fn``'s (``inspect.signature`` follows ``__wrapped__``)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        return _run_body(fn(*args, **kwargs))

    return run


def call_user(target_call: Callable[[], Any], path: str, what: str) -> Any:
    """Call user code; whatever way it ends badly becomes a :class:`ProfileError` with its line.

    An exception is ``runtime`` (``unsupported`` for ``NotImplementedError``), ``sys.exit()``
    is ``exit`` and ``KeyboardInterrupt`` is ``interrupted``: none of them ends the agent.
    """
    try:
        return target_call()
    except ProfileError:
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        kind: ErrorKind = "runtime"
        message = f"{what} raised {type(exc).__name__}: {exc}"
        if isinstance(exc, NotImplementedError):
            kind = "unsupported"
        if isinstance(exc, Exception) and needs_gpu(str(exc)):
            kind = "unsupported"
            message = f"{NEEDS_GPU_MESSAGE} ({what} raised {type(exc).__name__}: {exc})"
        elif isinstance(exc, SystemExit):
            kind = "exit"
            message = f"{what} called sys.exit({'' if exc.code is None else repr(exc.code)})"
        elif isinstance(exc, KeyboardInterrupt):
            kind = "interrupted"
            message = f"{what} raised KeyboardInterrupt"
        raise ProfileError(
            kind,
            message,
            user_line_from_traceback(exc.__traceback__, path),
            format_exception(exc),
        ) from None
