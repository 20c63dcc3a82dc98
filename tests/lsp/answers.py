"""Raw JSON answers of the real server, checked against the wire's declared result types
(``kernel_lens.wire.lsp.RESULT_TYPES``) and recorded under ``tests/data/protocol``.

``capture_answers`` keeps each response's raw ``result`` (pygls turns custom results into
namedtuples), ``ask`` sends one request and returns its raw answer, ``check_type`` checks a JSON
value against a Python type, and ``record_or_compare`` checks a live answer and its recorded file
(written when missing or when ``KERNEL_LENS_RECORD_PROTOCOL=1``). Used by
``test_protocol_answers.py`` and the other modules that check an answer's shape.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import types as pytypes
import typing
from pathlib import Path
from typing import Any, Literal, Union

from pytest_lsp import LanguageClient
from typing_extensions import NotRequired, is_typeddict

from kernel_lens.wire.lsp import RESULT_TYPES
from tests.lsp.client import ROOT

PROTOCOL = ROOT / "tests" / "data" / "protocol"
#: Recorded files name the repository by this root, so that they do not depend on the checkout.
FAKE_ROOT = "/home/user/kernel-lens"
RECORD = os.environ.get("KERNEL_LENS_RECORD_PROTOCOL") == "1"


class TypeMismatchError(AssertionError):
    """A JSON value that does not match its declared type (``where`` is a JSON path)."""


def check_type(value: Any, tp: Any, where: str = "$") -> None:
    """Check JSON ``value`` against a Python type: TypedDict, ``list[…]``, ``tuple[…]`` (a list
    of that length), ``dict[str, …]``, unions, ``Literal``, ``None``, ``str``/``int``/``float``/
    ``bool``, ``Any``.

    TypedDicts need their required keys, may lack their ``NotRequired`` ones, and may hold keys
    they do not declare (the TypeScript side reads only what it declares). JSON numbers: ``float``
    accepts integers; neither number type accepts booleans.

    Raises:
        TypeMismatchError: where and how the value differs.
    """
    origin = typing.get_origin(tp)
    if tp is Any:
        return
    if tp is None or tp is type(None):
        if value is not None:
            raise TypeMismatchError(f"{where}: expected null, got {value!r:.80}")
        return
    if origin is NotRequired:
        check_type(value, typing.get_args(tp)[0], where)
        return
    if origin in (Union, pytypes.UnionType):
        errors = []
        for option in typing.get_args(tp):
            try:
                check_type(value, option, where)
                return
            except TypeMismatchError as exc:
                errors.append(str(exc))
        raise TypeMismatchError(" / ".join(errors))
    if origin is Literal:
        if value not in typing.get_args(tp):
            raise TypeMismatchError(f"{where}: {value!r:.80} is not one of {typing.get_args(tp)}")
        return
    if is_typeddict(tp):
        if not isinstance(value, dict):
            raise TypeMismatchError(
                f"{where}: expected an object ({tp.__name__}), got {value!r:.80}"
            )
        hints = typing.get_type_hints(tp, include_extras=True)
        for key in tp.__required_keys__:
            if key not in value:
                raise TypeMismatchError(f"{where}: {tp.__name__} lacks {key!r}")
        for key, hint in hints.items():
            if key in value:
                check_type(value[key], hint, f"{where}.{key}")
        return
    if origin is list:
        if not isinstance(value, list):
            raise TypeMismatchError(f"{where}: expected a list, got {value!r:.80}")
        (item,) = typing.get_args(tp)
        for i, v in enumerate(value):
            check_type(v, item, f"{where}[{i}]")
        return
    if origin is tuple:
        items = typing.get_args(tp)
        if not isinstance(value, list) or len(value) != len(items):
            raise TypeMismatchError(f"{where}: expected a list of {len(items)}, got {value!r:.80}")
        for i, (v, item) in enumerate(zip(value, items, strict=True)):
            check_type(v, item, f"{where}[{i}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise TypeMismatchError(f"{where}: expected an object, got {value!r:.80}")
        key_type, item = typing.get_args(tp)
        for k, v in value.items():
            check_type(k, key_type, f"{where} key")
            check_type(v, item, f"{where}.{k}")
        return
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp in (str, bool):
        ok = isinstance(value, tp)
    else:
        raise TypeError(f"{where}: cannot check against {tp!r}")
    if not ok:
        raise TypeMismatchError(f"{where}: expected {tp.__name__}, got {value!r:.80}")


def normalized(value: Any) -> Any:
    """The answer with this checkout's root replaced by :data:`FAKE_ROOT` (paths and URIs)."""
    text = json.dumps(value)
    text = text.replace(ROOT.as_uri(), "file://" + FAKE_ROOT).replace(str(ROOT), FAKE_ROOT)
    return json.loads(text)


def record_or_compare(method: str, answer: Any) -> Path:
    """Check the live answer, write it when recording, and check the recorded file."""
    result_type = RESULT_TYPES[method]
    check_type(answer, result_type)
    path = PROTOCOL / f"{method.replace('/', '_')}.json"
    if RECORD or not path.exists():
        PROTOCOL.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(normalized(answer), indent=1, sort_keys=True) + "\n")
    recorded = json.loads(path.read_text())
    check_type(recorded, result_type)
    assert sorted(recorded) == sorted(answer), f"{path.name} lacks or has extra keys: re-record"
    return path


def capture_answers(client: LanguageClient) -> dict[Any, Any]:
    """Keep each response's raw ``result`` (pygls turns custom results into namedtuples)."""
    raw: dict[Any, Any] = {}
    structure = client.protocol.structure_message

    def keep(data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and "id" in data and "result" in data and "method" not in data:
            raw[data["id"]] = copy.deepcopy(data["result"])
        return structure(data)

    client.protocol.structure_message = keep  # type: ignore[method-assign]
    return raw


async def ask(client: LanguageClient, raw: dict[Any, Any], method: str, params: Any) -> Any:
    """Send a request and return its raw JSON answer."""
    before = set(raw)
    await asyncio.wait_for(client.protocol.send_request_async(method, params), 300)
    (new,) = set(raw) - before
    return raw.pop(new)
