"""Cold and warm click-to-lenses time of the language server, and the agents' host memory.

    python benchmarks/bench_agent_warm.py [--warm 5] [--think 3] [--delay 8] [--function …]
        [--cold N] [--phases]

Three server sessions over stdio with a real pygls client, each opening kernels/square.py (the
workspace is trusted by default) and executing the Profile lens's command as VS Code does:

- *cold, no delay*: the click comes right after the document opens (server start → open → click
  → lenses is reported, and click → lenses);
- *cold, after the prewarm delay*: the click comes ``--delay`` seconds after the open, the time a
  user takes to read the file (the server may warm an agent meanwhile);
- *warm*: ``--warm`` further clicks in that second session, each ``--think`` seconds after the
  last result (the time to read it), then ``--warm`` clicks back to back.

After the clicks the script waits for the agents to settle and reads the resident memory (RSS,
``/proc/PID/status`` VmRSS) of every agent process the server started, and their GPU memory
(``nvidia-smi``) where there is a GPU: with a spare agent this is the spare's cost while the user
reads results. The timing budget of the extension (500 ms) caps every click's timing (which stops
earlier once the median is known within ±1%). The client supports ``workspace/codeLens/refresh``,
as VS Code does: at each refresh it asks for the lenses, and the *first useful lens* is the time
from the click to the first answer with a per-line lens (the profile streams its lines before
its timing; issue 28). ``--agent-command`` passes ``kernelLens.agentCommand`` (a JSON list), e.g.
to measure an older checkout put first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent


def _descendants(pid: int) -> list[int]:
    """Processes below ``pid``: the agents the server started, and the spares a template forked."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    out: list[int] = []
    frontier = [pid]
    while frontier:
        here = frontier.pop()
        kids = [child for child, parent in parents.items() if parent == here]
        out.extend(kids)
        frontier.extend(kids)
    return out


def _pss_mib(pid: int) -> float:
    """Proportional set size: pages shared with other processes (a fork) count in part."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _role(pid: int, server: int) -> str:
    """What a process below the server is: the trace reader, the fork template, an agent forked
    from it, or an agent started as a process."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        with open(f"/proc/{pid}/stat") as f:
            parent = int(f.read().rsplit(")", 1)[1].split()[1])
        with open(f"/proc/{pid}/environ", "rb") as f:
            template = b"KERNEL_LENS_AGENT_TEMPLATE_FD=" in f.read()
    except OSError:
        return "?"
    if b"kernel_lens.traces.reader" in argv:
        return "trace reader (spare)"
    if parent != server:
        return "agent forked from the template"
    return "fork template" if template else "agent"


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _gpu_mib(pids: list[int]) -> list[float]:
    """GPU memory of ``pids`` in MiB (empty without nvidia-smi)."""
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    rows = [line.split(",") for line in out.splitlines() if line.strip()]
    return [float(mem) for pid, mem in rows if int(pid) in pids]


