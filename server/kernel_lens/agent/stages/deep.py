"""The deep tracer: every line of every **workspace** file a whole run executes, tagged.

A whole-script run (``kernel-lens profile PATH``, *Profile Script*) is attributed to the innermost
line of a workspace file on the Python stack: lines inside ``main()``, ``benchmark_matmul()``,
helpers and the workspace's other modules (``model.py`` driven by ``bench.py``) get their own
results, never torch's or site-packages' lines. While a workspace frame runs, its current line is
an open profiler range named ``src:<line>`` (the script's own file) or ``src:<k>:<line>`` (the
``k``-th other workspace file of :attr:`DeepTracer.files`); a call opens the callee's ranges
inside the caller's, so the attribution (which takes the innermost range) puts each op on the
deepest workspace line. Loop lines open one range per pass: their hits are the passes.

Only workspace frames are watched: on Python 3.12+ with ``sys.monitoring`` (a code object of
another file is disabled at its first event, so torch and the standard library run untraced),
elsewhere with a ``sys.settrace`` whose global hook returns no local tracer for other files. The
ranges are ``torch._C._profiler._RecordFunctionFast`` (≈0.3 µs each without a profiler, ≈1 µs
with one, against ≈9 µs for ``record_function``); they are recorded as ``cpu_op`` events, which
:func:`mark_line_ranges` turns into the ``user_annotation`` events every reader expects.

The tracer also sees the run's *steps* (:class:`Window`): each time a ``# kernel-lens: step``
marker line is reached (see :func:`step_marker_lines`), an ``optimizer.step()`` returns or the
script's profiler ``step()`` is called, a step ends; the first source of steps that shows up is
the one counted.

**Named packages** (``kernelLens.attributeInPackages``, ``--in-package``): the files of those
installed packages count as the workspace's (their lines are tagged like a workspace module's),
never torch's own. Any *other* installed package (a site-packages one) that a tagged line calls
into is measured without being tagged: the outermost frame of each such package opens a
``pkg:<name>`` range, so a line's lens can say ``98% inside transformers`` and offer to attribute
inside it (:func:`package_shares`). A named package's lines are not tagged while a module is
being imported (``importlib``'s ``_find_and_load`` is running): importing ``transformers`` runs
millions of lines of its import machinery, and that time is the importing line's.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import sysconfig
import threading
import time
import tokenize
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel_lens.agent.deadline import stop_requested
from kernel_lens.agent.packages import PackageFiles, installed_package_of
from kernel_lens.analysis.line_attribution import LINE_RANGE_RE, line_range_name
from kernel_lens.analysis.package_share import PACKAGE_RANGE_PREFIX

__all__ = [
    "STEP_MARKER_RE",
    "DeepTracer",
    "Window",
    "WindowDone",
    "default_workspace",
    "is_workspace_file",
    "mark_line_ranges",
    "package_range_name",
    "step_marker_lines",
]

#: The marker comment that ends a step each time its line is reached.
STEP_MARKER_RE = re.compile(r"#\s*kernel-lens:\s*step\b")

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_THIRD_PARTY = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def _library_roots() -> tuple[str, ...]:
    """Folders whose files are never the workspace's: the interpreter's (the standard library,
    a virtual environment inside the workspace) and Kernel Lens's own package."""
    roots = {_PACKAGE_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            roots.add(os.path.realpath(sysconfig.get_path(key)))
        except (KeyError, OSError):
            continue
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix):
        roots.add(os.path.realpath(prefix))
    return tuple(r.rstrip(os.sep) + os.sep for r in roots if r)


def default_workspace(path: str) -> str:
    """The workspace of a file run from a terminal: the enclosing git checkout's top folder, else
    the file's own folder."""
    folder = os.path.dirname(os.path.abspath(path))
    current = folder
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return folder
        current = parent


