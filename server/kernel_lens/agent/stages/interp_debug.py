"""Debug Kernel: one ``@triton.jit`` kernel's launch under Triton's interpreter, in a process that
``debugpy`` runs, stopping on the kernel's first line for one chosen program.

The interpreter runs a rewritten copy of the kernel (compiled under the file's own path, so the
debugger shows the user's lines). Here that rewrite is given one more statement, on the ``def``
line: ``if <this is the chosen program>: debugpy.breakpoint()`` — called from the kernel's own
frame, so the debugger stops there, on the body's first line, before it runs; every other
program runs through. No debugger of our own: the stop, the stepping, the watches are
debugpy's. The blocks show as arrays in the Variables view through a pydevd type resolver
(``debug_plugins/pydevd_plugins/extensions/pydevd_plugin_kernel_lens.py``).
"""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kernel_lens.agent.stages.interp_values import (
    _kernel_lines,
    _Launch,
    _StopAfterLaunch,
    parse_program,
    run_first_launch,
    target_program,
)
from kernel_lens.wire.errors import ProfileError

__all__ = ["PLUGINS_DIR", "debug_launch", "main"]

#: The folder to put on ``PYTHONPATH`` for the Variables view's block resolver.
PLUGINS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "debug_plugins")
#: The names the injected statement calls (in the kernel's globals).
AT_PROGRAM = "__kernel_lens_at_program__"
BREAK = "__kernel_lens_breakpoint__"


