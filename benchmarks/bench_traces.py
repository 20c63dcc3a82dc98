"""Big traces (issues 12 and 28): open, first view and zoom of 100k–10M-event traces, with the
floors.

    python benchmarks/bench_traces.py [--sizes 1000000,3000000,10000000] [--before REV]
        [--kinds kl,server,lsp,floor,hta] [--repeat N] [--cpus 2,16,64]

Synthetic traces are made by repeating a recorded H200 trace's step end to end with consistent
ids (`benchmarks/trace_synth.py`), written once to ``$TMPDIR/kernel-lens-bench-traces`` and
kept there between runs: streamed from one pre-encoded copy of the step (`write_replicated`,
about 2 s per million events, the same text as dumping `replicate_trace`'s object). Each
measurement runs in its own child process, so that its peak memory (``ru_maxrss``, the
interpreter included) is its own; one run prints, per size:

- **language server, first open**: the reading child process the server starts (its Python
  start-up and imports included, its allocator set as the server sets it), then the saved store
  read back and its overview;
- **language server request** (``lsp``): the real server and a pygls client, the trace
  viewer's ``kernelLens/traceFile`` request timed to its answer (summary and overview as JSON),
  with the spare reader the server keeps waiting, and with a reader started for the request;
- **Kernel Lens**: ``summarize`` (read the file into columns and summarise it, what ``kernel-lens
  trace summarize`` does), ``first view`` (the same plus laying out the timeline store and its
  overview: what opening the file in the trace viewer costs, cold), ``reopen`` (the store saved
  in the cache folder read back, and the overview), ``zoom p50/p95`` (20 random windows, widths
  log-uniform from 1e-5 of the span to all of it), peak memory;
- **before** (``--before REV``, e.g. the commit before the columnar store): that revision's
  ``load_trace`` + ``summarize_trace``, and ``build_timeline`` for the overview and one zoom;
- **floor**: ``json.load`` + a pandas group-by of the complete events' durations by name;
- **HolisticTraceAnalysis**: its ``TraceAnalysis`` on a folder holding only this file (and
  ``get_gpu_kernel_breakdown``), if ``hta`` is installed;
- **ratios** of the above that ran, in the same run, and peak memory against the file's size.

A measuring child answers in a file of its own, never on its stdout (where a library may print).

Times are wall-clock seconds (medians of ``--repeat`` runs, default 1), with the process's CPU
seconds beside the main ones: on a shared machine the wall times are noisy, the CPU times much
less (the work is single-threaded), so say which when quoting them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

RECORDED = ROOT / "tests" / "data" / "h200" / "matmul_relu_trace.json"
DIR = Path(tempfile.gettempdir()) / "kernel-lens-bench-traces"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_trace(events: int) -> Path:
    """The synthetic trace of about ``events`` events (written once)."""
    from benchmarks.trace_synth import write_replicated

    from kernel_lens.analysis.trace_summary import load_trace  # noqa: I001 (two roots)

    path = DIR / f"h200_x{events}.json"
    if not path.exists():
        DIR.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        t0 = time.perf_counter()
        with open(tmp, "w", buffering=8 << 20) as f:
            write_replicated(load_trace(RECORDED), events, f)
        tmp.replace(path)
        print(f"  (wrote {path}: {path.stat().st_size / 1e6:,.0f} MB in "
              f"{time.perf_counter() - t0:.1f} s)", flush=True)  # fmt: skip
    return path


def _windows(span: float, n: int = 20, seed: int = 12) -> list[tuple[float, float]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        width = span * 10 ** rng.uniform(-5, 0)
        start = rng.uniform(0, span - width)
        out.append((start, start + width))
    return out


def measure_kernel_lens(path: str) -> dict[str, Any]:
    from kernel_lens.analysis.trace_store import build_store
    from kernel_lens.analysis.trace_summary import summarize_columns
    from kernel_lens.traces.cache import load_store, save_store
    from kernel_lens.traces.read import read_columns

    c0, t0 = time.process_time(), time.perf_counter()
    columns = read_columns(path)
    summary = summarize_columns(columns)
    t1 = time.perf_counter()
    store = build_store(columns, summary=summary.to_json())
    overview = store.timeline()
    c2, t2 = time.process_time(), time.perf_counter()
    del columns
    folder = tempfile.mkdtemp(prefix="kl-bench-store-")
    save_store(store, folder)
    t3 = time.perf_counter()
    loaded = load_store(folder)
    assert loaded is not None
    loaded.timeline()
    t4 = time.perf_counter()
    zooms = []
    for window in _windows(loaded.span_us):
        start = time.perf_counter()
        loaded.timeline(window=window)
        zooms.append(time.perf_counter() - start)
    zooms.sort()
    return {
        "events": summary.event_count,
        "summarize_s": t1 - t0,
        "first_view_s": t2 - t0,
        "first_view_cpu_s": c2 - c0,
        "reopen_s": t4 - t3,
        "zoom_p50_ms": statistics.median(zooms) * 1e3,
        "zoom_p95_ms": zooms[int(0.95 * (len(zooms) - 1))] * 1e3,
        "overview_items": overview["kept"],
        "peak_mb": _peak_mb(),
    }


def measure_server_open(path: str) -> dict[str, Any]:
    """What the language server does on a first open: the reading child process (its Python
    start and imports included), then the saved store mapped and its overview built."""
    from kernel_lens.traces.cache import load_store
    from kernel_lens.traces.readers import reader_env

    folder = os.path.join(tempfile.mkdtemp(prefix="kl-bench-open-"), "store")
    # As the server starts it (`reader_env`): this package first on PYTHONPATH, the entries
    # already there kept. (Until issue 36 this replaced PYTHONPATH: on the device host, whose
    # msgspec is in a carried folder on PYTHONPATH, the reader fell back to the json parser:
    # 16.9 s and 9.4x the file, taken for an effect of the host's 16 cores.)
    here = os.environ.get("PYTHONPATH", "")
    env = reader_env({**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "server"), here) if p)})  # fmt: skip
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kernel_lens.traces.reader", path, folder],
        check=True,
        capture_output=True,
        env=env,
    )
    decoder = "?"
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError, AttributeError):
            decoder = json.loads(line).get("decoder", decoder)
    store = load_store(folder)
    assert store is not None and store.summary is not None
    store.timeline()
    t1 = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "open_s": t1 - t0,
        "open_cpu_s": children.ru_utime + children.ru_stime + me.ru_utime + me.ru_stime,
        "child_peak_mb": children.ru_maxrss / 1024,
        "peak_mb": _peak_mb(),
        "decoder": decoder,
    }


def measure_lsp(path: str) -> dict[str, Any]:
    """The real language server (``python -m kernel_lens.lsp``) over stdio, a fresh cache:
    ``kernelLens/traceFile`` (what the trace viewer asks when a file opens: the summary and the
    overview timeline), timed from the request to its answer parsed, as VS Code's client does
    (``json.loads`` of the message, no per-item conversion), with the spare reader the server
    keeps waiting (the usual case: the server has run for a few seconds), then again with none
    (``KERNEL_LENS_TRACE_SPARE=0``: a reader started for the request, Python's start-up and
    imports included)."""
    import asyncio

    async def one(spare: bool) -> tuple[float, float, int, int]:
        here = os.environ.get("PYTHONPATH", "")
        env = {
            **os.environ,
            # (kept: the device host's pygls and msgspec are in a carried folder on it)
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "server"), here) if p),
            "KERNEL_LENS_CACHE": tempfile.mkdtemp(prefix="kl-bench-lsp-"),
            "KERNEL_LENS_TRACE_SPARE": "1" if spare else "0",
        }
        server = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kernel_lens.lsp", stdin=-1, stdout=-1, env=env
        )
        assert server.stdin is not None and server.stdout is not None
        stdin, stdout = server.stdin, server.stdout

        def send(message: dict[str, Any]) -> None:
            body = json.dumps({"jsonrpc": "2.0", **message}).encode()
            stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

        async def receive() -> dict[str, Any]:
            length = 0
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message: dict[str, Any] = json.loads(await stdout.readexactly(length))
            return message

        send({"id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": None}})
        while (await receive()).get("id") != 1:
            pass
        send({"method": "initialized", "params": {}})
        if spare:
            while "spare started" not in json.dumps(await receive()):
                pass
            await asyncio.sleep(1.0)  # its imports done
        t0 = time.perf_counter()
        send({"id": 2, "method": "kernelLens/traceFile", "params": {"path": path}})
        while (answer := await receive()).get("id") != 2:
            pass
        elapsed = time.perf_counter() - t0
        result = answer["result"]
        full = elapsed
        if "partial" in result:
            # A first view: wait for kernelLens/traceReady, then ask again for the whole trace.
            while (await receive()).get("method") != "kernelLens/traceReady":
                pass
            send({"id": 3, "method": "kernelLens/traceFile", "params": {"path": path}})
            while (answer := await receive()).get("id") != 3:
                pass
            full = time.perf_counter() - t0
            result = answer["result"]
        server.kill()
        await server.wait()
        return elapsed, full, result["summary"]["event_count"], result["timeline"]["kept"]

    warm, warm_full, events, items = asyncio.run(one(True))
    cold, cold_full, _, _ = asyncio.run(one(False))
    return {"lsp_spare_s": warm, "lsp_cold_s": cold, "lsp_spare_full_s": warm_full,
            "lsp_cold_full_s": cold_full, "events": events, "overview_items": items}  # fmt: skip


def measure_before(path: str, rev: str) -> dict[str, Any]:
    """The implementation at git revision ``rev`` (its trace_summary and timeline modules)."""
    import importlib.util

    mods = {}
    folder = Path(tempfile.mkdtemp(prefix="kl-bench-before-"))
    for name in ("trace_summary", "timeline"):
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:server/kernel_lens/analysis/{name}.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        file = folder / f"before_{name}.py"
        file.write_text(source)
        spec = importlib.util.spec_from_file_location(f"before_{name}", file)
        assert spec is not None and spec.loader is not None
        mods[name] = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mods[name]  # dataclasses look their module up there
        spec.loader.exec_module(mods[name])
    # What the viewer did then: load once, summarise, reduce the whole trace; each zoom reduced
    # the loaded trace again.
    c0, t0 = time.process_time(), time.perf_counter()
    trace = mods["trace_summary"].load_trace(path)
    summary = mods["trace_summary"].summarize_trace(trace)
    t1 = time.perf_counter()
    overview = mods["timeline"].build_timeline(trace)
    c2, t2 = time.process_time(), time.perf_counter()
    span = overview["span_us"]
    mods["timeline"].build_timeline(trace, window=(span * 0.5, span * 0.51))
    t3 = time.perf_counter()
    return {
        "events": summary.event_count,
        "summarize_s": t1 - t0,
        "first_view_s": t2 - t0,
        "first_view_cpu_s": c2 - c0,
        "zoom_s": t3 - t2,
        "overview_items": overview["kept"],
        "lanes": len(overview["lanes"]),
        "peak_mb": _peak_mb(),
    }


def measure_floor(path: str) -> dict[str, Any]:
    import pandas as pd

    c0, t0 = time.process_time(), time.perf_counter()
    with open(path) as f:
        trace = json.load(f)
    t1 = time.perf_counter()
    frame = pd.DataFrame(
        [
            {"name": e.get("name"), "cat": e.get("cat"), "dur": e.get("dur")}
            for e in trace["traceEvents"]
            if e.get("ph") == "X"
        ]
    )
    frame.groupby(["cat", "name"])["dur"].agg(["size", "sum"])
    c2, t2 = time.process_time(), time.perf_counter()
    return {
        "json_load_s": t1 - t0,
        "floor_s": t2 - t0,
        "floor_cpu_s": c2 - c0,
        "peak_mb": _peak_mb(),
    }


def measure_hta(path: str) -> dict[str, Any]:
    try:
        from hta.trace_analysis import TraceAnalysis  # type: ignore[import-not-found]
    except ImportError:
        return {"missing": True}
    # HTA reads every trace of a folder: a folder of its own holding a link to this one.
    folder = Path(tempfile.mkdtemp(prefix="kl-bench-hta-"))
    (folder / Path(path).name).symlink_to(Path(path).resolve())
    t0 = time.perf_counter()
    analysis = TraceAnalysis(trace_dir=str(folder))
    analysis.get_gpu_kernel_breakdown()
    return {"hta_s": time.perf_counter() - t0, "peak_mb": _peak_mb()}


def _cpus_env(cpus: int | None) -> tuple[dict[str, str], Any]:
    """The environment and the ``preexec_fn`` of a measuring child given ``cpus`` cores: the
    first ``cpus`` of this machine's (its affinity) when it has them, else a machine that
    believes it has ``cpus`` (`benchmarks/cpus/sitecustomize.py`, with OpenBLAS's and OpenMP's
    pools sized to match, as such a machine starts them); None: as this machine is."""
    if not cpus:
        return {}, None
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) >= cpus:
        chosen = set(mine[:cpus])
        return {}, lambda: os.sched_setaffinity(0, chosen)
    here = os.environ.get("PYTHONPATH", "")
    return {
        "KERNEL_LENS_FAKE_CPUS": str(cpus),
        "OPENBLAS_NUM_THREADS": str(cpus),
        "OMP_NUM_THREADS": str(cpus),
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "benchmarks" / "cpus"), here) if p),
    }, None


def _cpus_shown(cpus: int | None) -> str:
    real = len(os.sched_getaffinity(0))
    if not cpus:
        return f"{real} (all)"
    return f"{cpus}" if cpus <= real else f"{cpus} (believed; {real} real)"


def _child(kind: str, path: Path, rev: str | None, cpus: int | None = None) -> dict[str, Any]:
    """One measurement in its own process. Its answer comes back in a file of its own, never
    on its stdout (where a library may print: torch's ``USDT:`` lines on the H200 host); what it
    writes in temporary folders (saved stores, caches: ~0.7 GB at 10M events) goes into a folder
    removed after it."""
    with tempfile.TemporaryDirectory(prefix="kl-bench-") as folder:
        answer = Path(folder) / "answer.json"
        argv = [sys.executable, __file__, "--measure", kind, str(path), "--answer", str(answer)]
        if rev:
            argv += ["--before", rev]
        extra, preexec = _cpus_env(cpus)
        env = {**os.environ, "TMPDIR": folder, **extra}
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, env=env, preexec_fn=preexec
        )
        if done.returncode != 0 or not answer.exists():
            return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
        result: dict[str, Any] = json.loads(answer.read_text())
    return result


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    if any("error" in r or "missing" in r for r in runs):
        return runs[0]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--before", help="git revision of the implementation to compare with")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--kinds", default="kl,server,lsp,floor,hta", help="which measurements (before: --before)"
    )
    parser.add_argument(
        "--cpus",
        default="",
        help="core counts to measure with, e.g. 2,16,64: the first N of this machine's cores, "
        "or a machine that believes it has N where it has fewer (default: as it is)",
    )
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--answer", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        kind, file = args.measure
        funcs = {
            "kl": measure_kernel_lens,
            "server": measure_server_open,
            "lsp": measure_lsp,
            "floor": measure_floor,
            "hta": measure_hta,
        }
        result = measure_before(file, args.before) if kind == "before" else funcs[kind](file)
        if args.answer:
            Path(args.answer).write_text(json.dumps(result))
        else:
            print(json.dumps(result))
        return 0

    import platform

    host = platform.node() or "?"
    print(f"machine: {host}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    table: list[str] = []
    cores = [int(c) for c in args.cpus.split(",") if c.strip()] or [None]
    for cpus, size in [(c, int(s)) for c in cores for s in args.sizes.split(",")]:
        path = make_trace(size)
        if cpus:
            print(f"\n== {_cpus_shown(cpus)} cores ==")
        mb = path.stat().st_size / 1e6
        kinds = args.kinds.split(",") + (["before"] if args.before else [])
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
        for _ in range(args.repeat):
            for kind in kinds:  # interleaved
                runs[kind].append(_child(kind, path, args.before, cpus))
        got = {k: _median(v) for k, v in runs.items()}
        skipped = {"missing": True, "skipped": True}
        kl, server, floor, hta = (got.get(k, skipped) for k in ("kl", "server", "floor", "hta"))
        print(f"\n{size:,} events asked ({mb:.0f} MB JSON):")
        if "skipped" in kl:
            pass
        elif "error" in kl:
            print(f"  Kernel Lens: failed: {kl['error']}")
        else:
            print(
                f"  Kernel Lens: {kl['events']:,.0f} events · summarize {kl['summarize_s']:.2f} s"
                f" · first view {kl['first_view_s']:.2f} s (CPU {kl['first_view_cpu_s']:.2f} s,"
                f" {kl['overview_items']:,.0f} items)"
                f" · reopen {kl['reopen_s'] * 1e3:.0f} ms · zoom p50 {kl['zoom_p50_ms']:.1f} ms"
                f" p95 {kl['zoom_p95_ms']:.1f} ms · peak {kl['peak_mb']:,.0f} MB"
                f" ({kl['peak_mb'] / mb:.1f}x the file)"
            )
        if "skipped" in server:
            pass
        elif "error" in server:
            print(f"  language server open: failed: {server['error']}")
        else:
            print(
                f"  language server, first open (child process + mapped store + overview):"
                f" {server['open_s']:.2f} s (CPU {server['open_cpu_s']:.2f} s, imports included)"
                f" · child peak {server['child_peak_mb']:,.0f} MB"
                f" · server peak {server['peak_mb']:,.0f} MB · decoder {server['decoder']}"
            )
        lsp = got.get("lsp", skipped)
        if "skipped" in lsp:
            pass
        elif "error" in lsp:
            print(f"  language server request: failed: {lsp['error']}")
        else:
            print(
                f"  language server, kernelLens/traceFile request to answer (summary + overview):"
                f" {lsp['lsp_spare_s']:.2f} s with the spare reader waiting"
                f" · {lsp['lsp_cold_s']:.2f} s with a reader started for it"
                f"; whole trace (after kernelLens/traceReady) {lsp['lsp_spare_full_s']:.2f} s"
                f" / {lsp['lsp_cold_full_s']:.2f} s"
            )
        if args.before:
            b = got["before"]
            if "error" in b:
                print(f"  before ({args.before}): failed: {b['error']}")
            else:
                print(
                    f"  before ({args.before}): summarize {b['summarize_s']:.2f} s"
                    f" · first view {b['first_view_s']:.2f} s (CPU {b['first_view_cpu_s']:.2f} s,"
                    f" {b['overview_items']:,.0f} items,"
                    f" {b['lanes']:.0f} lanes) · zoom {b['zoom_s']:.2f} s"
                    f" · peak {b['peak_mb']:,.0f} MB"
                )
        if "skipped" in floor:
            pass
        elif "error" in floor:
            print(f"  floor: failed: {floor['error']}")
        else:
            print(
                f"  floor json.load + pandas group-by: {floor['floor_s']:.2f} s"
                f" (CPU {floor['floor_cpu_s']:.2f} s)"
                f" (json.load {floor['json_load_s']:.2f} s) · peak {floor['peak_mb']:,.0f} MB"
            )
        if "skipped" in hta:
            pass
        elif "missing" in hta:
            print("  HolisticTraceAnalysis: not installed")
        elif "error" in hta:
            print(f"  HolisticTraceAnalysis: failed: {hta['error']}")
        else:
            print(f"  HolisticTraceAnalysis: {hta['hta_s']:.2f} s · peak {hta['peak_mb']:,.0f} MB")
        _ratios(kl, server, lsp, floor, hta, mb)
        table.append(_row(host, _cpus_shown(cpus), size, mb, kl, server, lsp, floor))
    print("\n| machine | cores | events | MB | in process: first view s (CPU s), peak x file "
          "| reader process: open s (CPU s), peak x file, decoder "
          "| server request: first view s / whole s | json.load + pandas s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(table))
    return 0


def _row(host: str, cores: str, size: int, mb: float, *got: dict[str, Any]) -> str:
    """One row of the table a run ends with (the same on the device host and here)."""
    kl, server, lsp, floor = (g if not {"error", "missing", "skipped"} & g.keys() else None
                              for g in got)  # fmt: skip
    cells = [host, cores, f"{size:,}", f"{mb:.0f}"]
    cells.append(f"{kl['first_view_s']:.2f} ({kl['first_view_cpu_s']:.2f}), "
                 f"{kl['peak_mb'] / mb:.2f}x" if kl else "–")  # fmt: skip
    cells.append(f"{server['open_s']:.2f} ({server['open_cpu_s']:.2f}), "
                 f"{server['child_peak_mb'] / mb:.2f}x, {server['decoder']}"
                 if server else "–")  # fmt: skip
    cells.append(f"{lsp['lsp_spare_s']:.2f} / {lsp['lsp_spare_full_s']:.2f}" if lsp else "–")
    cells.append(f"{floor['floor_s']:.2f}" if floor else "–")
    return "| " + " | ".join(cells) + " |"


def _ratios(kl: dict[str, Any], server: dict[str, Any], lsp: dict[str, Any],
            floor: dict[str, Any], hta: dict[str, Any], mb: float) -> None:  # fmt: skip
    """One line of ratios between the measurements of this run (those that ran)."""
    ran = (("kl", kl), ("server", server), ("lsp", lsp), ("floor", floor), ("hta", hta))
    ok = {name: m for name, m in ran if not {"error", "missing", "skipped"} & m.keys()}
    ours: list[tuple[str, float]] = []
    if "lsp" in ok:
        ours += [("first view (server)", ok["lsp"]["lsp_spare_s"]),
                 ("whole trace (server)", ok["lsp"]["lsp_spare_full_s"])]  # fmt: skip
    if "kl" in ok:
        ours.append(("whole trace in process", ok["kl"]["first_view_s"]))
    parts = []
    for label, value in ours:
        for base, key, shown in (("floor", "floor_s", "json.load+pandas"), ("hta", "hta_s", "HTA")):
            if base in ok:
                parts.append(f"{label} / {shown} {value / ok[base][key]:.2f}x")
    for name, key in (("kl", "peak_mb"), ("server", "child_peak_mb")):
        if name in ok:
            shown = "in process" if name == "kl" else "reader process"
            parts.append(f"peak {shown} {ok[name][key] / mb:.2f}x the file")
    if parts:
        print("  ratios: " + " · ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
