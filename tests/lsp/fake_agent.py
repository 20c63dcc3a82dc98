"""A stand-in agent that replays results recorded on an H200 (CUDA lens/hover/report data on CPU),
and can misbehave on purpose.

Started by the server as ``[python, fake_agent.py, *options] + ["-m", "kernel_lens.agent"]``;
speaks the real agent protocol (kernel_lens.agent.protocol):

- ``profile`` (and ``sweep``) jobs get tests/data/h200/square_three_ways_profile.json, its path
  replaced by the job's; with ``--distributed``, a profile job on ranks (``nproc_per_node``) gets
  tests/data/distributed/report/step-result.json instead (a recorded 2-rank gloo run of
  ``kernels/allreduce_step.py::step``, its trace paths made absolute);
- ``ncu`` jobs get the kernels of tests/data/h200/triton_square_small.ncu-rep (a recorded H200
  ncu run of ``square_kernel``) read with ``ncu_report``, or without it those of
  tests/data/h200/triton_fused_details.csv, read by Kernel Lens' own readers.

``--started FILE`` appends a line to FILE when the agent starts (to see agents warmed ahead of a
click). ``--bad FUNCTION=MODE`` makes the jobs on FUNCTION fail in one way a broken agent or a
broken reply can: ``garbage`` (a line that is not JSON), ``not-an-object`` (a result that is a
string), ``bad-shape`` (a result object of the wrong shape), ``huge-error`` (a 70 MB error
message, one protocol line), ``odd-kind`` (an error of a kind that does not exist), ``exit`` (the
process exits without a reply). ``--stream DIR`` streams each profile as the real agent does:
a ``partial`` with everything but the timing (the lines and kernels), then it waits for
``DIR/go`` (the test's signal, up to 60 s), removes it and sends the whole result; with
``DIR/plain`` present it replies at once, without partials.

``light`` jobs (*Profile Script (Light)*) get a light result made up from the files of the
script's folder (the real one needs CUDA: tests/gpu/test_gpu_light_lsp.py): each line holding
``# light:`` gets two kernels; a script text holding ``# fake: hang`` never answers (a time
limit's test).
"""

import json
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data" / "h200"
RECORDED = DATA / "square_three_ways_profile.json"
NCU_REPORT = DATA / "triton_square_small.ncu-rep"
NCU_CSV = DATA / "triton_fused_details.csv"
ROOT = DATA.parent.parent.parent
DISTRIBUTED = DATA.parent / "distributed" / "report" / "step-result.json"


def _distributed(params: dict) -> dict:
    """The recorded 2-rank result, its repository-relative trace paths made absolute."""
    result = json.loads(DISTRIBUTED.read_text())
    paths = [str(ROOT / p) for p in result["distributed"]["trace_paths"]]
    result["distributed"]["trace_paths"] = paths
    for rank, path in zip(result["ranks"], paths, strict=True):
        rank["trace_path"] = path
        rank["path"] = params["path"]
    result["trace_path"] = paths[0]
    result["path"] = params["path"]
    return result


def _bad_modes(argv: list[str]) -> dict[str, str]:
    modes = {}
    for i, arg in enumerate(argv):
        if arg == "--bad" and i + 1 < len(argv):
            function, _, mode = argv[i + 1].partition("=")
            modes[function] = mode
    return modes


def _stream_dir(argv: list[str]) -> Path | None:
    if "--stream" in argv:
        return Path(argv[argv.index("--stream") + 1])
    return None


def _stream_parts(message: dict, result: dict, gate: Path, out) -> None:
    """The result's lines first (a ``partial``), then wait for the test's ``go``."""
    first = {k: v for k, v in result.items() if k != "timing"}
    part = {"result": first, "final": list(first), "stage": "timing"}
    out.write(json.dumps({"id": message["id"], "partial": part}) + "\n")
    out.flush()
    go = gate / "go"
    for _ in range(600):
        if go.exists():
            go.unlink()
            return
        time.sleep(0.1)


