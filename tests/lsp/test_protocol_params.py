"""Custom requests' params are typed by the server's protocol (``lsp/protocol.py``, pygls'
documented way): well-formed params reach the handler as the wire's dataclass, params that are
not the method's type are answered with ``InvalidParams`` instead of leaving the client waiting
(pygls alone logs them and never answers)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from kernel_lens.wire.lsp import REQ_FUNCTIONS, REQ_TIMELINE_WINDOW
from tests.lsp.client import CASES, OPTIONS, initialize, open_doc, server_config


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient) -> Any:
    await initialize(lsp_client, OPTIONS)
    yield
    await lsp_client.shutdown_session()


async def _ask(client: LanguageClient, method: str, params: Any) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), 60)


@pytest.mark.asyncio
async def test_typed_params_reach_the_handler(client: LanguageClient) -> None:
    uri = open_doc(client, CASES)
    # a key the params type does not have is left out, as before
    answer = await _ask(client, REQ_FUNCTIONS, {"uri": uri, "unknown": 1})
    names = [f.name for f in answer.functions]
    assert names and all(isinstance(f.line, int) for f in answer.functions)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "method, params",
    [
        (REQ_FUNCTIONS, {}),  # no uri
        (REQ_TIMELINE_WINDOW, {"path": "/tmp/x.json", "start_us": "soon", "end_us": 1.0}),
    ],
)
async def test_params_not_of_the_type_are_answered_invalid_params(
    client: LanguageClient, method: str, params: Any
) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await _ask(client, method, params)
    assert caught.value.code == -32602, caught.value
    assert method in str(caught.value)
    # and the server still answers
    answer = await _ask(client, REQ_FUNCTIONS, {"uri": open_doc(client, CASES)})
    assert answer.functions
