"""Stage *values*: one ``@triton.jit`` kernel's launch run under Triton's interpreter, with what
each line of the body assigned for one chosen program, and every load and store checked against
the storage its pointer belongs to.

Under ``TRITON_INTERPRET=1`` a kernel's body runs as Python once per program: a copy of the
function rewritten by the interpreter (so it is matched by name and file, never by code object),
whose blocks are ``tl.tensor`` objects holding numpy arrays. A trace hook (``sys.settrace``,
installed only while the chosen program runs) records, after each line, the locals that line
bound; the interpreter's builder is wrapped so that each masked load and store is checked first
(:class:`MemoryCheck`): lanes outside their block's storage are reported on their line with the
program, the lane and the offset, and masked off, so the run goes on.

The launch is found as Show Assembly finds it (:mod:`triton_ir`): a function of the file that
launches the kernel, called with its inputs as Profile builds them (directive, factory, the
script's run, a driver), or the script's own module-level launch. Only the first launch runs.
Uses triton internals (the interpreter's builder, ``GridExecutor``): kept in this module.

Nothing here measures time: the interpreter runs NumPy on the CPU; its values are the kernel's
semantics, never its performance.
"""

from __future__ import annotations

import math
import os
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from kernel_lens.agent.errors import ProfileError, format_exception
from kernel_lens.wire.lsp import OutOfBounds

__all__ = [
    "INTERPRETER_LABEL",
    "MemoryCheck",
    "ValueRecorder",
    "describe_value",
    "parse_program",
    "run_values",
]

#: What every view of these values says about where they came from.
INTERPRETER_LABEL = (
    "Triton interpreter (TRITON_INTERPRET=1) on the CPU: the kernel's values and semantics, "
    "not its performance"
)
#: The most elements of one block sent whole (for the hover's grid); larger blocks are cut.
MAX_ELEMENTS = 4096
#: Triton's element type names → NumPy's.
_TL_NAMES = {
    "fp8e4nv": "float8_e4m3",
    "fp8e5": "float8_e5m2",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "int1": "bool",
}


class _StopAfterLaunch(BaseException):
    """Raised once the kernel's first launch has run: the rest of the launcher never runs."""


def target_program(
    program: str | tuple[int, int, int], grid: tuple[int, int, int]
) -> tuple[int, int, int] | None:
    """The program id ``program`` names in ``grid`` (``first``, ``last`` or an id); ``None``
    for anything else."""
    if program == "first":
        return (0, 0, 0)
    if program == "last":
        return (grid[0] - 1, grid[1] - 1, grid[2] - 1)
    return program if isinstance(program, tuple) else None


def parse_program(text: str | None) -> str | tuple[int, int, int]:
    """``first``, ``last`` or ``x[,y[,z]]`` → ``"first"``, ``"last"`` or a 3-tuple.

    Raises:
        ProfileError: ``inputs`` for anything else.
    """
    value = (text or "first").strip().lower()
    if value in ("first", "last"):
        return value
    try:
        parts = [int(p) for p in value.replace(" ", "").split(",") if p != ""]
    except ValueError:
        parts = []
    if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
        raise ProfileError(
            "inputs", f"program id {text!r}: give first, last or x[,y[,z]] (non-negative ints)"
        )
    return (parts + [0, 0])[0], (parts + [0, 0])[1], (parts + [0, 0, 0])[2]


@dataclass
class _Storage:
    """One tensor argument of the launch, as the interpreter's host copy holds it."""

    name: str
    start: int
    """The storage's first byte (an address of the interpreter's host copy)."""
    end: int
    """One past the storage's last byte."""
    data_ptr: int
    """The tensor's own first element (its storage offset applied)."""
    itemsize: int
    numel: int
    dtype: str
    shape: list[int]

    def label(self) -> str:
        return f"{self.name} ({self.dtype}[{', '.join(map(str, self.shape))}])"


