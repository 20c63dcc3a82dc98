"""Kernel Lens: GPU performance work for PyTorch, in the editor.

The package's rooms, whose imports go one way (``docs/architecture.md``;
``tests/unit/test_layering.py`` checks it):

* :mod:`kernel_lens.wire` — every type that crosses a process boundary (standard library only).
* :mod:`kernel_lens.analysis` — pure functions over source text and recorded profiler data
  (no torch import), used by the CLI, the language server and the tests.
* :mod:`kernel_lens.agent` — runs in the user's interpreter; imports torch lazily and runs the
  profiling stages on the user's function.
* :mod:`kernel_lens.client` — the parent side of the agent (spawn, spares, framing).
* :mod:`kernel_lens.lsp` — the pygls language server; it never runs user code.
* :mod:`kernel_lens.cli` — ``kernel-lens …``, the same engine from a terminal.
* :mod:`kernel_lens.traces` — profile files on disk: the big-trace reader, ``.ncu-rep`` reading.
* :mod:`kernel_lens.history` — every successful run of a function, and its comparisons.
* :mod:`kernel_lens.notebook` — the ``%%kernel_lens`` magic in the user's Jupyter kernel
  (``%load_ext kernel_lens``, :func:`load_ipython_extension` below).
"""

import os as _os
import sys as _sys

__version__ = "0.1.0"

#: The modules started with ``python -m`` that never run user code and must import nothing from
#: the folder they were started in (an editor starts its language server in the project).
_SERVER_MODULES = frozenset(
    {"kernel_lens.lsp", "kernel_lens.lsp.__main__", "kernel_lens.traces.reader"}
)


def _started_as_server() -> bool:
    """Whether this interpreter is ``python -m`` of one of :data:`_SERVER_MODULES`, told while the
    module is being found: ``sys.argv[0]`` is ``"-m"`` until then, and the module's name is the
    word of ``sys.orig_argv`` just before the script's own arguments (``-m NAME`` or ``-mNAME``)."""
    argv = _sys.argv
    orig = getattr(_sys, "orig_argv", None)
    if not argv or argv[0] != "-m" or not orig or len(orig) < len(argv) + 1:
        return False
    word = orig[len(orig) - len(argv)]
    return word.removeprefix("-m") in _SERVER_MODULES


def _drop_working_directory() -> None:
    """``python -m kernel_lens.lsp`` puts the working directory first on ``sys.path`` — for an
    editor's language server that is the user's project, where an ``attrs.py``,
    ``typing_extensions.py`` or ``pygls.py`` would then be imported instead of the server's own
    (and run, even in an untrusted workspace). This package's ``__init__`` is the first of the
    server's code Python runs for ``-m`` (before ``kernel_lens.lsp`` and its imports), so the
    entry goes here. Python's own ``-m`` machinery (``runpy``: ``importlib``, ``types``,
    ``functools``, ``contextlib``…, all standard library) has already been imported by then;
    the ``kernel-lens-lsp`` console script never has the folder on its path at all."""
    if not _started_as_server() or not _sys.path:
        return
    try:
        here = _os.path.realpath(_os.getcwd())
    except OSError:
        here = None
    # Every entry that is the working directory: ``-m``'s first one, and an empty entry of
    # ``PYTHONPATH`` (``PYTHONPATH=/x:`` — a trailing colon means the working directory too).
    _sys.path[:] = [
        p for p in _sys.path if p != "" and (here is None or _os.path.realpath(p) != here)
    ]


_drop_working_directory()


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext kernel_lens``: register the ``%%kernel_lens`` / ``%kernel_lens`` magic.

    The magic (:mod:`kernel_lens.notebook.magic`) is imported here, on loading, so that
    ``import kernel_lens`` stays cheap and never imports IPython.
    """
    from kernel_lens.notebook.magic import load_ipython_extension as load

    load(ipython)
