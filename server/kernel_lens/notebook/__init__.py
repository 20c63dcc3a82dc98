"""Kernel Lens inside a notebook's own kernel: the ``%%kernel_lens`` / ``%kernel_lens`` magic.

- :mod:`~kernel_lens.notebook.magic`: profile a cell, or one call, in the running Jupyter (or
  terminal IPython) kernel with the agent's stages (timing, the profiled pass, the result
  builder), its output rendered by :mod:`kernel_lens.analysis.report_html` (Jupyter) and
  :mod:`kernel_lens.analysis.report_text` (a terminal).

``%load_ext kernel_lens`` registers it (:func:`kernel_lens.load_ipython_extension` imports the
magic lazily, so ``import kernel_lens`` never imports IPython). A notebook opened in the editor
is another thing: the language server profiles it as a virtual script (``lsp/notebooks.py``,
``analysis/notebook_script.py``), through the agent like any file.
"""