class Storages:
    """The launch's tensor arguments by address: which storage an address falls in."""

    def __init__(self) -> None:
        self.items: list[_Storage] = []

    def add(self, name: str, tensor: Any) -> None:
        """Record one tensor argument (a host copy the interpreter made)."""
        try:
            storage = tensor.untyped_storage()
            start = int(storage.data_ptr())
            end = start + int(storage.nbytes())
            item = _Storage(
                name=name,
                start=start,
                end=end,
                data_ptr=int(tensor.data_ptr()),
                itemsize=int(tensor.element_size()),
                numel=int(tensor.numel()),
                dtype=str(tensor.dtype).replace("torch.", ""),
                shape=[int(s) for s in tensor.shape],
            )
        except Exception:
            return
        if not any(s.start == item.start and s.name == item.name for s in self.items):
            self.items.append(item)

    def index(self, addresses: Any, size: int) -> Any:
        """For each address, the index of the storage holding ``size`` bytes there, or -1."""
        import numpy as np

        out = np.full(addresses.shape, -1, dtype=np.int64)
        for i, s in enumerate(self.items):
            inside = (addresses >= s.start) & (addresses + size <= s.end)
            out[(out == -1) & inside] = i
        return out

    def nearest(self, address: int) -> int:
        """The storage closest to ``address`` (for an access that falls in none)."""
        best, best_d = -1, None
        for i, s in enumerate(self.items):
            d = (
                0
                if s.start <= address < s.end
                else min(abs(address - s.start), abs(address - s.end))
            )
            if best_d is None or d < best_d:
                best, best_d = i, d
        return best

    def owner(self, address: int) -> _Storage | None:
        """The storage ``address`` lies in, if any."""
        for s in self.items:
            if s.start <= address < s.end:
                return s
        return None


@dataclass
class _Problem:
    line: int
    op: Literal["load", "store"]
    arg: str
    first_pid: tuple[int, int, int]
    first_lane: list[int]
    first_offset: int
    numel: int
    label: str
    masked_by_user: bool
    lanes: int = 0
    programs: set[tuple[int, int, int]] = field(default_factory=set)

    def to_json(self) -> OutOfBounds:
        where = (
            "before its start"
            if self.first_offset < 0
            else "past its end"
            if self.first_offset >= self.numel
            else "outside its storage"
        )
        lane = ", ".join(map(str, self.first_lane))
        pid = ", ".join(map(str, self.first_pid))
        lanes = f"{self.lanes} lane{'s' if self.lanes != 1 else ''}"
        programs = f"{len(self.programs)} program{'s' if len(self.programs) != 1 else ''}"
        message = (
            f"out-of-bounds {self.op} of {self.label}: program ({pid}) lane {lane} reads "
            if self.op == "load"
            else f"out-of-bounds {self.op} to {self.label}: program ({pid}) lane {lane} writes "
        )
        message += (
            f"offset {self.first_offset}, {where} ({self.numel} elements)"
            f"{'' if self.masked_by_user else ', no mask'} · {lanes} in {programs} "
            "(Triton interpreter; these lanes were masked off and the run went on)"
        )
        return {
            "line": self.line,
            "op": self.op,
            "arg": self.arg,
            "pid": list(self.first_pid),
            "lane": list(self.first_lane),
            "offset": self.first_offset,
            "numel": self.numel,
            "lanes": self.lanes,
            "programs": len(self.programs),
            "message": message,
        }


