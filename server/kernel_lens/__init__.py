"""Kernel Lens: GPU performance work for PyTorch, in the editor.

The package has three parts that never mix their imports:

* :mod:`kernel_lens.analysis` — pure functions over source text and recorded profiler data
  (no torch import), used by the CLI, the language server and the tests.
* :mod:`kernel_lens.agent` — runs in the user's interpreter; imports torch lazily and runs the
  profiling stages on the user's function.
* :mod:`kernel_lens.lsp` — the pygls language server; it never runs user code.
"""

__version__ = "0.1.0"
