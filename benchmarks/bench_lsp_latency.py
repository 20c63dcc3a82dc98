"""Click-to-lenses latency of the language server, cold (agent start) and warm.

    python benchmarks/bench_lsp_latency.py [--warm N] [--function square_three_ways]

Starts ``python -m kernel_lens.lsp`` over stdio with a real pygls client, opens
kernels/square.py, executes the Profile lens's command (as VS Code does when it is clicked) and
then requests code lenses; the latency is from the click to the lenses that carry the results.
The first click pays the agent's start (torch import, CUDA context); later clicks are warm.
The default timing budget of the extension (500 ms) is included: it is part of what a user waits.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent


async def run(function: str, warm: int, budget_ms: float) -> list[tuple[str, float, str]]:
    client = LanguageClient("kernel-lens-bench", "v1")

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        return None

    await client.start_io(sys.executable, "-m", "kernel_lens.lsp")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=ROOT.as_uri(),
            initialization_options={"timeoutSeconds": 300, "timing": {"budgetMs": budget_ms}},
        )
    )
    client.initialized(types.InitializedParams())
    path = ROOT / "kernels" / "square.py"
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=path.read_text())
        )
    )
    rows: list[tuple[str, float, str]] = []
    for i in range(1 + warm):
        t0 = time.perf_counter()
        outcome = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.profile", arguments=[{"uri": uri, "function": function}]
            )
        )
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        elapsed = time.perf_counter() - t0
        assert outcome["ok"], outcome
        summary = next(
            lens.command.title
            for lens in lenses or []
            if lens.command and lens.command.title.startswith("$(watch)")
        )
        rows.append(("cold" if i == 0 else "warm", elapsed, summary))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--function", default="square_three_ways")
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--budget-ms", type=float, default=500.0)
    args = parser.parse_args()
    logging.getLogger("pygls").setLevel(logging.ERROR)  # the client ignores logMessage etc.
    rows = asyncio.run(run(args.function, args.warm, args.budget_ms))
    cold = rows[0][1]
    warm = [r[1] for r in rows[1:]]
    print(
        f"# click-to-lenses latency · kernels/square.py::{args.function} · "
        f"timing budget {args.budget_ms:g} ms · {time.strftime('%Y-%m-%d')}\n"
    )
    print("| run | seconds | summary lens |")
    print("|---|---|---|")
    for kind, seconds, summary in rows:
        print(f"| {kind} | {seconds:.2f} | {summary} |")
    if warm:
        print(
            f"\ncold {cold:.2f} s; warm median {statistics.median(warm):.2f} s "
            f"(min {min(warm):.2f}, max {max(warm):.2f}) over {len(warm)} clicks"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
