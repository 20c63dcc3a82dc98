"""Cold and warm click-to-lenses time of the language server, and the agents' host memory.

    python benchmarks/bench_agent_warm.py [--warm 5] [--delay 8] [--function square_three_ways]

Three server sessions over stdio with a real pygls client, each opening kernels/square.py (the
workspace is trusted by default) and executing the Profile lens's command as VS Code does:

- *cold, no delay*: the click comes right after the document opens (server start → open → click
  → lenses is reported, and click → lenses);
- *cold, after the prewarm delay*: the click comes ``--delay`` seconds after the open, the time a
  user takes to read the file (the server may warm an agent meanwhile);
- *warm*: ``--warm`` further clicks in that second session.

After the clicks the script waits for the agents to settle and reads the resident memory (RSS,
``/proc/PID/status`` VmRSS) of every agent process the server started: with a spare agent this is
the spare's cost while the user reads results. The timing budget of the extension (500 ms) is part
of every click, as it is part of what a user waits.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (the agents the server started)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


async def session(
    function: str, delay_s: float, clicks: int, budget_ms: float, settle_s: float
) -> tuple[float, list[float], list[float]]:
    """One server: (start→first lenses s, click→lenses s per click, agents' RSS MiB)."""
    client = LanguageClient("kernel-lens-bench", "v1")

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        return None

    t_start = time.perf_counter()
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
    if delay_s:
        await asyncio.sleep(delay_s)
    first_total = 0.0
    times: list[float] = []
    for i in range(clicks):
        t0 = time.perf_counter()
        outcome = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="kernelLens.profile", arguments=[{"uri": uri, "function": function}]
            )
        )
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        t1 = time.perf_counter()
        assert outcome["ok"], outcome
        assert any(
            lens.command and lens.command.title.startswith("$(watch)") for lens in lenses or []
        )
        times.append(t1 - t0)
        if i == 0:
            first_total = t1 - t_start
    await asyncio.sleep(settle_s)
    server_pid = client._server.pid if client._server else 0  # noqa: SLF001
    rss = [_rss_mib(pid) for pid in _children(server_pid)]
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return first_total, times, rss


async def run(args: argparse.Namespace) -> None:
    cold_total, cold, _ = await session(args.function, 0.0, 1, args.budget_ms, 0.0)
    pre_total, clicks, rss = await session(
        args.function, args.delay, 1 + args.warm, args.budget_ms, args.settle
    )
    warm = clicks[1:]
    print(
        f"# agent warm-up · kernels/square.py::{args.function} · timing budget "
        f"{args.budget_ms:g} ms · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · "
        f"{platform.node()} ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f})\n"
    )
    print("| measure | seconds |")
    print("|---|---|")
    print(f"| cold click, no delay: click → lenses | {cold[0]:.2f} |")
    print(f"| cold click, no delay: server start → lenses | {cold_total:.2f} |")
    print(f"| first click {args.delay:g} s after open: click → lenses | {clicks[0]:.2f} |")
    print(f"| first click {args.delay:g} s after open: server start → lenses | {pre_total:.2f} |")
    if warm:
        print(
            f"| warm click (median of {len(warm)}; min {min(warm):.2f}, max {max(warm):.2f}) "
            f"| {statistics.median(warm):.2f} |"
        )
    total = sum(rss)
    each = ", ".join(f"{r:.0f}" for r in rss) or "none"
    print(
        f"\nagent processes {args.settle:g} s after the last click: {len(rss)} "
        f"(RSS MiB: {each}; total {total:.0f} MiB)"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--function", default="square_three_ways")
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--delay", type=float, default=8.0, help="seconds from open to click")
    parser.add_argument("--settle", type=float, default=8.0, help="seconds before reading RSS")
    parser.add_argument("--budget-ms", type=float, default=500.0)
    args = parser.parse_args()
    logging.getLogger("pygls").setLevel(logging.ERROR)  # the client ignores logMessage etc.
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
