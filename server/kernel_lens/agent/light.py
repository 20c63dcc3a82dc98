"""The light whole-run profile (issue 36, item 4): a whole script run once under Triton's
Proton, every workspace line's GPU kernel time, at a few percent of the plain run's time and a
few kB stored however many steps run.

    python -m kernel_lens.agent.light FILE [--workspace DIR]… [--out DIR] [--text TEXT_FILE]
        [-- ARGS…]

prints one JSON object (``{"ok": true, "result": …}`` or ``{"ok": false, "error": …}``);
``kernel-lens profile FILE --light`` runs it in the user's interpreter and prints its lines.

Proton (``import triton.profiler as proton``, in the triton wheel since 3.0) records through
CUPTI's activity API and aggregates the kernels by Python calling context (``context="python"``)
in memory instead of writing an event trace. The deep profile (torch.profiler, Kineto) is the
other CUPTI client: never both in one process (`kernel_lens.agent.cupti_guard`), and a run that
recorded no kernels on CUDA while another client held CUPTI is an error that says so.

API used, the same in triton 3.6 and 3.7: ``proton.start(name, context=, backend=)`` (returns
None when Proton is disabled: ``TRITON_PROTON_DISABLE``, or a script run under the ``proton``
command), ``proton.finalize()`` (writes ``NAME.hatchet``). ``data=``, ``mode=`` and ``hook=``
are left out: their values and defaults moved between releases.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from kernel_lens.agent.cupti_guard import check_recorded, cupti_holder
from kernel_lens.agent.stages.deep import default_workspace
from kernel_lens.agent.usercode import call_user, compile_text, main_module
from kernel_lens.analysis.light_lines import light_lines, within
from kernel_lens.wire.errors import ProfileError

__all__ = ["main", "profile_light"]


def _proton() -> Any:
    try:
        import triton.profiler as proton
    except ImportError as exc:
        raise ProfileError(
            "unsupported",
            f"the light profile needs Triton's Proton (triton.profiler, in the triton wheel on "
            f"Linux): {exc}",
        ) from None
    return proton


def profile_light(
    path: str,
    *,
    argv: Sequence[str] = (),
    workspace: Sequence[str] = (),
    out_dir: str | None = None,
    cwd: str | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """Run ``path`` once as ``__main__`` under Proton; kernel time per workspace line
    (``text``: the editor's buffer, run as the file; default: the file as saved).

    Returns:
        `light_lines`'s result plus ``mode`` (``"light"``), ``wall_s`` (the run, Proton on),
        ``stored_bytes`` and ``profile_path`` (the ``.hatchet`` file), ``triton``, ``device``.

    Raises:
        ProfileError: ``unsupported`` without Proton or CUDA, or when another CUPTI client
            holds the process (before the run when it can be seen then, after it when the run
            recorded no kernels); how the script ended badly, as the deep profile says it.
    """
    holder = cupti_holder(own="proton")
    if holder is not None:
        raise ProfileError(
            "unsupported",
            f"the light profile cannot start: {holder}, and CUPTI takes one client per "
            "process. Run without the other profiler",
        )
    proton = _proton()
    import torch
    import triton

    if not torch.cuda.is_available():
        raise ProfileError("unsupported", "the light profile records CUDA kernels: no CUDA GPU")
    path = os.path.abspath(path)
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    code = compile_text(path, text)
    roots = list(workspace) or [default_workspace(path)]
    folder = out_dir or tempfile.mkdtemp(prefix="kernel-lens-light-")
    os.makedirs(folder, exist_ok=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = os.path.join(folder, f"{stem}-light-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    with main_module(path, argv, cwd) as module:

        def run_main() -> None:
            try:
                exec(code, module.__dict__)
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    raise

        session = proton.start(name, context="python", backend="cupti")
        if session is None:
            raise ProfileError(
                "unsupported",
                "Proton is disabled in this process (TRITON_PROTON_DISABLE, or the script runs "
                "under the proton command): the light profile cannot start",
            )
        t0 = time.perf_counter()
        try:
            call_user(run_main, path, "the script")
        finally:
            if torch.cuda.is_initialized():
                torch.cuda.synchronize()
            wall_s = time.perf_counter() - t0
            proton.finalize()
    # NAME.hatchet (triton 3.x); a name Proton kept as given, or gave another suffix, also read.
    import glob

    found = [p for p in (f"{name}.hatchet", name) if os.path.isfile(p)]
    found += sorted(p for p in glob.glob(f"{glob.escape(name)}.*") if p not in found)
    profile_path = found[0] if found else f"{name}.hatchet"
    try:
        with open(profile_path, encoding="utf-8") as f:
            tree = json.load(f)
        stored = os.path.getsize(profile_path)
    except (OSError, ValueError) as exc:
        raise ProfileError("internal", f"Proton wrote no readable profile: {exc}") from None
    result = light_lines(tree, within(roots))
    check_recorded(
        "the light profile",
        cuda_ran=bool(torch.cuda.is_initialized()),
        kernels=int(result["launches"]),
        own="proton",
    )
    result.update(
        mode="light",
        wall_s=wall_s,
        stored_bytes=stored,
        profile_path=profile_path,
        triton=getattr(triton, "__version__", "?"),
        device=torch.cuda.get_device_name(),
    )
    return result


def main(args: Sequence[str] | None = None) -> int:
    """``FILE [--workspace DIR]… [--out DIR] [-- ARGS…]``: one JSON object on stdout."""
    parser = argparse.ArgumentParser(prog="python -m kernel_lens.agent.light")
    parser.add_argument("path")
    parser.add_argument("--workspace", action="append", default=[])
    parser.add_argument("--out")
    parser.add_argument("--text", help="a file holding the text to run as FILE (the buffer)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(args)
    argv = list(ns.script_args)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    out = sys.stdout
    # The script prints on stdout as it would: the JSON answer is the last line.
    try:
        text = None
        if ns.text:
            with open(ns.text, encoding="utf-8") as f:
                text = f.read()
        result = profile_light(
            ns.path, argv=argv, workspace=ns.workspace, out_dir=ns.out, text=text
        )
    except ProfileError as exc:
        out.write("\n" + json.dumps({"ok": False, "error": exc.to_json()}) + "\n")
        return 1
    out.write("\n" + json.dumps({"ok": True, "result": result}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
