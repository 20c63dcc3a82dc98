"""The Kernel Lens language server (pygls 2). It never runs user code: jobs go to the agent.

Modules, from the leaves up (each imports only modules above it in this list):

- ``convert`` (params structured into the wire types of :mod:`kernel_lens.wire.lsp`, the methods'
  one definition, for pygls), ``settings``, ``results`` (a profile result placed on the current
  text);
- ``protocol``: pygls's protocol with the custom methods' params typed (the wire's dataclasses),
  the one module that names pygls' private parts;
- ``state``: one :class:`~kernel_lens.lsp.state.DocumentState` per document in a store, bounded
  caches, running jobs;
- ``feature`` (the hooks a feature has in the messages several features answer) and
  ``dispatch`` (their one registration each, fanned out to the features' hooks);
- ``models`` (each document version parsed once) and ``lens_json`` (lens rows of
  :mod:`kernel_lens.analysis.lens_rows` as LSP objects and JSON templates);
- ``language_server``: the server object that owns the settings, the state, the agent client
  and the dispatcher;
- ``common`` (URIs, documents' text, trust, errors the user reads, diagnostics keyed by
  ``(source, key)``, which function a request is about), ``jobs`` (an agent job with progress and
  cancel), ``traces`` (trace files read off the event loop), ``restore`` (an open document's
  last runs from the history);
- feature modules, each with a ``setup(server)``: ``lifecycle``, ``code_lens``, ``hover``,
  ``outline``, ``profiling``, ``generated``, ``report``, ``file_views``, ``history``,
  ``quick_fix``, ``notebooks``, ``timing_lint``;
- ``server``: :func:`~kernel_lens.lsp.server.create_server`, the list of feature modules (in
  any order).
"""

# A trusted workspace's agent starts now, importing torch while the server imports pygls and
# its modules (only when the client asked for it: kernel_lens/early_agent.py).
from kernel_lens.early_agent import start as _start_early_agent

_start_early_agent()

# The agent's analysis and the trace readers need pandas in the same interpreter. Finding it
# here makes the extension's start-up check (`import kernel_lens.lsp`) fail where it is missing,
# so the user is offered the install instead of meeting the error at the first profile. Found,
# not imported: the server needs it only once a trace is opened (lsp/traces.py imports the
# trace store then), and importing it cost every start ~0.25 s.
import importlib.util as _importlib_util  # noqa: E402

if _importlib_util.find_spec("pandas") is None:
    raise ModuleNotFoundError("No module named 'pandas'", name="pandas")
