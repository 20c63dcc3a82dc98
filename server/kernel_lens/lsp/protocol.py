"""The one module that touches pygls' private parts (``tests/unit/test_layering.py`` holds it).

:class:`KernelLensProtocol` is pygls's ``LanguageServerProtocol`` with three changes:

- **typed params for the custom methods** (pygls's documented way, esbonio's
  ``SphinxAgentProtocol``): :meth:`~KernelLensProtocol.get_message_type` names a message type
  for each ``kernelLens/*`` request of :data:`kernel_lens.wire.lsp.REQUESTS` and the
  client's ``kernelLens/setTrusted``, whose ``params`` pygls's converter structures into the
  wire's dataclass, so a handler takes ``params: ReportParams`` (pygls would hand over a
  namedtuple). Params that cannot be structured are answered with ``InvalidParams`` (pygls
  would leave the request unanswered);
- a request after ``shutdown`` is answered with ``InvalidRequest`` (pygls 2.1.1 drops it);
- a :class:`~kernel_lens.lsp.convert.RawJson` result is written as the JSON text it is.

:func:`converter_of` is the server's cattrs converter (pygls keeps it on the protocol, private).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import logging
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from kernel_lens.lsp.convert import RawJson, structure
from kernel_lens.wire.lsp import NOTIFY_SET_TRUSTED, REQUESTS, SetTrustedParams

__all__ = [
    "CLIENT_NOTIFICATIONS",
    "CustomNotification",
    "CustomRequest",
    "KernelLensProtocol",
    "converter_of",
]

logger = logging.getLogger(__name__)

#: The custom notifications the client sends -> their params.
CLIENT_NOTIFICATIONS: dict[str, type[Any]] = {NOTIFY_SET_TRUSTED: SetTrustedParams}


@dataclasses.dataclass
class CustomRequest:
    """A ``kernelLens/*`` request, its ``params`` the wire's dataclass of the method."""

    id: int | str
    method: str
    params: Any
    jsonrpc: str = "2.0"


@dataclasses.dataclass
class CustomNotification:
    """A ``kernelLens/*`` notification from the client, its ``params`` the wire's dataclass."""

    method: str
    params: Any
    jsonrpc: str = "2.0"


@dataclasses.dataclass
class _Unreadable:
    """A custom request whose params could not be structured: answered with the error."""

    id: int | str
    method: str
    error: JsonRpcException
    jsonrpc: str = "2.0"


def converter_of(server: LanguageServer) -> cattrs.Converter:
    """The server's cattrs converter (what pygls structures and unstructures messages with)."""
    return server.protocol._converter  # type: ignore[no-any-return]


class KernelLensProtocol(LanguageServerProtocol):
    """pygls's protocol with the custom methods' params typed, ``InvalidRequest`` after
    ``shutdown`` and JSON text results written as they are (see the module)."""

    def __init__(self, server: LanguageServer, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        #: Each custom method the client sends -> its params' dataclass.
        self.params_types: dict[str, type[Any]] = {
            method: params for method, (params, _) in REQUESTS.items()
        }
        self.params_types.update(CLIENT_NOTIFICATIONS)
        converter.register_structure_hook(CustomRequest, self._structure_request)
        converter.register_structure_hook(CustomNotification, self._structure_notification)

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in REQUESTS:
            return CustomRequest
        if method in CLIENT_NOTIFICATIONS:
            return CustomNotification
        return super().get_message_type(method)

    def _params(self, obj: dict[str, Any]) -> Any:
        return structure(self.params_types[obj["method"]], obj.get("params") or {})

    def _structure_request(self, obj: dict[str, Any], _: Any) -> CustomRequest:
        return CustomRequest(
            id=obj["id"], method=obj["method"], params=self._params(obj), jsonrpc=obj["jsonrpc"]
        )

    def _structure_notification(self, obj: dict[str, Any], _: Any) -> CustomNotification:
        return CustomNotification(
            method=obj["method"], params=self._params(obj), jsonrpc=obj["jsonrpc"]
        )

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            # A custom request whose params are not its type: pygls would log it and leave
            # the client waiting; it is answered with the error instead.
            if data.get("method") in REQUESTS and data.get("id") is not None:
                if isinstance(error, JsonRpcInvalidParams) or error.code == -32603:
                    error = JsonRpcInvalidParams(f"{data['method']}: the params are not valid")
                return _Unreadable(id=data["id"], method=data["method"], error=error)
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Unreadable):
            self._send_response(message.id, error=message.error.to_response_error())
            return
        if (
            self._shutdown
            and getattr(message, "method", None) not in (None, types.EXIT)
            and getattr(message, "id", None) is not None
        ):
            # pygls 2.1.1 drops every message after ``shutdown`` but ``exit`` without a word,
            # so a client that still asks waits for ever. The specification: "If a server
            # receives requests after a shutdown request those requests should error with
            # ``InvalidRequest``" (-32600); notifications after it are dropped.
            error = JsonRpcInvalidRequest(
                f"the server is shutting down: {message.method} after shutdown"
            )
            self._send_response(message.id, error=error.to_response_error())
            return
        super().handle_message(message)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """A :class:`~kernel_lens.lsp.convert.RawJson` result goes out as the JSON text it is
        (a big file's lenses: no walk of tens of thousands of objects on the event loop)."""
        if error is not None or not isinstance(result, RawJson):
            super()._send_response(msg_id, result, error)
            return
        self._result_types.pop(msg_id, None)
        if self.writer is None:
            return
        # Encoded once (a big file's lenses are tens of MB: each copy costs).
        data = f'{{"jsonrpc": "2.0", "id": {json.dumps(msg_id)}, "result": {result}}}'.encode(
            self.CHARSET
        )
        if self._include_headers:
            header = (
                f"Content-Length: {len(data)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            data = header.encode(self.CHARSET) + data
        written = self.writer.write(data)
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)
