"""The profile files on disk: the big-trace reader (the processes, shared memory and files that
let the server open a trace of millions of events at interactive speed) and the Nsight Compute
report reader, kept out of :mod:`kernel_lens.analysis` (pure).

- :mod:`~kernel_lens.traces.read`: a file into `TraceColumns` (msgspec's typed records, forked
  workers writing into shared memory for big traces), and `summarize_file`;
- :mod:`~kernel_lens.traces.decode`: msgspec's records (optional: the ``traces`` extra);
- :mod:`~kernel_lens.traces.cache`: the columnar cache folders (``.npy`` memory-mapped);
- :mod:`~kernel_lens.traces.reader`: the reader process's entry (``--serve`` for the spare);
- :mod:`~kernel_lens.traces.readers`: the server's side of reader processes (the spare, one
  reading with progress and cancel, the memory check);
- :mod:`~kernel_lens.traces.ncu_files`: finding ``ncu`` and NVIDIA's ``ncu_report``, and reading
  a ``.ncu-rep`` with one or the other (``ncu --import`` runs a subprocess); used by the server,
  the CLI and the agent's ncu stage.
"""
