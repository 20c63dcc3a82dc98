"""The adapter between pygls and the wire types of :mod:`kernel_lens.wire.lsp`.

pygls hands custom-request params over as namedtuples; :func:`structure` makes them the wire's
dataclasses. :func:`server_converter` is pygls's converter, sending :class:`JsonReady` results
as they are. (The wire package itself is standard library only: cattrs and pygls stay here.)
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import cattrs
import cattrs.gen

__all__ = ["JsonReady", "RawJson", "raw_json_list", "server_converter", "structure"]

T = TypeVar("T")

#: Plain names (``start_us``): lsprotocol's converter would look for camelCase keys.
_CONVERTER = cattrs.Converter()


def _plain(value: Any) -> Any:
    """JSON-like data from pygls' namedtuples (how it hands over custom-request params)."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class JsonReady(dict[str, Any]):
    """A result that is JSON already (plain dicts, lists, strings, numbers): the server's
    converter sends it as it is (`server_converter`), where cattrs would walk every value
    of it — a tenth of a second for the 26k-item overview of a 1M-event trace."""


class RawJson(str):
    """A request's result that is JSON text already: the server's protocol sends it as it is
    (``KernelLensProtocol``), without a walk by cattrs or a ``json.dumps`` on the loop."""


def raw_json_list(items: list[str]) -> RawJson:
    """The JSON list of ``items``, each the JSON text of one item (or of several, joined by
    commas)."""
    return RawJson("[" + ",".join([i for i in items if i]) + "]")


def _is_wire_dataclass(cls: Any) -> bool:
    return dataclasses.is_dataclass(cls) and getattr(cls, "__module__", "").startswith(
        "kernel_lens.wire."
    )


def server_converter() -> cattrs.Converter:
    """pygls's converter, sending `JsonReady` results unwalked, and the wire's dataclasses
    (notification params) as lsprotocol sends attrs classes: a field at its default is left
    out (a status without a ``uri`` has no ``uri`` key)."""
    from pygls.protocol import default_converter

    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_unstructure_hook(JsonReady, dict)

    def unstructure_omitting_defaults(cls: Any) -> Any:
        return cattrs.gen.make_dict_unstructure_fn(cls, converter, _cattrs_omit_if_default=True)

    converter.register_unstructure_hook_factory(_is_wire_dataclass, unstructure_omitting_defaults)
    return converter


def structure(cls: type[T], value: Any) -> T:
    """Custom-method params (JSON-like: dicts, or pygls' namedtuples) as the dataclass ``cls``,
    keys it does not have left out, the optional fields the client left out at their defaults
    (``position`` becomes a wire ``Position``); used by ``lsp/protocol.py`` for the params of
    every custom request."""
    if isinstance(value, cls):
        return value
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values = {k: v for k, v in (_plain(value) or {}).items() if k in names}
    return _CONVERTER.structure(values, cls)
