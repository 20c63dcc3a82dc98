"""Code-lens latency of the language server against file size, and a hover on another file
while the big one is being read (issue 26 item 3).

    python benchmarks/bench_lens_scale.py [--sizes 1000,5000,20000,60000]

Starts ``python -m kernel_lens.lsp`` over stdio with a real pygls client (code-lens refresh
supported, as VS Code does; the agent is the test stand-in, so no torch is imported), and for
each size opens a generated file of that many functions (a quarter each: torch work, a ``@``
product, plain arithmetic, a caller of the first kind; ~100 bytes a function, so 60 000 make
6 MB) and measures:

- **first answer**: from ``didOpen`` to the answer of the first ``textDocument/codeLens``
  (a file still being read answers one "reading…" lens within ``LENS_WAIT_S``);
- **lenses**: from ``didOpen`` to the answer that carries the functions' lenses (after the
  server's ``workspace/codeLens/refresh`` when the first answer was "reading…");
- **again**: a second request on the same version (the model is kept: no parse);
- **hover elsewhere**: a hover on another, small open file sent right after the big file's
  ``didOpen`` and code-lens request, while the big one is being read;
- **received**: the first answer's bytes all read by the client, before its JSON decoding
  (this Python client's ``json.loads`` of a 20 MB answer takes ~0.6 s on the development VM;
  an editor's ``JSON.parse`` a fraction of that): what the server and the pipe take;
- **node JSON.parse**: that answer (over 1 MB) parsed by ``node``'s ``JSON.parse`` (best of 3;
  0 without node or a big answer): received + this is what an editor would wait.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygls.io_
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol.json_rpc import JsonRPCResponseMessage

ROOT = Path(__file__).resolve().parent.parent
FAKE_AGENT = ROOT / "tests" / "lsp" / "fake_agent.py"
SMALL = ROOT / "kernels" / "square.py"


def generated_module(n: int) -> str:
    """A module of ``n`` functions (the benchmark's and the tests' big file)."""
    out = ["import torch", ""]
    for i in range(n):
        kind = i % 4
        head, body = {
            0: (f"def f{i}(x, BLOCK=128):", f"c = torch.relu(x) * {i}"),
            1: (f"def g{i}(a, b):", "c = a @ b"),
            2: (f"def h{i}(v):", f"c = v * {i}"),
            3: (f"def p{i}():", f"c = f{i - 3}(torch.ones(4))"),
        }[kind]
        out += [head, f'    """Step {i} of the model: one of its layers."""', f"    {body}"]
        out += ["    return c", ""]
    return "\n".join(out) + "\n"


class _TimedJson:
    """pygls's ``json`` with the time each big message (over 1 MB: a big file's lenses) was
    read in full, before it is decoded."""

    def __init__(self) -> None:
        self.big: list[float] = []
        self.first_body: bytes | None = None

    def loads(self, data: Any, **kwargs: Any) -> Any:
        if len(data) > 1_000_000:
            self.big.append(time.perf_counter())
            if self.first_body is None:
                self.first_body = bytes(data)
        return json.loads(data, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(json, name)


TIMED = _TimedJson()

#: Node's ``JSON.parse`` of a message (best of 3, seconds): what an editor's parse of the
#: answer costs, beside this Python client's.
_NODE_PARSE = (
    "const s=require('fs').readFileSync(process.argv[1],'utf8');let best=1e9;"
    "for(let i=0;i<3;i++){const t=process.hrtime.bigint();JSON.parse(s);"
    "best=Math.min(best,Number(process.hrtime.bigint()-t)/1e9);}console.log(best);"
)


def _node_parse_s(body: bytes | None, folder: str) -> float | None:
    node = shutil.which("node")
    if body is None or node is None:
        return None
    path = Path(folder) / "answer.json"
    path.write_bytes(body)
    done = subprocess.run(
        [node, "-e", _NODE_PARSE, str(path)], capture_output=True, text=True, check=False
    )
    return float(done.stdout) if done.returncode == 0 else None


pygls.io_.json = TIMED  # type: ignore[assignment]


def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )


def _lens_request(client: LanguageClient, uri: str) -> asyncio.Future[Any]:
    return asyncio.ensure_future(
        client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
    )


def _raw_lenses(client: LanguageClient) -> None:
    """Keep code-lens answers as the JSON they arrive as: the client's own structuring of
    90 000 lenses into objects (seconds, in the client) is not the server's latency, and it
    would hold up the hover's answer in the client too. VS Code reads them with JSON.parse."""
    structure = client.protocol.structure_message

    def keep(data: dict[str, Any]) -> Any:
        result = data.get("result")
        if (
            "id" in data
            and "method" not in data
            and isinstance(result, list)
            and result
            and isinstance(result[0], dict)
            and "range" in result[0]
        ):
            client.protocol._result_types.pop(data["id"], None)
            return JsonRPCResponseMessage(id=data["id"], jsonrpc="2.0", result=result)
        return structure(data)

    client.protocol.structure_message = keep  # type: ignore[method-assign]


