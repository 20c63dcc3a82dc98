"""Kernel Lens: GPU performance work for PyTorch, in the editor.

The package has three parts that never mix their imports:

* :mod:`kernel_lens.analysis` — pure functions over source text and recorded profiler data
  (no torch import), used by the CLI, the language server and the tests.
* :mod:`kernel_lens.agent` — runs in the user's interpreter; imports torch lazily and runs the
  profiling stages on the user's function.
* :mod:`kernel_lens.lsp` — the pygls language server; it never runs user code.
"""

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext kernel_lens``: register the ``%%kernel_lens`` / ``%kernel_lens`` magic.

    The magic (:mod:`kernel_lens.magic`) is imported here, on loading, so that
    ``import kernel_lens`` stays cheap and never imports IPython.
    """
    from kernel_lens.magic import load_ipython_extension as load

    load(ipython)
