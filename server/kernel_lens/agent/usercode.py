"""The user's code, as the agent runs it: read and parse the buffer, compile it under the file's
real path, run it as a module or as ``__main__``, and call into it so that however it ends badly
it becomes a :class:`ProfileError` on the user's line.

A leaf below the stages (:mod:`kernel_lens.agent.stages`) and the runner: every stage that loads
or runs user code takes these pieces from here, never from another stage or the runner —
:func:`run_until` included, the one "run the script until the call" (the capture of a function's
first call, the Triton stage's first launch of a kernel; from the file itself or a driver).

The text is compiled under the file's real path, so line numbers in tracebacks, in
``inspect.getsource`` (which Triton's ``@jit`` uses) and in the profiler match the editor, even
for unsaved edits.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import importlib.abc
import importlib.util
import inspect
import linecache
import os
import sys
import time
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kernel_lens.agent import build_lock, remote
from kernel_lens.agent.errors import (
    ErrorKind,
    ProfileError,
    format_exception,
    user_line_from_traceback,
)

__all__ = [
    "NEEDS_GPU_MESSAGE",
    "CallStyle",
    "PackagePlace",
    "RunEnd",
    "as_main",
    "as_needs_gpu",
    "call_style",
    "call_user",
    "compile_text",
    "exec_module",
    "import_failure",
    "main_module",
    "module_name_for",
    "needs_gpu",
    "package_place",
    "parse_source",
    "read_source",
    "run_until",
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
    # Triton's driver stood in for under the interpreter (agent/triton_driver.py), asked for
    # what only a GPU has (a benchmarker, device properties)
    "asks the GPU's driver for it, and there is no GPU here",
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


@dataclass(frozen=True)
class PackagePlace:
    """Where a file sits as Python imports it.

    Attributes:
        root: the folder that goes on ``sys.path`` (the parent of the top package; the file's
            own folder when it is in no package).
        package: the dotted package the file belongs to (``pkg.ops``); ``""`` in none.
        name: the module's dotted name (``pkg.ops.x``; ``pkg.ops`` for its ``__init__.py``).
    """

    root: str
    package: str
    name: str


#: How many ``__init__.py`` levels are walked up at most.
_MAX_PACKAGE_DEPTH = 32


def package_place(path: str) -> PackagePlace:
    """The file's package as ``python -m`` would see it: walk up the folders that hold an
    ``__init__.py`` (a ``src/`` layout's ``src`` has none, so it becomes the root). A folder
    whose name is no identifier ends the walk (it cannot be imported as a package)."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    parts: list[str] = []
    for _ in range(_MAX_PACKAGE_DEPTH):
        name = os.path.basename(folder)
        init = os.path.join(folder, "__init__.py")
        # A job from another machine carries the package's __init__.py files (remote bundle).
        has_init = os.path.isfile(init) or remote.bundled_text(init) is not None
        if not name.isidentifier() or not has_init:
            break
        parts.insert(0, name)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if not parts or not stem.isidentifier():
        return PackagePlace(os.path.dirname(path), "", stem)
    package = ".".join(parts)
    name = package if stem == "__init__" else f"{package}.{stem}"
    return PackagePlace(folder, package, name)


def _package_free(place: PackagePlace) -> bool:
    """Whether the package's top name is free for the workspace's own package: not imported
    yet, or imported from this same root (an earlier job's load in this process, an editable
    install)."""
    top = place.package.split(".")[0]
    taken = sys.modules.get(top)
    if taken is None:
        return True
    for folder in list(getattr(taken, "__path__", None) or []):
        if os.path.realpath(os.path.dirname(str(folder))) == os.path.realpath(place.root):
            return True
    return False


def _put_root_first(place: PackagePlace) -> None:
    """The package's root first on ``sys.path`` (as ``python -m`` from it would have it)."""
    if place.root in sys.path:
        sys.path.remove(place.root)
    sys.path.insert(0, place.root)


def import_failure(exc: BaseException, path: str, doing: str) -> ProfileError | None:
    """An ``import`` error for an ``ImportError`` raised while ``doing`` (``loading the file``):
    a missing module is named with the interpreter to install it into, and a module of the
    workspace's own package that failed is said as such. ``None`` for any other exception."""
    if not isinstance(exc, ImportError):
        return None
    missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    line = user_line_from_traceback(exc.__traceback__, path)
    if missing:
        top = str(missing).split(".")[0]
        place = package_place(path)
        if place.package and top == place.package.split(".")[0]:
            message = (
                f"{doing} raised ModuleNotFoundError: {exc} (a module of the package "
                f"{place.package.split('.')[0]} itself, under {place.root})"
            )
        else:
            message = (
                f"{doing} raised ModuleNotFoundError: no module named '{missing}' in "
                f"{sys.executable}: install the package that provides it into that "
                f"interpreter ({sys.executable} -m pip install …), or pick the interpreter "
                "that has it"
            )
    else:
        message = f"{doing} raised {type(exc).__name__}: {exc}"
    return ProfileError("import", message, line, format_exception(exc))


def module_name_for(path: str) -> str:
    """The name the file's module gets when a function of it is profiled: its dotted name in
    its package (``pkg.ops.x``, as ``import pkg.ops.x`` names it) when it is in one, else the
    name ``import STEM`` gives it with the file's folder first on ``sys.path`` (as when the user
    imports it), so that what pickles its functions by name — ``multiprocessing`` with spawn or
    forkserver, whose workers import the module from disk — finds it again. When that name is
    already a module of another file in this process (a user ``json.py`` while the agent has
    the standard library's), ``_kernel_lens_target_<stem>``: the agent's own modules are never
    replaced.
    """
    place = package_place(path)
    if place.package and _package_free(place):
        return place.name
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


class _BufferFinder:
    """A ``sys.meta_path`` finder that gives the module named ``name`` the editor's buffer text
    (unsaved edits included), compiled under the file's real path, when anything imports it
    (the package's ``__init__`` as well as the load itself)."""

    def __init__(self, name: str, path: str, text: str) -> None:
        self.name = name
        self.path = path
        self.text = text

    def find_spec(self, name: str, search: Any, target: Any = None) -> Any:
        if name != self.name:
            return None
        spec = importlib.util.spec_from_loader(name, _BufferLoader(self.path, self.text))
        if spec is not None:
            spec.origin = self.path
            spec.has_location = True
            if os.path.basename(self.path) == "__init__.py":
                spec.submodule_search_locations = [os.path.dirname(self.path)]
        return spec


class _BufferLoader(importlib.abc.Loader):
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = self.path
        exec(compile_text(self.path, self.text), module.__dict__)


def _forget(name: str) -> None:
    """Drop ``name`` (and its submodules) from ``sys.modules`` so that it loads anew."""
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        sys.modules.pop(key, None)


def _exec_package_member(path: str, text: str, place: PackagePlace) -> types.ModuleType:
    """Import ``place.name`` as Python would (its packages' ``__init__``s first), the file
    itself from ``text``."""
    import importlib

    compile_text(path, text)  # a syntax error is said on its line before anything runs
    _put_root_first(place)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.append(folder)  # after the root: sibling imports still work, never shadow
    sys.modules.pop(place.name, None)
    finder = _BufferFinder(place.name, path, text)
    sys.meta_path.insert(0, finder)
    try:
        module = importlib.import_module(place.name)
    except BaseException as exc:
        stem = os.path.splitext(os.path.basename(path))[0]
        sys.modules.pop(place.name, None)
        in_file = user_line_from_traceback(exc.__traceback__, path) is not None
        doing = "loading the file" if in_file else f"importing its package {place.package}"
        failed = import_failure(exc, path, doing)
        if failed is not None:
            raise failed from None
        kind: ErrorKind = "interrupted" if isinstance(exc, KeyboardInterrupt) else "import"
        raise ProfileError(
            kind,
            f"{doing} raised {type(exc).__name__}: {exc}",
            user_line_from_traceback(exc.__traceback__, path),
            format_exception(exc),
        ) from None
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
    stem = os.path.splitext(os.path.basename(path))[0]
    sys.modules[f"_kernel_lens_target_{stem}"] = module
    return module


def exec_module(path: str, text: str) -> types.ModuleType:
    """Run ``text`` as the module :func:`module_name_for` names (imported, not ``__main__``;
    ``_kernel_lens_target_<stem>`` names it too).

    A file of a package (its folder holds an ``__init__.py``) is imported as that package's
    member: the top package's parent first on ``sys.path``, the packages' ``__init__``s run,
    ``__package__`` set, so relative and absolute imports of the package work as they do for
    ``python -m``. Any other file runs with its folder first on ``sys.path``, so that sibling
    imports work and the workers of a spawn ``multiprocessing`` pool can import it.

    Raises:
        ProfileError: ``syntax``; ``import`` (the file raised or exited while loading, or a
            module it imports is missing: named, with the interpreter to install it into);
            ``interrupted`` (its own Ctrl-C).
    """
    build_lock.install()
    place = package_place(path)
    if place.package and _package_free(place):
        return _exec_package_member(path, text, place)
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
        failed = import_failure(exc, path, "loading the file")
        if failed is not None:
            raise failed from None
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
    build_lock.install()
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
    place = package_place(path)
    if place.package and _package_free(place):
        # As `python -m pkg.ops.x`: relative imports resolve against its package, absolute
        # imports of the package find it (its root first, the file's folder after it).
        module.__dict__["__package__"] = place.package
        module.__dict__["__spec__"] = importlib.util.spec_from_loader(place.name, None, origin=path)
        _put_root_first(place)
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


class _FileFromBuffer:
    """A ``sys.meta_path`` finder that loads one file from the editor's buffer text (unsaved
    edits included) when a run imports it, under whatever name and from wherever it is
    imported, compiled under its real path (so line numbers match)."""

    def __init__(self, path: str, text: str) -> None:
        self._path = os.path.realpath(path)
        self._text = text

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not spec.origin or os.path.realpath(spec.origin) != self._path:
            return None
        return importlib.util.spec_from_loader(
            name, _BufferLoader(spec.origin, self._text), origin=spec.origin
        )


@dataclass
class RunEnd:
    """How a run that was to stop somewhere (:func:`run_until`) ended.

    Attributes:
        module: the ``__main__`` namespace it ran in.
        stopped: whether ``stop`` ended it (what the run was for was reached).
        failure: otherwise, the run's own ending (an exception, ``SystemExit``, Ctrl-C);
            ``None`` when it ran to its end.
        elapsed_s: seconds the script ran.
    """

    module: types.ModuleType
    stopped: bool
    failure: BaseException | None
    elapsed_s: float


def run_until(
    path: str,
    code: types.CodeType,
    stop: type[BaseException],
    *,
    watch: contextlib.AbstractContextManager[Any] | None = None,
    argv: Sequence[str] = (),
    cwd: str | None = None,
    from_buffer: tuple[str, str] | None = None,
) -> RunEnd:
    """Run the compiled script ``code`` of ``path`` as ``python PATH ARGV…`` would
    (:func:`main_module`) until ``watch`` raises ``stop``, or the script ends on its own: the
    one "run the script until the call" of the stages (the target's first call, a kernel's
    first launch, from the file itself or from a driver script). The rest of the script never
    runs.

    Args:
        path: the script (the file itself, or a driver).
        code: its compiled text (:func:`compile_text`).
        stop: what ``watch`` raises where the run is to stop (a ``BaseException``, so the
            script's own ``except Exception`` does not swallow it).
        watch: entered once the ``__main__`` namespace is set up, left after the run: what
            watches for the place to stop (a profile hook, patched launchers).
        argv: ``sys.argv[1:]``.
        cwd: the current folder (default: the script's).
        from_buffer: ``(file, text)``: a file the run imports (directly or not, under any
            name) is loaded from the editor's buffer ``text`` instead of the disk.

    Whatever the script raises (``SystemExit`` and ``KeyboardInterrupt`` included) is kept in
    :attr:`RunEnd.failure`, never raised: the caller says what it means.
    """
    finder = _FileFromBuffer(*from_buffer) if from_buffer is not None else None
    stopped = False
    failure: BaseException | None = None
    with main_module(path, argv, cwd) as module, watch or contextlib.nullcontext():
        if finder is not None:
            sys.meta_path.insert(0, finder)
        start = time.perf_counter()
        try:
            exec(code, module.__dict__)
        except stop:
            stopped = True
        except BaseException as exc:  # the script's own ending, whatever it is
            failure = exc
        finally:
            elapsed = time.perf_counter() - start
            if finder is not None and finder in sys.meta_path:
                sys.meta_path.remove(finder)
    return RunEnd(module, stopped, failure, elapsed)


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