async def session(
    function: str,
    delay_s: float,
    clicks: int,
    budget_ms: float,
    settle_s: float,
    *,
    think_s: float = 0.0,
    think_clicks: int = 0,
    agent_command: list[str] | None = None,
    early: bool = True,
    phase_log: str | None = None,
    clock: dict[str, Any] | None = None,
) -> tuple[float, list[float], list[float], list[float], list[float], list[float]]:
    """One server: (start→first lenses s, click→lenses s per click, agents' RSS, PSS, GPU MiB,
    click→first useful lens s per click).

    Clicks 1..``think_clicks`` come ``think_s`` after the previous result; the rest at once.
    ``early``: the server is started as the extension starts it (trusted workspace, default
    agent): with ``KERNEL_LENS_EARLY_AGENT=1``, so its agent starts before its imports.
    ``phase_log``: the agents write their phases there (`kernel_lens.agent.phases`);
    ``clock`` gets the epoch times of the server's start (``start``), the document's open
    (``open``), each click (``clicks``) and its first useful lens and final lens.
    """
    clock = {} if clock is None else clock
    clock.update(start=time.time(), clicks=[], useful=[], final=[])
    client = LanguageClient("kernel-lens-bench", "v1")
    path = ROOT / "kernels" / "square.py"
    uri = path.as_uri()
    def0 = next(
        i for i, text in enumerate(path.read_text().splitlines()) if f"def {function}(" in text
    )
    watch: dict[str, float | None] = {"t0": None, "first": None}

    async def look() -> None:
        found = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        t0 = watch["t0"]
        line_lens = any(
            lens.command and lens.range.start.line > def0 and "aten::" in lens.command.title
            for lens in found or []
        )
        if t0 is not None and watch["first"] is None and line_lens:
            watch["first"] = time.perf_counter() - t0

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def refresh(ls: LanguageClient, params: None) -> None:
        if watch["t0"] is not None and watch["first"] is None:
            asyncio.ensure_future(look())

    t_start = time.perf_counter()
    env = dict(os.environ)
    if early and not agent_command:
        env.update({"KERNEL_LENS_EARLY_AGENT": "1", "KERNEL_LENS_EARLY_AGENT_CWD": str(ROOT)})
    if phase_log:
        env["KERNEL_LENS_PHASE_LOG"] = phase_log
    await client.start_io(sys.executable, "-m", "kernel_lens.lsp", env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
                )
            ),
            root_uri=ROOT.as_uri(),
            initialization_options={
                "timeoutSeconds": 300,
                "timing": {"budgetMs": budget_ms},
                **({"agentCommand": agent_command} if agent_command else {}),
            },
        )
    )
    client.initialized(types.InitializedParams())
    clock["open"] = time.time()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=path.read_text())
        )
    )
    if delay_s:
        await asyncio.sleep(delay_s)
    first_total = 0.0
    times: list[float] = []
    useful: list[float] = []
    for i in range(clicks):
        if 1 <= i <= think_clicks:
            await asyncio.sleep(think_s)
        t0 = time.perf_counter()
        clock["clicks"].append(time.time())
        watch["t0"], watch["first"] = t0, None
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
        titles = [lens.command.title for lens in lenses or [] if lens.command]
        # the timing lens ("$(watch) 1.2 ms …"; on a busy machine its warning form)
        assert any(t.startswith("$(watch)") or " ms ±" in t for t in titles), titles
        times.append(t1 - t0)
        await asyncio.sleep(0.05)  # a last refresh's lens request
        first = watch["first"]
        useful.append(first if first is not None else t1 - t0)
        clock["useful"].append(clock["clicks"][-1] + useful[-1])
        clock["final"].append(clock["clicks"][-1] + (t1 - t0))
        watch["t0"] = None
        if i == 0:
            first_total = t1 - t_start
    await asyncio.sleep(settle_s)
    server_pid = client._server.pid if client._server else 0  # noqa: SLF001
    agents = _descendants(server_pid)
    rss = [_rss_mib(pid) for pid in agents]
    if clock is not None:
        clock["processes"] = [(_role(pid, server_pid), _rss_mib(pid)) for pid in agents]
    pss = [_pss_mib(pid) for pid in agents]
    gpu = _gpu_mib(agents)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return first_total, times, rss, pss, gpu, useful