def _reply(message: dict, out, stream: Path | None = None) -> None:
    params = message["params"]
    if message["method"] == "ncu":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "server"))
        from kernel_lens.traces.ncu_files import read_ncu_file

        try:
            found, reader = read_ncu_file(str(NCU_REPORT))
            report = NCU_REPORT
        except Exception:  # no ncu_report module here: the CSV of another recorded run
            found, reader = read_ncu_file(str(NCU_CSV))
            report = NCU_CSV
        kernels = [k.to_json() for k in found]
        for k in kernels:
            k["line"] = None  # recorded on another version of the file: its lines do not apply
        result = {
            "report_path": str(report),
            "set": params.get("set", "basic"),
            "reader": reader,
            "kernels": kernels,
            "ncu_log": "",
        }
    elif message["method"] == "light":
        result = _light(params)
    elif "--distributed" in sys.argv and params.get("nproc_per_node"):
        result = _distributed(params)
    else:
        result = json.loads(RECORDED.read_text())
        result["path"] = params["path"]
        if stream is not None and not (stream / "plain").exists():
            _stream_parts(message, result, stream, out)
    out.write(json.dumps({"id": message["id"], "result": result}) + "\n")


def _light(params: dict) -> dict:
    """A light result: every ``# light:`` line of the script's folder's files (the script's own
    text as the job sent it), two kernels each, 40 launches of the first."""
    script = Path(params["path"])
    if "# fake: hang" in (params.get("text") or ""):
        time.sleep(600)
    files: dict[str, list] = {}
    total = 0.0
    for path in sorted(script.parent.glob("*.py")):
        text = params["text"] if path == script and params.get("text") else path.read_text()
        rows = []
        for no, line in enumerate(text.splitlines(), 1):
            if "# light:" not in line:
                continue
            us = 100.0 * no
            kernels = [
                {"name": "ampere_sgemm_128x64_nn", "us": 0.75 * us, "count": 40},
                {"name": "void at::native::vectorized_elementwise_kernel<4, at::native::"
                 "CUDAFunctor_add<float> >(int, T1, T2)", "us": 0.25 * us, "count": 40},
            ]  # fmt: skip
            rows.append({"line": no, "source": line.strip(), "kernel_us": us, "launches": 80,
                         "kernels": kernels})  # fmt: skip
            total += us
        if rows:
            files[str(path)] = rows
    return {
        "mode": "light", "path": str(script), "device": "NVIDIA H200 (recorded)",
        "files": files, "total_kernel_us": total + 500.0, "other_us": 500.0,
        "launches": 80 * sum(len(r) for r in files.values()),
        "label": "light profile (Proton): every line's GPU kernel time for the whole run, "
        "aggregated by calling context; no ATen op names, and backward's kernels are not on "
        "the forward lines",
        "wall_s": 12.5, "stored_bytes": 4096, "profile_path": "/tmp/x.hatchet", "triton": "3.6",
    }  # fmt: skip


def _misbehave(message: dict, mode: str, out) -> None:
    job = message["id"]
    if mode == "garbage":
        out.write("this is not JSON {\n")
    elif mode == "not-an-object":
        out.write(json.dumps({"id": job, "result": "not an object"}) + "\n")
    elif mode == "bad-shape":
        out.write(json.dumps({"id": job, "result": {"timing": "fast", "lines": 3}}) + "\n")
    elif mode == "huge-error":
        error = {"kind": "runtime", "message": "x" * (70 * 1024 * 1024), "line": None}
        out.write(json.dumps({"id": job, "error": error}) + "\n")
    elif mode == "odd-kind":
        out.write(json.dumps({"id": job, "error": {"kind": "no-such-kind", "message": "?"}}) + "\n")
    elif mode == "exit":
        out.flush()
        sys.exit(7)
    out.flush()


def _take_shipped_agent() -> None:
    """A non-default agent command is started as a remote one: ``-c <bootstrap>`` after it and
    Kernel Lens's package on stdin (``<size> <sha256>\n`` + a zip; client/remote.py). The
    stand-in has its own code: it reads the package past, as the bootstrap would."""
    if "-c" not in sys.argv[1:]:
        return
    head = sys.stdin.buffer.readline()
    size = int(head.split()[0])
    while size > 0:
        size -= len(sys.stdin.buffer.read(size))


def main() -> None:
    _take_shipped_agent()
    bad = _bad_modes(sys.argv)
    if "--started" in sys.argv:
        with open(sys.argv[sys.argv.index("--started") + 1], "a") as fh:
            fh.write("started\n")
    out = sys.stdout
    out.write(json.dumps({"event": "ready", "pid": 0, "torch": "recorded", "cuda": True}) + "\n")
    out.flush()
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        if "id" not in message or "params" not in message:
            continue  # a control message (e.g. ``hurry``): nothing to warm here
        mode = bad.get(str(message.get("params", {}).get("function")))
        if mode:
            _misbehave(message, mode, out)
            continue
        _reply(message, out, _stream_dir(sys.argv))
        out.flush()


main()
