"""Every type that crosses a process boundary, defined once: standard library only.

Both sides import these modules: the agent (in the user's interpreter, which may lack our
dependencies), the language server and the CLI. The extension's TypeScript is generated from
them (``scripts/gen_wire.py`` writes ``extension/generated/wire.ts``; a test fails when it is
stale), so a field is written here and nowhere else by hand.

- :mod:`~kernel_lens.wire.errors`: the error kinds, :class:`ProfileError` and its JSON object;
- :mod:`~kernel_lens.wire.jobs`: the agent's job requests (``profile``, ``sweep``, ``asm``…);
- :mod:`~kernel_lens.wire.results`: every stage's result, as a ``TypedDict``;
- :mod:`~kernel_lens.wire.lsp`: the ``kernelLens/*`` methods, command ids, params and results;
- :mod:`~kernel_lens.wire.envelope`: the agent's JSON-lines messages and their limits;
- :mod:`~kernel_lens.wire.paths`: the cache folders (the one copy of the cache-root rule).

Nothing here imports anything outside the standard library (``tests/unit/test_layering.py``).
"""