def _inject(tree: ast.AST, kernel: str) -> None:
    """Put ``if AT_PROGRAM(): BREAK()`` first in ``kernel``'s body (on the ``def`` line)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == kernel and node.body:
            at = 0
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and len(node.body) > 1
            ):
                at = 1  # after the docstring
            anchor = node.body[at]
            stop = ast.If(
                test=ast.Call(func=ast.Name(id=AT_PROGRAM, ctx=ast.Load()), args=[], keywords=[]),
                body=[
                    ast.Expr(
                        value=ast.Call(
                            func=ast.Name(id=BREAK, ctx=ast.Load()), args=[], keywords=[]
                        )
                    )
                ],
                orelse=[],
            )
            # On the def line: debugpy suspends at the frame's next line event, which is then the
            # body's first line, before it runs (on that line itself it would have run first).
            for sub in ast.walk(stop):
                ast.copy_location(sub, anchor)
                sub.lineno = node.lineno  # type: ignore[attr-defined]
                sub.end_lineno = node.lineno  # type: ignore[attr-defined]
            node.body.insert(at, stop)
            return


@contextmanager
def _debug_hooks(
    kernel: str, program: str | tuple[int, int, int], breakpoint_fn: Callable[[], Any]
) -> Iterator[_Launch]:
    """The kernel's first launch with the stop injected for the chosen program; the launcher is
    stopped right after that launch."""
    from triton.runtime import interpreter as interp

    launch = _Launch()
    builder = interp.interpreter_builder
    originals = {
        "run": interp.InterpretedFunction.run,
        "transform": interp.FunctionRewriter._transform_ast,
        "grid_idx": builder.set_grid_idx,
        "grid_dim": builder.set_grid_dim,
    }
    current: dict[str, Any] = {"pid": None, "on": False}

    def at_program() -> bool:
        return bool(current["on"]) and current["pid"] == launch.target

    def transform(self: Any, src: str) -> Any:
        tree = originals["transform"](self, src)
        if getattr(self.fn, "__name__", "") == kernel:
            _inject(tree, kernel)
            ast.fix_missing_locations(tree)
            self.fn.__globals__[AT_PROGRAM] = at_program
            self.fn.__globals__[BREAK] = breakpoint_fn
        return tree

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(getattr(self, "fn", None), "__name__", "")
        if name != kernel or launch.started:
            return originals["run"](self, *args, **kwargs)
        launch.started = True
        current["on"] = True
        try:
            originals["run"](self, *args, **kwargs)
        except Exception as exc:
            launch.error = exc
        finally:
            current["on"] = False
            launch.done = True
        raise _StopAfterLaunch

    def set_grid_dim(nx: int, ny: int, nz: int) -> Any:
        if current["on"]:
            launch.grid = (int(nx), int(ny), int(nz))
            launch.target = target_program(program, launch.grid) or launch.target
        return originals["grid_dim"](nx, ny, nz)

    def set_grid_idx(x: int, y: int, z: int) -> Any:
        if current["on"]:
            current["pid"] = (int(x), int(y), int(z))
            launch.programs += 1
        return originals["grid_idx"](x, y, z)

    interp.InterpretedFunction.run = run
    interp.FunctionRewriter._transform_ast = transform
    builder.set_grid_idx = set_grid_idx
    builder.set_grid_dim = set_grid_dim
    try:
        yield launch
    finally:
        interp.InterpretedFunction.run = originals["run"]
        interp.FunctionRewriter._transform_ast = originals["transform"]
        builder.__dict__.pop("set_grid_idx", None)
        builder.__dict__.pop("set_grid_dim", None)


def debug_launch(
    path: str,
    kernel: str,
    *,
    program: str = "first",
    driver: str | None = None,
    argv: list[str] | None = None,
    breakpoint_fn: Callable[[], Any] | None = None,
) -> _Launch:
    """Run ``kernel``'s first launch of ``path`` (as saved) under the interpreter, stopping in
    the debugger (``breakpoint_fn``, default ``debugpy.breakpoint``) on the kernel's first line
    for ``program``.

    Raises:
        ProfileError: no such kernel, no launch, a launcher that failed before it.
    """
    from kernel_lens.agent.usercode import read_source

    path = os.path.abspath(path)
    text = read_source(path)
    chosen = parse_program(program)
    def_line, _ = _kernel_lines(text, kernel)
    if def_line is None:
        raise ProfileError("not-found", f"no kernel {kernel!r} in {os.path.basename(path)}")
    if breakpoint_fn is None:
        import debugpy

        breakpoint_fn = debugpy.breakpoint
    launch, _launcher, _inputs, failure = run_first_launch(
        path,
        text,
        kernel,
        def_line,
        lambda: _debug_hooks(kernel, chosen, breakpoint_fn),
        driver=driver,
        argv=argv,
    )
    problem = launch.error or failure
    if problem is not None:
        raise problem
    return launch


def main(argv: list[str] | None = None) -> int:
    """``python -m kernel_lens.agent.stages.interp_debug PATH KERNEL [--pid P] [--from DRIVER]
    [-- ARGS…]``: what the Debug Kernel session runs."""
    import argparse

    words = list(sys.argv[1:] if argv is None else argv)
    driver_args: list[str] = []
    if "--" in words:
        cut = words.index("--")
        words, driver_args = words[:cut], words[cut + 1 :]
    parser = argparse.ArgumentParser(prog="kernel-lens debug kernel")
    parser.add_argument("path")
    parser.add_argument("kernel")
    parser.add_argument("--pid", default="first")
    parser.add_argument("--from", dest="driver", default=None)
    args = parser.parse_args(words)
    try:
        launch = debug_launch(
            args.path, args.kernel, program=args.pid, driver=args.driver, argv=driver_args
        )
    except ProfileError as err:
        print(f"Kernel Lens: {err.message}", file=sys.stderr)
        return 1
    pid = ", ".join(map(str, launch.target or ()))
    grid = " × ".join(map(str, launch.grid or ()))
    target, grid_dims = launch.target, launch.grid
    if target and grid_dims and any(t >= g for t, g in zip(target, grid_dims, strict=True)):
        print(f"Kernel Lens: program ({pid}) is outside the grid {grid}: nothing stopped")
    print(
        f"Kernel Lens: {args.kernel} ran under Triton's interpreter ({launch.programs} programs "
        f"of grid {grid}; stopped for program ({pid}))"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
