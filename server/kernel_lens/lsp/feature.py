"""A feature's part in the LSP messages that several features answer (esbonio's
``LanguageFeature`` shape): one hook per shared message, each a no-op here.

A feature module defines a subclass overriding the hooks it takes part in and adds an instance
to the server's :class:`~kernel_lens.lsp.dispatch.Dispatcher` in its ``setup``; the dispatcher
holds the one registration of each shared message and fans it out. No feature registers a
shared message itself, wraps another feature's handler or touches pygls's handler tables, so the
order in which features are set up does not matter.

How the answers combine (:mod:`kernel_lens.lsp.dispatch`):

- ``document_open`` / ``document_change`` / ``document_close``: every feature's hook runs;
- ``code_lens`` / ``code_action``: every feature's list, joined in :attr:`order`, then name;
- ``hover``: the one feature that has an answer (the first by :attr:`order` if several do);
- diagnostics: published as they are unless a feature :meth:`claims` the document
  (:meth:`route_diagnostics`: a notebook's virtual script, whose diagnostics go to its cells);
- a command in :attr:`commands`: its one owner's :meth:`execute_command`;
- ``code_lens`` / ``hover`` once joined: rewritten, for the client, by the features
  :meth:`adapting` them (plain titles for editors other than VS Code).

A feature that :meth:`claims` a message for a document answers it alone for that document
(notebook cells: their lenses, hovers and Profile commands come from the notebook's script).
Each feature's exceptions are logged with its name; the others still answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, ClassVar, TypeAlias, TypeVar

from lsprotocol import types

from kernel_lens.lsp.convert import RawJson

__all__ = ["LanguageFeature", "MaybeAwaitable"]

T = TypeVar("T")
#: A hook's answer, or an awaitable of it (a hook may be ``async``).
MaybeAwaitable: TypeAlias = T | Awaitable[T]


class LanguageFeature:
    """Base class of a feature's hooks into the shared LSP messages (all no-ops here).

    Attributes:
        name: the feature's name in the log (its module's, by convention).
        order: where the feature's items go when lists are joined (lenses, code actions):
            lower first, then by name. Never the order features are set up in.
        commands: the commands this feature owns, each with the type its argument is
            structured into; the dispatcher registers each once.
    """

    name: ClassVar[str] = "feature"
    order: ClassVar[int] = 0
    commands: ClassVar[Mapping[str, type]] = {}

    def claims(self, method: str, uri: str) -> bool:
        """Whether this feature alone answers ``method`` (an LSP method, a command, or
        ``textDocument/publishDiagnostics``) for the document ``uri``."""
        del method, uri
        return False

    def document_open(self, params: types.DidOpenTextDocumentParams) -> MaybeAwaitable[None]:
        """``textDocument/didOpen``."""
        del params
        return None

    def document_change(self, params: types.DidChangeTextDocumentParams) -> MaybeAwaitable[None]:
        """``textDocument/didChange``."""
        del params
        return None

    def document_close(self, params: types.DidCloseTextDocumentParams) -> MaybeAwaitable[None]:
        """``textDocument/didClose``."""
        del params
        return None

    def code_lens(
        self, params: types.CodeLensParams
    ) -> MaybeAwaitable[list[types.CodeLens] | RawJson | None]:
        """``textDocument/codeLens``: this feature's lenses (``None``: none to give; JSON text
        of a list of lenses for a big file's, see ``code_lens.document_lenses_json``)."""
        del params
        return None

    def hover(self, params: types.HoverParams) -> MaybeAwaitable[types.Hover | None]:
        """``textDocument/hover``: this feature's hover (``None``: none to give)."""
        del params
        return None

    def code_action(
        self, params: types.CodeActionParams
    ) -> MaybeAwaitable[Sequence[types.Command | types.CodeAction] | None]:
        """``textDocument/codeAction``: this feature's actions (``None``: none to give)."""
        del params
        return None

    def adapting(self, method: str) -> bool:
        """Whether this feature rewrites the joined answer of ``method`` (``codeLens``,
        ``hover``) before it goes to the client (:meth:`adapt_code_lens`,
        :meth:`adapt_hover`): what an editor other than VS Code can show."""
        del method
        return False

    def adapt_code_lens(self, lenses: list[types.CodeLens]) -> list[types.CodeLens]:
        """The client's lenses made from every feature's (when :meth:`adapting`)."""
        return lenses

    def adapt_hover(self, hover: types.Hover) -> types.Hover:
        """The client's hover made from the answer (when :meth:`adapting`)."""
        return hover

    def route_diagnostics(
        self, uri: str, diagnostics: list[types.Diagnostic]
    ) -> dict[str, list[types.Diagnostic]] | None:
        """For a document this feature :meth:`claims` for ``textDocument/publishDiagnostics``:
        the documents its diagnostics are published on instead (``None``: as they are)."""
        del uri, diagnostics
        return None

    def execute_command(self, command: str, args: Any) -> MaybeAwaitable[Any]:
        """``workspace/executeCommand`` of one of :attr:`commands` (or of a command this
        feature :meth:`claims` for the argument's document)."""
        raise NotImplementedError(f"{self.name} does not run {command}")