def is_workspace_file(
    filename: str, roots: Iterable[str], libraries: tuple[str, ...] | None = None
) -> bool:
    """Whether ``filename`` (a code object's) is a workspace file: under one of ``roots``, a real
    file (not ``<frozen …>``/``<string>``), and not the interpreter's, a site-packages' or Kernel
    Lens's own."""
    if not filename or filename.startswith("<"):
        return False
    real = os.path.realpath(filename)
    if any(part in real for part in _THIRD_PARTY):
        return False
    for lib in libraries if libraries is not None else _library_roots():
        if real.startswith(lib):
            return False
    return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def step_marker_lines(text: str) -> set[int]:
    """The lines that end a step when reached: a statement carrying a ``# kernel-lens: step``
    comment, or the first statement after a marker comment on a line of its own."""
    out: set[int] = set()
    code_lines: set[int] = set()
    markers: list[tuple[int, bool]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                if STEP_MARKER_RE.search(tok.string):
                    alone = not tok.line[: tok.start[1]].strip()
                    markers.append((tok.start[0], alone))
            elif tok.type not in (
                tokenize.NL,
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENDMARKER,
                tokenize.ENCODING,
            ):
                code_lines.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    ordered = sorted(code_lines)
    for line, alone in markers:
        if not alone:
            out.add(line)
            continue
        following = [c for c in ordered if c > line]
        if following:
            out.add(following[0])
    return out


def package_range_name(package: str) -> str:
    """The range open while the outermost frame of installed ``package`` runs."""
    return PACKAGE_RANGE_PREFIX + package


def mark_line_ranges(trace: Mapping[str, Any]) -> int:
    """Turn the tracer's ranges (recorded as ``cpu_op`` events named ``src:…``, and the
    ``pkg:…`` ones) into the ``user_annotation`` events the attribution, the timeline and the
    summaries read; how many."""
    n = 0
    for ev in trace.get("traceEvents", []):
        if not isinstance(ev, dict) or ev.get("cat") != "cpu_op":
            continue
        name = str(ev.get("name", ""))
        if (name.startswith("src:") and LINE_RANGE_RE.match(name)) or name.startswith(
            PACKAGE_RANGE_PREFIX
        ):
            ev["cat"] = "user_annotation"
            n += 1
    return n


#: The import machinery's file name (``_find_and_load`` runs each import).
_IMPORTLIB = "<frozen importlib._bootstrap"


class WindowDone(BaseException):
    """Raised in the user's code once the window's last step ended: stops the script there."""


@dataclass
class Window:
    """A window of a long run: ``skip`` steps unprofiled, then ``steps`` profiled, then stop.

    Attributes:
        skip: steps run before the profiler starts.
        steps: steps profiled (``None``: to the end of the run).
        after_s: start no earlier than this many seconds into the run (at the next step end).
        start: starts the profiler; stop_run: called once the window is over (before
            :class:`WindowDone` is raised).
        seen: steps ended so far; source: what they were counted from (``optimizer.step()``,
            ``profiler step()``, ``marker``); started_at: the step count at the start (``None``
            until it starts); started_s: seconds into the run at the start.
    """

    skip: int = 0
    steps: int | None = None
    after_s: float | None = None
    start: Callable[[], None] = lambda: None
    stop_run: Callable[[], None] = lambda: None
    seen: int = 0
    source: str | None = None
    started_at: int | None = None
    started_s: float | None = None
    stopped: bool = False
    t0: float = field(default_factory=time.perf_counter)
    cut_after_s: float | None = None
    """The run is cut this many seconds in (shortly before the job's time limit): what was
    profiled is kept, labelled partial."""
    cut: bool = False
    cancelled: bool = False
    """Cut because the user cancelled (the server's ``stop``), not at the time limit."""
    progress: Callable[[str], None] | None = None
    """Told where the run is (``line 45 of train.py · 12 s``), every couple of seconds."""
    _told: float = 0.0

    def at_line(self, file: str, line: int) -> None:
        """A workspace line starts: say where the run is now and then; cut it at its limit."""
        now = time.perf_counter()
        if self.progress is not None and now - self._told >= 2.0:
            self._told = now
            self.progress(f"line {line} of {os.path.basename(file)} · {now - self.t0:.0f} s")
        if self.stopped:
            return
        if self.cut_after_s is not None and now - self.t0 >= self.cut_after_s:
            self.cut = True
            self._finish()
        if stop_requested():
            self.cut, self.cancelled = True, True
            self._finish()

    @property
    def active(self) -> bool:
        """Whether steps matter at all (a window was asked for)."""
        return bool(self.skip) or self.steps is not None or self.after_s is not None

    def begin(self) -> None:
        """At the run's start: start at once when nothing is to be skipped."""
        self.t0 = time.perf_counter()
        if not self.skip and self.after_s is None:
            self._start()

    def start_by_time(self) -> None:
        """With no steps seen yet, a wall-clock window starts at the first line past its time."""
        if (
            self.started_at is None
            and self.after_s is not None
            and not self.skip
            and time.perf_counter() - self.t0 >= self.after_s
        ):
            self._start()

    def _start(self) -> None:
        self.started_at = self.seen
        self.started_s = time.perf_counter() - self.t0
        self.start()

    def step(self, source: str) -> None:
        """A step ended (counted only from the first ``source`` seen)."""
        if self.stopped:
            return
        if self.source is None:
            self.source = source
        elif source != self.source:
            return
        self.seen += 1
        if self.started_at is None:
            late_enough = self.after_s is None or time.perf_counter() - self.t0 >= self.after_s
            if self.seen >= self.skip and late_enough:
                self._start()
                if self.steps == 0:
                    self._finish()
            return
        if self.steps is not None and self.seen - self.started_at >= self.steps:
            self._finish()

    def _finish(self) -> None:
        self.stopped = True
        self.stop_run()
        raise WindowDone

    def to_json(self) -> dict[str, Any]:
        """The result's ``script.window``."""
        profiled = None if self.started_at is None else self.seen - self.started_at
        return {
            "skip": self.skip,
            "steps": self.steps,
            "after_s": self.after_s,
            "steps_seen": self.seen,
            "steps_profiled": profiled,
            "counted_from": self.source,
            "started_s": None if self.started_s is None else round(self.started_s, 3),
            "stopped": self.stopped,
            "cut_at_limit": self.cut and not self.cancelled,
            "cancelled": self.cancelled,
        }


class _Frame:
    __slots__ = ("code", "line", "open", "prefix")

    def __init__(self, code: types.CodeType, prefix: str) -> None:
        self.code = code
        self.prefix = prefix
        self.line = 0
        self.open: Any = None


class DeepTracer:
    """Tags the lines of workspace frames (main thread only) with profiler ranges.

    Args:
        main_path: the script (its lines are ``src:<line>``).
        roots: the workspace folders.
        texts: the text of files whose buffer differs from the disk (step markers are read
            from it).
        window: the run's window (steps are reported to it), or ``None``.
        range_factory: makes a range from its name (default ``_RecordFunctionFast``).
        only_lines: tag only these lines of the script (a notebook's profiled cell): a call
            into code outside them stays on the calling line, as the cell's own work.
        packages: the named packages' folders, by name: their files are tagged as workspace
            files are (see :mod:`kernel_lens.agent.packages`).
        probe: measure the time tagged lines spend inside other installed packages (``pkg:``
            ranges), for the lens that suggests naming one.
    """

    def __init__(
        self,
        main_path: str,
        roots: Iterable[str],
        *,
        texts: Mapping[str, str] | None = None,
        window: Window | None = None,
        range_factory: Callable[[str], Any] | None = None,
        only_lines: tuple[int, int] | None = None,
        packages: Mapping[str, str] | None = None,
        probe: bool = True,
    ) -> None:
        self._only = only_lines
        self.packages = PackageFiles(packages or {})
        self._probe = probe
        self._probe_of: dict[str, str | None] = {}
        # An open package range: its package -> [the outermost frame's code, depth, range].
        self._inside: dict[str, list[Any]] = {}
        #: the indexes of :attr:`files` that are the named packages' files
        self._package_indexes: set[int] = set()
        #: imports running now (``_find_and_load`` frames): a named package's lines are not
        #: tagged meanwhile
        self._importing = 0
        if range_factory is None:
            import torch

            range_factory = torch._C._profiler._RecordFunctionFast
        self._range = range_factory
        self.main_path = os.path.abspath(main_path)
        self.roots = tuple(os.path.realpath(r) for r in roots) or (os.path.dirname(self.main_path),)
        self._libraries = _library_roots()
        self._texts = dict(texts or {})
        self.files: list[str] = [self.main_path]
        self._index: dict[str, int | None] = {self.main_path: 0}
        self._markers: dict[str, set[int]] = {}
        self._stack: list[_Frame] = []
        self._by_frame: dict[int, _Frame] = {}
        self._window = window
        self._main_thread = threading.get_ident()
        self._monitoring: Any = None
        self._tool: int | None = None
        self._previous_trace: Any = None
        self._stopped = False
        if window is not None and window.active:
            self._markers[self.main_path] = self._read_markers(self.main_path)

    # -- which files

    def file_index(self, filename: str) -> int | None:
        """The index of a workspace file in :attr:`files` (added at first sight), ``None`` for
        any other file."""
        found = self._index.get(filename, -1)
        if found != -1:
            return found
        index: int | None = None
        in_package = self.packages.package_of(filename) is not None
        if in_package or is_workspace_file(filename, self.roots, self._libraries):
            index = len(self.files)
            self.files.append(os.path.abspath(filename))
            if in_package and not is_workspace_file(filename, self.roots, self._libraries):
                self._package_indexes.add(index)
        self._index[filename] = index
        if index is not None and self._window is not None and self._window.active:
            self._markers[filename] = self._read_markers(filename)
        return index

    def _read_markers(self, filename: str) -> set[int]:
        text = self._texts.get(os.path.abspath(filename))
        if text is None:
            import linecache

            text = "".join(linecache.getlines(filename))
        return step_marker_lines(text)

    def _prefix(self, index: int) -> str:
        return "src:" if index == 0 else f"src:{index}:"

    def probed_package(self, filename: str) -> str | None:
        """The installed package (not named, not torch's) whose time a file's frames count
        toward, ``None`` for any other file."""
        found = self._probe_of.get(filename, "")
        if found != "":
            return found
        name = installed_package_of(filename) if self._probe else None
        if name is not None and name in self.packages.roots:
            name = None
        self._probe_of[filename] = name
        return name

    def _probe_enter(self, code: types.CodeType, name: str, *, count: bool = True) -> bool:
        """A frame of a probed package starts: open its range when it is the package's
        outermost one inside a tagged line; whether it is the frame that holds the range.
        ``count``: recursive starts of that code are counted (every return is seen: 3.12+)."""
        held = self._inside.get(name)
        if held is not None:
            if count and held[0] is code:
                held[1] += 1  # the same code again (recursion): its returns are counted
            return False
        if not self._stack or self._only is not None:
            return False
        rng = self._range(package_range_name(name))
        rng.__enter__()
        self._inside[name] = [code, 1, rng]
        return True

    def _probe_leave(self, code: types.CodeType, name: str) -> None:
        held = self._inside.get(name)
        if held is None or held[0] is not code:
            return
        held[1] -= 1
        if held[1] <= 0:
            del self._inside[name]
            held[2].__exit__(None, None, None)

    def _close_probes(self) -> None:
        for held in reversed(list(self._inside.values())):
            held[2].__exit__(None, None, None)
        self._inside.clear()

    # -- the ranges

    def _enter(self, code: types.CodeType) -> _Frame | None:
        index = self.file_index(code.co_filename)
        if index is None:
            return None
        if self._importing and index in self._package_indexes:
            return None  # a named package's code run by an import: the importing line's
        frame = _Frame(code, self._prefix(index))
        self._stack.append(frame)
        return frame

    def _line(self, frame: _Frame, line: int) -> None:
        if frame.open is not None:
            frame.open.__exit__(None, None, None)
            frame.open = None
        frame.line = line
        window = self._window
        if window is not None:
            try:
                window.at_line(frame.code.co_filename, line)
            except WindowDone:
                self._stopped = True
                self.close_all()
                self.stop()
                raise
        if window is not None and window.active:
            markers = self._markers.get(frame.code.co_filename)
            if markers and line in markers:
                self.step("marker")
            elif window.started_at is None and window.source is None:
                window.start_by_time()
        only = self._only
        if only is not None and (frame.prefix != "src:" or not only[0] <= line <= only[1]):
            return  # outside the lines asked for: the caller's line keeps the work
        if frame.open is None:  # (a window that just started has opened it already)
            rng = self._range(frame.prefix + str(line))
            rng.__enter__()
            frame.open = rng

    def _leave(self, code: types.CodeType) -> None:
        stack = self._stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i].code is code:
                while len(stack) > i:
                    top = stack.pop()
                    if top.open is not None:
                        top.open.__exit__(None, None, None)
                        top.open = None
                return

    @contextlib.contextmanager
    def reopened(self) -> Iterator[None]:
        """Close the open ranges, run the block (the profiler starting or stopping: a range
        must open and close on the same side of it), then open them again, outermost first."""
        self._close_probes()  # (reopened at the package's next outermost frame)
        for frame in reversed(self._stack):
            if frame.open is not None:
                frame.open.__exit__(None, None, None)
                frame.open = None
        try:
            yield
        finally:
            if not self._stopped:
                for frame in self._stack:
                    if frame.line:
                        rng = self._range(frame.prefix + str(frame.line))
                        rng.__enter__()
                        frame.open = rng

    def close_all(self) -> None:
        """Close every open range, innermost first (the run stops here)."""
        self._close_probes()
        while self._stack:
            top = self._stack.pop()
            if top.open is not None:
                top.open.__exit__(None, None, None)
                top.open = None
        self._by_frame.clear()

    def step(self, source: str) -> None:
        """A step ended (from a marker line, an optimizer or the script's profiler)."""
        window = self._window
        if window is None or not window.active or self._stopped:
            return
        try:
            window.step(source)
        except WindowDone:
            self._stopped = True
            self.close_all()
            self.stop()
            raise

    # -- sys.monitoring (3.12+)

    def _on_start(self, code: types.CodeType, offset: int) -> Any:
        if threading.get_ident() != self._main_thread or self._stopped:
            return None
        if code.co_name == "_find_and_load" and code.co_filename.startswith(_IMPORTLIB):
            self._importing += 1
            return None
        if self._enter(code) is None:
            if self._importing and self._index.get(code.co_filename) is not None:
                return None  # a named package's code, skipped during an import only
            name = self.probed_package(code.co_filename)
            if name is None:
                return self._monitoring.DISABLE
            self._probe_enter(code, name)
        return None

    def _on_line(self, code: types.CodeType, line: int) -> Any:
        if threading.get_ident() != self._main_thread or self._stopped:
            return None
        stack = self._stack
        if not stack or stack[-1].code is not code:
            if self.file_index(code.co_filename) is None:
                return self._monitoring.DISABLE
            frame = self._enter(code)  # a frame that started before the tracer did
            if frame is None:
                return None
        self._line(stack[-1], line)
        return None

    def _on_leave(self, code: types.CodeType, offset: int, *rest: Any) -> Any:
        if threading.get_ident() != self._main_thread or self._stopped:
            return None
        if code.co_name == "_find_and_load" and code.co_filename.startswith(_IMPORTLIB):
            self._importing = max(0, self._importing - 1)
            return None
        if self.file_index(code.co_filename) is None:
            name = self.probed_package(code.co_filename)
            if name is None:
                return self._monitoring.DISABLE
            # (never disabled: the same code may be a package's outermost frame later)
            self._probe_leave(code, name)
            return None
        self._leave(code)
        return None

    def _on_unwind(self, code: types.CodeType, offset: int, exc: BaseException) -> Any:
        if threading.get_ident() == self._main_thread and not self._stopped:
            if code.co_name == "_find_and_load" and code.co_filename.startswith(_IMPORTLIB):
                self._importing = max(0, self._importing - 1)
            elif self.file_index(code.co_filename) is None:
                name = self.probed_package(code.co_filename)
                if name is not None:
                    self._probe_leave(code, name)
            else:
                self._leave(code)
        return None

    # -- sys.settrace (before 3.12)

    def _global(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event != "call" or self._stopped:
            return None
        code = frame.f_code
        if self.packages and code.co_name == "_find_and_load":
            if code.co_filename.startswith(_IMPORTLIB):
                self._importing += 1
                frame.f_trace_lines = False
                return self._import_local
        entry = self._enter(frame.f_code)
        if entry is None:
            if self._stack and self._probe:
                name = self.probed_package(frame.f_code.co_filename)
                if name is not None and self._probe_enter(frame.f_code, name, count=False):
                    frame.f_trace_lines = False
                    return self._probe_local
            return None
        self._by_frame[id(frame)] = entry
        return self._local

    def _import_local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "return":
            self._importing = max(0, self._importing - 1)
        return self._import_local

    def _probe_local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "return":
            name = self.probed_package(frame.f_code.co_filename)
            if name is not None:
                self._probe_leave(frame.f_code, name)
        return self._probe_local

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if self._stopped:
            return None
        entry = self._by_frame.get(id(frame))
        if entry is None:
            return None
        if event == "line":
            self._line(entry, frame.f_lineno)
        elif event == "return":
            self._by_frame.pop(id(frame), None)
            self._leave(frame.f_code)
        return self._local

    # -- the watch

    def start(self) -> None:
        """Start watching (the calling thread is the one traced)."""
        self._main_thread = threading.get_ident()
        monitoring: Any = getattr(sys, "monitoring", None)
        if monitoring is not None:
            free = [t for t in (monitoring.PROFILER_ID, 3, 4, 5) if monitoring.get_tool(t) is None]
            if free:
                self._monitoring = monitoring
                self._tool = tool = free[0]
                events = monitoring.events
                monitoring.use_tool_id(tool, "kernel-lens deep tracer")
                monitoring.register_callback(tool, events.PY_START, self._on_start)
                monitoring.register_callback(tool, events.PY_RESUME, self._on_start)
                monitoring.register_callback(tool, events.LINE, self._on_line)
                monitoring.register_callback(tool, events.PY_RETURN, self._on_leave)
                monitoring.register_callback(tool, events.PY_YIELD, self._on_leave)
                monitoring.register_callback(tool, events.PY_UNWIND, self._on_unwind)
                monitoring.set_events(
                    tool,
                    events.PY_START
                    | events.PY_RESUME
                    | events.LINE
                    | events.PY_RETURN
                    | events.PY_YIELD
                    | events.PY_UNWIND,
                )
                return
        self._previous_trace = sys.gettrace()
        sys.settrace(self._global)

    def stop(self) -> None:
        """Stop watching; close what is open."""
        if self._tool is not None:
            monitoring = self._monitoring
            tool = self._tool
            self._tool = None
            monitoring.set_events(tool, 0)
            for event in (
                monitoring.events.PY_START,
                monitoring.events.PY_RESUME,
                monitoring.events.LINE,
                monitoring.events.PY_RETURN,
                monitoring.events.PY_YIELD,
                monitoring.events.PY_UNWIND,
            ):
                monitoring.register_callback(tool, event, None)
            monitoring.restart_events()
            monitoring.free_tool_id(tool)
        elif self._monitoring is None and sys.gettrace() == self._global:
            sys.settrace(self._previous_trace)
        self._stopped = True
        self.close_all()

    def __enter__(self) -> DeepTracer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def range_name(index: int, line: int) -> str:
    """The range that tags ``line`` of the ``index``-th file of a deep run."""
    return line_range_name(line) if index == 0 else f"src:{index}:{line}"