class MemoryCheck:
    """Checks each masked load and store of the interpreter against the launch's storages.

    A block's lanes belong to the storage most of its in-range lanes fall in; an active lane
    (mask on, or no mask) outside it is out of bounds: reported once per line, operation and
    argument (the first program and lane, with counts), then masked off so the interpreter does
    not touch memory it does not own and the run goes on.
    """

    def __init__(self, path: str, kernel: str) -> None:
        self.path = os.path.realpath(path)
        self.kernel = kernel
        self.storages = Storages()
        self.problems: dict[tuple[int, str, str], _Problem] = {}
        self.pid: tuple[int, int, int] = (0, 0, 0)

    def line(self) -> int:
        """The user's line running now: the innermost frame of the kernel's file."""
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None:
            if os.path.realpath(frame.f_code.co_filename) == self.path:
                return frame.f_lineno
            frame = frame.f_back
        return 0

    def check(self, op: Literal["load", "store"], ptrs: Any, mask: Any, user_mask: bool) -> Any:
        """The mask to use: ``mask`` with the out-of-bounds lanes of ``ptrs`` turned off."""
        import numpy as np

        if not self.storages.items:
            return mask
        addresses = np.asarray(ptrs.data).astype(np.uint64)
        active = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
        try:
            bits = ptrs.get_element_ty().primitive_bitwidth
        except Exception:
            bits = 8
        size = max(1, int(bits) // 8)
        index = self.storages.index(addresses.astype(np.int64), size)
        inside = index[active & (index >= 0)]
        if inside.size:
            home = int(np.bincount(inside).argmax())
        else:
            flat = addresses[active] if active.any() else addresses.reshape(-1)
            home = self.storages.nearest(int(flat.reshape(-1)[0])) if flat.size else -1
        if home < 0:
            return mask
        bad = active & (index != home)
        if not bad.any():
            return mask
        storage = self.storages.items[home]
        lanes = np.argwhere(bad)
        first = tuple(int(i) for i in lanes[0])
        offset = (int(addresses[first]) - storage.data_ptr) // storage.itemsize
        line = self.line()
        key = (line, op, storage.name)
        problem = self.problems.get(key)
        if problem is None:
            problem = self.problems[key] = _Problem(
                line=line,
                op=op,
                arg=storage.name,
                first_pid=self.pid,
                first_lane=list(first),
                first_offset=offset,
                numel=storage.numel,
                label=storage.label(),
                masked_by_user=user_mask,
            )
        problem.lanes += int(bad.sum())
        problem.programs.add(self.pid)
        return type(mask)(np.asarray(active & ~bad), mask.dtype)

    def to_json(self) -> list[OutOfBounds]:
        return [p.to_json() for p in sorted(self.problems.values(), key=lambda p: p.line)]


def _tl_dtype_name(dtype: Any) -> str:
    name = str(getattr(dtype, "name", dtype))
    return _TL_NAMES.get(name, name)


def _num(value: Any) -> Any:
    """A JSON number (4 significant digits for floats); ``None`` for NaN and infinities."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    f = float(value)
    if math.isnan(f) or math.isinf(f):
        return None
    return float(f"{f:.4g}")


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4g}".replace("-", "−")
    return str(value).replace("-", "−")


def _ints_text(flat: Any) -> str:
    items = [int(v) for v in (flat if flat.size <= 6 else [*flat[:3], flat[-1]])]
    text = " ".join(_fmt(v) for v in items)
    if flat.size > 6:
        head = " ".join(_fmt(v) for v in items[:3])
        text = f"{head} … {_fmt(items[-1])}"
    return text


def describe_value(
    name: str, value: Any, storages: Storages | None = None
) -> dict[str, Any] | None:
    """What one local holds, for a line's text and its hover: ``None`` for what is not a value
    (a function, a module, the interpreter's helpers).

    Returns:
        ``{"name", "kind", "dtype", "shape", "text", …}``: ``kind`` is ``block`` (a Triton
        block: ``data`` (flat, at most :data:`MAX_ELEMENTS`), ``masked`` for a bool block,
        ``min``/``max`` for numbers), ``pointers`` (a block of pointers: ``arg`` and ``data``
        the element offsets into it), ``scalar`` or ``constexpr``.
    """
    import numpy as np

    if type(value).__name__ == "constexpr" and hasattr(value, "value"):
        inner = value.value
        if isinstance(inner, bool | int | float):
            return {
                "name": name,
                "kind": "constexpr",
                "dtype": "constexpr",
                "shape": [],
                "text": f"{name}: constexpr {_fmt(inner)}",
                "value": _num(inner),
            }
        return None
    handle = getattr(value, "handle", None)
    data = getattr(handle, "data", None)
    if isinstance(data, np.ndarray):
        return _describe_tensor(name, value, data, storages)
    if isinstance(value, bool | int | float) and not name.startswith("_"):
        return {
            "name": name,
            "kind": "scalar",
            "dtype": type(value).__name__,
            "shape": [],
            "text": f"{name}: {_fmt(value)}",
            "value": _num(value),
        }
    return None


def _describe_tensor(name: str, value: Any, data: Any, storages: Storages | None) -> dict[str, Any]:
    """A value the interpreter holds as an array (``data``): a scalar, a block or pointers."""
    import numpy as np

    tl_type = getattr(value, "type", None)
    is_block = bool(getattr(tl_type, "is_block", lambda: False)())
    shape = [int(s) for s in getattr(tl_type, "shape", [])] if is_block else []
    dtype_obj = getattr(value, "dtype", None)
    is_ptr = bool(getattr(dtype_obj, "is_ptr", lambda: False)())
    if is_ptr:
        elem = _tl_dtype_name(getattr(dtype_obj, "element_ty", ""))
        dtype = f"*{elem}"
    else:
        dtype = str(data.dtype) if data.dtype != np.bool_ else "bool"
    if not is_block:
        return _describe_scalar(name, dtype, is_ptr, data, storages)
    arr = np.broadcast_to(data, shape) if shape and data.shape != tuple(shape) else data
    flat = arr.reshape(-1)
    dims = "×".join(map(str, shape)) if len(shape) > 1 else str(shape[0] if shape else 1)
    head = f"{name}: {dtype}[{dims}]"
    out: dict[str, Any] = {"name": name, "kind": "block", "dtype": dtype, "shape": shape}
    out["truncated"] = bool(flat.size > MAX_ELEMENTS)
    if is_ptr:
        return _describe_pointers(out, head, flat, storages)
    if data.dtype == np.bool_:
        return _describe_mask(out, head, flat)
    if np.issubdtype(data.dtype, np.integer):
        out["data"] = [int(v) for v in flat[:MAX_ELEMENTS]]
        out["min"], out["max"] = int(flat.min()), int(flat.max())
        out["text"] = (
            f"{head} {_ints_text(flat)}"
            if len(shape) <= 1
            else f"{head} min {_fmt(out['min'])} max {_fmt(out['max'])}"
        )
        return out
    return _describe_floats(out, head, flat)


def _describe_scalar(
    name: str, dtype: str, is_ptr: bool, data: Any, storages: Storages | None
) -> dict[str, Any]:
    """A scalar of the interpreter: a number, or a pointer (into which argument, where)."""
    scalar = data.reshape(-1)[0] if data.size else None
    if is_ptr and scalar is not None:
        owner = storages.owner(int(scalar)) if storages is not None else None
        where = (
            f"{owner.name} + {(int(scalar) - owner.data_ptr) // owner.itemsize}"
            if owner
            else f"0x{int(scalar):x}"
        )
        return {
            "name": name,
            "kind": "scalar",
            "dtype": dtype,
            "shape": [],
            "text": f"{name}: {dtype} → {where}",
        }
    shown = _num(scalar.item()) if scalar is not None else None
    return {
        "name": name,
        "kind": "scalar",
        "dtype": dtype,
        "shape": [],
        "text": f"{name}: {dtype} {_fmt(scalar.item()) if scalar is not None else '?'}",
        "value": shown,
    }


def _describe_pointers(
    out: dict[str, Any], head: str, flat: Any, storages: Storages | None
) -> dict[str, Any]:
    """A block of pointers: the argument most of them point into, and their element offsets."""
    import numpy as np

    owner = None
    if storages is not None and flat.size:
        idx = storages.index(flat.astype(np.int64), 1)
        valid = idx[idx >= 0]
        if valid.size:
            owner = storages.items[int(np.bincount(valid).argmax())]
    out["kind"] = "pointers"
    if owner is None:
        out["text"] = f"{head} (addresses outside every argument)"
        return out
    offsets = (flat.astype(np.int64) - owner.data_ptr) // owner.itemsize
    out["arg"] = owner.name
    out["data"] = [int(v) for v in offsets[:MAX_ELEMENTS]]
    out["min"], out["max"] = int(offsets.min()), int(offsets.max())
    out["text"] = f"{head} → {owner.name} + {_ints_text(offsets)}"
    return out


def _describe_mask(out: dict[str, Any], head: str, flat: Any) -> dict[str, Any]:
    """A bool block (a mask): how many lanes are off."""
    import numpy as np

    masked = int(flat.size - int(np.count_nonzero(flat)))
    out["masked"] = masked
    out["data"] = [bool(v) for v in flat[:MAX_ELEMENTS]]
    tail = (
        "all lanes on"
        if masked == 0
        else "all lanes masked"
        if masked == flat.size
        else f"{masked} lanes masked"
    )
    out["text"] = f"{head} · {tail}"
    return out


def _describe_floats(out: dict[str, Any], head: str, flat: Any) -> dict[str, Any]:
    """A float block: its finite min and max, and how many NaNs."""
    import numpy as np

    values = flat.astype(np.float64)
    finite = values[np.isfinite(values)]
    out["data"] = [_num(v) for v in flat[:MAX_ELEMENTS]]
    nan = int(np.isnan(values).sum())
    if finite.size:
        out["min"], out["max"] = _num(finite.min()), _num(finite.max())
        text = f"{head} min {_fmt(float(finite.min()))} max {_fmt(float(finite.max()))}"
    else:
        text = f"{head} (no finite value)"
    if nan:
        out["nan"] = nan
        text += f" · {nan} NaN"
    out["text"] = text
    return out


class ValueRecorder:
    """The trace hook of the chosen program: after each line of the kernel's body, the locals
    that line bound (objects kept, described at the end).

    Args:
        path: the kernel's file (the interpreter compiles its rewritten copy under it).
        kernel: the kernel function's name.
        iteration: which pass through a line to keep when it ran more than once: ``first``,
            ``last`` or a 1-based number (lines that ran fewer times keep their last).
    """

    def __init__(
        self,
        path: str,
        kernel: str,
        iteration: str | int = "first",
        statements: set[int] | None = None,
    ) -> None:
        self.path = os.path.realpath(path)
        self.statements = statements or set()
        self.kernel = kernel
        self.iteration = iteration
        self.hits: dict[int, int] = {}
        self.kept: dict[int, tuple[int, dict[str, Any]]] = {}
        self.order: dict[int, list[str]] = {}
        self._prev_line: int | None = None
        self._snapshot: dict[str, Any] = {}
        self.def_line: int | None = None

    def _is_kernel(self, code: types.CodeType) -> bool:
        return code.co_name == self.kernel and os.path.realpath(code.co_filename) == self.path

    def global_trace(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        """``sys.settrace``'s hook: only the kernel's own frame is traced line by line."""
        del arg
        if event == "call" and self._is_kernel(frame.f_code):
            self._prev_line = frame.f_code.co_firstlineno
            self.def_line = self._prev_line
            self._snapshot = {}
            return self._local
        return None

    def _keep(self, line: int, hit: int) -> bool:
        if self.iteration == "first":
            return hit == 1
        if self.iteration == "last":
            return True
        return hit <= int(self.iteration)

    def _flush(self, frame: types.FrameType) -> None:
        line = self._prev_line
        if line is None:
            return
        now = dict(frame.f_locals)
        changed = {
            k: v for k, v in now.items() if k not in self._snapshot or self._snapshot[k] is not v
        }
        self._snapshot = now
        if not changed:
            return
        hit = max(self.hits.get(line, 1), 1)
        if self._keep(line, hit):
            previous = self.kept.get(line)
            if previous is not None and previous[0] == hit:
                previous[1].update(changed)
            else:
                self.kept[line] = (hit, dict(changed))
            names = self.order.setdefault(line, [])
            names.extend(k for k in changed if k not in names)

    def _local(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        del arg
        if event == "line" and self.statements and frame.f_lineno not in self.statements:
            return self._local  # a continuation line of a statement: it still runs
        if event in ("line", "return"):
            self._flush(frame)
            if event == "line":
                line = frame.f_lineno
                if line != self._prev_line:  # back on a statement's first line: the same pass
                    self.hits[line] = self.hits.get(line, 0) + 1
                self._prev_line = line
            else:
                self._prev_line = None
        return self._local

    def lines(self, storages: Storages) -> list[dict[str, Any]]:
        """Each line that bound something: ``{"line", "hits", "hit", "values": […]}``."""
        out: list[dict[str, Any]] = []
        for line in sorted(self.kept):
            hit, values = self.kept[line]
            described = []
            for name in self.order.get(line, []):
                if name in values:
                    d = describe_value(name, values[name], storages)
                    if d is not None:
                        described.append(d)
            if described:
                out.append(
                    {
                        "line": line,
                        "hits": self.hits.get(line, 1),
                        "hit": hit,
                        "values": described,
                    }
                )
        return out


@contextmanager
def _interpreter_on() -> Iterator[None]:
    """``TRITON_INTERPRET=1`` while the block runs (read when ``@triton.jit`` decorates), with
    triton.language's own ``@jit`` helpers interpreted too
    (:func:`triton_driver.interpreted_language`)."""
    from kernel_lens.agent.triton_driver import interpreted_language, interpreter_device

    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    swapped = interpreted_language()
    try:
        with interpreter_device():  # the tutorials' DEVICE from Triton's driver: the CPU
            yield
    finally:
        for module, name, original in swapped:
            setattr(module, name, original)
        if previous is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = previous


@dataclass
class _Launch:
    """What the hooks learnt of the kernel's first launch."""

    started: bool = False
    done: bool = False
    grid: tuple[int, int, int] | None = None
    target: tuple[int, int, int] | None = None
    programs: int = 0
    error: BaseException | None = None


class _Hooks:
    """What wraps the interpreter for the kernel's first launch: its storages, its grid, the
    chosen program's trace, the memory checks; the launcher stopped right after it. Each
    method stands in for one of the interpreter's, whose original it calls."""

    def __init__(
        self,
        interp: Any,
        kernel: str,
        program: str | tuple[int, int, int],
        recorder: ValueRecorder,
        check: MemoryCheck,
    ) -> None:
        self.interp = interp
        self.kernel = kernel
        self.program = program
        self.recorder = recorder
        self.check = check
        self.launch = _Launch()
        self.active = False
        builder = interp.interpreter_builder
        self.originals = {
            "run": interp.InterpretedFunction.run,
            "init_args": interp.GridExecutor._init_args_hst,
            "grid_idx": builder.set_grid_idx,
            "grid_dim": builder.set_grid_dim,
            "load": builder.create_masked_load,
            "store": builder.create_masked_store,
            "plain_load": builder.create_load,
            "plain_store": builder.create_store,
        }

    def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        launch = self.launch
        name = getattr(getattr(fn, "fn", None), "__name__", "")
        if name != self.kernel or launch.started:
            return self.originals["run"](fn, *args, **kwargs)
        launch.started = True
        self.active = True
        try:
            self.originals["run"](fn, *args, **kwargs)
        except Exception as exc:
            launch.error = exc
        finally:
            self.active = False
            sys.settrace(None)
            launch.done = True
        raise _StopAfterLaunch

    def init_args(self, executor: Any, args_dev: Any, kwargs: Any) -> Any:
        args_hst, kwargs_hst = self.originals["init_args"](executor, args_dev, kwargs)
        if self.active:
            storages = self.check.storages
            names = list(getattr(executor, "arg_names", []))
            for i, value in enumerate(args_hst):
                if hasattr(value, "data_ptr"):
                    storages.add(names[i] if i < len(names) else f"arg{i}", value)
            for key, value in kwargs_hst.items():
                if hasattr(value, "data_ptr"):
                    storages.add(key, value)
        return args_hst, kwargs_hst

    def set_grid_dim(self, nx: int, ny: int, nz: int) -> Any:
        if self.active:
            launch = self.launch
            launch.grid = (int(nx), int(ny), int(nz))
            launch.target = target_program(self.program, launch.grid) or launch.target
        return self.originals["grid_dim"](nx, ny, nz)

    def set_grid_idx(self, x: int, y: int, z: int) -> Any:
        if self.active:
            check = self.check
            check.pid = (int(x), int(y), int(z))
            self.launch.programs += 1
            traced = check.pid == self.launch.target
            sys.settrace(self.recorder.global_trace if traced else None)
        return self.originals["grid_idx"](x, y, z)

    def load(self, ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
        if self.active:
            mask = self.check.check("load", ptrs, mask, True)
        return self.originals["load"](ptrs, mask, other, *rest)

    def store(self, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        if self.active:
            mask = self.check.check("store", ptrs, mask, True)
        return self.originals["store"](ptrs, value, mask, *rest)

    def _all_lanes(self, ptr: Any) -> Any:
        import numpy as np

        interp = self.interp
        return interp.TensorHandle(np.ones_like(ptr.data, dtype=bool), interp.tl.int1)

    def plain_load(self, ptr: Any, *rest: Any) -> Any:
        # No mask given by the kernel: every lane is on; checked as unmasked.
        if self.active:
            mask = self.check.check("load", ptr, self._all_lanes(ptr), False)
            return self.originals["load"](ptr, mask, None, rest[0], rest[1], rest[2])
        return self.originals["plain_load"](ptr, *rest)

    def plain_store(self, ptr: Any, val: Any, *rest: Any) -> Any:
        if self.active:
            mask = self.check.check("store", ptr, self._all_lanes(ptr), False)
            return self.originals["store"](ptr, val, mask, None, None)
        return self.originals["plain_store"](ptr, val, *rest)


@contextmanager
def _hooks(
    kernel: str, program: str | tuple[int, int, int], recorder: ValueRecorder, check: MemoryCheck
) -> Iterator[_Launch]:
    """Wrap the interpreter for the kernel's first launch (:class:`_Hooks`); unwrap it after."""
    from triton.runtime import interpreter as interp

    hooks = _Hooks(interp, kernel, program, recorder, check)
    builder = interp.interpreter_builder
    executor = interp.GridExecutor

    # Plain functions on the classes (a method of theirs gets its instance first).
    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return hooks.run(fn, *args, **kwargs)

    def init_args(self: Any, args_dev: Any, kwargs: Any) -> Any:
        return hooks.init_args(self, args_dev, kwargs)

    interp.InterpretedFunction.run = run
    executor._init_args_hst = init_args
    builder.set_grid_idx = hooks.set_grid_idx
    builder.set_grid_dim = hooks.set_grid_dim
    builder.create_masked_load = hooks.load
    builder.create_masked_store = hooks.store
    builder.create_load = hooks.plain_load
    builder.create_store = hooks.plain_store
    try:
        yield hooks.launch
    finally:
        sys.settrace(None)
        interp.InterpretedFunction.run = hooks.originals["run"]
        executor._init_args_hst = hooks.originals["init_args"]
        for attr in ("set_grid_idx", "set_grid_dim"):
            builder.__dict__.pop(attr, None)
        for attr in ("create_masked_load", "create_masked_store", "create_load", "create_store"):
            builder.__dict__.pop(attr, None)


def _kernel_lines(text: str, kernel: str) -> tuple[int | None, set[int]]:
    """The kernel's ``def`` line and the first line of each statement of its body."""
    import ast

    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            starts = {
                sub.lineno
                for sub in ast.walk(node)
                if isinstance(sub, ast.stmt) and sub is not node
            }
            return node.lineno, starts
    return None, set()


def _error_line(exc: BaseException, path: str) -> int | None:
    """The innermost line of ``path`` in the traceback (the kernel's line that failed)."""
    real = os.path.realpath(path)
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == real:
            line = tb.tb_lineno
        tb = tb.tb_next
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        inner = _error_line(cause, path)
        if inner is not None:
            line = inner
    return line


def run_values(
    path: str,
    text: str,
    kernel: str,
    *,
    program: str | None = "first",
    iteration: str | int = "first",
    driver: str | None = None,
    argv: list[str] | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """Run ``kernel``'s first launch under the interpreter: each line's values for one program,
    the out-of-bounds accesses of every program.

    Args:
        path: the file (absolute); text: its buffer text.
        kernel: the ``@triton.jit`` kernel's name.
        program: ``first``, ``last`` or ``x[,y[,z]]``.
        iteration: a line that ran several times (a loop's body): ``first``, ``last`` or the
            1-based pass to show.
        driver, argv, cwd: a script that calls the launcher (``--from``), as for a profile.

    Raises:
        ProfileError: no such kernel, no launch, or a launcher that failed before it.
    """
    path = os.path.abspath(path)
    chosen = parse_program(program)
    iteration = _parse_iteration(iteration)
    def_line, statements = _kernel_lines(text, kernel)
    if def_line is None:
        raise ProfileError("not-found", f"no kernel {kernel!r} in {os.path.basename(path)}")
    recorder = ValueRecorder(path, kernel, iteration, statements)
    check = MemoryCheck(path, kernel)
    launch, launcher_label, inputs, failure = run_first_launch(
        path,
        text,
        kernel,
        def_line,
        lambda: _hooks(kernel, chosen, recorder, check),
        driver=driver,
        argv=argv,
        cwd=cwd,
    )
    if launch.grid is None:
        raise ProfileError("runtime", f"{kernel}'s launch did not reach the interpreter", def_line)
    error: dict[str, Any] | None = None
    problem = launch.error or failure
    if problem is not None:
        cause = problem.__cause__ or problem
        error = {
            "line": _error_line(problem, path),
            "message": f"the interpreter stopped: {type(cause).__name__}: {cause}",
        }
    target_pid = launch.target or (0, 0, 0)
    in_grid = all(t < g for t, g in zip(target_pid, launch.grid, strict=True))
    return {
        "kernel": kernel,
        "def_line": def_line,
        "launcher": launcher_label,
        "inputs": inputs,
        "grid": list(launch.grid),
        "pid": list(target_pid),
        "program": program if isinstance(program, str) else "first",
        "in_grid": in_grid,
        "iteration": iteration,
        "programs_run": launch.programs,
        "lines": recorder.lines(check.storages),
        "oob": check.to_json(),
        "error": error,
        "interpreter": True,
        "label": INTERPRETER_LABEL,
    }


def _parse_iteration(iteration: str | int) -> str | int:
    """``first``, ``last`` or a pass numbered from 1.

    Raises:
        ProfileError: ``inputs`` for anything else.
    """
    if isinstance(iteration, str) and iteration not in ("first", "last"):
        try:
            iteration = int(iteration)
        except ValueError:
            raise ProfileError(
                "inputs", f"iteration {iteration!r}: give first, last or a number"
            ) from None
    if isinstance(iteration, int) and iteration < 1:
        raise ProfileError("inputs", "iteration: passes are numbered from 1")
    return iteration


def run_first_launch(
    path: str,
    text: str,
    kernel: str,
    def_line: int,
    hooks: Callable[[], AbstractContextManager[_Launch]],
    *,
    driver: str | None = None,
    argv: list[str] | None = None,
    cwd: str | None = None,
) -> tuple[_Launch, str, Any, BaseException | None]:
    """Run ``kernel``'s first launch under the interpreter, inside ``hooks()`` (which stop the
    launcher after it): by the file's launcher function (its inputs as Profile builds them, or a
    driver's call), else by the script's module-level code.

    Returns:
        ``(launch, launcher, inputs, failure)``: what the hooks learnt, the launcher's name
        (``<script>``), the inputs' description, and how the launch ended badly (if it did).

    Raises:
        ProfileError: no launcher, or one that failed before launching the kernel.
    """
    from kernel_lens.agent.stages.triton_ir import launched_at_module_level, launchers_in_text

    launchers = launchers_in_text(text, kernel)
    with _interpreter_on():
        if launchers:
            return _launch_by_launchers(
                path, text, kernel, launchers, hooks, driver=driver, argv=argv, cwd=cwd
            )
        if launched_at_module_level(text, kernel):
            # The script launches it: run it as __main__ with the hooks, up to that launch.
            launch, failure = _launch_by_script(path, text, kernel, hooks)
            return launch, "<script>", None, failure
        raise ProfileError(
            "not-found",
            f"no function in {os.path.basename(path)} launches {kernel}[grid](…) and the "
            "script does not launch it: Show Values runs a real launch",
            def_line,
        )


def _launch_by_launchers(
    path: str,
    text: str,
    kernel: str,
    launchers: list[str],
    hooks: Callable[[], AbstractContextManager[_Launch]],
    *,
    driver: str | None,
    argv: list[str] | None,
    cwd: str | None,
) -> tuple[_Launch, str, Any, BaseException | None]:
    """The first of the file's launcher functions that launches the kernel, called with its
    inputs inside ``hooks()``.

    Raises:
        ProfileError: the last launcher's failure before the launch, or none launched it.
    """
    from kernel_lens.agent.stages.target import load_target

    last_error: ProfileError | None = None
    for launcher in launchers:
        try:
            target = load_target(path, text, name=launcher, driver=driver, argv=argv, cwd=cwd)
        except ProfileError as err:
            last_error = err
            continue
        failure: BaseException | None = None
        with hooks() as launch:
            try:
                target.call()
            except _StopAfterLaunch:
                pass
            except Exception as exc:
                if not launch.started:
                    last_error = ProfileError(
                        "runtime",
                        f"{launcher} raised {type(exc).__name__}: {exc} before launching {kernel}",
                        _error_line(exc, path),
                        format_exception(exc),
                    )
                    continue
                failure = exc
        if launch.started:
            return launch, launcher, target.inputs, failure
    raise last_error or ProfileError(
        "not-found", f"{kernel} was not launched by {', '.join(launchers)}"
    )


def _launch_by_script(
    path: str, text: str, kernel: str, hooks: Callable[[], AbstractContextManager[_Launch]]
) -> tuple[_Launch, BaseException | None]:
    """The script run as ``__main__`` inside ``hooks()``, up to the kernel's first launch.

    Raises:
        ProfileError: the script ended before launching it.
    """
    failure: BaseException | None = None
    with hooks() as launch:
        try:
            _launch_from_script_with_hooks(path, text)
        except _StopAfterLaunch:
            pass
        except BaseException as exc:  # the script's own ending, whatever it is
            if not launch.started:
                raise ProfileError(
                    "runtime",
                    f"the script raised {type(exc).__name__}: {exc} before launching {kernel}",
                    _error_line(exc, path),
                    format_exception(exc),
                ) from None
            failure = exc
    return launch, failure


def _launch_from_script_with_hooks(path: str, text: str) -> None:
    """Run the file as ``__main__`` (the hooks stop it after the kernel's first launch)."""
    from kernel_lens.agent.usercode import compile_text, main_module

    code = compile_text(path, text)
    with main_module(path) as module:
        exec(code, module.__dict__)