def _phases(log: str) -> list[dict[str, Any]]:
    try:
        with open(log, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError:
        return []
    return sorted(rows, key=lambda r: r["t"])


def _print_phases(title: str, log: str, clock: dict[str, Any], click: int) -> None:
    """The agents' phases (`kernel_lens.agent.phases`) against the server's start and the click:
    where a cold click's seconds go."""
    rows = _phases(log)
    if not rows or len(clock["clicks"]) <= click:
        print(f"\n{title}: no phases logged")
        return
    t_click = clock["clicks"][click]
    events = [(r["t"], f"agent {r['pid']}: {r['phase']}") for r in rows]
    events += [(clock["start"], "server started (client side)"),
               (clock["open"], "didOpen sent"), (t_click, "CLICK"),
               (clock["useful"][click], "first useful lens (per-line ops) seen by the client"),
               (clock["final"][click], "final lens seen by the client")]  # fmt: skip
    # Up to this click's final lens: its job, and every warm-up before it.
    end = clock["final"][click]
    begin = clock["final"][click - 1] if click > 0 else 0.0
    print(f"\n{title}\n\n| phase | s after server start | s after click | step s |")
    print("|---|---|---|---|")
    last = None
    for t, what in sorted(events):
        if t > end + 0.05 or (t < begin and what != "server started (client side)"):
            continue
        step = f"{t - last:+.3f}" if last is not None else ""
        print(f"| {what} | {t - clock['start']:.3f} | {t - t_click:+.3f} | {step} |")
        last = t


async def run(args: argparse.Namespace) -> None:
    import tempfile

    command = json.loads(args.agent_command) if args.agent_command else None
    logs = tempfile.mkdtemp(prefix="kl-phases-") if args.phases else None
    # Cold clicks alternate: the agent started at didOpen (before) and with the server (now).
    colds: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    phase_runs: list[tuple[str, str, dict[str, Any], int]] = []
    for n in range(args.cold):
        for early in (False, True):
            log = os.path.join(logs, f"cold-{n}-{int(early)}.jsonl") if logs else None
            clock: dict[str, Any] = {}
            total, cold, _, _, _, _ = await session(
                args.function, 0.0, 1, args.budget_ms, 0.0, agent_command=command, early=early,
                phase_log=log, clock=clock,
            )  # fmt: skip
            colds[early].append((cold[0], total))
            if log and n == 0:
                label = "agent started with the server" if early else "agent started at didOpen"
                phase_runs.append((f"phases of a cold click, no delay, {label}", log, clock, 0))
    log = os.path.join(logs, "warm.jsonl") if logs else None
    warm_clock: dict[str, Any] = {}
    pre_total, clicks, rss, pss, gpu, useful = await session(
        args.function,
        args.delay,
        1 + 2 * args.warm,
        args.budget_ms,
        args.settle,
        think_s=args.think,
        think_clicks=args.warm,
        agent_command=command,
        phase_log=log,
        clock=warm_clock,
    )
    if log:
        phase_runs.append((f"phases of the first click {args.delay:g} s after open", log,
                           warm_clock, 0))  # fmt: skip
        if args.warm:
            phase_runs.append((f"phases of a warm click ({args.think:g} s after the last "
                               "result)", log, warm_clock, 1))  # fmt: skip
    read = clicks[1 : 1 + args.warm]
    rapid = clicks[1 + args.warm :]
    useful_warm = useful[1:]
    print(
        f"# agent warm-up · kernels/square.py::{args.function} · timing budget "
        f"{args.budget_ms:g} ms · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · "
        f"{platform.node()} ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f})\n"
    )
    print("| measure | seconds |")
    print("|---|---|")
    for early, label in (
        (False, "agent started at didOpen"),
        (True, "agent started with the server"),
    ):
        if command and early:
            continue  # a configured agent command is never started early
        clicks_s = [c for c, _ in colds[early]]
        totals = [t for _, t in colds[early]]
        spread = (
            f" (median of {len(clicks_s)}; {min(clicks_s):.2f}–{max(clicks_s):.2f})"
            if len(clicks_s) > 1
            else ""
        )
        print(
            f"| cold click, no delay, {label}: click → lenses{spread} | "
            f"{statistics.median(clicks_s):.2f} |"
        )
        print(
            f"| cold click, no delay, {label}: server start → lenses | "
            f"{statistics.median(totals):.2f} |"
        )
    print(f"| first click {args.delay:g} s after open: click → lenses | {clicks[0]:.2f} |")
    print(f"| first click {args.delay:g} s after open: server start → lenses | {pre_total:.2f} |")
    for label, values in (
        (f"{args.think:g} s after the last result", read),
        ("back to back", rapid),
    ):
        if values:
            print(
                f"| warm click, {label} (median of {len(values)}; min {min(values):.2f}, "
                f"max {max(values):.2f}) | {statistics.median(values):.2f} |"
            )
    if useful_warm:
        print(
            f"| warm click → first useful lens (per-line ops, streamed; median of "
            f"{len(useful_warm)}; min {min(useful_warm):.2f}, max {max(useful_warm):.2f}) | "
            f"{statistics.median(useful_warm):.2f} |"
        )
    each = ", ".join(f"{r:.0f}" for r in rss) or "none"
    gpu_text = f"; GPU MiB: {', '.join(f'{g:.0f}' for g in gpu)}" if gpu else ""
    print(
        f"\nagent processes {args.settle:g} s after the last click: {len(rss)} "
        f"(RSS MiB: {each}; total {sum(rss):.0f} MiB; PSS total {sum(pss):.0f} MiB{gpu_text})"
    )
    for role, mib in warm_clock.get("processes", []):
        print(f"  {role}: {mib:.0f} MiB RSS")
    for title, log_path, clock_of, click in phase_runs:
        _print_phases(title, log_path, clock_of, click)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--function", default="square_three_ways")
    parser.add_argument("--warm", type=int, default=5, help="warm clicks of each kind")
    parser.add_argument("--think", type=float, default=3.0, help="seconds from result to click")
    parser.add_argument("--agent-command", default=None, help="kernelLens.agentCommand (JSON)")
    parser.add_argument("--delay", type=float, default=8.0, help="seconds from open to click")
    parser.add_argument("--settle", type=float, default=8.0, help="seconds before reading RSS")
    parser.add_argument("--budget-ms", type=float, default=500.0)
    parser.add_argument("--cold", type=int, default=1, help="cold sessions of each kind")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="log the agents' phases (interpreter start, import torch, CUDA context, the "
        "profiler's first start, ready, the job's stages, its partial results) and print them "
        "against the click: where a cold click's seconds go",
    )
    args = parser.parse_args()
    logging.getLogger("pygls").setLevel(logging.ERROR)  # the client ignores logMessage etc.
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