def _title(lens: Any) -> str:
    if isinstance(lens, dict):
        return str((lens.get("command") or {}).get("title", ""))
    return lens.command.title if lens.command is not None else ""


def _reading(lenses: list[Any] | None) -> bool:
    return any("reading" in _title(lens) for lens in lenses or [])


async def run(sizes: list[int]) -> list[dict[str, float | int | str]]:
    client = LanguageClient("kernel-lens-bench", "v1")
    refreshed = asyncio.Event()

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        refreshed.set()

    await client.start_io(sys.executable, "-m", "kernel_lens.lsp")
    _raw_lenses(client)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
                )
            ),
            root_uri=ROOT.as_uri(),
            initialization_options={"agentCommand": [sys.executable, str(FAKE_AGENT)]},
        )
    )
    client.initialized(types.InitializedParams())
    small_uri = SMALL.as_uri()
    _open(client, small_uri, SMALL.read_text())
    hover_params = types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=small_uri),
        position=types.Position(line=5, character=4),
    )
    await client.text_document_hover_async(hover_params)  # the small file's model is made
    rows: list[dict[str, float | int | str]] = []
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            text = generated_module(n)
            path = Path(folder) / f"big_{n}.py"
            path.write_text(text)
            uri = path.as_uri()
            refreshed.clear()
            TIMED.big.clear()
            TIMED.first_body = None
            t0 = time.perf_counter()
            _open(client, uri, text)
            first = _lens_request(client, uri)
            h0 = time.perf_counter()
            await client.text_document_hover_async(hover_params)
            hover_s = time.perf_counter() - h0
            lenses = await first
            first_s = time.perf_counter() - t0
            received_s = (TIMED.big[0] - t0) if TIMED.big else first_s
            reading = _reading(lenses)
            if reading:
                await asyncio.wait_for(refreshed.wait(), 600)
                lenses = await _lens_request(client, uri)
            full_s = time.perf_counter() - t0
            a0 = time.perf_counter()
            again = await _lens_request(client, uri)
            again_s = time.perf_counter() - a0
            assert not _reading(lenses) and not _reading(again)
            rows.append({
                "functions": n,
                "mb": len(text.encode()) / 1e6,
                "first": first_s,
                "received": received_s,
                "node": _node_parse_s(TIMED.first_body, folder) or 0.0,
                "first_kind": "reading…" if reading else "lenses",
                "full": full_s,
                "again": again_s,
                "hover": hover_s,
                "lenses": len(lenses or []),
            })  # fmt: skip
            client.text_document_did_close(
                types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
            )
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,5000,20000,60000")
    args = parser.parse_args()
    logging.getLogger("pygls").setLevel(logging.ERROR)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = asyncio.run(run(sizes))
    print(
        f"# code-lens latency against file size · {time.strftime('%Y-%m-%d')} · "
        f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}\n"
    )
    print(
        "| functions | MB | first answer (s) | received (s) | node JSON.parse (s) "
        "| first answer is | lenses (s) | again (s) | hover on another file (s) | lenses |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['functions']:,} | {r['mb']:.1f} | {r['first']:.2f} | {r['received']:.2f} "
            f"| {r['node']:.2f} | {r['first_kind']} "
            f"| {r['full']:.2f} | {r['again']:.2f} | {r['hover']:.3f} | {r['lenses']:,} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
